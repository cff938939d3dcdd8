package pcnet

import (
	"bytes"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gowrt/gowrt/hwsim"
	"github.com/gowrt/gowrt/intr"
	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/net/bridge"
	"github.com/gowrt/gowrt/pcnet/pcnetsim"
)

// keeper is a BufHandler that keeps every frame it can: it sends it back
// out of the NIC at once (forwarding) or, with hold, holds on to it until
// the test sends it.
type keeper struct {
	nic  *NIC
	hold bool
	// head, if set, gives the header to keep the frame with (KeepWith,
	// or with inPlace written through Rewrite, then Keep; with noKeep
	// too, written and not kept).
	head            func(f []byte) []byte
	inPlace, noKeep bool
	// The frames it records: whole, asked for (RxBuf.Frame), unless
	// headOnly (only the head, the rest never asked for) or peek (whole,
	// without asking: the wrong way, reading stale cache lines).
	headOnly, peek bool

	mu      sync.Mutex
	frames  [][]byte     // copies of every frame received
	kept    []gnet.TxBuf // held frames (hold)
	refused int          // Keep returned nil
	txErr   int          // Transmit refused a kept frame
}

func (k *keeper) Receive([]byte) { panic("keeper: Receive called on a BufHandler") }

func (k *keeper) LinkChanged(gnet.LinkState) {}

func (k *keeper) ReceiveDone() {}

func (k *keeper) ReceiveBuf(f []byte, r gnet.RxBuf) {
	k.mu.Lock()
	defer k.mu.Unlock()
	rec := f
	switch {
	case k.headOnly:
		rec = f[:min(len(f), gnet.RxHeadLen)]
	case !k.peek:
		rec = r.Frame()
	}
	k.frames = append(k.frames, append([]byte(nil), rec...))
	var t gnet.TxBuf
	switch {
	case k.head != nil && k.inPlace:
		h := k.head(f)
		copy(r.Rewrite(len(h)), h)
		if k.noKeep {
			return
		}
		t = r.Keep()
	case k.head != nil:
		t = r.KeepWith(k.head(f))
	default:
		t = r.Keep()
	}
	switch {
	case t == nil:
		k.refused++
	case k.hold:
		k.kept = append(k.kept, t)
	default:
		if k.nic.Transmit(t) != nil {
			k.txErr++
			t.Release()
		}
	}
}

func (k *keeper) received() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.frames)
}

// keepRig is a rig whose NIC is started with a keeper.
func keepRig(t *testing.T, seed uint64, be bool, hold, inRing bool, mods ...func(*Config)) (*rig, *keeper) {
	t.Helper()
	k := &keeper{hold: hold}
	// TxOnDemand: frames forwarded in a service pass are rung for at its
	// end, which must not be forgotten.
	r := newRigChip(t, seed, be, wrong{}, hwsim.ControllerConfig{Name: "i8259", Lines: 16}, pcnetsim.Config{TxOnDemand: true}, func(n *NIC) error {
		k.nic = n
		if inRing {
			setKeepInRing(t, n)
		}
		return n.Start(k)
	}, mods...)
	return r, k
}

// deliver feeds frames to the chip a few at a time and waits until the
// handler has seen all of them (or the chip missed some).
func deliver(t *testing.T, r *rig, k *keeper, frames [][]byte) {
	t.Helper()
	base := k.received()
	for _, f := range frames {
		r.chip.Deliver(f)
		for r.chip.Pending() > 1 {
			time.Sleep(50 * time.Microsecond)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for k.received()+r.missed() < base+len(frames) {
		if time.Now().After(deadline) {
			t.Fatalf("received %d of %d frames", k.received()-base, len(frames))
		}
		time.Sleep(time.Millisecond)
	}
}

// spares counts the pool's buffers; the receive path must be idle.
func (n *NIC) spares() int {
	n.rxMu.Lock()
	defer n.rxMu.Unlock()
	k := 0
	for b := n.pool.free; b != nil; b = b.next {
		k++
	}
	for b := n.pool.returned.Load(); b != nil; b = b.next {
		k++
	}
	return k
}

// TestKeepForwardsFromReceiveBuffer: a handler that keeps each received
// frame and transmits it gets the driver's receive buffer as its TxBuf,
// and the chip sends the frame from that buffer (no copy, TxFromRx) with
// no cache maintenance the model finds missing; the ring is refilled from
// the pool, the kept buffers return to it when sent, and many times more
// frames than ring and pool hold pass through intact, on both endians.
func TestKeepForwardsFromReceiveBuffer(t *testing.T) {
	sizes := []int{60, 61, 100, 1000, 1514, 1518}
	for _, be := range []bool{false, true} {
		for seed := uint64(1); seed <= 3; seed++ {
			r, k := keepRig(t, seed, be, false, false, func(c *Config) { c.RxSpares = 4 })
			k.headOnly = true // sent by DMA: nobody reads past the head
			var want [][]byte
			for i := 0; i < 60; i++ {
				want = append(want, frame(i, sizes[i%len(sizes)]))
			}
			deliver(t, r, k, want)
			got := map[string]int{}
			deadline := time.After(5 * time.Second)
			for sent := 0; sent < k.received()-k.refused-k.txErr; sent++ {
				select {
				case f := <-r.sent:
					got[string(f)]++
				case <-deadline:
					t.Fatalf("be=%v seed %d: %d frames sent of %d kept", be, seed, sent, k.received()-k.refused-k.txErr)
				}
			}
			for _, w := range want {
				got[string(w)]--
			}
			for f, c := range got {
				if c > 0 {
					t.Fatalf("be=%v seed %d: sent a %d-byte frame that was not received", be, seed, len(f))
				}
			}
			// The driver adds its TX counts when it rings the
			// doorbell, which may be just after the chip sent.
			kept := uint64(k.received() - k.refused - k.txErr)
			waitFor(time.Second, func() bool { return r.nic.Stats.TxFromRx.Load() == kept })
			if fromRx := r.nic.Stats.TxFromRx.Load(); fromRx == 0 || fromRx != kept {
				t.Fatalf("be=%v seed %d: %d frames sent from receive buffers, %d kept (%d refused, %d not sent)",
					be, seed, r.nic.Stats.TxFromRx.Load(), k.received(), k.refused, k.txErr)
			}
			if k.refused != int(r.nic.Stats.RxKeepEmpty.Load()) {
				t.Fatalf("be=%v seed %d: %d keeps refused, RxKeepEmpty %d", be, seed, k.refused, r.nic.Stats.RxKeepEmpty.Load())
			}
			r.close() // releases frames still queued
			if n := r.nic.spares(); n != 4 {
				t.Fatalf("be=%v seed %d: %d of 4 spare buffers back in the pool", be, seed, n)
			}
			for _, m := range r.misuses(t) {
				t.Errorf("be=%v seed %d: %v", be, seed, m)
			}
		}
	}
}

// TestKeepRefusedWhenPoolEmpty: with every spare held, Keep refuses and
// the frame is only borrowed; the ring keeps receiving, and the held
// frames are intact (their buffers left the ring).
func TestKeepRefusedWhenPoolEmpty(t *testing.T) {
	r, k := keepRig(t, 5, true, true, false, func(c *Config) { c.RxSpares = 3 })
	var want [][]byte
	for i := 0; i < 30; i++ {
		want = append(want, frame(i, 200+i))
	}
	deliver(t, r, k, want)
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.kept) != 3 || k.refused != len(k.frames)-3 {
		t.Fatalf("kept %d, refused %d of %d frames", len(k.kept), k.refused, len(k.frames))
	}
	for i, b := range k.kept {
		if seg := b.Segments(); len(seg) != 1 || !bytes.Equal(seg[0], k.frames[i]) {
			t.Fatalf("held frame %d changed while held", i)
		}
		if err := r.nic.Transmit(b); err != nil {
			t.Fatal(err)
		}
	}
	for i := range k.kept {
		select {
		case f := <-r.sent:
			if !bytes.Equal(f, k.frames[i]) {
				t.Fatalf("held frame %d sent changed", i)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("held frame %d never sent", i)
		}
	}
	for _, m := range r.misuses(t) {
		t.Error(m)
	}
}

// TestHazardKeptBufferInRing: the wrong way to keep a buffer, leaving it
// in its ring slot (handed back to the chip) instead of refilling the
// slot from the pool, while the handler transmits it. The chip is then
// handed a TX buffer it also owns for receiving, and may receive into it
// before sending it: the model's one-owner rule reports it (or a frame
// goes out changed), while the correct driver, run the same way, is
// never caught.
func TestHazardKeptBufferInRing(t *testing.T) {
	if !hazardTag {
		t.Skip("the kept-buffer-in-ring variant needs the driver's hook: go test -tags gowrt_hazard")
	}
	const seeds = 8
	caught := 0
	for seed := uint64(1); seed <= seeds; seed++ {
		for _, bug := range []bool{true, false} {
			r, k := keepRig(t, seed, seed%2 == 0, false, bug, func(c *Config) { c.RxSpares = 4 })
			var want [][]byte
			for i := 0; i < 150; i++ {
				want = append(want, frame(i, 100+i))
			}
			deliver(t, r, k, want)
			time.Sleep(5 * time.Millisecond)
			r.close()
			expect := map[string]bool{}
			for _, w := range want {
				expect[string(w)] = true
			}
			changed := 0
			for len(r.sent) > 0 {
				if !expect[string(<-r.sent)] {
					changed++
				}
			}
			owner := 0
			ms := r.misuses(t)
			for _, m := range ms {
				if m.Kind == hwsim.ModelRule && bytes.Contains([]byte(m.Detail), []byte("which the chip also owns")) {
					owner++
				}
			}
			if !bug {
				if changed != 0 || len(ms) != 0 {
					t.Fatalf("seed %d: correct driver caught: %d frames sent changed, misuses %v", seed, changed, ms)
				}
				continue
			}
			if owner > 0 || changed > 0 {
				caught++
			}
			t.Logf("seed %d: %d one-owner misuses, %d frames sent changed", seed, owner, changed)
		}
	}
	if caught != seeds {
		t.Fatalf("caught under %d of %d seeds", caught, seeds)
	}
}

// TestBridgeSendsFromReceiveBuffer: two chips on one bus, both ports of a
// bridge, as on QEMU malta. A frame bridged from one to the other goes
// out of the second chip from the first chip's receive buffer (TxFromRx,
// no copy), the buffer returns to the first chip's pool after the second
// chip sent it, and the model finds no misuse: each buffer has one owner
// at a time across both chips' rings.
func TestBridgeSendsFromReceiveBuffer(t *testing.T) {
	br, err := bridge.New(bridge.Config{MAC: gnet.MAC{0x02, 0xbb, 0, 0, 0, 1}})
	if err != nil {
		t.Fatal(err)
	}
	attach := func(n *NIC) error { _, err := br.AttachNIC(n, bridge.DefaultVLANs); return err }
	prom := func(c *Config) { c.Promiscuous = true; c.RxSpares = 6 }
	// TxOnDemand: chip B sends only what its doorbell announced, which
	// chip A's service passes ring when they end.
	a := newRigChip(t, 7, true, wrong{}, hwsim.ControllerConfig{Name: "i8259", Lines: 16}, pcnetsim.Config{TxOnDemand: true}, attach, prom)
	// The second chip: same system (memory, bus), its own line.
	const lineB = line + 1
	sentB := make(chan []byte, 1024)
	macB := [6]byte{0x52, 0x54, 0x00, 0x12, 0x34, 0x57}
	chipB := pcnetsim.New(a.sys, a.ctl, pcnetsim.Config{MAC: macB, Line: lineB, TxOnDemand: true, OnTransmit: func(f []byte) {
		sentB <- append([]byte(nil), f...)
	}})
	cfg := Config{Regs: chipB.Map("pcnet-b"), DMA: a.sys.Mem, RxRing: 8, TxRing: 8, LinkPoll: 5 * time.Millisecond}
	prom(&cfg)
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.ctl.SetTrigger(lineB, intr.Level); err != nil {
		t.Fatal(err)
	}
	if err := a.disp.Register(lineB, "pcnet-b", b.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := attach(b); err != nil {
		t.Fatal(err)
	}
	stopB := make(chan struct{})
	done := make(chan struct{})
	go func() { chipB.Pump(stopB); close(done) }()
	defer func() { b.Stop(); _ = a.disp.Unregister(lineB); close(stopB); <-done }()

	// Station X lives behind chip B: the bridge learns it from a frame.
	stX, stY := []byte{0x02, 0, 0, 0, 0, 0x0a}, []byte{0x02, 0, 0, 0, 0, 0x0b}
	learn := frame(0, 64)
	copy(learn[6:], stX)
	chipB.Deliver(learn)
	select {
	case <-a.sent: // flooded out of chip A
	case <-time.After(5 * time.Second):
		t.Fatal("the learning frame was not flooded")
	}
	const n = 50
	var want [][]byte
	for i := 0; i < n; i++ {
		f := frame(i, 60+i*29)
		copy(f, stX)
		copy(f[6:], stY)
		want = append(want, f)
		a.chip.Deliver(f)
		for a.chip.Pending() > 1 {
			time.Sleep(50 * time.Microsecond)
		}
	}
	for i := 0; i < n-a.missed(); i++ {
		select {
		case f := <-sentB:
			found := false
			for _, w := range want {
				found = found || bytes.Equal(f, w)
			}
			if !found {
				t.Fatalf("chip B sent a %d-byte frame that chip A did not receive", len(f))
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("chip B sent %d of %d frames", i, n)
		}
	}
	// TxFrames and TxFromRx are added one after the other, after the
	// doorbell: wait for them to agree.
	waitFor(5*time.Second, func() bool {
		return b.Stats.TxFromRx.Load()+a.nic.Stats.RxKeepEmpty.Load() == b.Stats.TxFrames.Load()
	})
	fromRx := b.Stats.TxFromRx.Load()
	if fromRx == 0 || fromRx+a.nic.Stats.RxKeepEmpty.Load() != b.Stats.TxFrames.Load() {
		t.Fatalf("chip B sent %d frames, %d from chip A's buffers; A refused %d keeps",
			b.Stats.TxFrames.Load(), fromRx, a.nic.Stats.RxKeepEmpty.Load())
	}
	deadline := time.Now().Add(5 * time.Second)
	for a.nic.spares() != 6 {
		if time.Now().After(deadline) {
			t.Fatalf("%d of chip A's 6 spare buffers back in its pool", a.nic.spares())
		}
		time.Sleep(time.Millisecond)
	}
	for _, m := range a.misuses(t) {
		t.Error(m)
	}
}

// writer is a handler that breaks the net contract: it writes into the
// frame it is lent.
type writer struct{ n int }

func (w *writer) Receive(f []byte) {
	f[len(f)/2] ^= 0xff
	w.n++
}
func (*writer) LinkChanged(gnet.LinkState) {}

// TestHazardHandlerWritesFrame: the driver re-arms a receive buffer
// without a PreRead invalidate, relying on the CPU never writing it
// (busdma's re-arm rule). A handler that writes a lent frame leaves a
// dirty line in a buffer the chip writes again, and the model reports
// it: the promise the driver relies on is checked, not assumed.
func TestHazardHandlerWritesFrame(t *testing.T) {
	w := &writer{}
	r := newRigStart(t, 3, true, wrong{}, hwsim.ControllerConfig{Name: "i8259", Lines: 16},
		func(n *NIC) error { return n.Start(w) })
	for i := 0; i < 20; i++ { // the 8-slot ring wraps twice
		r.chip.Deliver(frame(i, 200))
		for r.chip.Pending() > 1 {
			time.Sleep(50 * time.Microsecond)
		}
	}
	time.Sleep(5 * time.Millisecond)
	r.close()
	for _, m := range r.misuses(t) {
		if m.Kind == hwsim.CPUWroteDeviceLine {
			return
		}
	}
	t.Fatalf("a handler wrote %d lent frames, and no write was caught", w.n)
}

// TestHazardReadPastHead: the wrong way to read a lent frame, past its
// head (net.RxHeadLen) without asking (RxBuf.Frame). The driver
// invalidated only the head's cache lines, so the handler reads what the
// cache held for the rest: the model's CPU view shows a stale frame,
// which the right way, asking, never does (the other keep tests record
// frames that way).
func TestHazardReadPastHead(t *testing.T) {
	for _, be := range []bool{false, true} {
		r, k := keepRig(t, 7, be, false, false)
		k.peek = true
		var want [][]byte
		for i := 0; i < 20; i++ { // the 8-slot ring wraps twice
			want = append(want, frame(i, 1000))
		}
		deliver(t, r, k, want)
		r.close()
		// Frames are told apart by their heads (frame(i, n) numbers
		// every byte).
		byHead := map[string][]byte{}
		for _, w := range want {
			byHead[string(w[:gnet.RxHeadLen])] = w
		}
		k.mu.Lock()
		stale := 0
		for i, f := range k.frames {
			w, ok := byHead[string(f[:gnet.RxHeadLen])]
			switch {
			case !ok:
				t.Errorf("be=%v: frame %d differs in its head, which the driver made readable", be, i)
			case !bytes.Equal(f, w):
				stale++
			}
		}
		k.mu.Unlock()
		if stale == 0 {
			t.Fatalf("be=%v: a handler read %d lent frames past the head without asking, and read no stale byte", be, len(want))
		}
	}
}

// TestRewriteInPlace: a handler that writes rewritten headers into the
// lent frame through Rewrite (as the router's NAT does) and keeps the
// buffer gets it sent with the new headers, and one that writes them and
// does not keep it leaves nothing behind for the chip to trip over: the
// driver writes the lines back either way (without that, the model
// reports the dirty lines, as in TestHazardHandlerWritesFrame).
func TestRewriteInPlace(t *testing.T) {
	for _, be := range []bool{false, true} {
		checkRewrittenSent(t, 5, be, true, 40)
		checkRewrittenSent(t, 8, be, true, longHeaders)

		r, k := keepRig(t, 6, be, false, false)
		k.head, k.inPlace, k.noKeep = rewrite, true, true
		var want [][]byte
		for i := 0; i < 20; i++ { // the 8-slot ring wraps twice
			want = append(want, frame(i, 200))
		}
		deliver(t, r, k, want)
		time.Sleep(5 * time.Millisecond)
		r.close()
		for _, m := range r.misuses(t) {
			t.Errorf("be=%v not kept: %v", be, m)
		}
	}
}

// TestKeepReleaseAllocatesNothing: keeping a buffer (a spare refills its
// slot) and releasing it (it becomes a spare) allocate nothing.
func TestKeepReleaseAllocatesNothing(t *testing.T) {
	r, _ := keepRig(t, 1, false, true, false, func(c *Config) { c.RxSpares = 2 })
	n := r.nic
	cycle := func() {
		n.rxMu.Lock() // as reapRx holds it around ReceiveBuf
		s := n.rx[n.rxHead]
		s.state, s.slot, s.frame[0] = rxLent, n.rxHead, s.buf[:64]
		kept := s.Keep()
		n.rxMu.Unlock()
		if kept == nil {
			t.Fatal("Keep refused with spares in the pool")
		}
		kept.Release()
	}
	if a := testing.AllocsPerRun(100, cycle); a != 0 {
		t.Fatalf("%v allocations per keep and release", a)
	}
	if n.spares() != 2 {
		t.Fatalf("%d spares after balanced keeps and releases, want 2", n.spares())
	}
}

// rewrite is a router's header rewrite: the first 40 bytes with the
// addresses swapped and the rest inverted.
func rewrite(f []byte) []byte { return rewriteN(f, 40) }

// rewriteN is rewrite over the first n bytes. It reads only the lent
// frame's head (net.RxHeadLen); bytes past it get a pattern of their own.
func rewriteN(f []byte, n int) []byte {
	h := make([]byte, n)
	copy(h, f[6:12])
	copy(h[6:], f[0:6])
	for i := 12; i < n; i++ {
		if i < gnet.RxHeadLen {
			h[i] = ^f[i]
		} else {
			h[i] = byte(i) ^ 0x5a
		}
	}
	return h
}

// TestKeepWithRewrittenHeader: a handler that keeps each frame with a
// rewritten header (KeepWith, as the router's NAT does) gets it sent from
// the receive buffer with the new header: the driver wrote it back for
// DMA (the model reports a device read of a dirty line otherwise), and
// the buffers, written by the CPU, are re-armed without a misuse.
func TestKeepWithRewrittenHeader(t *testing.T) {
	for _, be := range []bool{false, true} {
		checkRewrittenSent(t, 4, be, false, 40)
		checkRewrittenSent(t, 9, be, false, longHeaders)
	}
}

// longHeaders is a rewrite longer than the head a lent frame is
// readable in (IPv4 and TCP options): Rewrite and KeepWith must make the
// lines it ends in hold the chip's data before the CPU writes them, or
// the rest of the last line goes out stale.
const longHeaders = gnet.RxHeadLen + 22

// checkRewrittenSent runs 40 frames through a handler that rewrites the
// first hl bytes of each, in place (Rewrite) or with KeepWith, and keeps
// it: every kept frame must leave from its receive buffer with the new
// header, and the model must see no misuse.
func checkRewrittenSent(t *testing.T, seed uint64, be, inPlace bool, hl int) {
	t.Helper()
	r, k := keepRig(t, seed, be, false, false, func(c *Config) { c.RxSpares = 4 })
	k.head, k.inPlace = func(f []byte) []byte { return rewriteN(f, hl) }, inPlace
	k.headOnly = true // the rewrite, not the recording, asks for more
	var want [][]byte
	expect := map[string]int{}
	for i := 0; i < 40; i++ {
		f := frame(i, 100+hl+i*30)
		want = append(want, f)
		expect[string(append(rewriteN(f, hl), f[hl:]...))]++
	}
	deliver(t, r, k, want)
	sent := k.received() - k.refused - k.txErr
	for i := 0; i < sent; i++ {
		select {
		case f := <-r.sent:
			if expect[string(f)] == 0 {
				t.Fatalf("be=%v in place=%v: sent a %d-byte frame without the rewritten header", be, inPlace, len(f))
			}
			expect[string(f)]--
		case <-time.After(5 * time.Second):
			t.Fatalf("be=%v in place=%v: %d of %d frames sent", be, inPlace, i, sent)
		}
	}
	// The driver adds its TX counts after ringing the doorbell, and the
	// model may send the frames before that: wait for the count.
	waitFor(5*time.Second, func() bool { return r.nic.Stats.TxFromRx.Load() == uint64(sent) })
	if from := r.nic.Stats.TxFromRx.Load(); from == 0 || from != uint64(sent) {
		t.Fatalf("be=%v in place=%v: %d of %d kept frames sent from receive buffers", be, inPlace, from, sent)
	}
	r.close()
	for _, m := range r.misuses(t) {
		t.Errorf("be=%v in place=%v: %v", be, inPlace, m)
	}
}

// TestReleaseChain: kept buffers of two NICs, released interleaved by one
// TX completion, go back to their own NICs' pools, each once, as spares.
func TestReleaseChain(t *testing.T) {
	var a, b NIC
	bufs := make([]rxBuf, 10)
	var c releaseChain
	for i := range bufs {
		bufs[i].owner, bufs[i].state, bufs[i].frame[0] = &a, rxKept, []byte{1}
		if i%3 == 0 {
			bufs[i].owner = &b
		}
		c.add(&bufs[i])
	}
	c.flush()
	for _, n := range []*NIC{&a, &b} {
		for x := n.pool.get(); x != nil; x = n.pool.get() {
			if x.owner != n || x.state != rxSpare || x.frame[0] != nil {
				t.Fatalf("buffer of %p in the pool of %p, state %d, frame %v", x.owner, n, x.state, x.frame[0])
			}
			x.owner = nil // seen
		}
	}
	for i, x := range bufs {
		if x.owner != nil {
			t.Fatalf("buffer %d not back in its pool", i)
		}
	}
}

// TestRxPoolConcurrentReturns: buffers released on many goroutines while
// the receive path takes spares all come back, and none is handed out
// while it is still out.
func TestRxPoolConcurrentReturns(t *testing.T) {
	const n, rounds, returners = 64, 20000, 4
	bufs := make([]rxBuf, n)
	out := make([]atomic.Bool, n) // indexed by slot
	var p rxPool
	for i := range bufs {
		bufs[i].slot = i
		p.add(&bufs[i])
	}
	back := make(chan *rxBuf, n)
	var wg sync.WaitGroup
	for range returners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Every other return is a chain of two (putChain, as a
			// TX completion returns what it reaped).
			var held *rxBuf
			for b := range back {
				out[b.slot].Store(false)
				switch {
				case b.slot%2 == 0:
					p.put(b)
				case held == nil:
					held = b
				default:
					b.next = held
					p.putChain(b, held)
					held = nil
				}
			}
			if held != nil {
				p.put(held)
			}
		}()
	}
	for taken := 0; taken < rounds; {
		b := p.get()
		if b == nil {
			runtime.Gosched()
			continue
		}
		if !out[b.slot].CompareAndSwap(false, true) {
			t.Fatalf("buffer %d handed out while still out", b.slot)
		}
		taken++
		back <- b
	}
	close(back)
	wg.Wait()
	seen := map[*rxBuf]bool{}
	for b := p.get(); b != nil; b = p.get() {
		if seen[b] {
			t.Fatalf("buffer %d in the pool twice", b.slot)
		}
		seen[b] = true
	}
	if len(seen) != n {
		t.Fatalf("%d of %d buffers came back", len(seen), n)
	}
}

// waitFor polls ok every millisecond until it holds or d has passed: the
// driver adds its TX counts after ringing the doorbell, so a model's
// goroutine may have sent the frames before the counts show them.
func waitFor(d time.Duration, ok func() bool) {
	for deadline := time.Now().Add(d); !ok() && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
}
