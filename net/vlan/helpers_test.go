package vlan_test

import (
	"bytes"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gnet "github.com/gowrt/gowrt/net"
)

var (
	parentMAC = gnet.MAC{0x02, 0x00, 0x00, 0x00, 0x00, 0x01}
	peerMAC   = gnet.MAC{0x02, 0x00, 0x00, 0x00, 0x00, 0x02}
)

// recorder is a child's handler: it copies what it is lent (as a handler
// must) and records link changes and TxReady calls.
type recorder struct {
	frames chan []byte
	links  chan gnet.LinkState
	ready  chan struct{}
}

func newRecorder() *recorder {
	return &recorder{make(chan []byte, 1024), make(chan gnet.LinkState, 16), make(chan struct{}, 16)}
}

func (r *recorder) Receive(f []byte)                     { r.frames <- bytes.Clone(f) }
func (r *recorder) LinkChanged(ls gnet.LinkState)        { r.links <- ls }
func (r *recorder) TxReady()                             { r.ready <- struct{}{} }
func (r *recorder) next(t testing.TB) []byte             { t.Helper(); return recv(t, r.frames) }
func (r *recorder) nextLink(t testing.TB) gnet.LinkState { t.Helper(); return recv(t, r.links) }

// none checks that nothing was delivered.
func (r *recorder) none(t testing.TB) {
	t.Helper()
	select {
	case f := <-r.frames:
		t.Fatalf("unexpected frame % x", f)
	default:
	}
}

func recv[T any](t testing.TB, c chan T) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(5 * time.Second):
		t.Fatal("timed out")
		panic("unreachable")
	}
}

// txFrame is a child's TxBuf that counts its releases; cuts split it into
// segments at those offsets.
type txFrame struct {
	b        []byte
	segs     [][]byte
	released atomic.Int32
}

func newTx(b []byte, cuts ...int) *txFrame {
	f := &txFrame{b: b}
	prev := 0
	for _, c := range cuts {
		f.segs = append(f.segs, b[prev:c])
		prev = c
	}
	f.segs = append(f.segs, b[prev:])
	return f
}

func (f *txFrame) Segments() [][]byte { return f.segs }
func (f *txFrame) Len() int           { return len(f.b) }
func (f *txFrame) Release()           { f.released.Add(1) }

// syncNIC is a synchronous parent for allocation tests, benchmarks and
// the fuzzer: Deliver calls the handler directly, and Transmit releases
// the frame at once (or refuses it, if refuse is set).
type syncNIC struct {
	caps    gnet.Capabilities
	h       gnet.Handler
	refuse  error
	sent    int
	last    []byte // the last frame transmitted, flattened (if keep)
	keep    bool
	stopped bool
	mu      sync.Mutex
}

func (n *syncNIC) MACAddress() gnet.MAC            { return parentMAC }
func (n *syncNIC) MTU() int                        { return gnet.DefaultMTU }
func (n *syncNIC) Capabilities() gnet.Capabilities { return n.caps }
func (n *syncNIC) Link() gnet.LinkState {
	return gnet.LinkState{Up: true, SpeedMbps: 1000, FullDuplex: true}
}
func (n *syncNIC) Start(h gnet.Handler) error { n.h = h; return nil }
func (n *syncNIC) Stop()                      { n.stopped = true }
func (n *syncNIC) Transmit(b gnet.TxBuf) error {
	if n.refuse != nil {
		return n.refuse
	}
	if n.keep {
		n.last = n.last[:0]
		for _, s := range b.Segments() {
			n.last = append(n.last, s...)
		}
	} else {
		for _, s := range b.Segments() {
			n.sent += len(s)
		}
	}
	b.Release()
	return nil
}

// sink is a handler that only looks at the frame's length.
type sink struct{ n int }

func (s *sink) Receive(f []byte)         { s.n += len(f) }
func (*sink) LinkChanged(gnet.LinkState) {}

func sleepMs(ms int) { time.Sleep(time.Duration(ms) * time.Millisecond) }
