package forward

import (
	"bytes"
	"net/netip"
	"testing"

	gnet "github.com/gowrt/gowrt/net"
)

// driverRx is an ingress driver's receive buffer offered for keeping
// (net.RxBuf): KeepWith writes the head over the buffer and hands the
// buffer out as a TxBuf; Rewrite lends out the head, and the fake
// remembers how much, so a test can check nothing beyond it was written.
//
// Like a driver on non-coherent caches, it lends only the frame's head
// readable (net.RxHeadLen): the rest holds poison until Frame (or a
// Rewrite, KeepWith or Segments reaching past the head) restores it, so
// a read past the head that did not ask shows in what the Forwarder
// sends or delivers.
type driverRx struct {
	buf       [gnet.RxBufSize]byte
	seg       [1][]byte
	tail      []byte // the frame past the head, while poisoned
	keeps     int
	released  int
	rewritten int
	frames    int  // Frame calls that restored the tail
	lazyKeep  bool // the last Keep or KeepWith found the tail unasked for
}

// poison is what a lent frame holds past its head until asked for.
const poison = 0xee

// lend puts f in the buffer and returns it as the borrowed frame, its
// bytes past the head poisoned.
func (r *driverRx) lend(f []byte) []byte {
	r.seg[0] = r.buf[:copy(r.buf[:], f)]
	r.rewritten = 0
	r.tail = nil
	if len(f) > gnet.RxHeadLen {
		r.tail = append([]byte(nil), f[gnet.RxHeadLen:]...)
		for i := gnet.RxHeadLen; i < len(f); i++ {
			r.buf[i] = poison
		}
	}
	return r.seg[0]
}

func (r *driverRx) Frame() []byte {
	if r.tail != nil {
		copy(r.seg[0][gnet.RxHeadLen:], r.tail)
		r.tail = nil
		r.frames++
	}
	return r.seg[0]
}

func (r *driverRx) Rewrite(n int) []byte {
	if n > len(r.seg[0]) {
		return nil
	}
	if n > gnet.RxHeadLen {
		r.Frame()
	}
	r.rewritten = max(r.rewritten, n)
	return r.seg[0][:n:n]
}

func (r *driverRx) Keep() gnet.TxBuf {
	r.keeps++
	r.lazyKeep = r.tail != nil
	return r
}
func (r *driverRx) KeepWith(head []byte) gnet.TxBuf {
	if len(head) > len(r.seg[0]) {
		return nil
	}
	if len(head) > gnet.RxHeadLen {
		r.Frame()
	}
	r.keeps++
	r.lazyKeep = r.tail != nil
	copy(r.seg[0], head)
	return r
}
func (r *driverRx) Segments() [][]byte { r.Frame(); return r.seg[:] }
func (r *driverRx) Len() int           { return len(r.seg[0]) }
func (r *driverRx) Release()           { r.released++ }

// TestLentKeepsDriverBuffer: a routed frame offered with the ingress
// driver's buffer (ReceiveLentBuf, from br-lan's host port) to an egress
// NIC that sends kept buffers in place is sent as that buffer, kept with
// the rewritten headers written over it: correct checksums, the payload
// untouched, on the fast path. A short frame is copied as before (keeping
// would cost more), and the borrowed frame is then left unchanged.
func TestLentKeepsDriverBuffer(t *testing.T) {
	copyingNICs, rxBufNICs = true, true
	defer func() { copyingNICs, rxBufNICs = false, false }()
	g := newRig(t)
	var rx driverRx
	from, to := netip.AddrPortFrom(host, 5003), netip.AddrPortFrom(remote, 53)
	long := frame(lanMAC, hostMAC, from, to, protoUDP, 64, append(udp(0), bytes.Repeat([]byte{7, 8, 9}, 400)...))
	// The first packet sets the connection up.
	if !g.lan.ReceiveLentBuf(rx.lend(long), &rx) {
		t.Fatal("first packet not taken")
	}
	verify(t, g.wanNIC.take(t))
	keeps := rx.keeps
	before := g.f.Stats.FastPath.Load()
	// Poisoned: a rewrite that read beyond the headers it copied into
	// the interface's buffer shows in the checksums.
	for i := range g.lan.lent {
		g.lan.lent[i] = 0xee
	}
	fwd := g.f.Stats.Forwarded.Load()
	if !g.lan.ReceiveLentBuf(rx.lend(long), &rx) {
		t.Fatal("established packet not taken")
	}
	if g.f.Stats.FastPath.Load() != before || g.f.Stats.Forwarded.Load() != fwd {
		t.Fatal("kept packet counted before the pass's end (ReceiveLentDone)")
	}
	g.lan.ReceiveLentDone()
	sent := g.wanNIC.take(t)
	verify(t, sent)
	switch {
	case rx.keeps != keeps+1 || rx.released != keeps+1:
		t.Fatalf("kept %d, released %d times, want the established packet kept", rx.keeps-keeps, rx.released)
	case g.f.Stats.FastPath.Load() != before+1 || g.f.Stats.Forwarded.Load() != fwd+1:
		t.Fatal("kept packet not counted forwarded on the fast path")
	case len(sent) != len(long) || !bytes.Equal(sent[14+20+8:], long[14+20+8:]):
		t.Fatal("payload changed")
	case rx.rewritten != 14+20+8:
		t.Fatalf("%d bytes of the driver's buffer lent out for the rewrite, want the 42 of the headers", rx.rewritten)
	}

	short := frame(lanMAC, hostMAC, from, to, protoUDP, 64, udp(32))
	lent := rx.lend(short)
	keeps = rx.keeps
	fast := g.f.Stats.FastPath.Load()
	if !g.lan.ReceiveLentBuf(lent, &rx) {
		t.Fatal("short packet not taken")
	}
	g.lan.ReceiveLentDone()
	if g.f.Stats.FastPath.Load() != fast+1 {
		t.Fatal("short packet, copied by the egress NIC, not counted on the fast path at the pass's end")
	}
	verify(t, g.wanNIC.take(t))
	if rx.keeps != keeps || !bytes.Equal(lent, short) || rx.rewritten != 0 {
		t.Fatalf("short packet: kept %d times, borrowed frame changed: %v, %d bytes lent out for writing",
			rx.keeps-keeps, !bytes.Equal(lent, short), rx.rewritten)
	}
}

// TestLentReadsPastHeadWhenAsked: a frame lent with only its head
// readable (net.RxHeadLen; driverRx poisons the rest) is forwarded with
// its payload intact on every path: kept and sent in place without the
// rest ever asked for (the point: its cache lines are never
// invalidated), and made readable first when the payload is read, by an
// egress NIC that copies it or by the copy a frame too short to keep
// takes.
func TestLentReadsPastHeadWhenAsked(t *testing.T) {
	from, to := netip.AddrPortFrom(host, 5004), netip.AddrPortFrom(remote, 53)
	payload := func(n int) []byte {
		p := udp(0)
		for i := range n {
			p = append(p, byte(i*7+1))
		}
		return p
	}
	for _, c := range []struct {
		name     string
		sendsRx  bool
		size     int // UDP payload bytes
		wantKept bool
	}{
		{"kept, sent in place", true, 1200, true},
		{"egress copies", false, 1200, false},
		{"too short to keep", true, 150, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			copyingNICs, rxBufNICs = true, c.sendsRx
			defer func() { copyingNICs, rxBufNICs = false, false }()
			g := newRig(t)
			var rx driverRx
			f := frame(lanMAC, hostMAC, from, to, protoUDP, 64, payload(c.size))
			if len(f) <= gnet.RxHeadLen {
				t.Fatalf("a %d-byte frame has nothing past the head", len(f))
			}
			// The first packet sets the connection up.
			if !g.lan.ReceiveLentBuf(rx.lend(f), &rx) {
				t.Fatal("first packet not taken")
			}
			verify(t, g.wanNIC.take(t))
			keeps, asked := rx.keeps, rx.frames
			if !g.lan.ReceiveLentBuf(rx.lend(f), &rx) {
				t.Fatal("established packet not taken")
			}
			sent := g.wanNIC.take(t)
			verify(t, sent)
			switch {
			case len(sent) != len(f) || !bytes.Equal(sent[14+20+8:], f[14+20+8:]):
				t.Fatal("payload changed: read past the head without asking")
			case (rx.keeps == keeps+1) != c.wantKept:
				t.Fatalf("kept %d times", rx.keeps-keeps)
			case c.wantKept && !rx.lazyKeep:
				// The sink NIC reads the kept buffer's Segments, which
				// ask for the whole frame; the Forwarder must not
				// have before it kept the buffer.
				t.Fatal("the whole frame was asked for before the buffer was kept")
			case !c.wantKept && rx.frames == asked:
				t.Fatal("payload read without asking for the whole frame")
			}
		})
	}
}

// TestRewrittenLen: processLent copies the real length of the headers
// nat rewrites, a short frame or another protocol whole, and bounds a
// malformed header by maxHeaders.
func TestRewrittenLen(t *testing.T) {
	mk := func(n int, ihl, proto, doff byte) []byte {
		f := make([]byte, n)
		f[14] = 0x40 | ihl
		f[14+9] = proto
		if i := 14 + int(ihl)*4 + 12; i < n {
			f[i] = doff << 4
		}
		return f
	}
	for _, c := range []struct {
		name string
		f    []byte
		want int
	}{
		{"udp", mk(1514, 5, protoUDP, 0), 14 + 20 + 8},
		{"udp with IP options", mk(1514, 7, protoUDP, 0), 14 + 28 + 8},
		{"tcp", mk(1514, 5, protoTCP, 5), 14 + 20 + 20},
		{"tcp with options", mk(1514, 6, protoTCP, 15), 14 + 24 + 60},
		{"tcp data offset below 5", mk(1514, 5, protoTCP, 4), maxHeaders},
		{"ihl below 5", mk(1514, 4, protoUDP, 0), maxHeaders},
		{"icmp", mk(1514, 5, protoICMP, 0), 1514},
		{"short frame", mk(60, 5, protoUDP, 0), 60},
		{"just over maxHeaders", mk(maxHeaders+1, 5, protoUDP, 0), 14 + 20 + 8},
	} {
		if got := rewrittenLen(c.f); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}
