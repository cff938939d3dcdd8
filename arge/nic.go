package arge

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	gnet "github.com/gowrt/gowrt/net"
)

// NIC presents a Driver through the gowrt NIC contract (net.NIC), so the
// software bridge and the gVisor stack use an arge MAC like any other port.
//
// Transmit is zero-copy: the TxBuf's segments are the DMA fragments, and
// the TxBuf is released from TXDone once the hardware is finished with
// them. Receive is zero-copy too: the handler gets the DMA buffer itself,
// lent for the duration of Handler.Receive and re-posted at once, which
// keeps the RX ring full whatever the handler holds on to (a handler that
// keeps a frame copies it, as the net contract says).
type NIC struct {
	d   *Driver
	mtu int

	mu      sync.Mutex // guards h and pending
	h       gnet.Handler
	pending []gnet.TxBuf  // by token: frames the hardware still owns
	free    []uint64      // unused tokens
	owed    bool          // a Transmit returned ErrTxFull: TxReady is owed
	wake    chan struct{} // to the waker goroutine: pay the TxReady

	stopped bool // Stop has begun (mu): no more calls into h

	stop     chan struct{} // closed by Stop; set once by Start
	done     chan struct{}
	stopOnce sync.Once
	// PollInterval is how often the MAC's MIB drop counters are read
	// (Driver.UpdateMIB): often enough that their 12 bits do not wrap.
	PollInterval time.Duration

	rxTooBig atomic.Uint64 // frames longer than the contract's RxBufSize
}

var (
	_ gnet.NIC           = (*NIC)(nil)
	_ gnet.CounterReader = (*NIC)(nil)
)

// NewNIC creates the driver for cfg with the NIC as its Receive and TXDone
// callbacks (cfg.Receive and cfg.TXDone must be nil). The driver is
// started by Start.
func NewNIC(cfg Config) (*NIC, error) {
	if cfg.Receive != nil || cfg.TXDone != nil {
		return nil, fmt.Errorf("%w: NewNIC owns the Receive and TXDone callbacks", ErrConfig)
	}
	n := &NIC{mtu: gnet.DefaultMTU, PollInterval: 250 * time.Millisecond, wake: make(chan struct{}, 1)}
	cfg.Receive = n.receive
	cfg.TXDone = n.txDone
	d, err := New(cfg)
	if err != nil {
		return nil, err
	}
	n.d = d
	ring := d.txN
	n.pending = make([]gnet.TxBuf, ring)
	n.free = make([]uint64, 0, ring)
	for i := ring - 1; i >= 0; i-- {
		n.free = append(n.free, uint64(i))
	}
	return n, nil
}

// Driver returns the underlying driver (its counters are Driver().Stats).
func (n *NIC) Driver() *Driver { return n.d }

// Interrupt is the MAC's interrupt handler (an intr.Handler), which the
// board connects to the MAC's interrupt line (Driver.Interrupt).
func (n *NIC) Interrupt() { n.d.Interrupt() }

// MACAddress implements net.NIC.
func (n *NIC) MACAddress() gnet.MAC { return n.d.cfg.MAC }

// MTU implements net.NIC.
func (n *NIC) MTU() int { return n.mtu }

// Capabilities implements net.NIC: the TX path gathers up to MaxTXFrags
// fragments.
func (n *NIC) Capabilities() gnet.Capabilities { return gnet.CapScatterGather }

// Link implements net.NIC: the link last given to SetLink.
func (n *NIC) Link() gnet.LinkState { return n.d.Link() }

// SetLink implements phy.LinkSetter: whoever follows the MAC's PHY (the
// board, with phy.Follow) tells the NIC the negotiated link. The MAC is
// reprogrammed for its speed and duplex (Driver.SetLink) and, if the NIC
// is started, the handler is told, from the receive context's lock so
// that the call is serialised with Receive as the contract requires.
func (n *NIC) SetLink(l gnet.LinkState) error {
	if !l.Up {
		l = gnet.LinkState{}
	}
	if l == n.d.Link() {
		return nil
	}
	if err := n.d.SetLink(l); err != nil {
		return err
	}
	n.d.rxMu.Lock()
	defer n.d.rxMu.Unlock()
	n.mu.Lock()
	h, stopped := n.h, n.stopped
	n.mu.Unlock()
	if h != nil && !stopped {
		h.LinkChanged(l)
	}
	return nil
}

// Start implements net.NIC: it starts the MAC and a goroutine that reads
// its MIB drop counters. Link changes come from SetLink.
func (n *NIC) Start(h gnet.Handler) error {
	n.mu.Lock()
	if n.h != nil {
		n.mu.Unlock()
		return errors.New("arge: NIC already started")
	}
	n.h = h
	n.mu.Unlock()
	if err := n.d.Start(); err != nil {
		return err
	}
	h.LinkChanged(n.Link())
	n.stop, n.done = make(chan struct{}), make(chan struct{})
	go n.pollMIB(n.stop, n.done)
	go n.waker(h, n.stop)
	return nil
}

func (n *NIC) pollMIB(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(n.PollInterval)
	defer t.Stop()
	for {
		n.d.UpdateMIB()
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}

func (n *NIC) receive(frame []byte) {
	n.mu.Lock()
	h := n.h
	n.mu.Unlock()
	if h == nil {
		return
	}
	if len(frame) > gnet.RxBufSize {
		// Cannot happen while RX buffers hold at most MaxFrameLen; the
		// contract promises handlers no longer frame, so it would be
		// counted and dropped.
		n.rxTooBig.Add(1)
		return
	}
	h.Receive(frame)
}

// Counters implements net.CounterReader from the driver's counters and
// the MAC's MIB drop counters, which it reads first (Driver.UpdateMIB).
func (n *NIC) Counters() gnet.Counters {
	n.d.UpdateMIB()
	st := &n.d.Stats
	var c gnet.Counters
	c.RxFrames, c.RxBytes = st.RxFrames.Load(), st.RxBytes.Load()
	c.TxFrames, c.TxBytes = st.TxFrames.Load(), st.TxBytes.Load()
	c.Drops[gnet.DropRxOversize] = st.RxOversize.Load() + n.rxTooBig.Load()
	c.Drops[gnet.DropRxUndersize] = st.RxUndersize.Load()
	c.Drops[gnet.DropRxErrors] = st.RxErrors.Load()
	c.Drops[gnet.DropRxNoRoom] = st.RxDropped.Load()
	c.Drops[gnet.DropRxBadDescriptor] = st.RxBad.Load()
	c.Drops[gnet.DropTxErrors] = st.TxUnderruns.Load() + st.TxBusErrors.Load()
	return c
}

// Transmit implements net.NIC. A full ring is ErrTxFull; the caller keeps
// the buffer, and a handler that implements net.TxWaker is told with
// TxReady when descriptors are free again.
func (n *NIC) Transmit(b gnet.TxBuf) error {
	if !n.d.Link().Up {
		return gnet.ErrLinkDown
	}
	n.mu.Lock()
	if len(n.free) == 0 {
		// Record the wakeup before looking again, so a completion between
		// the check and the return cannot be missed.
		n.owed = true
		n.mu.Unlock()
		n.d.Reclaim()
		n.mu.Lock()
		if len(n.free) == 0 {
			n.mu.Unlock()
			return gnet.ErrTxFull
		}
	}
	tok := n.free[len(n.free)-1]
	n.free = n.free[:len(n.free)-1]
	n.pending[tok] = b
	n.mu.Unlock()
	err := n.d.Transmit(b.Segments(), tok)
	if err != nil {
		n.mu.Lock()
		n.pending[tok] = nil
		n.free = append(n.free, tok)
		if errors.Is(err, ErrRingFull) {
			n.owed = true
		}
		n.mu.Unlock()
		if errors.Is(err, ErrRingFull) {
			n.d.Reclaim() // may free descriptors and pay the wakeup at once
			return gnet.ErrTxFull
		}
		if errors.Is(err, ErrStopped) {
			return gnet.ErrLinkDown
		}
		return err
	}
	return nil
}

func (n *NIC) txDone(tok uint64) {
	n.mu.Lock()
	if tok >= uint64(len(n.pending)) || n.pending[tok] == nil {
		n.mu.Unlock()
		return
	}
	b := n.pending[tok]
	n.pending[tok] = nil
	n.free = append(n.free, tok)
	owed := n.owed
	n.owed = false
	n.mu.Unlock()
	b.Release()
	if owed {
		// txDone runs inside the driver's reclaim, under its TX lock, and
		// TxReady transmits: hand the wakeup to the waker goroutine.
		select {
		case n.wake <- struct{}{}:
		default:
		}
	}
}

// waker calls the handler's TxReady, outside every driver lock.
func (n *NIC) waker(h gnet.Handler, stop <-chan struct{}) {
	w, _ := h.(gnet.TxWaker)
	for {
		select {
		case <-stop:
			return
		case <-n.wake:
			if w != nil {
				w.TxReady()
			}
		}
	}
}

// Stop implements net.NIC: it stops the MIB poll and the MAC; frames still
// queued are released by the driver's Stop through TXDone. A SetLink after
// Stop reprograms the MAC but tells the handler nothing.
func (n *NIC) Stop() {
	n.mu.Lock()
	n.stopped = true
	n.mu.Unlock()
	n.d.rxMu.Lock() // a SetLink telling the handler has finished
	n.d.rxMu.Unlock()
	n.stopOnce.Do(func() {
		if n.stop != nil {
			close(n.stop)
			<-n.done
		}
	})
	_ = n.d.Stop()
	n.mu.Lock()
	for i, b := range n.pending {
		if b != nil {
			n.pending[i] = nil
			n.free = append(n.free, uint64(i))
			n.mu.Unlock()
			b.Release()
			n.mu.Lock()
		}
	}
	n.mu.Unlock()
}
