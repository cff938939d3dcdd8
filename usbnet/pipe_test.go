package usbnet

import (
	"sync"

	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/usbnet/usb"
)

// manualPipe is a usb.Pipe whose transfers complete only when the test
// says so (complete), in submission order, on the test's goroutine: the
// framework's own logic can be driven step by step, and counted for
// allocations with nothing else running. Cancel and Abort follow the
// usb.Pipe contract: queued transfers complete with ErrCancelled before
// they return.
type manualPipe struct {
	cfg usb.PipeConfig

	mu        sync.Mutex
	queue     []*usb.Transfer
	closed    bool
	maxQueued int
	submits   int
	resets    int
	events    *eventLog // nil: not recorded
	name      string
}

func newManualPipe(name string, cfg usb.PipeConfig, ev *eventLog) *manualPipe {
	return &manualPipe{cfg: cfg, name: name, events: ev}
}

func (p *manualPipe) Config() usb.PipeConfig { return p.cfg }

func (p *manualPipe) NewTransfer(size int) (*usb.Transfer, error) {
	return &usb.Transfer{Buf: make([]byte, size), Len: size}, nil
}

func (p *manualPipe) Submit(t *usb.Transfer) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return usb.ErrClosed
	}
	for _, q := range p.queue {
		if q == t {
			return usb.ErrBusy
		}
	}
	p.queue = append(p.queue, t)
	p.submits++
	if len(p.queue) > p.maxQueued {
		p.maxQueued = len(p.queue)
	}
	return nil
}

// complete finishes the oldest queued transfer: IN gets data (up to Len),
// OUT reports its bytes in out. It reports false if none was queued.
func (p *manualPipe) complete(data []byte, err error, out *[]byte) bool {
	p.mu.Lock()
	if len(p.queue) == 0 {
		p.mu.Unlock()
		return false
	}
	t := p.queue[0]
	copy(p.queue, p.queue[1:])
	p.queue = p.queue[:len(p.queue)-1]
	p.mu.Unlock()
	t.Err = err
	t.Actual = 0
	if err == nil {
		if p.cfg.In() {
			t.Actual = copy(t.Buf[:t.Len], data)
		} else {
			t.Actual = t.Len
			if out != nil {
				*out = append((*out)[:0], t.Buf[:t.Len]...)
			}
		}
	}
	t.Done(t)
	return true
}

func (p *manualPipe) queued() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.queue)
}

func (p *manualPipe) Cancel(t *usb.Transfer) {
	p.mu.Lock()
	found := false
	for i, q := range p.queue {
		if q == t {
			p.queue = append(p.queue[:i], p.queue[i+1:]...)
			found = true
			break
		}
	}
	p.mu.Unlock()
	if found {
		t.Err, t.Actual = usb.ErrCancelled, 0
		t.Done(t)
	}
}

func (p *manualPipe) Abort() {
	p.events.add("abort " + p.name)
	p.mu.Lock()
	q := p.queue
	p.queue = nil
	p.mu.Unlock()
	for _, t := range q {
		t.Err, t.Actual = usb.ErrCancelled, 0
		t.Done(t)
	}
}

func (p *manualPipe) ResetToggle() {
	p.mu.Lock()
	p.resets++
	p.mu.Unlock()
}

func (p *manualPipe) Close() {
	p.Abort()
	p.events.add("close " + p.name)
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
}

// eventLog records the order of teardown steps.
type eventLog struct {
	mu  sync.Mutex
	evs []string
}

func (l *eventLog) add(s string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.evs = append(l.evs, s)
	l.mu.Unlock()
}

func (l *eventLog) list() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.evs...)
}

// rawFraming is one Ethernet frame per transfer, as CDC-ECM does, for the
// framework's tests (the real one is cdcecm's).
type rawFraming struct{}

func (rawFraming) TxOverhead() int { return 0 }

func (rawFraming) EncodeTx(dst []byte, segs [][]byte, n, maxPacket int) (int, usb.Flags, error) {
	off := 0
	for _, s := range segs {
		off += copy(dst[off:], s)
	}
	var f usb.Flags
	if maxPacket > 0 && off%maxPacket == 0 {
		f = usb.ZeroLengthPacket
	}
	return off, f, nil
}

func (rawFraming) DecodeRx(xfer []byte, deliver func([]byte)) (int, gnet.DropReason) {
	if len(xfer) < gnet.EthHeaderLen {
		return 1, gnet.DropRxUndersize
	}
	deliver(xfer)
	return 0, 0
}

// ParseStatus: a test report is one byte, 0 down, else up at that many
// tens of Mbit/s.
func (rawFraming) ParseStatus(r []byte) (gnet.LinkState, bool) {
	if len(r) != 1 {
		return gnet.LinkState{}, false
	}
	if r[0] == 0 {
		return gnet.LinkState{}, true
	}
	return gnet.LinkState{Up: true, SpeedMbps: 10 * int(r[0]), FullDuplex: true}, true
}

// frameBuf is a reusable TxBuf.
type frameBuf struct {
	segs     [][]byte
	n        int
	released int
}

func newFrameBuf(segs ...[]byte) *frameBuf {
	b := &frameBuf{segs: segs}
	for _, s := range segs {
		b.n += len(s)
	}
	return b
}

func (b *frameBuf) Segments() [][]byte { return b.segs }
func (b *frameBuf) Len() int           { return b.n }
func (b *frameBuf) Release()           { b.released++ }

// recorder is a Handler (and TxWaker) that keeps what it was given.
type recorder struct {
	mu       sync.Mutex
	frames   [][]byte
	links    []gnet.LinkState
	txReady  int
	keep     bool // copy frames (off for allocation tests)
	received int
	after    func() // called on every Receive (nil: nothing)
}

func (r *recorder) Receive(f []byte) {
	r.mu.Lock()
	r.received++
	if r.keep {
		r.frames = append(r.frames, append([]byte(nil), f...))
	}
	r.mu.Unlock()
	if r.after != nil {
		r.after()
	}
}

func (r *recorder) LinkChanged(l gnet.LinkState) {
	r.mu.Lock()
	r.links = append(r.links, l)
	r.mu.Unlock()
}

func (r *recorder) TxReady() {
	r.mu.Lock()
	r.txReady++
	r.mu.Unlock()
}

func (r *recorder) snapshot() (frames [][]byte, links []gnet.LinkState, txReady, received int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]byte(nil), r.frames...), append([]gnet.LinkState(nil), r.links...), r.txReady, r.received
}
