// Package nictest provides a software NIC pair joined by a virtual cable,
// for testing code written against the net.NIC contract (the gVisor
// adapter, the bridge) without hardware or a hardware model.
//
// Each NIC has a bounded TX ring (a buffered channel) drained by one
// goroutine that plays the DMA engine: it copies the frame's segments into
// the peer's receive buffer, signals TX completion (Release) and lends the
// frame to the peer's handler, as a driver lends its ring buffer. The ring
// can be frozen (HoldTX) to exercise the full-ring path, and raw frames can
// be injected to exercise malformed-input handling.
//
// Spy wraps any NIC and Dispatcher stands in for a gVisor stack, both
// recording where in memory the frames they see lie, for tests that count
// the copies a frame costs between a driver's buffer and the stack.
package nictest

import (
	"errors"
	"sync"
	"sync/atomic"

	gnet "github.com/gowrt/gowrt/net"
)

// Config describes one end of a pair.
type Config struct {
	MAC    gnet.MAC
	MTU    int               // default gnet.DefaultMTU
	Caps   gnet.Capabilities // e.g. gnet.CapScatterGather; with CapTxCopy, Transmit copies the frame and releases it before returning
	TxRing int               // TX descriptors, default 64
	// Passes makes this NIC receive in passes, as a driver reaping its
	// ring does: the frames waiting on the cable are delivered between
	// ReceivePassOpen and ReceivePassDone if the handler is a
	// net.PassHandler.
	Passes bool
}

// NIC is one end of a Pair. It implements gnet.NIC.
type NIC struct {
	cfg  Config
	peer *NIC

	txq     chan gnet.TxBuf
	hold    chan struct{} // closed = TX running; replaced while held
	holdMu  sync.Mutex
	stopped chan struct{}
	done    chan struct{}

	rxMu    sync.Mutex // serialises all calls into h, as the contract requires
	h       gnet.Handler
	rxBuf   [gnet.RxBufSize]byte // the receive buffer frames are lent from (rxMu)
	started atomic.Bool
	stopMu  sync.Mutex
	isStop  bool
	linkUp  atomic.Bool
	full    atomic.Bool // Transmit returned ErrTxFull: owe a TxReady

	// Counters of what the cable did.
	TxDone       atomic.Uint64 // frames carried to the peer
	TxBadSegs    atomic.Uint64 // TxBuf with >1 segment on a non-SG NIC
	RxNoHandler  atomic.Uint64 // peer not started: frame lost
	RxLinkDown   atomic.Uint64 // frame lost to a down cable
	RxOversizeHW atomic.Uint64 // longer than an RX buffer: the MAC drops it
}

// Pair returns two connected NICs with link up.
func Pair(a, b Config) (*NIC, *NIC) {
	x, y := newNIC(a), newNIC(b)
	x.peer, y.peer = y, x
	return x, y
}

func newNIC(c Config) *NIC {
	if c.MTU == 0 {
		c.MTU = gnet.DefaultMTU
	}
	if c.TxRing == 0 {
		c.TxRing = 64
	}
	n := &NIC{
		cfg:     c,
		txq:     make(chan gnet.TxBuf, c.TxRing),
		stopped: make(chan struct{}),
		done:    make(chan struct{}),
	}
	n.hold = make(chan struct{})
	close(n.hold)
	n.linkUp.Store(true)
	return n
}

var _ gnet.NIC = (*NIC)(nil)

func (n *NIC) MACAddress() gnet.MAC            { return n.cfg.MAC }
func (n *NIC) MTU() int                        { return n.cfg.MTU }
func (n *NIC) Capabilities() gnet.Capabilities { return n.cfg.Caps }

func (n *NIC) Link() gnet.LinkState {
	if n.linkUp.Load() {
		return gnet.LinkState{Up: true, SpeedMbps: 1000, FullDuplex: true}
	}
	return gnet.LinkState{}
}

// Start implements gnet.NIC.
func (n *NIC) Start(h gnet.Handler) error {
	if h == nil {
		return errors.New("nictest: nil handler")
	}
	if !n.started.CompareAndSwap(false, true) {
		return errors.New("nictest: already started")
	}
	n.rxMu.Lock()
	n.h = h
	n.rxMu.Unlock()
	go n.run()
	return nil
}

// Stop implements gnet.NIC.
func (n *NIC) Stop() {
	n.stopMu.Lock()
	if n.isStop || !n.started.Load() {
		n.stopMu.Unlock()
		return
	}
	n.isStop = true
	close(n.stopped)
	n.stopMu.Unlock()
	<-n.done
	n.rxMu.Lock()
	n.h = nil
	n.rxMu.Unlock()
}

// Transmit implements gnet.NIC.
func (n *NIC) Transmit(b gnet.TxBuf) error {
	if !n.linkUp.Load() {
		return gnet.ErrLinkDown
	}
	if b.Len() > n.cfg.MTU+gnet.EthHeaderLen+gnet.VLANTagLen {
		return errors.New("nictest: frame longer than MTU")
	}
	if len(b.Segments()) > 1 && n.cfg.Caps&gnet.CapScatterGather == 0 {
		// A real MAC without gather DMA would send garbage: refuse.
		n.TxBadSegs.Add(1)
		return errors.New("nictest: gather list on a NIC without scatter-gather")
	}
	if n.cfg.Caps&gnet.CapTxCopy != 0 {
		// The caller may lend memory it only borrows: queue a copy and
		// release the caller's frame at once, as a copying driver does.
		c := &copiedTx{}
		for _, seg := range b.Segments() {
			c.data = append(c.data, seg...)
		}
		if err := n.queue(c); err != nil {
			return err
		}
		b.Release()
		return nil
	}
	return n.queue(b)
}

// copiedTx is the copy a CapTxCopy NIC queues.
type copiedTx struct{ data []byte }

func (c *copiedTx) Segments() [][]byte { return [][]byte{c.data} }
func (c *copiedTx) Len() int           { return len(c.data) }
func (c *copiedTx) Release()           {}

// queue puts b on the TX ring or reports it full.
func (n *NIC) queue(b gnet.TxBuf) error {
	select {
	case n.txq <- b:
		return nil
	default:
	}
	// Ring full. Record that a TxReady is owed *before* the final check:
	// if the engine drained the ring in between, the retry succeeds; if
	// not, the engine's next completion sees the flag. Setting it after
	// the failed check would lose the wakeup when the engine empties the
	// ring in that window (a real-driver bug class: netif_stop_queue).
	n.full.Store(true)
	select {
	case n.txq <- b:
		return nil
	default:
		return gnet.ErrTxFull
	}
}

// HoldTX freezes (true) or resumes (false) the TX engine, so the ring
// fills up.
func (n *NIC) HoldTX(on bool) {
	n.holdMu.Lock()
	defer n.holdMu.Unlock()
	select {
	case <-n.hold: // running
		if on {
			n.hold = make(chan struct{})
		}
	default:
		if !on {
			close(n.hold)
		}
	}
}

func (n *NIC) holdCh() chan struct{} {
	n.holdMu.Lock()
	defer n.holdMu.Unlock()
	return n.hold
}

// SetLink brings the cable up or down; both ends see the change.
func (n *NIC) SetLink(up bool) {
	for _, x := range []*NIC{n, n.peer} {
		if x.linkUp.Swap(up) == up {
			continue
		}
		x.rxMu.Lock()
		if x.h != nil {
			x.h.LinkChanged(x.Link())
		}
		x.rxMu.Unlock()
	}
}

// Inject delivers frame to this NIC's handler as if it had arrived on the
// wire (copied into the NIC's receive buffer, as DMA would).
func (n *NIC) Inject(frame []byte) bool { return n.deliver(frame, nil) }

func (n *NIC) deliver(frame []byte, segs [][]byte) bool {
	total := len(frame)
	for _, s := range segs {
		total += len(s)
	}
	if total > gnet.RxBufSize {
		n.RxOversizeHW.Add(1)
		return false
	}
	n.rxMu.Lock()
	defer n.rxMu.Unlock()
	if n.h == nil {
		n.RxNoHandler.Add(1)
		return false
	}
	k := copy(n.rxBuf[:], frame)
	for _, s := range segs {
		k += copy(n.rxBuf[k:], s)
	}
	n.h.Receive(n.rxBuf[:k])
	return true
}

func (n *NIC) run() {
	defer close(n.done)
	for {
		select {
		case <-n.stopped:
			n.drain()
			return
		case <-n.holdCh():
		}
		select {
		case <-n.stopped:
			n.drain()
			return
		case b := <-n.txq:
			ph := n.peer.openPass()
			for {
				n.carry(b)
				if ph == nil {
					break
				}
				select { // the rest of the pass: what is on the cable now
				case b = <-n.txq:
					continue
				default:
				}
				break
			}
			n.peer.closePass(ph)
		}
	}
}

// carry moves one frame to the peer.
func (n *NIC) carry(b gnet.TxBuf) {
	if n.linkUp.Load() {
		if n.peer.deliver(nil, b.Segments()) {
			n.TxDone.Add(1)
		}
	} else {
		n.peer.RxLinkDown.Add(1)
	}
	b.Release()
	if n.full.CompareAndSwap(true, false) {
		n.rxMu.Lock()
		if w, ok := n.h.(gnet.TxWaker); ok {
			w.TxReady()
		}
		n.rxMu.Unlock()
	}
}

// openPass begins a receive pass on a NIC configured with Passes whose
// handler takes them, returning the handler to end it on.
func (n *NIC) openPass() gnet.PassHandler {
	if !n.cfg.Passes {
		return nil
	}
	n.rxMu.Lock()
	defer n.rxMu.Unlock()
	ph, _ := n.h.(gnet.PassHandler)
	if ph != nil {
		ph.ReceivePassOpen()
	}
	return ph
}

func (n *NIC) closePass(ph gnet.PassHandler) {
	if ph != nil {
		n.rxMu.Lock()
		ph.ReceivePassDone()
		n.rxMu.Unlock()
	}
}

func (n *NIC) drain() {
	for {
		select {
		case b := <-n.txq:
			b.Release()
		default:
			return
		}
	}
}

// RxBuffer is the memory the NIC lends received frames from, for tests
// that check a handler's frame is the NIC's buffer, not a copy.
func (n *NIC) RxBuffer() []byte { return n.rxBuf[:] }

// Queued is the number of frames waiting in the TX ring.
func (n *NIC) Queued() int { return len(n.txq) }
