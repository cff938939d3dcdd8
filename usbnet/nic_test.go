package usbnet

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/usbnet/usb"
)

type rig struct {
	nic             *NIC
	in, out, status *manualPipe
	h               *recorder
	ev              *eventLog
	clearHalts      atomic.Int32
	queuedAtClear   atomic.Int32
}

func newRig(t testing.TB, mod func(*Config)) *rig {
	t.Helper()
	r := &rig{h: &recorder{keep: true}, ev: &eventLog{}}
	r.in = newManualPipe("in", usb.PipeConfig{Address: 2, Endpoint: 0x82, Type: usb.Bulk, MaxPacket: 64, Speed: usb.SpeedFull}, r.ev)
	r.out = newManualPipe("out", usb.PipeConfig{Address: 2, Endpoint: 0x02, Type: usb.Bulk, MaxPacket: 64, Speed: usb.SpeedFull}, r.ev)
	r.status = newManualPipe("status", usb.PipeConfig{Address: 2, Endpoint: 0x81, Type: usb.Interrupt, MaxPacket: 16, Speed: usb.SpeedFull, Interval: 32}, r.ev)
	cfg := Config{
		Name: "usbtest", In: r.in, Out: r.out, Status: r.status, Framing: rawFraming{},
		MAC: gnet.MAC{0x02, 0, 0, 0, 0, 1},
		Hooks: Hooks{
			StopMAC: func() { r.ev.add("stop mac") },
			ClearHalt: func(p usb.Pipe) error {
				mp := p.(*manualPipe)
				r.queuedAtClear.Add(int32(mp.queued()))
				r.clearHalts.Add(1)
				p.ResetToggle()
				return nil
			},
		},
	}
	if mod != nil {
		mod(&cfg)
	}
	n, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.nic = n
	if err := n.Start(r.h); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Stop)
	return r
}

func frame(n int, seed byte) []byte {
	f := make([]byte, n)
	for i := range f {
		f[i] = seed + byte(i)
	}
	return f
}

func (r *rig) linkUp(t testing.TB) {
	t.Helper()
	if !r.status.complete([]byte{10}, nil, nil) {
		t.Fatal("no status transfer queued")
	}
	if !r.nic.Link().Up {
		t.Fatal("link not up after the status report")
	}
}

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestFramesBothWays(t *testing.T) {
	r := newRig(t, nil)
	if got := r.in.queued(); got != DefaultRxTransfers {
		t.Fatalf("%d bulk-in transfers in flight after Start, want %d", got, DefaultRxTransfers)
	}
	if got := r.out.queued(); got != 0 {
		t.Fatalf("%d bulk-out transfers before any Transmit", got)
	}
	r.linkUp(t)
	var want [][]byte
	for i := 0; i < 20; i++ {
		f := frame(60+i*70, byte(i))
		want = append(want, f)
		if !r.in.complete(f, nil, nil) {
			t.Fatal("no bulk-in transfer queued")
		}
		if got := r.in.queued(); got != DefaultRxTransfers {
			t.Fatalf("frame %d: %d bulk-in transfers in flight, want %d (resubmitted from Done)", i, got, DefaultRxTransfers)
		}
	}
	frames, links, _, _ := r.h.snapshot()
	if len(frames) != len(want) {
		t.Fatalf("got %d frames, want %d", len(frames), len(want))
	}
	for i := range want {
		if !bytes.Equal(frames[i], want[i]) {
			t.Fatalf("frame %d differs", i)
		}
	}
	if len(links) != 2 || links[0].Up || !links[1].Up || links[1].SpeedMbps != 100 {
		t.Fatalf("link reports %+v, want down (Start) then up at 100", links)
	}

	// TX: a frame in two segments is gathered; a multiple of 64 asks for a ZLP.
	for _, l := range []int{60, 64, 128, 1514} {
		f := frame(l, 7)
		b := newFrameBuf(f[:20], f[20:])
		if err := r.nic.Transmit(b); err != nil {
			t.Fatalf("Transmit %d: %v", l, err)
		}
		if b.released != 1 {
			t.Fatalf("Transmit %d: released %d times before returning, want 1 (CapTxCopy)", l, b.released)
		}
		r.out.mu.Lock()
		xf := r.out.queue[0]
		r.out.mu.Unlock()
		if wantZLP := l%64 == 0; (xf.Flags&usb.ZeroLengthPacket != 0) != wantZLP {
			t.Fatalf("Transmit %d: flags %v, ZLP wanted %v", l, xf.Flags, wantZLP)
		}
		var sent []byte
		r.out.complete(nil, nil, &sent)
		if !bytes.Equal(sent, f) {
			t.Fatalf("Transmit %d: wire got %d bytes, differ", l, len(sent))
		}
	}
	c := r.nic.Counters()
	if c.RxFrames != 20 || c.TxFrames != 4 || c.TxBytes != 60+64+128+1514 {
		t.Fatalf("counters %+v", c)
	}
}

func TestRxDropsCounted(t *testing.T) {
	r := newRig(t, nil)
	r.in.complete(frame(10, 0), nil, nil)                       // framing: undersize
	r.in.complete(frame(gnet.DefaultMTU+19, 0), nil, nil)       // framework: oversize
	r.in.complete(nil, nil, nil)                                // empty: not a frame
	r.in.complete(nil, fmt.Errorf("x: %w", usb.ErrBabble), nil) // transfer error
	r.in.complete(nil, usb.ErrTransaction, nil)
	r.in.complete(frame(100, 0), nil, nil)
	c := r.nic.Counters()
	want := gnet.Counters{RxFrames: 1, RxBytes: 100}
	want.Drops[gnet.DropRxUndersize] = 1
	want.Drops[gnet.DropRxOversize] = 1
	want.Drops[gnet.DropRxErrors] = 2
	if c != want {
		t.Fatalf("counters\n got %+v\nwant %+v", c, want)
	}
	if r.nic.Stats.RxEmpty.Load() != 1 {
		t.Fatalf("RxEmpty %d", r.nic.Stats.RxEmpty.Load())
	}
	if got := r.in.queued(); got != DefaultRxTransfers {
		t.Fatalf("%d in flight after errors, want %d", got, DefaultRxTransfers)
	}
}

func TestTxQueueFullAndTxReady(t *testing.T) {
	r := newRig(t, func(c *Config) { c.TxQueue = 4 })
	f := frame(100, 1)
	if err := r.nic.Transmit(newFrameBuf(f)); !errors.Is(err, gnet.ErrLinkDown) {
		t.Fatalf("Transmit with link down: %v", err)
	}
	r.linkUp(t)
	for i := 0; i < 4; i++ {
		if err := r.nic.Transmit(newFrameBuf(f)); err != nil {
			t.Fatalf("Transmit %d: %v", i, err)
		}
	}
	b := newFrameBuf(f)
	if err := r.nic.Transmit(b); !errors.Is(err, gnet.ErrTxFull) {
		t.Fatalf("fifth Transmit: %v, want ErrTxFull", err)
	}
	if b.released != 0 {
		t.Fatal("refused frame was released")
	}
	if _, _, ready, _ := r.h.snapshot(); ready != 0 {
		t.Fatal("TxReady before any completion")
	}
	r.out.complete(nil, nil, nil)
	if _, _, ready, _ := r.h.snapshot(); ready != 1 {
		t.Fatalf("TxReady called %d times after a completion, want 1", ready)
	}
	r.out.complete(nil, nil, nil)
	if _, _, ready, _ := r.h.snapshot(); ready != 1 {
		t.Fatalf("TxReady called again (%d) though none was owed", ready)
	}
	if err := r.nic.Transmit(newFrameBuf(f)); err != nil {
		t.Fatal(err)
	}
	if r.nic.Stats.TxFull.Load() != 1 {
		t.Fatalf("TxFull %d", r.nic.Stats.TxFull.Load())
	}
	big := newFrameBuf(frame(gnet.DefaultMTU+gnet.EthHeaderLen+gnet.VLANTagLen+1, 0))
	if err := r.nic.Transmit(big); !errors.Is(err, ErrSize) {
		t.Fatalf("oversize Transmit: %v", err)
	}
}

func TestLinkFromStatusAndSetLink(t *testing.T) {
	r := newRig(t, nil)
	r.status.complete([]byte{1, 2}, nil, nil) // says nothing about the link
	r.linkUp(t)
	r.status.complete([]byte{10}, nil, nil) // same: no report
	r.status.complete([]byte{0}, nil, nil)
	r.nic.SetLink(gnet.LinkState{Up: true, SpeedMbps: 1000, FullDuplex: true})
	_, links, _, _ := r.h.snapshot()
	want := []gnet.LinkState{{}, {Up: true, SpeedMbps: 100, FullDuplex: true}, {}, {Up: true, SpeedMbps: 1000, FullDuplex: true}}
	if fmt.Sprint(links) != fmt.Sprint(want) {
		t.Fatalf("links %v, want %v", links, want)
	}
	if r.nic.Stats.StatusReports.Load() != 4 || r.nic.Stats.LinkChanges.Load() != 3 {
		t.Fatalf("status reports %d, link changes %d", r.nic.Stats.StatusReports.Load(), r.nic.Stats.LinkChanges.Load())
	}
}

func TestStallRecovery(t *testing.T) {
	r := newRig(t, nil)
	r.linkUp(t)
	r.in.complete(nil, fmt.Errorf("ep 0x82: %w", usb.ErrStall), nil)
	waitFor(t, "clear-halt and resubmission", func() bool {
		return r.clearHalts.Load() == 1 && r.in.queued() == DefaultRxTransfers
	})
	if q := r.queuedAtClear.Load(); q != 0 {
		t.Fatalf("ClearHalt ran with %d transfers still submitted", q)
	}
	if r.in.resets != 1 {
		t.Fatalf("toggle reset %d times", r.in.resets)
	}
	r.in.complete(frame(80, 3), nil, nil)
	if _, _, _, n := r.h.snapshot(); n != 1 {
		t.Fatalf("%d frames after recovery", n)
	}
	// TX stall: Transmit says full until recovery, then TxReady.
	f := newFrameBuf(frame(80, 1))
	if err := r.nic.Transmit(f); err != nil {
		t.Fatal(err)
	}
	r.out.complete(nil, usb.ErrStall, nil)
	if err := r.nic.Transmit(f); err != nil && !errors.Is(err, gnet.ErrTxFull) {
		t.Fatal(err)
	}
	waitFor(t, "bulk-out recovery and TxReady", func() bool {
		_, _, ready, _ := r.h.snapshot()
		return r.clearHalts.Load() == 2 && ready >= 1
	})
	s := &r.nic.Stats
	if s.Stalls.Load() != 2 || s.Recoveries.Load() != 2 || s.TxXferErrors.Load() < 1 {
		t.Fatalf("stalls %d recoveries %d tx errors %d", s.Stalls.Load(), s.Recoveries.Load(), s.TxXferErrors.Load())
	}
	if err := r.nic.Transmit(f); err != nil {
		t.Fatalf("Transmit after recovery: %v", err)
	}
}

func TestRepeatedErrorsRest(t *testing.T) {
	r := newRig(t, func(c *Config) { c.RxTransfers = 1 })
	for i := 0; i < maxConsecutiveErrors; i++ {
		r.in.complete(nil, usb.ErrTransaction, nil)
	}
	if q := r.in.queued(); q != 0 {
		t.Fatalf("%d transfers resubmitted at once after %d errors in a row", q, maxConsecutiveErrors)
	}
	waitFor(t, "resubmission after the rest", func() bool { return r.in.queued() == 1 })
	if r.clearHalts.Load() != 0 {
		t.Fatal("clear-halt for an endpoint that did not stall")
	}
}

func TestGoneStopsSubmitting(t *testing.T) {
	r := newRig(t, nil)
	r.linkUp(t)
	r.in.complete(nil, fmt.Errorf("port 1: %w", usb.ErrGone), nil)
	if !r.nic.Gone() || r.nic.Link().Up {
		t.Fatal("not gone / link still up")
	}
	if q := r.in.queued(); q != DefaultRxTransfers-1 {
		t.Fatalf("%d in flight, want %d (the failed one not resubmitted)", q, DefaultRxTransfers-1)
	}
	if err := r.nic.Transmit(newFrameBuf(frame(60, 0))); !errors.Is(err, usb.ErrGone) {
		t.Fatalf("Transmit after unplug: %v", err)
	}
	for r.in.complete(nil, usb.ErrGone, nil) {
	}
	if q := r.in.queued(); q != 0 {
		t.Fatalf("%d resubmitted to a gone device", q)
	}
}

// TestStopOrder: MAC stopped first, then every transfer cancelled and its
// completion waited for, then the pipes closed; no handler call after.
func TestStopOrder(t *testing.T) {
	r := newRig(t, nil)
	r.linkUp(t)
	for i := 0; i < 3; i++ {
		if err := r.nic.Transmit(newFrameBuf(frame(100, 0))); err != nil {
			t.Fatal(err)
		}
	}
	r.nic.Stop()
	got := strings.Join(r.ev.list(), ", ")
	want := "stop mac, abort in, abort out, abort status, abort in, close in, abort out, close out, abort status, close status"
	if got != want {
		t.Fatalf("teardown\n got %s\nwant %s", got, want)
	}
	if r.in.queued()+r.out.queued()+r.status.queued() != 0 {
		t.Fatal("transfers left queued")
	}
	if r.nic.Stats.TxXferErrors.Load() != 3 {
		t.Fatalf("frames lost in the TX queue counted %d, want 3", r.nic.Stats.TxXferErrors.Load())
	}
	if err := r.nic.Transmit(newFrameBuf(frame(100, 0))); !errors.Is(err, ErrStopped) {
		t.Fatalf("Transmit after Stop: %v", err)
	}
	_, links, _, n := r.h.snapshot()
	r.nic.SetLink(gnet.LinkState{Up: false})
	if _, l2, _, n2 := r.h.snapshot(); n2 != n || len(l2) != len(links) {
		t.Fatal("handler called after Stop")
	}
	r.nic.Stop() // idempotent
}

// TestStopDuringTraffic: frames arriving from another goroutine while Stop
// runs are either delivered before Stop returns or not at all.
func TestStopDuringTraffic(t *testing.T) {
	for round := 0; round < 20; round++ {
		r := newRig(t, nil)
		r.linkUp(t)
		var stopped atomic.Bool
		var late atomic.Int32
		r.h.after = func() {
			if stopped.Load() {
				late.Add(1)
			}
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := 0; i < 200; i++ {
				r.in.complete(frame(64, byte(i)), nil, nil)
				_ = r.nic.Transmit(newFrameBuf(frame(64, 0)))
				r.out.complete(nil, nil, nil)
			}
		}()
		time.Sleep(time.Duration(round) * 20 * time.Microsecond)
		r.nic.Stop()
		stopped.Store(true)
		<-done
		if late.Load() != 0 {
			t.Fatalf("round %d: %d frames delivered after Stop returned", round, late.Load())
		}
		if q := r.in.queued() + r.out.queued(); q != 0 {
			t.Fatalf("round %d: %d transfers submitted after Stop", round, q)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	p := newManualPipe("in", usb.PipeConfig{Endpoint: 0x82, Type: usb.Bulk, MaxPacket: 64}, nil)
	o := newManualPipe("out", usb.PipeConfig{Endpoint: 0x02, Type: usb.Bulk, MaxPacket: 64}, nil)
	for _, c := range []Config{
		{In: p, Framing: rawFraming{}},
		{In: p, Out: o, Framing: rawFraming{}, MTU: 9000},
		{In: p, Out: o, Framing: rawFraming{}, RxTransfers: -1},
		{In: p, Out: o, Framing: noStatusFraming{}, Status: p},
	} {
		if _, err := New(c); !errors.Is(err, ErrConfig) {
			t.Errorf("New(%+v): %v, want ErrConfig", c, err)
		}
	}
}

type noStatusFraming struct{}

func (noStatusFraming) TxOverhead() int { return 0 }
func (noStatusFraming) EncodeTx(dst []byte, segs [][]byte, n, mp int) (int, usb.Flags, error) {
	return 0, 0, nil
}
func (noStatusFraming) DecodeRx(x []byte, d func([]byte)) (int, gnet.DropReason) { return 0, 0 }

// TestZeroAllocsPerFrame: receiving a frame (completion, decode, delivery,
// resubmission) and transmitting one (encode, submit, completion) allocate
// nothing.
func TestZeroAllocsPerFrame(t *testing.T) {
	r := newRig(t, nil)
	r.h.keep = false
	r.linkUp(t)
	f := frame(1514, 0)
	rx := testing.AllocsPerRun(1000, func() { r.in.complete(f, nil, nil) })
	b := newFrameBuf(f[:14], f[14:])
	tx := testing.AllocsPerRun(1000, func() {
		if err := r.nic.Transmit(b); err != nil {
			t.Fatal(err)
		}
		r.out.complete(nil, nil, nil)
	})
	if rx != 0 || tx != 0 {
		t.Fatalf("allocations per frame: rx %v, tx %v; want 0", rx, tx)
	}
}

// The benchmarks measure the framework's per-frame cost against a plain
// copy of the same frame (the one copy a receiving stack makes anyway):
// compare ns/op of BenchmarkRxFrame and BenchmarkTxFrame with
// BenchmarkCopyBaseline in the same run.
func BenchmarkRxFrame(b *testing.B) {
	r := newRig(b, nil)
	r.h.keep = false
	f := frame(1514, 0)
	b.SetBytes(int64(len(f)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r.in.complete(f, nil, nil)
	}
}

func BenchmarkTxFrame(b *testing.B) {
	r := newRig(b, nil)
	r.linkUp(b)
	f := frame(1514, 0)
	buf := newFrameBuf(f[:14], f[14:])
	b.SetBytes(int64(len(f)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := r.nic.Transmit(buf); err != nil {
			b.Fatal(err)
		}
		r.out.complete(nil, nil, nil)
	}
}

var sink []byte

func BenchmarkCopyBaseline(b *testing.B) {
	f := frame(1514, 0)
	sink = make([]byte, 2048)
	b.SetBytes(int64(len(f)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		copy(sink, f)
	}
}

// stuckPipe never cancels: its Abort leaves the transfers queued, as a
// controller that lost track of them would.
type stuckPipe struct{ *manualPipe }

func (stuckPipe) Abort() {}

// TestStopGivesUp: a controller that never completes cancelled transfers
// costs Stop a bounded wait, counted, not a hang.
func TestStopGivesUp(t *testing.T) {
	in := stuckPipe{newManualPipe("in", usb.PipeConfig{Endpoint: 0x82, Type: usb.Bulk, MaxPacket: 64}, nil)}
	out := newManualPipe("out", usb.PipeConfig{Endpoint: 0x02, Type: usb.Bulk, MaxPacket: 64}, nil)
	n, err := New(Config{In: in, Out: out, Framing: rawFraming{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Start(&recorder{}); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	start := time.Now()
	go func() { n.Stop(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Stop hangs on a pipe that never cancels")
	}
	if n.Stats.StopTimeouts.Load() != 1 {
		t.Fatalf("StopTimeouts %d", n.Stats.StopTimeouts.Load())
	}
	t.Logf("Stop gave up after %v", time.Since(start).Round(time.Millisecond))
}
