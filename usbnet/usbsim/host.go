package usbsim

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gowrt/gowrt/usbnet/usb"
)

// HostConfig describes a Host.
type HostConfig struct {
	Name  string // default "usbsim0"
	Ports int    // root ports; default 2
	// Latency is how long after a transfer finished on the bus its Done
	// is called: the interrupt and completion path of a real controller.
	// With it, a driver that keeps one transfer in flight idles the
	// endpoint for Latency after each, and one that keeps four does not.
	Latency time.Duration
	// Poll is how long the host waits before retrying when every
	// endpoint it has work for answered NAK (a frame on a real bus);
	// default 1 ms.
	Poll time.Duration
	// Retries is how many consecutive unanswered tokens make a
	// transaction error (UHCI's error counter: 3).
	Retries int
}

// Host is a host controller model without registers or DMA: it carries
// transfers out packet by packet against the Functions plugged into its
// root ports, with the host side of data toggles, NAK retries, short
// packets and the errors a real controller reports. It implements
// usb.HostController for tests of the core, of usbnet and of chip
// drivers.
//
// One scheduler goroutine runs every transaction (so a Function sees one
// call at a time, with the Host's lock held), one completion goroutine
// calls Done, in the order transfers finished, which is submission order
// per pipe.
type Host struct {
	cfg HostConfig

	mu         sync.Mutex
	cond       *sync.Cond // broadcast when a Done returned or work arrives
	ports      []hostPort // index 0 unused
	addrPort   map[uint8]int
	lastReset  int
	pipes      []*hostPipe
	completing []*hostXfer
	inDone     *hostXfer // whose Done is running
	portChange func(int)
	closed     bool
	wake       chan struct{}
	doneWake   chan struct{}
	wg         sync.WaitGroup

	stats HostStats
	// scratch receives IN packets before their toggle is checked (one
	// transaction at a time runs, under mu).
	scratch [1024]byte
}

// HostStats counts what happened on the Host's bus.
type HostStats struct {
	Transactions    uint64
	NAKs            uint64
	NoResponses     uint64
	Stalls          uint64
	ToggleDiscards  uint64 // IN packets dropped as retransmissions
	TransfersDone   uint64
	TransfersFailed uint64
}

type hostPort struct {
	f         Function
	connected bool
	enabled   bool
	changed   bool
	epoch     uint64 // bumped on every unplug: pipes of the old device are gone
	speed     usb.Speed
}

type hostPipe struct {
	h      *Host
	cfg    usb.PipeConfig
	port   int // 0: not bound to a port (tokens go to every enabled port)
	epoch  uint64
	queue  []*hostXfer
	toggle uint8
	closed bool
	abort  int
}

type hostXfer struct {
	t       *usb.Transfer
	p       *hostPipe
	gen     uint64 // submissions so far
	retired uint64 // submissions handed to Done (the transfer is idle again)
	done    uint64 // submissions whose Done returned
	// state
	queued  bool
	started bool
	stage   int // control: 0 setup, 1 data, 2 status
	off     int
	zlpSent bool
	errs    int
	due     time.Time
}

// Control-transfer stages as the host runs them.
const (
	hsSetup = iota
	hsData
	hsStatus
)

// NewHost starts a host model.
func NewHost(cfg HostConfig) *Host {
	if cfg.Name == "" {
		cfg.Name = "usbsim0"
	}
	if cfg.Ports <= 0 {
		cfg.Ports = 2
	}
	if cfg.Poll <= 0 {
		cfg.Poll = time.Millisecond
	}
	if cfg.Retries <= 0 {
		cfg.Retries = 3
	}
	h := &Host{cfg: cfg, ports: make([]hostPort, cfg.Ports+1), addrPort: map[uint8]int{},
		wake: make(chan struct{}, 1), doneWake: make(chan struct{}, 1)}
	h.cond = sync.NewCond(&h.mu)
	h.wg.Add(2)
	go h.schedule()
	go h.complete()
	return h
}

// Close stops the host: every pending transfer completes with ErrGone.
func (h *Host) Close() {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	h.closed = true
	for _, p := range h.pipes {
		h.failQueueLocked(p, usb.ErrGone)
	}
	h.mu.Unlock()
	h.kick()
	h.wg.Wait()
}

// Stats returns the bus counters.
func (h *Host) Stats() HostStats {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.stats
}

// Plug attaches f to root port (1-based); the port-change callback fires.
func (h *Host) Plug(port int, f Function) {
	h.mu.Lock()
	p := &h.ports[port]
	if p.f != nil {
		h.unplugLocked(port)
	}
	p.f, p.connected, p.changed, p.speed = f, true, true, f.Speed()
	cb := h.portChange
	h.mu.Unlock()
	if cb != nil {
		cb(port)
	}
}

// Unplug removes the function on port: the port disconnects and disables,
// transfers to the device fail with ErrGone, the callback fires.
func (h *Host) Unplug(port int) {
	h.mu.Lock()
	h.unplugLocked(port)
	cb := h.portChange
	h.mu.Unlock()
	h.kick()
	if cb != nil {
		cb(port)
	}
}

func (h *Host) unplugLocked(port int) {
	p := &h.ports[port]
	p.f, p.connected, p.enabled, p.changed = nil, false, false, true
	p.epoch++
	for a, pp := range h.addrPort {
		if pp == port {
			delete(h.addrPort, a)
		}
	}
	for _, pi := range h.pipes {
		if pi.port == port {
			h.failQueueLocked(pi, usb.ErrGone)
		}
	}
}

// Name implements usb.HostController.
func (h *Host) Name() string { return h.cfg.Name }

// Ports implements usb.HostController.
func (h *Host) Ports() int { return h.cfg.Ports }

func (h *Host) checkPort(port int) error {
	if port < 1 || port > h.cfg.Ports {
		return fmt.Errorf("%s: no port %d", h.cfg.Name, port)
	}
	return nil
}

// PortStatus implements usb.HostController.
func (h *Host) PortStatus(port int) (usb.PortStatus, error) {
	if err := h.checkPort(port); err != nil {
		return usb.PortStatus{}, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	p := &h.ports[port]
	st := usb.PortStatus{Connected: p.connected, Enabled: p.enabled, ConnectChanged: p.changed}
	if p.connected {
		st.Speed = p.speed
	}
	p.changed = false
	return st, nil
}

// ResetPort implements usb.HostController.
func (h *Host) ResetPort(port int) (usb.Speed, error) {
	if err := h.checkPort(port); err != nil {
		return 0, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	p := &h.ports[port]
	if p.f == nil {
		return 0, fmt.Errorf("%s: port %d: %w", h.cfg.Name, port, errNoDevice)
	}
	p.f.Reset()
	p.enabled = true
	h.lastReset = port
	for a, pp := range h.addrPort {
		if pp == port {
			delete(h.addrPort, a)
		}
	}
	return p.speed, nil
}

var errNoDevice = errors.New("nothing connected")

// DisablePort implements usb.HostController.
func (h *Host) DisablePort(port int) error {
	if err := h.checkPort(port); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ports[port].enabled = false
	for a, pp := range h.addrPort {
		if pp == port {
			delete(h.addrPort, a)
		}
	}
	return nil
}

// SetPortChange implements usb.HostController.
func (h *Host) SetPortChange(f func(port int)) {
	h.mu.Lock()
	h.portChange = f
	h.mu.Unlock()
}

// OpenPipe implements usb.HostController. A pipe to address 0 belongs to
// the port reset last; one to an address belongs to the port whose device
// took that address with SET_ADDRESS.
func (h *Host) OpenPipe(cfg usb.PipeConfig) (usb.Pipe, error) {
	if cfg.MaxPacket <= 0 || cfg.MaxPacket > 1024 {
		return nil, fmt.Errorf("%s: bad max packet size %d", h.cfg.Name, cfg.MaxPacket)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, usb.ErrGone
	}
	p := &hostPipe{h: h, cfg: cfg}
	if cfg.Address == 0 {
		p.port = h.lastReset
	} else {
		p.port = h.addrPort[cfg.Address]
	}
	if p.port != 0 {
		p.epoch = h.ports[p.port].epoch
	}
	h.pipes = append(h.pipes, p)
	return p, nil
}

// Kick makes the host retry the endpoints that NAKed now rather than
// after Poll: a test whose model just got data to send calls it.
func (h *Host) Kick() { h.kick() }

func (h *Host) kick() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

func (p *hostPipe) Config() usb.PipeConfig { return p.cfg }

func (p *hostPipe) NewTransfer(size int) (*usb.Transfer, error) {
	if size < 0 {
		return nil, fmt.Errorf("usbsim: transfer size %d", size)
	}
	t := &usb.Transfer{Buf: make([]byte, size), Len: size}
	t.HC = &hostXfer{t: t, p: p}
	return t, nil
}

// gone reports whether the pipe's device was unplugged (h.mu held).
func (p *hostPipe) gone() bool {
	return p.h.closed || (p.port != 0 && p.h.ports[p.port].epoch != p.epoch)
}

func (p *hostPipe) Submit(t *usb.Transfer) error {
	x, ok := t.HC.(*hostXfer)
	if !ok || x.p != p {
		return fmt.Errorf("usbsim: transfer not made by this pipe")
	}
	if t.Len < 0 || t.Len > len(t.Buf) {
		return fmt.Errorf("usbsim: transfer length %d of %d", t.Len, len(t.Buf))
	}
	if p.cfg.Type == usb.Control && t.Len > int(t.Setup.Length) {
		return fmt.Errorf("usbsim: data stage %d > wLength %d", t.Len, t.Setup.Length)
	}
	h := p.h
	h.mu.Lock()
	switch {
	case p.closed:
		h.mu.Unlock()
		return usb.ErrClosed
	case p.gone():
		h.mu.Unlock()
		return usb.ErrGone
	case x.queued || x.gen != x.retired:
		h.mu.Unlock()
		return usb.ErrBusy
	case p.abort > 0:
		h.mu.Unlock()
		return fmt.Errorf("%w: pipe is being aborted", usb.ErrCancelled)
	}
	x.gen++
	x.queued, x.started = true, false
	x.stage, x.off, x.zlpSent, x.errs = hsSetup, 0, false, 0
	t.Actual, t.Err = 0, nil
	p.queue = append(p.queue, x)
	h.mu.Unlock()
	h.kick()
	return nil
}

func (p *hostPipe) Cancel(t *usb.Transfer) {
	x, ok := t.HC.(*hostXfer)
	if !ok || x.p != p {
		return
	}
	h := p.h
	h.mu.Lock()
	gen := x.gen
	if x.queued {
		h.dequeueLocked(p, x)
		h.finishLocked(x, usb.ErrCancelled)
	}
	for x.done < gen {
		h.cond.Wait()
	}
	h.mu.Unlock()
}

func (p *hostPipe) Abort() {
	h := p.h
	h.mu.Lock()
	p.abort++
	h.failQueueLocked(p, usb.ErrCancelled)
	h.waitPipeLocked(p)
	p.abort--
	h.mu.Unlock()
}

// waitPipeLocked waits until every Done of p's transfers has returned.
func (h *Host) waitPipeLocked(p *hostPipe) {
	for {
		busy := len(p.queue) > 0 || (h.inDone != nil && h.inDone.p == p)
		for _, x := range h.completing {
			if x.p == p {
				busy = true
			}
		}
		if !busy {
			return
		}
		h.cond.Wait()
	}
}

func (p *hostPipe) ResetToggle() {
	p.h.mu.Lock()
	p.toggle = 0
	p.h.mu.Unlock()
}

func (p *hostPipe) Close() {
	h := p.h
	h.mu.Lock()
	if p.closed {
		h.mu.Unlock()
		return
	}
	p.closed = true
	h.failQueueLocked(p, usb.ErrCancelled)
	h.waitPipeLocked(p)
	for i, q := range h.pipes {
		if q == p {
			h.pipes = append(h.pipes[:i], h.pipes[i+1:]...)
			break
		}
	}
	h.mu.Unlock()
}

// popFront drops q's first element, keeping the array (a queue that
// resliced from the front would reallocate as it goes).
func popFront(q []*hostXfer) []*hostXfer {
	copy(q, q[1:])
	q[len(q)-1] = nil
	return q[:len(q)-1]
}

func (h *Host) dequeueLocked(p *hostPipe, x *hostXfer) {
	for i, q := range p.queue {
		if q == x {
			p.queue = append(p.queue[:i], p.queue[i+1:]...)
			return
		}
	}
}

func (h *Host) failQueueLocked(p *hostPipe, err error) {
	q := p.queue
	p.queue = nil
	for _, x := range q {
		h.finishLocked(x, err)
	}
}

// finishLocked takes x off the bus with result err and hands it to the
// completion goroutine.
func (h *Host) finishLocked(x *hostXfer, err error) {
	x.queued = false
	x.t.Err = err
	if err == nil {
		h.stats.TransfersDone++
		h.noteSetAddress(x)
	} else {
		h.stats.TransfersFailed++
	}
	x.due = time.Now().Add(h.cfg.Latency)
	if errors.Is(err, usb.ErrCancelled) || errors.Is(err, usb.ErrGone) {
		x.due = time.Now() // teardown does not wait for the interrupt path
	}
	h.completing = append(h.completing, x)
	select {
	case h.doneWake <- struct{}{}:
	default:
	}
}

// noteSetAddress binds an address to the port of the device that took it.
func (h *Host) noteSetAddress(x *hostXfer) {
	s := x.t.Setup
	if x.p.cfg.Type == usb.Control && s.RequestType == 0 && s.Request == reqSetAddress && x.p.port != 0 {
		h.addrPort[uint8(s.Value)] = x.p.port
		// Pipes opened to the address before it was taken follow it.
		for _, q := range h.pipes {
			if q.cfg.Address == uint8(s.Value) && q.port == 0 {
				q.port, q.epoch = x.p.port, h.ports[x.p.port].epoch
			}
		}
	}
}

// complete is the completion goroutine: Done in finishing order, each no
// earlier than its due time.
func (h *Host) complete() {
	defer h.wg.Done()
	h.mu.Lock()
	for {
		if len(h.completing) == 0 {
			if h.closed && h.idleLocked() {
				h.mu.Unlock()
				return
			}
			h.mu.Unlock()
			<-h.doneWake
			h.mu.Lock()
			continue
		}
		x := h.completing[0]
		if wait := time.Until(x.due); wait > 0 {
			h.mu.Unlock()
			time.Sleep(wait)
			h.mu.Lock()
			continue
		}
		h.completing = popFront(h.completing)
		// The transfer is idle from here: Done may resubmit it.
		gen := x.gen
		x.retired = gen
		h.inDone = x
		done := x.t.Done
		h.mu.Unlock()
		if done != nil {
			done(x.t)
		}
		h.mu.Lock()
		h.inDone = nil
		if x.done < gen {
			x.done = gen
		}
		h.cond.Broadcast()
	}
}

func (h *Host) idleLocked() bool {
	for _, p := range h.pipes {
		if len(p.queue) > 0 {
			return false
		}
	}
	return true
}

// schedule is the bus: it visits every pipe with work, runs its head
// transfer until it finishes or NAKs, and sleeps a frame when nothing
// moved.
func (h *Host) schedule() {
	defer h.wg.Done()
	// One timer for the NAK retry wait: the bus allocates nothing while
	// it runs (tests of the drivers above count allocations per frame).
	poll := time.NewTimer(h.cfg.Poll)
	poll.Stop()
	for {
		h.mu.Lock()
		if h.closed {
			h.mu.Unlock()
			select {
			case h.doneWake <- struct{}{}:
			default:
			}
			return
		}
		progress, pending := false, false
		for _, p := range h.pipes {
			if len(p.queue) == 0 {
				continue
			}
			pending = true
			if h.runLocked(p) {
				progress = true
			}
		}
		h.mu.Unlock()
		if progress {
			continue
		}
		if pending {
			poll.Reset(h.cfg.Poll)
			select {
			case <-h.wake:
				poll.Stop()
			case <-poll.C:
			}
		} else {
			<-h.wake
		}
	}
}

// maxPacketsPerVisit bounds one pipe's turn so a long bulk transfer does
// not starve the others.
const maxPacketsPerVisit = 64

// runLocked runs p's head transfer for up to maxPacketsPerVisit packets.
// It reports whether anything moved.
func (h *Host) runLocked(p *hostPipe) bool {
	x := p.queue[0]
	if p.gone() {
		h.failQueueLocked(p, usb.ErrGone)
		return true
	}
	moved := false
	for range maxPacketsPerVisit {
		if len(p.queue) == 0 || p.queue[0] != x {
			return true
		}
		hs, err, finished := h.stepLocked(p, x)
		h.stats.Transactions++
		switch hs {
		case NAK:
			h.stats.NAKs++
			return moved
		case NoResponse:
			h.stats.NoResponses++
			x.errs++
			if x.errs >= h.cfg.Retries {
				p.queue = popFront(p.queue)
				h.finishLocked(x, fmt.Errorf("%w: %d tokens unanswered", usb.ErrTransaction, x.errs))
				return true
			}
			moved = true
			continue
		case STALL:
			h.stats.Stalls++
			p.queue = popFront(p.queue)
			h.finishLocked(x, usb.ErrStall)
			return true
		}
		x.errs = 0
		moved = true
		if err != nil || finished {
			p.queue = popFront(p.queue)
			h.finishLocked(x, err)
			return true
		}
	}
	return moved
}

// stepLocked runs one transaction of x. finished (with err) ends the
// transfer.
func (h *Host) stepLocked(p *hostPipe, x *hostXfer) (hs Handshake, err error, finished bool) {
	f := h.functionLocked(p)
	t := x.t
	addr := p.cfg.Address
	if f == nil {
		return NoResponse, nil, false
	}
	if p.cfg.Type == usb.Control {
		switch x.stage {
		case hsSetup:
			hs = f.Setup(addr, t.Setup.Bytes())
			if hs == ACK {
				x.stage = hsData
				p.toggle = 1
				if t.Len == 0 {
					x.stage = hsStatus
				}
			}
			return hs, nil, false
		case hsData:
			if t.Setup.In() {
				n, short, hs, err := h.inPacketLocked(f, p, x)
				if hs != ACK || err != nil {
					return hs, err, err != nil
				}
				if short || x.off >= t.Len || n == 0 {
					x.stage = hsStatus
					p.toggle = 1
				}
				return ACK, nil, false
			}
			hs = h.outPacketLocked(f, p, x)
			if hs == ACK && x.off >= t.Len {
				x.stage = hsStatus
				p.toggle = 1
			}
			return hs, nil, false
		default: // status: the opposite direction, DATA1, zero length
			if t.Setup.In() && t.Len > 0 {
				hs = f.Out(addr, 0, 1, nil)
			} else {
				var n int
				n, _, hs = f.In(addr, 0, h.scratch[:0])
				if hs == ACK && n != 0 {
					return hs, usb.ErrBabble, true
				}
			}
			if hs != ACK {
				return hs, nil, false
			}
			t.Actual = x.off
			if t.Setup.In() && x.off < t.Len && t.Flags&usb.ShortOK == 0 {
				return ACK, usb.ErrShort, true
			}
			return ACK, nil, true
		}
	}
	if p.cfg.In() {
		_, short, hs, err := h.inPacketLocked(f, p, x)
		if hs != ACK {
			return hs, nil, false
		}
		t.Actual = x.off
		if err != nil {
			return hs, err, true
		}
		if short && x.off < t.Len && t.Flags&usb.ShortOK == 0 {
			return ACK, usb.ErrShort, true
		}
		return ACK, nil, short || x.off >= t.Len
	}
	hs = h.outPacketLocked(f, p, x)
	if hs != ACK {
		return hs, nil, false
	}
	t.Actual = x.off
	if x.off < t.Len {
		return ACK, nil, false
	}
	if t.Flags&usb.ZeroLengthPacket != 0 && t.Len > 0 && t.Len%p.cfg.MaxPacket == 0 && !x.zlpSent {
		return ACK, nil, false // the zero-length packet goes next
	}
	return ACK, nil, true
}

// inPacketLocked runs one IN transaction into x's buffer. A packet with
// the wrong data PID is a retransmission the host ACKs and discards.
func (h *Host) inPacketLocked(f Function, p *hostPipe, x *hostXfer) (n int, short bool, hs Handshake, err error) {
	mps := p.cfg.MaxPacket
	buf := h.scratch[:mps]
	n, tog, hs := f.In(p.cfg.Address, p.cfg.Endpoint&0x0f, buf)
	if hs != ACK {
		return 0, false, hs, nil
	}
	if n > mps || n < 0 {
		return 0, false, ACK, fmt.Errorf("%w: %d-byte packet, max %d", usb.ErrBabble, n, mps)
	}
	if tog != p.toggle {
		h.stats.ToggleDiscards++
		return 0, false, ACK, nil
	}
	p.toggle ^= 1
	t := x.t
	if n > t.Len-x.off {
		return 0, false, ACK, fmt.Errorf("%w: %d bytes with room for %d", usb.ErrBabble, n, t.Len-x.off)
	}
	copy(t.Buf[x.off:], buf[:n])
	x.off += n
	return n, n < mps, ACK, nil
}

// outPacketLocked sends x's next packet (or its zero-length end).
func (h *Host) outPacketLocked(f Function, p *hostPipe, x *hostXfer) Handshake {
	t := x.t
	n := min(t.Len-x.off, p.cfg.MaxPacket)
	hs := f.Out(p.cfg.Address, p.cfg.Endpoint&0x0f, p.toggle, t.Buf[x.off:x.off+n])
	if hs == ACK {
		p.toggle ^= 1
		if n == 0 {
			x.zlpSent = true
		}
		x.off += n
	}
	return hs
}

// functionLocked is the function tokens for p reach: its port's, or for a
// pipe bound to no port, the enabled port whose function answers its
// address (tried in turn by the caller's retries).
func (h *Host) functionLocked(p *hostPipe) Function {
	if p.port != 0 {
		pp := &h.ports[p.port]
		if !pp.enabled {
			return nil
		}
		return pp.f
	}
	for i := 1; i < len(h.ports); i++ {
		pp := &h.ports[i]
		if pp.enabled && pp.f != nil {
			return broadcast{h: h}
		}
	}
	return nil
}

// broadcast delivers a token to every enabled port; the function whose
// address it carries answers.
type broadcast struct{ h *Host }

func (b broadcast) Speed() usb.Speed { return usb.SpeedUnknown }
func (b broadcast) Reset()           {}
func (b broadcast) Setup(addr uint8, pkt [8]byte) Handshake {
	for i := 1; i < len(b.h.ports); i++ {
		if pp := &b.h.ports[i]; pp.enabled && pp.f != nil {
			if hs := pp.f.Setup(addr, pkt); hs != NoResponse {
				return hs
			}
		}
	}
	return NoResponse
}
func (b broadcast) In(addr, ep uint8, buf []byte) (int, uint8, Handshake) {
	for i := 1; i < len(b.h.ports); i++ {
		if pp := &b.h.ports[i]; pp.enabled && pp.f != nil {
			if n, t, hs := pp.f.In(addr, ep, buf); hs != NoResponse {
				return n, t, hs
			}
		}
	}
	return 0, 0, NoResponse
}
func (b broadcast) Out(addr, ep uint8, toggle uint8, data []byte) Handshake {
	for i := 1; i < len(b.h.ports); i++ {
		if pp := &b.h.ports[i]; pp.enabled && pp.f != nil {
			if hs := pp.f.Out(addr, ep, toggle, data); hs != NoResponse {
				return hs
			}
		}
	}
	return NoResponse
}
