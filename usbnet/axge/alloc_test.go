package axge

import (
	"sync"
	"sync/atomic"
	"testing"

	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/usbnet"
	"github.com/gowrt/gowrt/usbnet/usb"
)

// stepPipe is a usb.Pipe whose transfers complete when the test says, on
// the test's goroutine, so allocations of the per-frame path (the usbnet
// NIC with this package's Framing) can be counted with nothing else
// running.
type stepPipe struct {
	cfg   usb.PipeConfig
	mu    sync.Mutex
	queue []*usb.Transfer
}

func (p *stepPipe) Config() usb.PipeConfig { return p.cfg }
func (p *stepPipe) NewTransfer(size int) (*usb.Transfer, error) {
	return &usb.Transfer{Buf: make([]byte, size), Len: size}, nil
}
func (p *stepPipe) Submit(t *usb.Transfer) error {
	p.mu.Lock()
	p.queue = append(p.queue, t)
	p.mu.Unlock()
	return nil
}
func (p *stepPipe) Cancel(t *usb.Transfer) {
	p.mu.Lock()
	for i, q := range p.queue {
		if q == t {
			p.queue = append(p.queue[:i], p.queue[i+1:]...)
			p.mu.Unlock()
			t.Err, t.Actual = usb.ErrCancelled, 0
			t.Done(t)
			return
		}
	}
	p.mu.Unlock()
}
func (p *stepPipe) Abort() {
	for {
		p.mu.Lock()
		if len(p.queue) == 0 {
			p.mu.Unlock()
			return
		}
		t := p.queue[0]
		p.mu.Unlock()
		p.Cancel(t)
	}
}
func (p *stepPipe) ResetToggle() {}
func (p *stepPipe) Close()       { p.Abort() }

// complete finishes the oldest transfer; an IN one receives data.
func (p *stepPipe) complete(data []byte) {
	p.mu.Lock()
	t := p.queue[0]
	p.queue = p.queue[:copy(p.queue, p.queue[1:])] // in place: the test pipe must not allocate either
	p.mu.Unlock()
	t.Actual = copy(t.Buf[:t.Len], data)
	if data == nil {
		t.Actual = t.Len
	}
	t.Err = nil
	t.Done(t)
}

// segBuf is a TxBuf that allocates nothing per use.
type segBuf struct {
	segs     [][]byte
	released atomic.Int64
}

func (b *segBuf) Segments() [][]byte { return b.segs }
func (b *segBuf) Len() int           { return len(b.segs[0]) }
func (b *segBuf) Release()           { b.released.Add(1) }

type countingHandler struct{ n atomic.Int64 }

func (h *countingHandler) Receive([]byte)             { h.n.Add(1) }
func (h *countingHandler) LinkChanged(gnet.LinkState) {}

// TestAllocsPerFrame: receiving an aggregated transfer of eight frames
// and transmitting a frame through the usbnet NIC with this Framing
// allocate nothing.
func TestAllocsPerFrame(t *testing.T) {
	in := &stepPipe{cfg: usb.PipeConfig{Endpoint: 0x82, Type: usb.Bulk, MaxPacket: 512}}
	out := &stepPipe{cfg: usb.PipeConfig{Endpoint: 0x03, Type: usb.Bulk, MaxPacket: 512}}
	nic, err := usbnet.New(usbnet.Config{Name: "axge-alloc", In: in, Out: out, Framing: &Framing{},
		MAC: gnet.MAC(testMAC), RxSize: RxSize, RxTransfers: RxTransfers,
		Link: gnet.LinkState{Up: true, SpeedMbps: 1000, FullDuplex: true}})
	if err != nil {
		t.Fatal(err)
	}
	h := &countingHandler{}
	if err := nic.Start(h); err != nil {
		t.Fatal(err)
	}
	defer nic.Stop()
	var frames [][]byte
	for i := 0; i < 8; i++ {
		frames = append(frames, testFrame(1514, uint32(i)))
	}
	xfer := aggregate(frames, nil, true)
	rx := testing.AllocsPerRun(500, func() { in.complete(xfer) })
	if h.n.Load() != 8*501 {
		t.Fatalf("%d frames delivered, want %d", h.n.Load(), 8*501)
	}
	b := &segBuf{segs: [][]byte{testFrame(504, 1)}} // padded: the PAD path
	tx := testing.AllocsPerRun(500, func() {
		if err := nic.Transmit(b); err != nil {
			t.Fatal(err)
		}
		out.complete(nil)
	})
	if rx != 0 || tx != 0 {
		t.Fatalf("allocations: %v per 8-frame transfer received, %v per frame sent; want 0", rx, tx)
	}
}

// BenchmarkNICReceive: one aggregated transfer of eight 1514-byte frames
// through the usbnet NIC and this Framing to a handler.
func BenchmarkNICReceive(b *testing.B) {
	in := &stepPipe{cfg: usb.PipeConfig{Endpoint: 0x82, Type: usb.Bulk, MaxPacket: 512}}
	out := &stepPipe{cfg: usb.PipeConfig{Endpoint: 0x03, Type: usb.Bulk, MaxPacket: 512}}
	nic, err := usbnet.New(usbnet.Config{Name: "axge-bench", In: in, Out: out, Framing: &Framing{},
		MAC: gnet.MAC(testMAC), RxSize: RxSize, Link: gnet.LinkState{Up: true, SpeedMbps: 1000, FullDuplex: true}})
	if err != nil {
		b.Fatal(err)
	}
	if err := nic.Start(&countingHandler{}); err != nil {
		b.Fatal(err)
	}
	defer nic.Stop()
	var frames [][]byte
	for i := 0; i < 8; i++ {
		frames = append(frames, testFrame(1514, uint32(i)))
	}
	xfer := aggregate(frames, nil, true)
	b.SetBytes(8 * 1514)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		in.complete(xfer)
	}
}
