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
type driverRx struct {
	buf       [gnet.RxBufSize]byte
	seg       [1][]byte
	keeps     int
	released  int
	rewritten int
}

// lend puts f in the buffer and returns it as the borrowed frame.
func (r *driverRx) lend(f []byte) []byte {
	r.seg[0] = r.buf[:copy(r.buf[:], f)]
	r.rewritten = 0
	return r.seg[0]
}

func (r *driverRx) Rewrite(n int) []byte {
	if n > len(r.seg[0]) {
		return nil
	}
	r.rewritten = max(r.rewritten, n)
	return r.seg[0][:n:n]
}

func (r *driverRx) Keep() gnet.TxBuf { r.keeps++; return r }
func (r *driverRx) KeepWith(head []byte) gnet.TxBuf {
	if len(head) > len(r.seg[0]) {
		return nil
	}
	r.keeps++
	copy(r.seg[0], head)
	return r
}
func (r *driverRx) Segments() [][]byte { return r.seg[:] }
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
	if !g.lan.ReceiveLentBuf(rx.lend(long), &rx) {
		t.Fatal("established packet not taken")
	}
	sent := g.wanNIC.take(t)
	verify(t, sent)
	switch {
	case rx.keeps != keeps+1 || rx.released != keeps+1:
		t.Fatalf("kept %d, released %d times, want the established packet kept", rx.keeps-keeps, rx.released)
	case g.f.Stats.FastPath.Load() != before+1:
		t.Fatal("kept packet not counted on the fast path")
	case len(sent) != len(long) || !bytes.Equal(sent[14+20+8:], long[14+20+8:]):
		t.Fatal("payload changed")
	case rx.rewritten != 14+20+8:
		t.Fatalf("%d bytes of the driver's buffer lent out for the rewrite, want the 42 of the headers", rx.rewritten)
	}

	short := frame(lanMAC, hostMAC, from, to, protoUDP, 64, udp(32))
	lent := rx.lend(short)
	keeps = rx.keeps
	if !g.lan.ReceiveLentBuf(lent, &rx) {
		t.Fatal("short packet not taken")
	}
	verify(t, g.wanNIC.take(t))
	if rx.keeps != keeps || !bytes.Equal(lent, short) || rx.rewritten != 0 {
		t.Fatalf("short packet: kept %d times, borrowed frame changed: %v, %d bytes lent out for writing",
			rx.keeps-keeps, !bytes.Equal(lent, short), rx.rewritten)
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
