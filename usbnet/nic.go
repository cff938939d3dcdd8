package usbnet

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/usbnet/usb"
)

// Defaults.
const (
	// DefaultRxTransfers is how many bulk-in transfers are kept in flight.
	// One is not enough: while the host handles a completed transfer the
	// device has nowhere to put the next frame and NAKs, and the link
	// idles for the completion latency of every transfer (FreeBSD's axge,
	// sys/dev/usb/net/if_axge.c, went from one to four and lost the
	// stalls).
	DefaultRxTransfers = 4
	// DefaultTxQueue is how many bulk-out transfers may be queued.
	DefaultTxQueue = 4
	// DefaultRxSize is a bulk-in transfer's size for chips that send one
	// frame per transfer: larger than any frame, and a multiple of every
	// max packet size (8..1024), so a frame always ends the transfer with
	// a short packet or a zero-length one.
	DefaultRxSize = gnet.RxBufSize

	// maxFrame is the largest frame delivered or sent: MTU + header + one
	// VLAN tag (net.RxBufSize's rule).
	maxFrameOver = gnet.EthHeaderLen + gnet.VLANTagLen

	// troubleBackoff is how long an endpoint that kept failing rests
	// before its transfers are resubmitted, so a device in trouble is not
	// polled in a tight loop (Linux usbnet defers likewise on -EPROTO).
	troubleBackoff = 20 * time.Millisecond
	// maxConsecutiveErrors failed transfers in a row on one endpoint send
	// it to the recovery goroutine instead of being resubmitted at once.
	maxConsecutiveErrors = 8
	// drainWait bounds how long Stop and recovery wait for the completions
	// of an aborted pipe before aborting it again; Stop gives up after
	// stopTries more (5 s).
	drainWait = 100 * time.Millisecond
	stopTries = 50
)

// Errors.
var (
	ErrConfig  = errors.New("usbnet: bad configuration")
	ErrStopped = errors.New("usbnet: stopped")
	ErrSize    = errors.New("usbnet: frame size")
	// ErrGone is returned by Transmit once the device was unplugged; it
	// wraps usb.ErrGone.
	ErrGone = fmt.Errorf("usbnet: %w", usb.ErrGone)
)

// Hooks are what the chip driver does for the framework at the points
// only it knows how to handle. Each may be nil.
type Hooks struct {
	// StopMAC stops the chip's receiver and transmitter (a control
	// transfer): the first step of Stop, before the transfers are
	// cancelled, so the chip stops filling buffers that are going away.
	StopMAC func()
	// ClearHalt clears a halted endpoint: CLEAR_FEATURE(ENDPOINT_HALT),
	// then Pipe.ResetToggle (usb.Device.ClearHalt does both). It is a
	// control transfer that sleeps, so the framework calls it from its own
	// recovery goroutine, never from a completion, and only while no
	// transfer of the pipe is submitted. Without it a stalled endpoint
	// stays stalled and its frames are counted lost.
	ClearHalt func(p usb.Pipe) error
	// Gone reports whether the device was unplugged (usb.Device.Gone).
	// Without it Gone sees an unplug only when a transfer fails with
	// usb.ErrGone, and a teardown that cancels every transfer first
	// (the core's order) leaves none to fail.
	Gone func() bool
}

// Config describes one USB Ethernet port to the framework. The pipes
// belong to the NIC from New on: Stop closes them.
type Config struct {
	// Name identifies the port in errors ("usb0").
	Name string
	// In and Out are the bulk endpoints frames travel on.
	In, Out usb.Pipe
	// Status is the interrupt-IN endpoint the chip reports link changes
	// on; nil for a chip whose PHY the driver polls (it calls SetLink).
	// With Status, Framing must implement StatusParser.
	Status  usb.Pipe
	Framing Framing
	Hooks   Hooks
	MAC     gnet.MAC
	// MTU is the largest payload (default 1500).
	MTU int
	// RxTransfers is how many bulk-in transfers are in flight (default
	// DefaultRxTransfers), each RxSize bytes (default DefaultRxSize; a chip
	// that aggregates frames sets its aggregation buffer size).
	RxTransfers, RxSize int
	// TxQueue is how many frames may wait in bulk-out transfers (default
	// DefaultTxQueue).
	TxQueue int
	// StatusSize is the interrupt transfer's size (default the
	// endpoint's max packet size).
	StatusSize int
	// Link is the state until the chip reports one (a CDC device reports
	// its connection only after it is configured; until then, down).
	Link gnet.LinkState
}

// Stats are the framework's counters, read without a lock (see net.Counter).
type Stats struct {
	RxFrames, RxBytes, TxFrames, TxBytes gnet.Counter
	// RxDecodeDrops are frames the chip's framing discarded, by the reason
	// it gave (a malformed transfer, a chip-reported error).
	RxDecodeDrops [gnet.NumDropReasons]gnet.Counter
	// RxOversize and RxUndersize: frames the framing delivered that are
	// longer than MTU + header + VLAN tag, or shorter than a header.
	RxOversize, RxUndersize gnet.Counter
	// RxXferErrors: bulk-in transfers that failed (transaction, babble,
	// data buffer); whatever they held is lost.
	RxXferErrors gnet.Counter
	// RxEmpty: bulk-in transfers that ended with no data (a stray
	// zero-length packet); not a frame, not a loss.
	RxEmpty gnet.Counter
	// TxFull: Transmit calls refused with ErrTxFull.
	TxFull gnet.Counter
	// TxTooBig: frames refused because the framing could not encode them.
	TxTooBig gnet.Counter
	// TxXferErrors: accepted frames whose bulk-out transfer failed or was
	// cancelled (by Stop, a stall, an unplug): lost.
	TxXferErrors gnet.Counter
	// Stalls: transfers that ended with the endpoint halted; Recoveries:
	// endpoints brought back (clear-halt, or a rest after repeated
	// errors); RecoveryErrors: clear-halts that failed.
	Stalls, Recoveries, RecoveryErrors gnet.Counter
	// StatusReports: interrupt transfers received; LinkChanges: changes
	// reported to the handler.
	StatusReports, LinkChanges gnet.Counter
	// SubmitErrors: transfers that could not be resubmitted (the pipe was
	// closed or the device gone).
	SubmitErrors gnet.Counter
	// StopTimeouts: endpoints whose cancelled transfers Stop gave up
	// waiting for (a controller that does not honour Abort).
	StopTimeouts gnet.Counter
}

// trouble states of an endpoint.
const (
	fine uint32 = iota
	stalled
	failing
)

// endpoint is one pipe and its transfers.
type endpoint struct {
	pipe  usb.Pipe
	xfers []*usb.Transfer
	// inflight counts transfers submitted or still inside their Done.
	inflight atomic.Int32
	// trouble is fine, stalled or failing; set under NIC.subMu (write),
	// read under subMu (read) before every submit.
	trouble atomic.Uint32
	errRun  atomic.Int32 // consecutive failed transfers
}

// NIC is a USB Ethernet port: a net.NIC (with net.CounterReader) built
// from a chip's pipes and framing.
//
// Handler calls (Receive and LinkChanged) are serialised by a lock the
// NIC holds around them, whatever goroutines the host controller
// completes transfers on.
type NIC struct {
	cfg         Config
	name        string
	rxMax       int // largest frame delivered or sent
	txMaxPacket int // bulk-out wMaxPacketSize, for the framing
	status      StatusParser

	in, out, st endpoint

	// subMu orders submissions against Stop and recovery: a transfer is
	// submitted only under subMu held for reading, with stopped, gone and
	// its endpoint's trouble checked under it; they change under the
	// write lock. After Stop took it once, nothing is submitted again.
	subMu   sync.RWMutex
	stopped atomic.Bool
	gone    atomic.Bool
	started atomic.Bool

	// rxMu serialises Handler calls (and the framing's DecodeRx and
	// ParseStatus, which may keep state).
	rxMu  sync.Mutex
	h     gnet.Handler
	waker gnet.TxWaker
	link  atomic.Uint32 // packed LinkState

	txMu   sync.Mutex
	txFree []*usb.Transfer
	txOwed bool // a Transmit got ErrTxFull: TxReady is owed

	deliverFn func([]byte) // n.deliver, bound once (no allocation per transfer)

	kick     chan struct{} // wakes the recovery goroutine
	drained  chan struct{} // a completion dropped an endpoint's inflight to 0
	quit     chan struct{}
	wg       sync.WaitGroup
	stopOnce sync.Once

	Stats Stats
}

// New sets up a NIC's transfers on the given pipes. Nothing is submitted
// until Start.
func New(cfg Config) (*NIC, error) {
	if cfg.In == nil || cfg.Out == nil || cfg.Framing == nil {
		return nil, fmt.Errorf("%w: In, Out and Framing are required", ErrConfig)
	}
	if cfg.MTU == 0 {
		cfg.MTU = gnet.DefaultMTU
	}
	if cfg.RxTransfers == 0 {
		cfg.RxTransfers = DefaultRxTransfers
	}
	if cfg.RxSize == 0 {
		cfg.RxSize = DefaultRxSize
	}
	if cfg.TxQueue == 0 {
		cfg.TxQueue = DefaultTxQueue
	}
	n := &NIC{cfg: cfg, name: cfg.Name, rxMax: cfg.MTU + maxFrameOver,
		kick: make(chan struct{}, 1), drained: make(chan struct{}, 1), quit: make(chan struct{})}
	if n.name == "" {
		n.name = "usbnet"
	}
	switch {
	case cfg.MTU < 68 || n.rxMax > gnet.RxBufSize:
		return nil, fmt.Errorf("%w: MTU %d", ErrConfig, cfg.MTU)
	case cfg.RxTransfers < 1 || cfg.RxTransfers > 64 || cfg.TxQueue < 1 || cfg.TxQueue > 256:
		return nil, fmt.Errorf("%w: %d RX transfers, TX queue %d", ErrConfig, cfg.RxTransfers, cfg.TxQueue)
	case cfg.RxSize < gnet.EthHeaderLen:
		return nil, fmt.Errorf("%w: RX transfer size %d", ErrConfig, cfg.RxSize)
	}
	if cfg.Status != nil {
		sp, ok := cfg.Framing.(StatusParser)
		if !ok {
			return nil, fmt.Errorf("%w: a status endpoint needs a Framing that is a StatusParser", ErrConfig)
		}
		n.status = sp
	}
	n.deliverFn = n.deliver
	n.txMaxPacket = cfg.Out.Config().MaxPacket
	n.storeLink(cfg.Link)

	var err error
	n.in = endpoint{pipe: cfg.In}
	for i := 0; i < cfg.RxTransfers; i++ {
		t, e := cfg.In.NewTransfer(cfg.RxSize)
		if e != nil {
			err = e
			break
		}
		t.Done = n.rxDone
		n.in.xfers = append(n.in.xfers, t)
	}
	n.out = endpoint{pipe: cfg.Out}
	for i := 0; err == nil && i < cfg.TxQueue; i++ {
		t, e := cfg.Out.NewTransfer(n.rxMax + cfg.Framing.TxOverhead())
		if e != nil {
			err = e
			break
		}
		t.Done = n.txDone
		n.out.xfers = append(n.out.xfers, t)
	}
	n.txFree = append(make([]*usb.Transfer, 0, len(n.out.xfers)), n.out.xfers...)
	if err == nil && cfg.Status != nil {
		n.st = endpoint{pipe: cfg.Status}
		size := cfg.StatusSize
		if size == 0 {
			size = cfg.Status.Config().MaxPacket
		}
		if size < 1 {
			return nil, fmt.Errorf("%w: status transfer size %d", ErrConfig, size)
		}
		t, e := cfg.Status.NewTransfer(size)
		if e != nil {
			err = e
		} else {
			t.Done = n.statusDone
			n.st.xfers = []*usb.Transfer{t}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("usbnet %s: setting up transfers: %w", n.name, err)
	}
	return n, nil
}

// Link states pack into one word so Link reads them without a lock.
func packLink(l gnet.LinkState) uint32 {
	v := uint32(l.SpeedMbps&0xffff) << 2
	if l.Up {
		v |= 1
	}
	if l.FullDuplex {
		v |= 2
	}
	return v
}

func unpackLink(v uint32) gnet.LinkState {
	return gnet.LinkState{Up: v&1 != 0, FullDuplex: v&2 != 0, SpeedMbps: int(v >> 2)}
}

func (n *NIC) storeLink(l gnet.LinkState) {
	if !l.Up {
		l = gnet.LinkState{}
	}
	n.link.Store(packLink(l))
}

// MACAddress implements net.NIC.
func (n *NIC) MACAddress() gnet.MAC { return n.cfg.MAC }

// MTU implements net.NIC.
func (n *NIC) MTU() int { return n.cfg.MTU }

// Capabilities implements net.NIC: Transmit copies (gathers) the frame
// into a bulk-out transfer and releases it before returning.
func (n *NIC) Capabilities() gnet.Capabilities { return gnet.CapTxCopy | gnet.CapScatterGather }

// Link implements net.NIC.
func (n *NIC) Link() gnet.LinkState { return unpackLink(n.link.Load()) }

// Start implements net.NIC: it submits the bulk-in transfers and the
// status transfer and starts the recovery goroutine.
func (n *NIC) Start(h gnet.Handler) error {
	if h == nil {
		return fmt.Errorf("%w: nil handler", ErrConfig)
	}
	if n.started.Swap(true) {
		return fmt.Errorf("%w: started twice", ErrConfig)
	}
	n.rxMu.Lock()
	n.h = h
	n.waker, _ = h.(gnet.TxWaker)
	h.LinkChanged(n.Link())
	n.rxMu.Unlock()
	n.wg.Add(1)
	go n.recoveryLoop()
	n.subMu.RLock()
	defer n.subMu.RUnlock()
	if n.stopped.Load() {
		return ErrStopped
	}
	for _, ep := range []*endpoint{&n.in, &n.st} {
		for _, t := range ep.xfers {
			n.submitIn(ep, t)
		}
	}
	if n.gone.Load() {
		return ErrGone
	}
	return nil
}

// submitIn (re)submits an IN transfer for its full size. The caller holds
// subMu for reading and has checked the NIC and endpoint may submit.
func (n *NIC) submitIn(ep *endpoint, t *usb.Transfer) {
	t.Len = len(t.Buf)
	t.Flags = usb.ShortOK
	ep.inflight.Add(1)
	if err := ep.pipe.Submit(t); err != nil {
		ep.inflight.Add(-1)
		switch {
		case errors.Is(err, usb.ErrCancelled):
			// The pipe is being aborted (Stop, recovery, the core's
			// teardown); whoever aborts it resubmits, or nobody.
		case errors.Is(err, usb.ErrGone) || errors.Is(err, usb.ErrClosed):
			n.Stats.SubmitErrors.Add(1)
			n.gone.Store(true)
		default:
			n.Stats.SubmitErrors.Add(1)
		}
	}
}

// SetLink reports the link of a chip whose PHY the driver polls. It tells
// the handler about a change.
func (n *NIC) SetLink(l gnet.LinkState) {
	n.rxMu.Lock()
	n.setLinkLocked(l)
	n.rxMu.Unlock()
}

func (n *NIC) setLinkLocked(l gnet.LinkState) {
	if n.stopped.Load() {
		return // Stop reports the final carrier loss itself
	}
	old := n.link.Load()
	n.storeLink(l)
	if n.link.Load() == old || n.h == nil {
		return
	}
	n.Stats.LinkChanges.Add(1)
	n.h.LinkChanged(n.Link())
}

// rxDone is every bulk-in transfer's completion.
func (n *NIC) rxDone(t *usb.Transfer) {
	ep := &n.in
	if t.Err == nil {
		ep.errRun.Store(0)
		if t.Actual == 0 {
			n.Stats.RxEmpty.Add(1)
		} else {
			n.rxMu.Lock()
			if !n.stopped.Load() && !n.gone.Load() {
				dropped, why := n.cfg.Framing.DecodeRx(t.Buf[:t.Actual], n.deliverFn)
				if dropped > 0 {
					if why >= gnet.NumDropReasons {
						why = gnet.DropRxBadDescriptor
					}
					n.Stats.RxDecodeDrops[why].Add(uint32(dropped))
				}
			}
			n.rxMu.Unlock()
		}
	} else if !errors.Is(t.Err, usb.ErrCancelled) {
		n.Stats.RxXferErrors.Add(1)
	}
	n.resubmitIn(ep, t)
}

// deliver hands one decoded frame to the handler; rxMu is held.
func (n *NIC) deliver(frame []byte) {
	switch {
	case len(frame) < gnet.EthHeaderLen:
		n.Stats.RxUndersize.Add(1)
	case len(frame) > n.rxMax:
		n.Stats.RxOversize.Add(1)
	default:
		n.Stats.RxFrames.Add(1)
		n.Stats.RxBytes.Add(uint32(len(frame)))
		l := len(frame)
		n.h.Receive(frame[:l:l])
	}
}

// statusDone is the interrupt transfer's completion.
func (n *NIC) statusDone(t *usb.Transfer) {
	ep := &n.st
	if t.Err == nil {
		ep.errRun.Store(0)
		if t.Actual > 0 {
			n.Stats.StatusReports.Add(1)
			n.rxMu.Lock()
			if l, ok := n.status.ParseStatus(t.Buf[:t.Actual]); ok {
				n.setLinkLocked(l)
			}
			n.rxMu.Unlock()
		}
	}
	n.resubmitIn(ep, t)
}

// resubmitIn ends an IN completion: the transfer goes back on the
// endpoint, or, when the endpoint is in trouble or the NIC stopping,
// stays idle for the recovery goroutine (or for good).
func (n *NIC) resubmitIn(ep *endpoint, t *usb.Transfer) {
	defer n.completed(ep)
	if n.classify(ep, t.Err) {
		return
	}
	n.subMu.RLock()
	if !n.stopped.Load() && !n.gone.Load() && ep.trouble.Load() == fine {
		n.submitIn(ep, t)
	}
	n.subMu.RUnlock()
}

// classify looks at a completion's error and puts the endpoint (or the
// NIC) in trouble if needed. It reports whether the transfer must not be
// resubmitted from here.
func (n *NIC) classify(ep *endpoint, err error) bool {
	switch {
	case err == nil:
		return false
	case errors.Is(err, usb.ErrCancelled):
		// Stop, recovery or an unplug cancelled it; whoever did resubmits.
		return true
	case errors.Is(err, usb.ErrGone) || errors.Is(err, usb.ErrClosed):
		n.setGone()
		return true
	case errors.Is(err, usb.ErrStall):
		n.Stats.Stalls.Add(1)
		n.setTrouble(ep, stalled)
		return true
	}
	if ep.errRun.Add(1) >= maxConsecutiveErrors {
		n.setTrouble(ep, failing)
		return true
	}
	return false
}

func (n *NIC) setTrouble(ep *endpoint, how uint32) {
	n.subMu.Lock()
	if ep.trouble.Load() == fine || how == stalled {
		ep.trouble.Store(how)
	}
	n.subMu.Unlock()
	select {
	case n.kick <- struct{}{}:
	default:
	}
}

// setGone marks the device unplugged: nothing is submitted any more, the
// handler hears the link go down (once), and Transmit refuses frames.
// The USB core detaches the driver, whose Detach calls Stop.
func (n *NIC) setGone() {
	n.subMu.Lock()
	was := n.gone.Swap(true)
	n.subMu.Unlock()
	if was {
		return
	}
	n.rxMu.Lock()
	n.setLinkLocked(gnet.LinkState{})
	n.rxMu.Unlock()
}

// completed is the last thing a completion does.
func (n *NIC) completed(ep *endpoint) {
	if ep.inflight.Add(-1) == 0 {
		select {
		case n.drained <- struct{}{}:
		default:
		}
	}
}

// txDone is every bulk-out transfer's completion: the transfer goes back
// to the free list, and a TxReady owed is paid.
func (n *NIC) txDone(t *usb.Transfer) {
	ep := &n.out
	if t.Err != nil {
		n.Stats.TxXferErrors.Add(1)
		n.classify(ep, t.Err)
	} else {
		ep.errRun.Store(0)
	}
	n.txMu.Lock()
	n.txFree = append(n.txFree, t)
	owed := n.txOwed && ep.trouble.Load() == fine
	if owed {
		n.txOwed = false
	}
	n.txMu.Unlock()
	n.completed(ep)
	if owed && n.waker != nil && !n.stopped.Load() {
		n.waker.TxReady()
	}
}

// Transmit implements net.NIC: the frame is encoded (copied) into a free
// bulk-out transfer, which is submitted, and b is released before
// Transmit returns. With every transfer queued it returns ErrTxFull and
// calls the handler's TxReady (net.TxWaker) when one completes.
func (n *NIC) Transmit(b gnet.TxBuf) error {
	l := b.Len()
	if l < gnet.EthHeaderLen || l > n.rxMax {
		n.Stats.TxTooBig.Add(1)
		return fmt.Errorf("%w: %d bytes", ErrSize, l)
	}
	if !n.started.Load() || n.stopped.Load() {
		return ErrStopped
	}
	if n.gone.Load() {
		return ErrGone
	}
	if n.link.Load()&1 == 0 {
		return gnet.ErrLinkDown
	}
	ep := &n.out
	n.txMu.Lock()
	k := len(n.txFree)
	if k == 0 || ep.trouble.Load() != fine {
		n.txOwed = true // before the caller can see ErrTxFull
		n.txMu.Unlock()
		n.Stats.TxFull.Add(1)
		return gnet.ErrTxFull
	}
	t := n.txFree[k-1]
	n.txFree = n.txFree[:k-1]
	n.txMu.Unlock()

	length, flags, err := n.cfg.Framing.EncodeTx(t.Buf, b.Segments(), l, n.txMaxPacket)
	if err == nil && (length < 1 || length > len(t.Buf)) {
		err = fmt.Errorf("%w: framing made a %d-byte transfer of a %d-byte buffer", ErrSize, length, len(t.Buf))
	}
	if err != nil {
		n.putFree(t)
		n.Stats.TxTooBig.Add(1)
		return err
	}
	t.Len, t.Flags = length, flags

	n.subMu.RLock()
	switch {
	case n.stopped.Load():
		err = ErrStopped
	case n.gone.Load():
		err = ErrGone
	default:
		ep.inflight.Add(1)
		if err = ep.pipe.Submit(t); err != nil {
			ep.inflight.Add(-1)
			if errors.Is(err, usb.ErrGone) || errors.Is(err, usb.ErrClosed) {
				n.gone.Store(true)
				err = ErrGone
			}
		}
	}
	n.subMu.RUnlock()
	if err != nil {
		n.putFree(t)
		return err
	}
	n.Stats.TxFrames.Add(1)
	n.Stats.TxBytes.Add(uint32(l))
	b.Release()
	return nil
}

func (n *NIC) putFree(t *usb.Transfer) {
	n.txMu.Lock()
	n.txFree = append(n.txFree, t)
	n.txMu.Unlock()
}

// recoveryLoop is the goroutine that brings endpoints in trouble back:
// it cancels what is left on the pipe, waits for every completion, clears
// a halt (a control transfer, which may sleep) or rests after repeated
// errors, and resubmits.
func (n *NIC) recoveryLoop() {
	defer n.wg.Done()
	for {
		select {
		case <-n.quit:
			return
		case <-n.kick:
		}
		for _, ep := range []*endpoint{&n.in, &n.out, &n.st} {
			if ep.pipe == nil || ep.trouble.Load() == fine {
				continue
			}
			if !n.recoverEndpoint(ep) {
				return
			}
		}
	}
}

// recoverEndpoint reports false when the NIC is stopping.
func (n *NIC) recoverEndpoint(ep *endpoint) bool {
	if !n.drain(ep) {
		return false
	}
	if ep.trouble.Load() == stalled {
		var err error
		if n.cfg.Hooks.ClearHalt != nil {
			err = n.cfg.Hooks.ClearHalt(ep.pipe)
		} else {
			err = errors.New("no ClearHalt hook")
		}
		if err != nil {
			n.Stats.RecoveryErrors.Add(1)
			if errors.Is(err, usb.ErrGone) {
				n.setGone()
				return true
			}
		}
	}
	select {
	case <-n.quit:
		return false
	case <-time.After(troubleBackoff):
	}
	n.subMu.Lock()
	ep.trouble.Store(fine)
	ep.errRun.Store(0)
	n.subMu.Unlock()
	n.Stats.Recoveries.Add(1)
	if ep == &n.out {
		n.txMu.Lock()
		owed := n.txOwed
		n.txOwed = false
		n.txMu.Unlock()
		if owed && n.waker != nil && !n.stopped.Load() {
			n.waker.TxReady()
		}
		return true
	}
	n.subMu.RLock()
	if !n.stopped.Load() && !n.gone.Load() {
		for _, t := range ep.xfers {
			n.submitIn(ep, t)
		}
	}
	n.subMu.RUnlock()
	return true
}

// drain aborts an endpoint's pipe and waits until none of its transfers
// is submitted or in its completion. It reports false if the NIC began
// stopping meanwhile (Stop drains for itself).
func (n *NIC) drain(ep *endpoint) bool {
	for {
		ep.pipe.Abort()
		deadline := time.Now().Add(drainWait)
		for ep.inflight.Load() != 0 && time.Now().Before(deadline) {
			select {
			case <-n.quit:
				return false
			case <-n.drained:
			case <-time.After(time.Millisecond):
			}
		}
		if ep.inflight.Load() == 0 {
			return true
		}
	}
}

// Stop implements net.NIC, in the order a USB Ethernet port must come
// down (FreeBSD's usb_ethernet detach and the fixes): nothing is
// submitted any more; the chip's MAC is stopped (Hooks.StopMAC); the
// recovery goroutine ends; every transfer is cancelled and its completion
// waited for (frames waiting in bulk-out transfers are counted lost); the
// pipes are closed, which frees the transfers' buffers. After Stop the
// handler is not called again. The USB core then detaches the device.
func (n *NIC) Stop() {
	n.stopOnce.Do(n.stop)
}

func (n *NIC) stop() {
	n.subMu.Lock()
	n.stopped.Store(true)
	n.subMu.Unlock()
	if n.cfg.Hooks.StopMAC != nil {
		n.cfg.Hooks.StopMAC()
	}
	close(n.quit)
	n.wg.Wait()
	for _, ep := range []*endpoint{&n.in, &n.out, &n.st} {
		if ep.pipe == nil {
			continue
		}
		for try := 0; ; try++ {
			ep.pipe.Abort()
			deadline := time.Now().Add(drainWait)
			for ep.inflight.Load() != 0 && time.Now().Before(deadline) {
				select {
				case <-n.drained:
				case <-time.After(time.Millisecond):
				}
			}
			if ep.inflight.Load() == 0 {
				break
			}
			if try == stopTries {
				// A controller that never completes what it was told to
				// cancel: counted, and Stop goes on rather than hang a
				// shutdown or an unplug for good (Close aborts once more).
				n.Stats.StopTimeouts.Add(1)
				break
			}
		}
	}
	// A handler call in progress has returned once rxMu is ours. The
	// handler hears the carrier go (a port that stopped, or was
	// unplugged, has none), then nothing more.
	n.rxMu.Lock()
	if n.Link().Up && n.h != nil {
		n.storeLink(gnet.LinkState{})
		n.Stats.LinkChanges.Add(1)
		n.h.LinkChanged(gnet.LinkState{})
	}
	n.storeLink(gnet.LinkState{})
	n.h = nil
	n.rxMu.Unlock()
	for _, ep := range []*endpoint{&n.in, &n.out, &n.st} {
		if ep.pipe != nil {
			ep.pipe.Close()
			ep.xfers = nil
		}
	}
	n.txMu.Lock()
	n.txFree = nil
	n.txMu.Unlock()
}

// Pipes returns the pipes the NIC was built on (status is nil without a
// status endpoint), for diagnostics and for tests that drive an endpoint
// beside the NIC.
func (n *NIC) Pipes() (in, out, status usb.Pipe) { return n.cfg.In, n.cfg.Out, n.cfg.Status }

// Gone reports whether the device was unplugged: a transfer ended with
// usb.ErrGone, or Hooks.Gone says so.
func (n *NIC) Gone() bool {
	return n.gone.Load() || (n.cfg.Hooks.Gone != nil && n.cfg.Hooks.Gone())
}

// Counters implements net.CounterReader.
func (n *NIC) Counters() gnet.Counters {
	var c gnet.Counters
	s := &n.Stats
	c.RxFrames, c.RxBytes = s.RxFrames.Load(), s.RxBytes.Load()
	c.TxFrames, c.TxBytes = s.TxFrames.Load(), s.TxBytes.Load()
	for i := range s.RxDecodeDrops {
		c.Drops[i] = s.RxDecodeDrops[i].Load()
	}
	c.Drops[gnet.DropRxOversize] += s.RxOversize.Load()
	c.Drops[gnet.DropRxUndersize] += s.RxUndersize.Load()
	c.Drops[gnet.DropRxErrors] += s.RxXferErrors.Load()
	c.Drops[gnet.DropTxErrors] += s.TxXferErrors.Load()
	return c
}

var (
	_ gnet.NIC           = (*NIC)(nil)
	_ gnet.CounterReader = (*NIC)(nil)
)
