package bridge

import (
	"bytes"
	"testing"
	"time"

	gnet "github.com/gowrt/gowrt/net"
)

// keptRx is a driver's receive buffer offered for keeping (net.RxBuf):
// Keep hands out the buffer itself as a TxBuf, unless the driver has no
// spare (empty).
//
// Like a driver on non-coherent caches, it lends only the frame's head
// readable (net.RxHeadLen): the rest holds poison until Frame (or a
// Rewrite, KeepWith or Segments reaching past the head) restores it, so
// a test that checks what the bridge delivered or sent catches a read
// past the head that did not ask.
type keptRx struct {
	seg      [1][]byte
	tail     []byte // the frame past the head, while poisoned
	empty    bool
	keeps    int
	released int
	frames   int // Frame calls that restored the tail
}

// poison is what a lent frame holds past its head until asked for.
const poison = 0xee

// lend makes b, the frame in the driver's buffer, the lent frame: its
// bytes past the head are saved and poisoned.
func (r *keptRx) lend(b []byte) {
	r.seg[0], r.tail = b, nil
	if len(b) > gnet.RxHeadLen {
		r.tail = append([]byte(nil), b[gnet.RxHeadLen:]...)
		for i := gnet.RxHeadLen; i < len(b); i++ {
			b[i] = poison
		}
	}
}

func (r *keptRx) Frame() []byte {
	if r.tail != nil {
		copy(r.seg[0][gnet.RxHeadLen:], r.tail)
		r.tail = nil
		r.frames++
	}
	return r.seg[0]
}

func (r *keptRx) Keep() gnet.TxBuf {
	if r.empty {
		return nil
	}
	r.keeps++
	return r
}
func (r *keptRx) KeepWith(head []byte) gnet.TxBuf {
	if r.empty || len(head) > len(r.seg[0]) {
		return nil
	}
	if len(head) > gnet.RxHeadLen {
		r.Frame()
	}
	r.keeps++
	copy(r.seg[0], head)
	return r
}
func (r *keptRx) Rewrite(n int) []byte {
	if n > len(r.seg[0]) {
		return nil
	}
	if n > gnet.RxHeadLen {
		r.Frame()
	}
	return r.seg[0][:n:n]
}
func (r *keptRx) Segments() [][]byte { r.Frame(); return r.seg[:] }
func (r *keptRx) Len() int           { return len(r.seg[0]) }
func (r *keptRx) Release()           { r.released++ }

// receiveBuf delivers f from the ring's buffer through ReceiveBuf, with
// rx offering the buffer for keeping, in a receive pass of its own
// (ReceiveDone after it, as a driver ends each pass).
func (r *ring) receiveBuf(t *testing.T, h gnet.Handler, rx *keptRx, f []byte) {
	t.Helper()
	r.receiveBufInPass(t, h, rx, f)
	h.(gnet.BufHandler).ReceiveDone()
}

// receiveBufInPass is receiveBuf without the pass's end.
func (r *ring) receiveBufInPass(t *testing.T, h gnet.Handler, rx *keptRx, f []byte) {
	t.Helper()
	bh, ok := h.(gnet.BufHandler)
	if !ok {
		t.Fatal("a NIC port is not a net.BufHandler")
	}
	b := r.buf[:copy(r.buf[:], f)]
	rx.lend(b)
	bh.ReceiveBuf(b, rx)
}

// TestNICPortKeepsDriverBuffer: a frame forwarded unchanged to one NIC
// that sends kept receive buffers in place (CapTxRxBuf) is transmitted as
// the ingress driver's own buffer, kept (no copy, no allocation); a
// flooded frame, a re-tagged one, one for a NIC without the capability
// and one the driver cannot spare are not kept, and still go out.
func TestNICPortKeepsDriverBuffer(t *testing.T) {
	b, _ := New(Config{MAC: brMAC})
	in := &holdNIC{}
	out := &holdNIC{caps: gnet.CapTxRxBuf}
	plain := &holdNIC{}
	trunk := PortVLANs{PVID: 1, Untagged: []uint16{1}, Tagged: []uint16{10}}
	for i, n := range []gnet.NIC{in, out, plain} {
		v := DefaultVLANs
		if i == 2 {
			v = trunk
		}
		if _, err := b.AttachNIC(n, v); err != nil {
			t.Fatal(err)
		}
	}
	var r ring
	var rx keptRx
	// Learn stB on out, stC on plain.
	out.h.Receive(frame(bcast, stB, -1, 0, 46))
	plain.h.Receive(frame(bcast, stC, -1, 0, 46))
	in.complete()
	out.complete()
	plain.complete()

	uni := frame(stB, stA, -1, 0, 100)
	r.receiveBuf(t, in.h, &rx, uni)
	if rx.keeps != 1 || len(out.held) != 1 || out.held[0] != gnet.TxBuf(&rx) || !bytes.Equal(out.flat(0), uni) {
		t.Fatalf("unicast to the CapTxRxBuf port: %d keeps, %d held", rx.keeps, len(out.held))
	}
	out.complete()
	if rx.released != 1 {
		t.Fatalf("kept buffer released %d times at completion", rx.released)
	}
	if a := testing.AllocsPerRun(100, func() { r.receiveBuf(t, in.h, &rx, uni); out.complete() }); a != 0 && !raceEnabled {
		t.Fatalf("%v allocations per kept frame", a)
	}

	keeps := rx.keeps
	r.receiveBuf(t, in.h, &rx, frame(bcast, stA, -1, 0, 100)) // flooded
	r.receiveBuf(t, in.h, &rx, frame(stC, stA, -1, 0, 100))   // no CapTxRxBuf
	rx.empty = true
	r.receiveBuf(t, in.h, &rx, uni) // no spare
	rx.empty = false
	if rx.keeps != keeps {
		t.Fatalf("%d frames kept that should not be", rx.keeps-keeps)
	}
	if len(out.held) != 2 || len(plain.held) != 2 {
		t.Fatalf("%d and %d frames sent, want 2 and 2", len(out.held), len(plain.held))
	}
	for _, h := range append(out.held, plain.held...) {
		if &h.Segments()[0][0] == &r.buf[0] {
			t.Fatal("a frame not kept is transmitted from the driver's buffer")
		}
	}
	out.complete()
	plain.complete()

	// Re-tagged on the way out: stB moves to the trunk port (tagged VLAN
	// 10 there); a frame in VLAN 10 needs a tag added, so it is not kept.
	b2, _ := New(Config{MAC: brMAC})
	acc, tr := &holdNIC{}, &holdNIC{caps: gnet.CapTxRxBuf}
	b2.AttachNIC(acc, PortVLANs{PVID: 10, Untagged: []uint16{10}})
	b2.AttachNIC(tr, trunk)
	tr.h.Receive(frame(bcast, stB, 10, 0, 46))
	acc.complete()
	r.receiveBuf(t, acc.h, &rx, uni)
	if rx.keeps != keeps || len(tr.held) != 1 || !bytes.Equal(tr.flat(0), frame(stB, stA, 10, 0, 100)) {
		t.Fatalf("re-tagged frame: %d keeps, %d held", rx.keeps-keeps, len(tr.held))
	}
	if rx.released != int(rx.keeps) {
		t.Fatalf("%d kept, %d released", rx.keeps, rx.released)
	}
}

// lendBufHost is a LendBufHandler: it takes what take says, keeping the
// driver's buffer with head written over it when head is set.
type lendBufHost struct {
	lendHost
	head     []byte
	bufOffer int
	kept     []gnet.TxBuf
	dones    int // ReceiveLentDone calls
}

func (h *lendBufHost) ReceiveLentDone() { h.dones++ }

func (h *lendBufHost) ReceiveLentBuf(f []byte, r gnet.RxBuf) bool {
	h.bufOffer++
	if !h.take(f) {
		return false
	}
	if h.head != nil {
		if t := r.KeepWith(h.head); t != nil {
			h.kept = append(h.kept, t)
		}
	}
	return true
}

// TestHostLendsDriverBuffer: a frame for the host port alone, from a
// driver that offers its buffer, goes to a LendBufHandler with that
// buffer (which it may keep with a new header), offered once: a declined
// frame is not offered again through ReceiveLent but goes to ReceiveView;
// a frame from a driver that offers no buffer goes to ReceiveLent.
func TestHostLendsDriverBuffer(t *testing.T) {
	b, _ := New(Config{MAC: brMAC})
	host, _ := b.AddHostPort(DefaultVLANs)
	routes := true
	lh := &lendBufHost{lendHost: lendHost{take: func([]byte) bool { return routes }}, head: []byte{1, 2, 3, 4}}
	if err := host.Start(lh); err != nil {
		t.Fatal(err)
	}
	in := &holdNIC{}
	b.AttachNIC(in, DefaultVLANs)
	var r ring
	var rx keptRx

	f := ipFrame(brMAC, stA)
	r.receiveBuf(t, in.h, &rx, f)
	if lh.bufOffer != 1 || lh.offers != 0 || len(lh.kept) != 1 || lh.kept[0] != gnet.TxBuf(&rx) {
		t.Fatalf("routed frame: %d buffer offers, %d lent offers, %d kept", lh.bufOffer, lh.offers, len(lh.kept))
	}
	if want := append([]byte{1, 2, 3, 4}, f[4:]...); !bytes.Equal(rx.seg[0], want) {
		t.Fatalf("kept frame %x, want the new header over it: %x", rx.seg[0], want)
	}

	routes = false
	r.receiveBuf(t, in.h, &rx, f)
	if lh.bufOffer != 2 || lh.offers != 0 || len(lh.views) != 1 {
		t.Fatalf("declined frame: %d buffer offers, %d lent offers, %d views", lh.bufOffer, lh.offers, len(lh.views))
	}
	lh.views[0].Release()

	routes = true
	r.receive(in.h, f) // no buffer offered: ReceiveLent
	if lh.bufOffer != 2 || lh.offers != 1 {
		t.Fatalf("frame without a buffer: %d buffer offers, %d lent offers", lh.bufOffer, lh.offers)
	}
}

// TestHostDirectCounts: a frame for the router that reaches the host port
// unchanged (untagged in and out: Input's direct hand-over) is counted on
// the host port as sent, or as dropped when there is no handler; a tagged
// one goes through send, is untagged into a copy of its own and not lent,
// and is counted the same way.
func TestHostDirectCounts(t *testing.T) {
	b, _ := New(Config{MAC: brMAC})
	host, _ := b.AddHostPort(DefaultVLANs)
	lh := &lendBufHost{lendHost: lendHost{take: func([]byte) bool { return true }}}
	if err := host.Start(lh); err != nil {
		t.Fatal(err)
	}
	in, trunk := &holdNIC{}, &holdNIC{}
	b.AttachNIC(in, DefaultVLANs)
	b.AttachNIC(trunk, PortVLANs{Tagged: []uint16{1}})
	hs := b.PortStats(host.Port())
	var r ring
	var rx keptRx

	f := ipFrame(brMAC, stA)
	r.receiveBuf(t, in.h, &rx, f)
	if lh.bufOffer != 1 || hs.TxFrames.Load() != 1 || hs.TxBytes.Load() != uint64(len(f)) || hs.TxDropped.Load() != 0 {
		t.Fatalf("untagged frame: %d offers; host port sent %d frames, %d bytes, dropped %d",
			lh.bufOffer, hs.TxFrames.Load(), hs.TxBytes.Load(), hs.TxDropped.Load())
	}

	tagged := frame(brMAC, stB, 1, 0, 60)
	r.receiveBuf(t, trunk.h, &rx, tagged)
	want := frame(brMAC, stB, -1, 0, 60)
	if lh.bufOffer != 1 || len(lh.views) != 1 || !bytes.Equal(lh.views[0].AsSlice(), want) {
		t.Fatalf("tagged frame: %d offers, %d views", lh.bufOffer, len(lh.views))
	}
	lh.views[0].Release()
	if hs.TxFrames.Load() != 2 || hs.TxBytes.Load() != uint64(len(f)+len(want)) {
		t.Fatalf("host port sent %d frames, %d bytes", hs.TxFrames.Load(), hs.TxBytes.Load())
	}

	host.Stop()
	_ = b.SetLink(host.Port(), true) // open the port without a handler
	r.receiveBuf(t, in.h, &rx, f)
	if hs.TxFrames.Load() != 2 || hs.TxDropped.Load() != 1 || host.RxNoHandler.Load() != 1 {
		t.Fatalf("no handler: host port sent %d, dropped %d, RxNoHandler %d",
			hs.TxFrames.Load(), hs.TxDropped.Load(), host.RxNoHandler.Load())
	}
}

// TestLentHeadReadOnlyWhenAsked: a frame lent with only its head
// readable (net.RxHeadLen; keptRx poisons the rest) arrives whole
// wherever the bridge reads past the head: at another station's port, in
// the host's view of a frame its LendBufHandler declined, and lent to a
// host handler that cannot keep buffers. A frame the host's
// LendBufHandler takes is handed over without the bridge asking for the
// rest: forwarded by DMA, its body's cache lines are never touched.
func TestLentHeadReadOnlyWhenAsked(t *testing.T) {
	long := func(dst gnet.MAC) []byte {
		f := frame(dst, stA, -1, 0, 600)
		f[ethHdrLen] = 0x45
		return f
	}
	toHost := long(brMAC)

	b, _ := New(Config{MAC: brMAC})
	host, _ := b.AddHostPort(DefaultVLANs)
	routes := true
	lh := &lendBufHost{lendHost: lendHost{take: func([]byte) bool { return routes }}}
	if err := host.Start(lh); err != nil {
		t.Fatal(err)
	}
	in, out := &holdNIC{}, &holdNIC{}
	b.AttachNIC(in, DefaultVLANs)
	b.AttachNIC(out, DefaultVLANs)
	out.h.Receive(frame(bcast, stB, -1, 0, 46)) // learn stB on out
	for _, v := range lh.views {
		v.Release() // the broadcast's
	}
	lh.views = nil
	var r ring
	var rx keptRx

	r.receiveBuf(t, in.h, &rx, toHost)
	if lh.bufOffer != 1 || rx.frames != 0 {
		t.Fatalf("taken by the LendBufHandler: %d offers, the whole frame asked for %d times", lh.bufOffer, rx.frames)
	}

	routes = false
	r.receiveBuf(t, in.h, &rx, toHost)
	if len(lh.views) != 1 || !bytes.Equal(lh.views[0].AsSlice(), toHost) {
		t.Fatal("declined by the LendBufHandler: the host's view is not the frame")
	}
	lh.views[0].Release()

	toB := long(stB)
	r.receiveBuf(t, in.h, &rx, toB)
	if len(out.held) != 1 || !bytes.Equal(out.flat(0), toB) {
		t.Fatalf("to a station: %d frames sent, or not the frame", len(out.held))
	}
	out.complete()

	// A host handler that borrows frames but keeps no buffers reads them
	// whole.
	b2, _ := New(Config{MAC: brMAC})
	host2, _ := b2.AddHostPort(DefaultVLANs)
	var got []byte
	plain := &lendHost{take: func(f []byte) bool { got = append([]byte(nil), f...); return true }}
	if err := host2.Start(plain); err != nil {
		t.Fatal(err)
	}
	in2 := &holdNIC{}
	b2.AttachNIC(in2, DefaultVLANs)
	r.receiveBuf(t, in2.h, &rx, toHost)
	if plain.offers != 1 || !bytes.Equal(got, toHost) {
		t.Fatalf("lent to a LendHandler: %d offers, frame whole: %v", plain.offers, bytes.Equal(got, toHost))
	}
}

// routingHostRig is a bridge made with c whose host port's handler takes
// every frame lent with its buffer (a router routing them), and one NIC
// port, in, numbered inPort.
func routingHostRig(t *testing.T, c Config) (b *Bridge, host *HostNIC, lh *lendBufHost, in *holdNIC, inPort int) {
	t.Helper()
	b, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	host, _ = b.AddHostPort(DefaultVLANs)
	lh = &lendBufHost{lendHost: lendHost{take: func([]byte) bool { return true }}}
	if err := host.Start(lh); err != nil {
		t.Fatal(err)
	}
	in = &holdNIC{}
	inPort, _ = b.AttachNIC(in, DefaultVLANs)
	return b, host, lh, in, inPort
}

// TestHostCountsAtReceiveDone: the counts of frames a NIC port hands to
// the host during a driver's receive pass are added at the pass's end
// (ReceiveDone), all of them, on the ingress and the host port; a
// refused frame is counted at once, after what the pass had deferred;
// a frame received without a pass (Receive) is counted at once. The host
// handler lent frames with their buffers is told each pass's end
// (ReceiveLentDone), once.
func TestHostCountsAtReceiveDone(t *testing.T) {
	b, host, lh, in, inPort := routingHostRig(t, Config{MAC: brMAC})
	is, hs := b.PortStats(inPort), b.PortStats(host.Port())
	var r ring
	var rx keptRx
	f := ipFrame(brMAC, stA)
	counts := func() [5]uint64 {
		return [5]uint64{is.RxFrames.Load(), is.RxBytes.Load(), is.Forwarded.Load(), hs.TxFrames.Load(), hs.TxBytes.Load()}
	}
	n := uint64(len(f))

	r.receiveBufInPass(t, in.h, &rx, f)
	r.receiveBufInPass(t, in.h, &rx, f)
	if c := counts(); c != [5]uint64{} {
		t.Fatalf("counted during the pass: %v", c)
	}
	in.h.(gnet.BufHandler).ReceiveDone()
	if c, want := counts(), [5]uint64{2, 2 * n, 2, 2, 2 * n}; c != want || lh.dones != 1 {
		t.Fatalf("after the pass: %v, want %v; %d ReceiveLentDone calls, want 1", c, want, lh.dones)
	}
	in.h.(gnet.BufHandler).ReceiveDone() // an empty pass: nothing owed
	if lh.dones != 1 {
		t.Fatalf("%d ReceiveLentDone calls after a pass that lent nothing, want 1", lh.dones)
	}

	r.receiveBufInPass(t, in.h, &rx, f)
	host.Stop() // the next frame is refused: no handler
	_ = b.SetLink(host.Port(), true)
	r.receiveBufInPass(t, in.h, &rx, f)
	dones := lh.dones
	if c, want := counts(), [5]uint64{4, 4 * n, 4, 3, 3 * n}; c != want || hs.TxDropped.Load() != 1 {
		t.Fatalf("after a refused frame: %v, %d dropped, want %v and 1", c, hs.TxDropped.Load(), want)
	}
	in.h.(gnet.BufHandler).ReceiveDone()
	if c, want := counts(), [5]uint64{4, 4 * n, 4, 3, 3 * n}; c != want {
		t.Fatalf("after the second pass: %v, want %v", c, want)
	}
	if lh.dones != dones {
		t.Fatal("ReceiveLentDone called on a stopped host port's handler")
	}

	if err := host.Start(lh); err != nil {
		t.Fatal(err)
	}
	r.receive(in.h, f)
	if c, want := counts(), [5]uint64{5, 5 * n, 5, 4, 4 * n}; c != want {
		t.Fatalf("a frame received without a pass: %v, want %v", c, want)
	}
}

// TestHostLearnsOncePerPass: frames a NIC port hands to the host during
// one receive pass learn their source once per station, not once per
// frame (no clock read either), and the next pass learns again: the
// station is in the FDB from its first frame, and its timestamp follows
// the passes.
func TestHostLearnsOncePerPass(t *testing.T) {
	var reads int
	clk := &clock{t: int64(time.Hour)}
	b, _, _, in, inPort := routingHostRig(t, Config{MAC: brMAC, Now: func() int64 { reads++; return clk.now() }})
	var r ring
	var rx keptRx
	done := in.h.(gnet.BufHandler).ReceiveDone

	// reads counts the clock reads of the frames' path (Lookup reads
	// the clock too).
	recv := func(st gnet.MAC) int {
		reads = 0
		r.receiveBufInPass(t, in.h, &rx, ipFrame(brMAC, st))
		return reads
	}
	learned := func(st gnet.MAC) bool {
		p, ok := b.Lookup(1, st)
		return ok && p == inPort
	}
	if n := recv(stA); n != 1 || !learned(stA) {
		t.Fatalf("pass's first frame: %d clock reads, station learned: %v", n, learned(stA))
	}
	if n := recv(stA) + recv(stA); n != 0 {
		t.Fatalf("%d clock reads for the station's later frames in the pass, want 0", n)
	}
	if n := recv(stB); n != 1 || !learned(stB) {
		t.Fatalf("second station in the pass: %d clock reads, learned: %v", n, learned(stB))
	}
	done()
	if n := recv(stB) + recv(stB); n != 1 {
		t.Fatalf("%d clock reads for two frames of the next pass, want 1", n)
	}
	done()
}
