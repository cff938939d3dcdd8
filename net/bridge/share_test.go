package bridge

import (
	"bytes"
	"encoding/binary"
	"errors"
	"github.com/gowrt/gowrt/net/inetsum/inetsumtest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/net/nictest"
	"gvisor.dev/gvisor/pkg/buffer"
)

// holdNIC keeps every TxBuf it accepts, as a NIC whose DMA has not
// completed yet, until the test completes them.
type holdNIC struct {
	caps gnet.Capabilities
	h    gnet.Handler
	held []gnet.TxBuf
}

func (*holdNIC) MACAddress() gnet.MAC              { return stC }
func (*holdNIC) MTU() int                          { return 1500 }
func (n *holdNIC) Capabilities() gnet.Capabilities { return n.caps }
func (*holdNIC) Link() gnet.LinkState              { return gnet.LinkState{Up: true} }
func (n *holdNIC) Start(h gnet.Handler) error      { n.h = h; return nil }
func (*holdNIC) Stop()                             {}
func (n *holdNIC) Transmit(t gnet.TxBuf) error     { n.held = append(n.held, t); return nil }

// flat returns held frame i as one byte slice.
func (n *holdNIC) flat(i int) []byte {
	var f []byte
	for _, s := range n.held[i].Segments() {
		f = append(f, s...)
	}
	return f
}

func (n *holdNIC) complete() {
	for _, t := range n.held {
		t.Release()
	}
	clear(n.held)
	n.held = n.held[:0] // reused: holding allocates nothing in steady state
}

// ring is a driver's receive buffer: it lends f to the bridge from its
// own memory, and reuses that memory for the next frame once Receive has
// returned.
type ring struct{ buf [gnet.RxBufSize]byte }

func (r *ring) receive(h gnet.Handler, f []byte) []byte {
	b := r.buf[:copy(r.buf[:], f)]
	h.Receive(b)
	clear(r.buf[:]) // re-armed: the next frame overwrites it
	return b
}

// TestNICPortSharesOneCopy: the bridge copies a borrowed frame once; a
// frame flooded to two NICs is that one buffer for both (same memory),
// which is not the driver's buffer and stays intact after the driver
// reused its buffer and the pool recycled memory, and after one port's
// completion.
func TestNICPortSharesOneCopy(t *testing.T) {
	b, _ := New(Config{MAC: brMAC})
	in, out1, out2 := &holdNIC{}, &holdNIC{}, &holdNIC{}
	for _, n := range []*holdNIC{in, out1, out2} {
		if _, err := b.AttachNIC(n, DefaultVLANs); err != nil {
			t.Fatal(err)
		}
	}
	f := frame(bcast, stA, -1, 0, 100)
	var r ring
	dma := r.receive(in.h, f)
	for i := 0; i < 50; i++ {
		w := buffer.NewViewSize(len(f)) // churn the pool: a freed chunk would be reused
		clear(w.AsSlice())
		w.Release()
	}
	var mem *byte
	for _, o := range []*holdNIC{out1, out2} {
		if len(o.held) != 1 {
			t.Fatalf("%d frames held, want 1", len(o.held))
		}
		s := o.held[0].Segments()
		if len(s) != 1 || &s[0][0] == &dma[0] {
			t.Fatalf("egress frame in %d segments or in the driver's buffer", len(s))
		}
		if mem == nil {
			mem = &s[0][0]
		} else if &s[0][0] != mem {
			t.Fatal("the two egress ports got two copies, want one shared buffer")
		}
		if !bytes.Equal(o.flat(0), f) {
			t.Fatal("held frame changed after the driver reused its buffer")
		}
	}
	out1.complete()
	if !bytes.Equal(out2.flat(0), f) {
		t.Fatal("one port's completion changed the other port's frame")
	}
	out2.complete()
}

// TestDroppedFrameNotCopied: a frame the bridge drops costs no buffer,
// and forwarding a borrowed frame allocates nothing.
func TestDroppedFrameNotCopied(t *testing.T) {
	b, _ := New(Config{MAC: brMAC})
	in, out := &holdNIC{}, &nullNIC{}
	b.AttachNIC(in, DefaultVLANs)
	b.AttachNIC(out, DefaultVLANs)
	in.h.Receive(frame(bcast, stB, -1, 0, 46)) // learn B on the ingress port
	var r ring
	hairpin := frame(stB, stA, -1, 0, 100) // B lives on the ingress port
	if n := testing.AllocsPerRun(100, func() { r.receive(in.h, hairpin) }); n != 0 && !raceEnabled {
		t.Fatalf("%v allocations per dropped frame", n)
	}
	if b.Stats.Dropped(ReasonHairpin) == 0 {
		t.Fatal("frame not dropped as hairpin")
	}
	fwd := frame(bcast, stA, -1, 0, 100)
	if n := testing.AllocsPerRun(100, func() { r.receive(in.h, fwd) }); n != 0 && !raceEnabled {
		t.Fatalf("%v allocations per forwarded frame", n)
	}
	if out.sent == 0 {
		t.Fatal("nothing forwarded")
	}
}

// TestNICPortRetagShared: adding a tag toward a trunk shares the payload
// with a private header for a gathering NIC and copies for one that
// cannot gather; both put the right frame on the wire.
func TestNICPortRetagShared(t *testing.T) {
	access := PortVLANs{PVID: 10, Untagged: []uint16{10}}
	trunk := PortVLANs{PVID: 1, Untagged: []uint16{1}, Tagged: []uint16{10}}
	for _, c := range []struct {
		name string
		caps gnet.Capabilities
		segs int
	}{{"gather", gnet.CapScatterGather, 2}, {"flat", 0, 1}} {
		t.Run(c.name, func(t *testing.T) {
			b, _ := New(Config{MAC: brMAC})
			in, out := &holdNIC{}, &holdNIC{caps: c.caps}
			b.AttachNIC(in, access)
			b.AttachNIC(out, trunk)
			var r ring
			r.receive(in.h, frame(bcast, stA, -1, 0, 100))
			r.receive(in.h, frame(bcast, stB, -1, 0, 100)) // reuses the scratch header
			if len(out.held) != 2 {
				t.Fatalf("%d frames held, want 2", len(out.held))
			}
			for i, src := range []gnet.MAC{stA, stB} {
				if n := len(out.held[i].Segments()); n != c.segs {
					t.Fatalf("frame %d in %d segments, want %d", i, n, c.segs)
				}
				if want := frame(bcast, src, 10, 0, 100); !bytes.Equal(out.flat(i), want) {
					t.Fatalf("frame %d:\n got %x\nwant %x", i, out.flat(i), want)
				}
			}
			out.complete()
		})
	}
}

// TestFDBConcurrent: ports learning, looking up, flushing and sweeping at
// once (run with -race). Station i only ever sends on port i%2, so a
// lookup may miss (aged, flushed, swept) but must never name the other
// port: the lock-free table never pairs a key with another entry's value.
func TestFDBConcurrent(t *testing.T) {
	var clk atomic.Int64
	clk.Store(int64(time.Hour))
	b, _ := New(Config{MAC: brMAC, AgeTime: 2 * time.Second, FDBSize: 256,
		Now: func() int64 { return clk.Add(int64(time.Millisecond)) }})
	for range 3 {
		p, _ := b.AddPort(&atomicSink{}, DefaultVLANs) // sent to from both goroutines
		b.SetLink(p, true)
	}
	const stations = 600 // more than the table holds: inserts fail too
	mac := func(i int) gnet.MAC { return gnet.MAC{0x02, 0, 0, 0, byte(i >> 8), byte(i)} }
	var wg sync.WaitGroup
	var wrong atomic.Int64
	for port := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < 20000; k++ {
				i := (k*7 + port) % stations
				if i%2 == port {
					b.Input(port, frame(bcast, mac(i), -1, 0, 46))
				}
				j := (k * 13) % stations
				if p, ok := b.Lookup(1, mac(j)); ok && p != j%2 {
					wrong.Add(1)
				}
			}
		}()
	}
	wg.Add(1)
	go func() { // link flaps on the third port flush it
		defer wg.Done()
		for k := 0; k < 200; k++ {
			b.SetLink(2, k%2 == 0)
		}
	}()
	wg.Wait()
	if n := wrong.Load(); n != 0 {
		t.Fatalf("%d lookups named a port the station never used", n)
	}
	if b.FDBEntries() == 0 {
		t.Fatal("nothing learned")
	}
}

// atomicSink counts frames from any number of ingress goroutines.
type atomicSink struct{ n atomic.Int64 }

func (l *atomicSink) Send(hdr, payload []byte) bool { l.n.Add(1); return true }

// viewHost is a host-side ViewHandler (what netstack.Endpoint is to the
// bridge) that keeps every frame it is given.
type viewHost struct {
	views    []*buffer.View
	borrowed int
}

func (h *viewHost) Receive([]byte)             { h.borrowed++ }
func (h *viewHost) ReceiveView(v *buffer.View) { h.views = append(h.views, v) }
func (h *viewHost) LinkChanged(gnet.LinkState) {}

// ipFrame is an untagged frame with an IPv4 header (no options, not a
// fragment) and 40 bytes after it.
func ipFrame(dst, src gnet.MAC) []byte {
	f := frame(dst, src, -1, 0, 60)
	ip := f[ethHdrLen:]
	ip[0] = 0x45
	binary.BigEndian.PutUint16(ip[6:8], 0)
	return f
}

// parsedInPlace takes over v and reports whether gVisor, parsing its
// Ethernet header as the stack does (Buffer.PullUp), reads the frame
// where it is: it does only when nobody else holds a reference to the
// memory, and copies it (copy-on-write) otherwise.
func parsedInPlace(v *buffer.View) bool {
	mem := &v.AsSlice()[0]
	b := buffer.MakeWithView(v)
	defer b.Release()
	h, ok := b.PullUp(0, ethHdrLen)
	return ok && &h.AsSlice()[0] == mem
}

// TestHostGetsBridgeCopy: the host's ViewHandler gets the bridge's one
// copy of a frame (not the driver's buffer). A frame only the host keeps
// is the host's alone, so gVisor parses it in place: one copy from the
// driver's buffer to the stack. A frame flooded to the host and to a NIC
// port still transmitting it is one buffer for both, which gVisor copies
// before parsing; a NIC that completed its transmission at once leaves it
// to the host alone again. A host handler that only borrows frames gets
// the driver's buffer itself.
func TestHostGetsBridgeCopy(t *testing.T) {
	b, _ := New(Config{MAC: brMAC})
	host, _ := b.AddHostPort(DefaultVLANs) // port 0: flooded to first, were it not for Input
	vh := &viewHost{}
	if err := host.Start(vh); err != nil {
		t.Fatal(err)
	}
	in, out := &holdNIC{}, &holdNIC{}
	b.AttachNIC(in, DefaultVLANs)
	b.AttachNIC(out, DefaultVLANs)
	var r ring

	// Unicast to the router.
	f := ipFrame(brMAC, stA)
	dma := r.receive(in.h, f)
	if len(vh.views) != 1 || len(out.held) != 0 || vh.borrowed != 0 {
		t.Fatalf("unicast to the host: %d views (%d borrowed), %d NIC frames", len(vh.views), vh.borrowed, len(out.held))
	}
	if &vh.views[0].AsSlice()[0] == &dma[0] || !bytes.Equal(vh.views[0].AsSlice(), f) {
		t.Fatal("host frame is the driver's buffer, or differs")
	}
	if !parsedInPlace(vh.views[0]) {
		t.Fatal("gVisor would copy a frame only the host holds")
	}
	vh.views = nil

	// Broadcast, held by the NIC port.
	f = ipFrame(bcast, stA)
	dma = r.receive(in.h, f)
	if len(vh.views) != 1 || len(out.held) != 1 {
		t.Fatalf("broadcast: host got %d views, NIC %d frames; want 1 and 1", len(vh.views), len(out.held))
	}
	hostMem, nicMem := &vh.views[0].AsSlice()[0], &out.held[0].Segments()[0][0]
	if hostMem != nicMem || hostMem == &dma[0] {
		t.Fatal("host and NIC port do not share the bridge's one copy")
	}
	if !bytes.Equal(vh.views[0].AsSlice(), f) || !bytes.Equal(out.flat(0), f) {
		t.Fatal("shared frame changed after the driver reused its buffer")
	}
	if parsedInPlace(vh.views[0]) {
		t.Fatal("gVisor would parse, and may write, memory a NIC is transmitting")
	}
	vh.views = nil
	out.complete()

	// Broadcast to a NIC port that completes at once.
	b2, _ := New(Config{MAC: brMAC})
	host2, _ := b2.AddHostPort(DefaultVLANs)
	vh2 := &viewHost{}
	host2.Start(vh2)
	in2, fast := &holdNIC{}, &nullNIC{}
	b2.AttachNIC(in2, DefaultVLANs)
	b2.AttachNIC(fast, DefaultVLANs)
	r.receive(in2.h, f)
	if len(vh2.views) != 1 || fast.frames != 1 {
		t.Fatalf("broadcast: host got %d views, NIC %d frames; want 1 and 1", len(vh2.views), fast.frames)
	}
	if !parsedInPlace(vh2.views[0]) {
		t.Fatal("gVisor would copy a frame the other port is done with")
	}

	// A host handler that does not take views borrows the driver's frame.
	b3, _ := New(Config{MAC: brMAC})
	host3, _ := b3.AddHostPort(DefaultVLANs)
	var got *byte
	host3.Start(handlerFunc(func(f []byte) { got = &f[0] }))
	in3 := &holdNIC{}
	b3.AttachNIC(in3, DefaultVLANs)
	dma = r.receive(in3.h, ipFrame(brMAC, stA))
	if got != &dma[0] {
		t.Fatal("a borrowing host handler did not get the driver's buffer")
	}
}

// handlerFunc is a net.Handler that only borrows frames.
type handlerFunc func([]byte)

func (f handlerFunc) Receive(b []byte)         { f(b) }
func (handlerFunc) LinkChanged(gnet.LinkState) {}

// copyNIC copies every frame at Transmit and releases it before
// returning (CapTxCopy), as pcnet and the TAP device do; it keeps the
// last frame, the memory it was lent for it and its segment count.
type copyNIC struct {
	caps gnet.Capabilities
	h    gnet.Handler
	n    int // frames sent
	buf  [gnet.RxBufSize]byte
	last []byte // the last frame, in buf
	lent *byte  // first byte of its first segment
	segs int
	// partials counts the frames whose checksum it completed
	// (CapTxChecksumCopy).
	partials int
}

func (*copyNIC) MACAddress() gnet.MAC              { return stC }
func (*copyNIC) MTU() int                          { return 1500 }
func (n *copyNIC) Capabilities() gnet.Capabilities { return n.caps | gnet.CapTxCopy }
func (*copyNIC) Link() gnet.LinkState              { return gnet.LinkState{Up: true} }
func (n *copyNIC) Start(h gnet.Handler) error      { n.h = h; return nil }
func (*copyNIC) Stop()                             {}
func (n *copyNIC) Transmit(t gnet.TxBuf) error {
	k := 0
	for _, s := range t.Segments() {
		k += copy(n.buf[k:], s)
	}
	if k != t.Len() {
		return errors.New("copyNIC: Len disagrees with the segments")
	}
	if c, ok := t.(gnet.TxChecksum); ok {
		if start, field, partial := c.ChecksumPartial(); partial {
			if n.caps&gnet.CapTxChecksumCopy == 0 {
				return errors.New("copyNIC: a partial checksum, which it does not complete")
			}
			// Completed in the copy, as pcnet does, by the reference sum.
			binary.BigEndian.PutUint16(n.buf[field:], ^refSum(n.buf[start:k]))
			n.partials++
		}
	}
	n.n++
	n.last, n.lent, n.segs = n.buf[:k], &t.Segments()[0][0], len(t.Segments())
	t.Release()
	return nil
}

// TestNICPortLendsToCopyingNIC: a frame forwarded to a NIC that copies
// before Transmit returns (CapTxCopy) is lent straight from the ingress
// driver's buffer (no bridge copy), also with a rewritten header when the
// NIC gathers; a port that keeps the frame (holdNIC) still gets a buffer
// of the bridge's that survives the driver reusing its own; forwarding
// allocates nothing.
func TestNICPortLendsToCopyingNIC(t *testing.T) {
	b, _ := New(Config{MAC: brMAC})
	in, cp, hold := &holdNIC{}, &copyNIC{}, &holdNIC{}
	for _, n := range []gnet.NIC{in, cp, hold} {
		if _, err := b.AttachNIC(n, DefaultVLANs); err != nil {
			t.Fatal(err)
		}
	}
	f := frame(bcast, stA, -1, 0, 100)
	var r ring
	dma := r.receive(in.h, f) // flooded to both
	if cp.n != 1 || !bytes.Equal(cp.last, f) {
		t.Fatalf("copying NIC sent %d frames, last %x, want %x", cp.n, cp.last, f)
	}
	if cp.lent != &dma[0] {
		t.Fatal("copying NIC was not lent the driver's buffer")
	}
	if len(hold.held) != 1 || !bytes.Equal(hold.flat(0), f) {
		t.Fatalf("holding NIC has %d frames, first %x", len(hold.held), hold.flat(0))
	}
	if &hold.held[0].Segments()[0][0] == &dma[0] {
		t.Fatal("holding NIC got the driver's buffer")
	}
	hold.complete()

	// Unicast to the copying NIC alone: no allocation.
	cp.h.Receive(frame(bcast, stC, -1, 0, 46)) // C lives on the copying port
	hold.complete()
	uni := frame(stC, stA, -1, 0, 100)
	n := cp.n
	if a := testing.AllocsPerRun(100, func() { r.receive(in.h, uni) }); a != 0 && !raceEnabled {
		t.Fatalf("%v allocations per lent frame", a)
	}
	if cp.n == n || !bytes.Equal(cp.last, uni) || len(hold.held) != 0 {
		t.Fatalf("unicast to the copying port: %d sent, %d held", cp.n-n, len(hold.held))
	}
}

// TestNICPortLendsRetagged: a re-tagged frame is lent as the private
// header plus the driver's payload to a copying NIC that gathers, and
// copied flat for one that does not.
func TestNICPortLendsRetagged(t *testing.T) {
	access := PortVLANs{PVID: 10, Untagged: []uint16{10}}
	trunk := PortVLANs{PVID: 1, Untagged: []uint16{1}, Tagged: []uint16{10}}
	for _, c := range []struct {
		name string
		caps gnet.Capabilities
		segs int
	}{{"gather", gnet.CapScatterGather, 2}, {"flat", 0, 1}} {
		t.Run(c.name, func(t *testing.T) {
			b, _ := New(Config{MAC: brMAC})
			in, out := &holdNIC{}, &copyNIC{caps: c.caps}
			b.AttachNIC(in, access)
			b.AttachNIC(out, trunk)
			var r ring
			r.receive(in.h, frame(bcast, stA, -1, 0, 100))
			if out.n != 1 || out.segs != c.segs {
				t.Fatalf("%d frames sent, in %d segments, want 1 in %d", out.n, out.segs, c.segs)
			}
			if want := frame(bcast, stA, 10, 0, 100); !bytes.Equal(out.last, want) {
				t.Fatalf("got %x\nwant %x", out.last, want)
			}
		})
	}
}

// lendHost is a host-side LendHandler (what net/forward's Iface is to the
// bridge): it consumes the borrowed frames take says it routes.
type lendHost struct {
	viewHost
	take   func([]byte) bool
	lent   []*byte // first byte of each frame it consumed
	offers int
}

func (h *lendHost) ReceiveLent(f []byte) bool {
	h.offers++
	if !h.take(f) {
		return false
	}
	h.lent = append(h.lent, &f[0])
	return true
}

// TestHostLendsToLendHandler: a frame for the host that no other port
// kept is offered to a LendHandler borrowed, from the driver's buffer: if
// it consumes it, the bridge makes no copy and ReceiveView is not
// called; if it declines, ReceiveView gets the bridge's copy. A flooded
// frame another port already holds a copy of goes by reference.
func TestHostLendsToLendHandler(t *testing.T) {
	b, _ := New(Config{MAC: brMAC})
	host, _ := b.AddHostPort(DefaultVLANs)
	routes := true
	lh := &lendHost{take: func([]byte) bool { return routes }}
	if err := host.Start(lh); err != nil {
		t.Fatal(err)
	}
	in, out := &holdNIC{}, &holdNIC{}
	b.AttachNIC(in, DefaultVLANs)
	b.AttachNIC(out, DefaultVLANs)
	var r ring

	dma := r.receive(in.h, ipFrame(brMAC, stA))
	if len(lh.lent) != 1 || lh.lent[0] != &dma[0] || len(lh.views) != 0 {
		t.Fatalf("routed unicast: %d lent (driver's buffer: %v), %d views", len(lh.lent), len(lh.lent) == 1 && lh.lent[0] == &dma[0], len(lh.views))
	}
	uni := ipFrame(brMAC, stA)
	lh.lent = make([]*byte, 0, 200)
	if n := testing.AllocsPerRun(100, func() { r.receive(in.h, uni) }); n != 0 && !raceEnabled {
		t.Fatalf("%v allocations per lent frame", n)
	}

	routes = false
	f := ipFrame(brMAC, stA)
	r.receive(in.h, f)
	if len(lh.views) != 1 || !bytes.Equal(lh.views[0].AsSlice(), f) {
		t.Fatalf("declined frame: %d views", len(lh.views))
	}
	lh.views[0].Release()
	lh.views = nil

	routes = true
	offers := lh.offers
	r.receive(in.h, ipFrame(bcast, stA)) // the NIC port keeps a copy first
	if lh.offers != offers || len(lh.views) != 1 || len(out.held) != 1 {
		t.Fatalf("flooded frame: offered %d times, %d views, %d held", lh.offers-offers, len(lh.views), len(out.held))
	}
	out.complete()
}

// gatherTx is a TxBuf in two segments whose memory the sender overwrites
// once Release is called, as the netstack Endpoint's pooled buffers are.
type gatherTx struct {
	segs     [2][]byte
	released int
}

func (g *gatherTx) Segments() [][]byte { return g.segs[:] }
func (g *gatherTx) Len() int           { return len(g.segs[0]) + len(g.segs[1]) }
func (g *gatherTx) Release() {
	g.released++
	clear(g.segs[0])
	clear(g.segs[1])
}

// TestHostTransmitBorrowsWithoutKeepers: while every NIC port copies, a
// frame from the host port is bridged from the port's own buffer, with no
// allocation; once a port that keeps frames (DMA from the frame's memory)
// is added, that port gets a buffer of its own, which later frames from
// the host leave intact.
func TestHostTransmitBorrowsWithoutKeepers(t *testing.T) {
	b, hn := startedHost(t, DefaultVLANs)
	c1, c2 := &copyNIC{caps: gnet.CapScatterGather}, &copyNIC{}
	for _, n := range []*copyNIC{c1, c2} {
		if _, err := b.AttachNIC(n, DefaultVLANs); err != nil {
			t.Fatal(err)
		}
	}
	f := frame(bcast, brMAC, -1, 0, 200)
	send := func(f []byte) {
		t.Helper()
		g := &gatherTx{segs: [2][]byte{append([]byte{}, f[:14]...), append([]byte{}, f[14:]...)}}
		if err := hn.Transmit(g); err != nil {
			t.Fatal(err)
		}
		if g.released != 1 {
			t.Fatalf("TxBuf released %d times", g.released)
		}
	}
	send(f)
	for _, n := range []*copyNIC{c1, c2} {
		if n.n != 1 || !bytes.Equal(n.last, f) {
			t.Fatalf("port sent %d frames, or a different frame", n.n)
		}
		if n.lent != &hn.txFlat[0] {
			t.Fatal("frame not lent from the host port's buffer")
		}
	}
	g, orig := &gatherTx{}, append([]byte{}, f...)
	if a := testing.AllocsPerRun(100, func() {
		copy(f, orig) // Release cleared it
		g.segs = [2][]byte{f[:14:14], f[14:]}
		_ = hn.Transmit(g)
	}); a != 0 && !raceEnabled {
		t.Fatalf("%v allocations per frame from the host port", a)
	}

	keeper := &holdNIC{}
	if _, err := b.AttachNIC(keeper, DefaultVLANs); err != nil {
		t.Fatal(err)
	}
	first := frame(bcast, brMAC, -1, 0, 300)
	send(first)
	send(frame(bcast, brMAC, -1, 0, 400)) // reuses whatever buffer the first used
	if len(keeper.held) != 2 || !bytes.Equal(keeper.flat(0), first) {
		t.Fatal("the keeping port's first frame changed under it")
	}
	keeper.complete()
}

// startedHost returns a bridge with a started host port of membership v.
func startedHost(t testing.TB, v PortVLANs) (*Bridge, *HostNIC) {
	t.Helper()
	b, err := New(Config{MAC: brMAC})
	if err != nil {
		t.Fatal(err)
	}
	hn, err := b.AddHostPort(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := hn.Start(nullHandler{}); err != nil {
		t.Fatal(err)
	}
	return b, hn
}

type nullHandler struct{}

func (nullHandler) Receive([]byte)             {}
func (nullHandler) LinkChanged(gnet.LinkState) {}

// TestHostTransmitLendsGatherList: a frame the host sends to a station
// known on a port whose NIC copies and gathers (pcnet) is lent to that
// NIC as the sender's own gather list, with the counters Input keeps and
// no allocation; a frame to a station behind a NIC that does not gather,
// to an unknown station, or tagged on egress takes Input's path, from the
// host port's buffer.
func TestHostTransmitLendsGatherList(t *testing.T) {
	b, hn := startedHost(t, PortVLANs{PVID: 1, Untagged: []uint16{1}, Tagged: []uint16{2}})
	gat, flat := &copyNIC{caps: gnet.CapScatterGather}, &copyNIC{}
	pg, err := b.AttachNIC(gat, DefaultVLANs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.AttachNIC(flat, DefaultVLANs); err != nil {
		t.Fatal(err)
	}
	gat.h.Receive(frame(bcast, stA, -1, 0, 46))  // stA is behind gat
	flat.h.Receive(frame(bcast, stB, -1, 0, 46)) // stB behind flat
	gat.n, flat.n = 0, 0

	hs := b.PortStats(hn.port)
	fwd, tx := hs.Forwarded.Load(), b.PortStats(pg).TxFrames.Load()
	f := frame(stA, brMAC, -1, 0, 300)
	segs := [][]byte{append([]byte{}, f[:54]...), append([]byte{}, f[54:200]...), append([]byte{}, f[200:]...)}
	g := &listTx{segs: segs}
	if err := hn.Transmit(g); err != nil {
		t.Fatal(err)
	}
	if gat.n != 1 || flat.n != 0 || !bytes.Equal(gat.last, f) || g.released != 1 {
		t.Fatalf("sent %d/%d frames (want 1/0), released %d times", gat.n, flat.n, g.released)
	}
	if gat.lent != &segs[0][0] || gat.segs != 3 {
		t.Fatalf("not lent the sender's gather list: %d segments, own memory %v", gat.segs, gat.lent == &segs[0][0])
	}
	if hs.Forwarded.Load() != fwd+1 || b.PortStats(pg).TxFrames.Load() != tx+1 {
		t.Fatal("the lent frame was not counted as forwarded and sent")
	}
	if hn.b.ports[hn.port].rx.lent.gather != nil {
		t.Fatal("the bridge kept a reference to the lent gather list")
	}
	if a := testing.AllocsPerRun(100, func() {
		g.released = 0
		_ = hn.Transmit(g)
	}); a != 0 && !raceEnabled {
		t.Fatalf("%v allocations per frame lent from the host", a)
	}

	// Not lent as the sender's list: the NIC does not gather, the station
	// is unknown (flooded), or the egress tags the frame.
	for _, c := range []struct {
		name     string
		dst      gnet.MAC
		vlans    PortVLANs
		gat, flt int
	}{
		{"no gather", stB, DefaultVLANs, 0, 1},
		{"unknown", stC, DefaultVLANs, 1, 1},
		{"tagged egress", stA, PortVLANs{PVID: 1, Tagged: []uint16{1}}, 1, 0},
	} {
		if err := b.SetVLANs(pg, c.vlans); err != nil {
			t.Fatal(err)
		}
		gat.h.Receive(frame(bcast, stA, -1, 0, 46)) // the VLAN change forgot stA
		gat.n, flat.n = 0, 0
		f := frame(c.dst, brMAC, -1, 0, 300)
		segs := [][]byte{append([]byte{}, f[:54]...), append([]byte{}, f[54:]...)}
		if err := hn.Transmit(&listTx{segs: segs}); err != nil {
			t.Fatal(err)
		}
		if gat.n != c.gat || flat.n != c.flt {
			t.Fatalf("%s: sent %d/%d frames, want %d/%d", c.name, gat.n, flat.n, c.gat, c.flt)
		}
		for _, n := range []*copyNIC{gat, flat} {
			if n.n == 1 && n.lent == &segs[0][0] {
				t.Fatalf("%s: lent the sender's gather list", c.name)
			}
		}
		if c.name == "tagged egress" && (len(gat.last) != len(f)+4 || gat.last[12] != 0x81) {
			t.Fatalf("tagged egress: % x", gat.last[:16])
		}
	}
}

// listTx is a TxBuf of any number of segments.
type listTx struct {
	segs     [][]byte
	released int
}

func (g *listTx) Segments() [][]byte { return g.segs }
func (g *listTx) Len() int {
	n := 0
	for _, s := range g.segs {
		n += len(s)
	}
	return n
}
func (g *listTx) Release() { g.released++ }

// batchCopyNIC is a copyNIC that batches its doorbells (net.TxBatcher)
// and counts the batches open on it.
type batchCopyNIC struct {
	copyNIC
	nictest.BatchCounter
}

// TestHostBatchSpansPorts: a transmit batch on the host port (the
// router's stack sending a burst) is a batch on every NIC port that
// batches; overlapping batches make one, ended by the last; a port
// attached during a batch is not ended without having begun.
func TestHostBatchSpansPorts(t *testing.T) {
	b, hn := startedHost(t, DefaultVLANs)
	var tb gnet.TxBatcher = hn
	b1, b2, plain := &batchCopyNIC{}, &batchCopyNIC{}, &copyNIC{}
	for _, n := range []gnet.NIC{b1, plain, b2} {
		if _, err := b.AttachNIC(n, DefaultVLANs); err != nil {
			t.Fatal(err)
		}
	}
	tb.TxBatchBegin()
	tb.TxBatchBegin() // a second sender's, overlapping
	if b1.Open != 1 || b2.Open != 1 {
		t.Fatalf("batches open on the ports: %d, %d; want 1 each", b1.Open, b2.Open)
	}
	late := &batchCopyNIC{}
	if _, err := b.AttachNIC(late, DefaultVLANs); err != nil {
		t.Fatal(err)
	}
	tb.TxBatchEnd()
	if b1.Open != 1 {
		t.Fatal("the first end closed a batch another sender still has open")
	}
	tb.TxBatchEnd()
	if b1.Open != 0 || b2.Open != 0 || late.Open != 0 || late.Begun != 0 {
		t.Fatalf("after the last end: open %d, %d, late port %d (begun %d)", b1.Open, b2.Open, late.Open, late.Begun)
	}
	tb.TxBatchBegin()
	tb.TxBatchEnd()
	if late.Begun != 1 || late.Open != 0 {
		t.Fatalf("the late port is not in the next batch: begun %d, open %d", late.Begun, late.Open)
	}
}

// partialTx is a listTx that leaves a checksum partial (net.TxChecksum).
type partialTx struct {
	listTx
	start, field int
}

func (g *partialTx) ChecksumPartial() (int, int, bool) { return g.start, g.field, true }

// refSum is the reference sum the tests check against.
var refSum = inetsumtest.Sum

// TestHostTransmitCompletesChecksums: a frame the host sends with a
// checksum left partial goes out with it completed whatever the way: lent
// to a NIC that completes it (which gets it partial), lent to one that
// does not (completed in place by the bridge first), flooded through the
// host port's buffer, or copied for a port that keeps frames.
func TestHostTransmitCompletesChecksums(t *testing.T) {
	b, hn := startedHost(t, DefaultVLANs)
	if hn.Capabilities()&gnet.CapTxChecksumCopy == 0 {
		t.Fatal("the host port does not advertise CapTxChecksumCopy")
	}
	sums, plain := &copyNIC{caps: gnet.CapScatterGather | gnet.CapTxChecksumCopy}, &copyNIC{caps: gnet.CapScatterGather}
	for _, n := range []*copyNIC{sums, plain} {
		if _, err := b.AttachNIC(n, DefaultVLANs); err != nil {
			t.Fatal(err)
		}
	}
	sums.h.Receive(frame(bcast, stA, -1, 0, 46)) // stA is behind sums
	plain.h.Receive(frame(bcast, stB, -1, 0, 46))
	const start, field = 34, 50
	var seed uint16
	send := func(dst gnet.MAC, size int) []byte {
		t.Helper()
		f := frame(dst, brMAC, -1, 0, size)
		seed = uint16(len(f) * 7919)
		binary.BigEndian.PutUint16(f[field:], seed)
		segs := [][]byte{append([]byte{}, f[:66]...), append([]byte{}, f[66:67]...), append([]byte{}, f[67:]...)}
		g := &partialTx{listTx{segs: segs}, start, field}
		if err := hn.Transmit(g); err != nil {
			t.Fatal(err)
		}
		return f
	}
	valid := func(what string, got, f []byte) {
		t.Helper()
		if len(got) != len(f) || !bytes.Equal(got[:field], f[:field]) || !bytes.Equal(got[field+2:], f[field+2:]) {
			t.Fatalf("%s: frame changed beyond its checksum", what)
		}
		if s := uint32(refSum(got[start:])) + uint32(seed); s%0xffff != 0 {
			t.Fatalf("%s: checksum %#04x does not complete the sum", what, binary.BigEndian.Uint16(got[field:]))
		}
	}
	f := send(stA, 300)
	valid("lent to a completing NIC", sums.last, f)
	if sums.partials != 1 {
		t.Fatal("the completing NIC was not left the checksum")
	}
	f = send(stB, 301)
	valid("lent to a plain NIC", plain.last, f)
	f = send(stC, 302) // unknown: flooded
	valid("flooded, completing NIC", sums.last, f)
	valid("flooded, plain NIC", plain.last, f)
	if sums.partials != 1 {
		t.Fatal("a flooded frame was left partial")
	}
	keeper := &holdNIC{}
	if _, err := b.AttachNIC(keeper, DefaultVLANs); err != nil {
		t.Fatal(err)
	}
	f = send(stC, 303)
	valid("kept", keeper.flat(0), f)
	valid("flooded with a keeper, plain NIC", plain.last, f)
	keeper.complete()
}
