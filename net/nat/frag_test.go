package nat

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"testing"
	"time"
	"unsafe"
)

// fragmentIP is the test's own fragmenter (RFC 791 section 3.2, "An
// Example Fragmentation Procedure"): it splits the IPv4 packet p (a
// 20-byte header) into fragments of at most mtu bytes, each carrying a
// multiple of 8 data bytes but the last, MF on all but the last, the
// offset in 8-byte units, identification id, DF clear, and its own header
// checksum.
func fragmentIP(p []byte, mtu int, id uint16) [][]byte {
	const hl = 20
	data := p[hl:binary.BigEndian.Uint16(p[2:])]
	per := (mtu - hl) &^ 7
	var out [][]byte
	for off := 0; off < len(data); off += per {
		n := min(per, len(data)-off)
		f := make([]byte, hl+n)
		copy(f, p[:hl])
		copy(f[hl:], data[off:off+n])
		binary.BigEndian.PutUint16(f[2:], uint16(hl+n))
		binary.BigEndian.PutUint16(f[4:], id)
		fo := uint16(off / 8)
		if off+n < len(data) {
			fo |= 0x2000 // MF
		}
		binary.BigEndian.PutUint16(f[6:], fo)
		f[10], f[11] = 0, 0
		binary.BigEndian.PutUint16(f[10:], refChecksum(f[:hl]))
		out = append(out, f)
	}
	return out
}

// reassemble puts fragments (in any order) back into one packet, checking
// that they agree on the datagram's identity and cover it exactly once.
func reassemble(t *testing.T, frags [][]byte) []byte {
	t.Helper()
	var data []byte
	var hdr []byte
	covered := 0
	end := -1
	for _, f := range frags {
		if !ipOK(f) {
			t.Fatalf("fragment IP header checksum does not verify: % x", f[:20])
		}
		if hdr != nil && (!bytes.Equal(f[4:6], hdr[4:6]) || !bytes.Equal(f[9:10], hdr[9:10]) || !bytes.Equal(f[12:20], hdr[12:20])) {
			t.Fatalf("fragments disagree: % x vs % x", f[:20], hdr[:20])
		}
		fo := binary.BigEndian.Uint16(f[6:])
		off := int(fo&0x1fff) * 8
		payload := f[20:binary.BigEndian.Uint16(f[2:])]
		if off == 0 || hdr == nil {
			hdr = bytes.Clone(f[:20])
		}
		if fo&0x2000 == 0 {
			end = off + len(payload)
		}
		if len(data) < off+len(payload) {
			data = append(data, make([]byte, off+len(payload)-len(data))...)
		}
		copy(data[off:], payload)
		covered += len(payload)
	}
	if end != len(data) || covered != end {
		t.Fatalf("fragments cover %d of %d bytes (end %d)", covered, len(data), end)
	}
	p := append(hdr, data...)
	binary.BigEndian.PutUint16(p[2:], uint16(len(p)))
	binary.BigEndian.PutUint16(p[6:], 0)
	p[10], p[11] = 0, 0
	binary.BigEndian.PutUint16(p[10:], refChecksum(p[:20]))
	return p
}

// bigUDP is a UDP datagram of 3000 bytes (header included) in 3
// fragments for a 1500-byte MTU: 1480, 1480 and 40 data bytes.
func bigUDP(t *testing.T, src, dst netip.AddrPort, id uint16) (whole []byte, frags [][]byte) {
	t.Helper()
	whole = udpPkt(src, dst, 3000-udpHeader)
	frags = fragmentIP(whole, 1500, id)
	if len(frags) != 3 || len(frags[2]) != 60 {
		t.Fatalf("fragmenter made %d fragments", len(frags))
	}
	if !bytes.Equal(reassemble(t, frags)[20:], whole[20:]) {
		t.Fatal("the test's fragmenter and reassembler disagree")
	}
	return whole, frags
}

// forwardFrags forwards every fragment (in the order given) from in and
// checks that all leave by out as parts of the same connection.
func forwardFrags(t *testing.T, tb *Table, frags [][]byte, in, out Iface, order ...int) Verdict {
	t.Helper()
	var first Verdict
	for i, k := range order {
		v := tb.Forward(frags[k], in)
		if v.Action != Forward || v.Out != out || v.Conn == nil {
			t.Fatalf("fragment %d: %+v", k, v)
		}
		if !ipOK(frags[k]) {
			t.Fatalf("fragment %d: IP header checksum does not verify", k)
		}
		if frags[k][8] != 63 {
			t.Fatalf("fragment %d: TTL %d", k, frags[k][8])
		}
		if i == 0 {
			first = v
		} else if v.Conn != first.Conn || v.Dir != first.Dir || v.Gen != first.Gen || v.New {
			t.Fatalf("fragment %d: %+v, first %+v", k, v, first)
		}
	}
	return first
}

// TestFragmentsThroughSNAT: a 3000-byte UDP datagram from the LAN in 3
// fragments leaves masqueraded (on another port, so the checksum update
// covers ports too), and the answer, fragmented too and partly out of
// order, comes back translated; both reassemble to a datagram whose UDP
// checksum verifies from scratch.
func TestFragmentsThroughSNAT(t *testing.T) {
	tb, _ := newTable(t, Config{}, homePolicy(0))
	mustForward(t, tb, udpPkt(ap(hostB, 5000), ap(remote, 53), 1), lan, wan) // takes port 5000
	_, up := bigUDP(t, ap(hostA, 5000), ap(remote, 53), 0x4242)
	policyBefore := tb.Stats().Policy
	v := forwardFrags(t, tb, up, lan, wan, 0, 1, 2)
	if !v.New || v.Dir != Original {
		t.Fatalf("first fragment: %+v", v)
	}
	if n := tb.Stats().Policy - policyBefore; n != 1 {
		t.Fatalf("policy asked %d times for one datagram", n)
	}
	out := reassemble(t, up)
	if srcOf(out) != wanAddr || dstOf(out) != remote || dportOf(out) != 53 {
		t.Fatalf("left as %v:%d -> %v:%d", srcOf(out), sportOf(out), dstOf(out), dportOf(out))
	}
	port := sportOf(out)
	if port == 5000 {
		t.Fatal("the test needs a translated port")
	}
	if !l4OK(out) {
		t.Fatal("UDP checksum of the reassembled datagram does not verify")
	}

	_, down := bigUDP(t, ap(remote, 53), ap(wanAddr, port), 0x0101)
	vr := forwardFrags(t, tb, down, wan, lan, 0, 2, 1)
	if vr.Conn != v.Conn || vr.Dir != Reply {
		t.Fatalf("reply: %+v", vr)
	}
	back := reassemble(t, down)
	if srcOf(back) != remote || sportOf(back) != 53 || dstOf(back) != hostA || dportOf(back) != 5000 {
		t.Fatalf("came back as %v:%d -> %v:%d", srcOf(back), sportOf(back), dstOf(back), dportOf(back))
	}
	if !l4OK(back) {
		t.Fatal("UDP checksum of the reassembled reply does not verify")
	}
	s := tb.Stats()
	if s.FragTracked != 2 || s.Drops[Fragment] != 0 {
		t.Fatalf("%+v", s)
	}
	// Both datagrams passed whole: their entries are free again, so a
	// late duplicate finds nothing.
	dup := bytes.Clone(down[1])
	setTTL(dup, 64)
	if v := tb.Forward(dup, wan); v.Action != Drop || v.Reason != Fragment {
		t.Fatalf("duplicate after the datagram passed: %+v", v)
	}
	var ci ConnInfo
	for c := range tb.Conns {
		if c.Orig.Src == ap(hostA, 5000) {
			ci = c
		}
	}
	if ci.Packets != [2]uint64{3, 3} || ci.Bytes != [2]uint64{3000 + 3*20, 3000 + 3*20} {
		t.Fatalf("connection counters %+v %+v", ci.Packets, ci.Bytes)
	}
}

// TestFragmentsPortForward: fragments to the WAN address follow their
// first one to the port forward's target (the key is the datagram as it
// arrived, to the router's address).
func TestFragmentsPortForward(t *testing.T) {
	tb, _ := newTable(t, Config{}, homePolicy(0))
	_, in := bigUDP(t, ap(remote, 40000), ap(wanAddr, 8080), 7)
	forwardFrags(t, tb, in, wan, lan, 0, 1, 2)
	p := reassemble(t, in)
	if dstOf(p) != server || dportOf(p) != 80 || srcOf(p) != remote || !l4OK(p) {
		t.Fatalf("%v:%d -> %v:%d", srcOf(p), sportOf(p), dstOf(p), dportOf(p))
	}
}

// TestFragmentsBeforeFirst: fragments that arrive before their first one
// are not held back: dropped and counted; the first still passes.
func TestFragmentsBeforeFirst(t *testing.T) {
	tb, _ := newTable(t, Config{}, homePolicy(0))
	_, f := bigUDP(t, ap(hostA, 5000), ap(remote, 53), 9)
	for _, k := range []int{2, 1} {
		keep := bytes.Clone(f[k])
		if v := tb.Forward(f[k], lan); v.Action != Drop || v.Reason != Fragment {
			t.Fatalf("fragment %d before the first: %+v", k, v)
		}
		if !bytes.Equal(f[k], keep) {
			t.Fatal("a dropped fragment was modified")
		}
	}
	if s := tb.Stats(); s.Drops[Fragment] != 2 || s.Conns != 0 {
		t.Fatalf("%+v", s)
	}
	mustForward1(t, tb, f[0], lan, wan)
}

func mustForward1(t *testing.T, tb *Table, p []byte, in, out Iface) Verdict {
	t.Helper()
	v := tb.Forward(p, in)
	if v.Action != Forward || v.Out != out || !ipOK(p) {
		t.Fatalf("%+v", v)
	}
	return v
}

// TestFragmentExpiry: an entry lives Timeouts.Fragment after its first
// fragment, even while the connection lives on.
func TestFragmentExpiry(t *testing.T) {
	tb, clk := newTable(t, Config{}, homePolicy(0))
	_, f := bigUDP(t, ap(hostA, 5000), ap(remote, 53), 1)
	mustForward1(t, tb, f[0], lan, wan)
	clk.advance(int64(29 * time.Second))
	mustForward1(t, tb, f[1], lan, wan)
	clk.advance(int64(2 * time.Second))
	if v := tb.Forward(f[2], lan); v.Action != Drop || v.Reason != Fragment {
		t.Fatalf("fragment after 31 s: %+v", v)
	}
	if tb.Stats().Conns != 1 {
		t.Fatal("the connection should outlive the fragment entry")
	}
	// A shorter configured timeout.
	tb, clk = newTable(t, Config{Timeouts: Timeouts{Fragment: time.Second}}, homePolicy(0))
	_, f = bigUDP(t, ap(hostA, 5000), ap(remote, 53), 1)
	mustForward1(t, tb, f[0], lan, wan)
	clk.advance(int64(time.Second))
	if v := tb.Forward(f[1], lan); v.Action != Drop || v.Reason != Fragment {
		t.Fatalf("fragment after 1 s: %+v", v)
	}
}

// TestFragmentTableFull: a table of 4 entries (one set) gives up its
// oldest datagram for a fifth; that one's fragments are dropped, the
// others pass.
func TestFragmentTableFull(t *testing.T) {
	tb, clk := newTable(t, Config{MaxFrags: 4}, homePolicy(0))
	var frags [5][][]byte
	for i := range frags {
		_, frags[i] = bigUDP(t, ap(hostA, 5000+uint16(i)), ap(remote, 53), uint16(100+i))
		mustForward1(t, tb, frags[i][0], lan, wan)
		clk.advance(int64(time.Millisecond))
	}
	if s := tb.Stats(); s.FragTracked != 5 || s.FragEvicted != 1 {
		t.Fatalf("%+v", s)
	}
	if v := tb.Forward(frags[0][1], lan); v.Action != Drop || v.Reason != Fragment {
		t.Fatalf("evicted datagram's fragment: %+v", v)
	}
	for i := 1; i < 5; i++ {
		forwardFrags(t, tb, frags[i], lan, wan, 1, 2)
	}
	// All four passed whole and freed their entries: four new datagrams
	// fit without evicting anything.
	for i := 0; i < 4; i++ {
		_, f := bigUDP(t, ap(hostA, 6000+uint16(i)), ap(remote, 53), uint16(200+i))
		mustForward1(t, tb, f[0], lan, wan)
	}
	if s := tb.Stats(); s.FragEvicted != 1 {
		t.Fatalf("%+v", s)
	}
}

// TestFragmentStaleConn: a fragment whose entry points at a connection
// slot that has since been recycled (another generation) is dropped, not
// sent with the new connection's addresses.
func TestFragmentStaleConn(t *testing.T) {
	tb, clk := newTable(t, Config{MaxConns: 1, Timeouts: Timeouts{UDP: time.Second, Fragment: time.Hour}}, homePolicy(0))
	_, f := bigUDP(t, ap(hostA, 5000), ap(remote, 53), 1)
	v := mustForward1(t, tb, f[0], lan, wan)
	clk.advance(int64(2 * time.Second))
	v2 := mustForward(t, tb, udpPkt(ap(hostB, 6000), ap(remote, 53), 1), lan, wan)
	if v2.Conn != v.Conn || v2.Gen == v.Gen {
		t.Fatal("the test needs the slot recycled")
	}
	keep := bytes.Clone(f[1])
	if v := tb.Forward(f[1], lan); v.Action != Drop || v.Reason != Fragment {
		t.Fatalf("fragment of a recycled connection: %+v", v)
	}
	if !bytes.Equal(f[1], keep) {
		t.Fatal("modified")
	}
	// The connection expired but its slot was not reused yet: the same.
	tb, clk = newTable(t, Config{Timeouts: Timeouts{UDP: time.Second, Fragment: time.Hour}}, homePolicy(0))
	mustForward1(t, tb, f[0], lan, wan)
	clk.advance(int64(2 * time.Second))
	if v := tb.Forward(f[2], lan); v.Action != Drop || v.Reason != Fragment {
		t.Fatalf("fragment of an expired connection: %+v", v)
	}
}

// TestFragmentRules: the rules of the connection apply to its fragments:
// the interface of the direction, TTL; fragments for the router go to it.
func TestFragmentRules(t *testing.T) {
	tb, _ := newTable(t, Config{}, homePolicy(0))
	_, f := bigUDP(t, ap(hostA, 5000), ap(remote, 53), 1)
	mustForward1(t, tb, f[0], lan, wan)
	// Posing as the LAN host from the WAN side.
	keep := bytes.Clone(f[1])
	if v := tb.Forward(f[1], wan); v.Action != Drop || v.Reason != Invalid {
		t.Fatalf("fragment on the wrong interface: %+v", v)
	}
	// TTL 1: time exceeded (the caller sends no ICMP error about a
	// non-first fragment, ICMPError refuses it).
	f[1][8] = 1
	f[1][10], f[1][11] = 0, 0
	binary.BigEndian.PutUint16(f[1][10:], refChecksum(f[1][:20]))
	keep = bytes.Clone(f[1])
	if v := tb.Forward(f[1], lan); v.Action != Drop || v.Reason != TTLExceeded {
		t.Fatalf("TTL 1: %+v", v)
	}
	if !bytes.Equal(f[1], keep) {
		t.Fatal("modified")
	}
	if n := ICMPError(make([]byte, 600), f[1], icmpTimeExceed, 0, routerLAN); n != 0 {
		t.Fatal("ICMP error about a non-first fragment")
	}
	if s := tb.Stats(); s.Drops[Invalid] != 1 || s.Drops[TTLExceeded] != 1 {
		t.Fatalf("%+v", s.Drops)
	}
	// The entry survives both: the rest of the datagram passes.
	forwardFrags(t, tb, f, lan, wan, 2)

	// Fragments for the router itself go to its stack.
	_, l := bigUDP(t, ap(hostA, 5000), ap(routerLAN, 53), 2)
	for _, k := range []int{0, 2, 1} {
		if v := tb.Forward(l[k], lan); v.Action != Local {
			t.Fatalf("fragment %d to the router: %+v", k, v)
		}
	}
	// The router's own connection: the answer's fragments are delivered
	// with the connection, without asking the policy.
	tb.Output(udpPkt(ap(wanAddr, 40000), ap(remote, 53), 40), wan)
	pol := tb.Stats().Policy
	_, a := bigUDP(t, ap(remote, 53), ap(wanAddr, 40000), 3)
	for _, k := range []int{0, 1, 2} {
		keep := bytes.Clone(a[k])
		if v := tb.Forward(a[k], wan); v.Action != Local || v.Conn == nil || v.Dir != Reply {
			t.Fatalf("fragment %d of the router's answer: %+v", k, v)
		}
		if !bytes.Equal(a[k], keep) {
			t.Fatal("a local fragment was modified")
		}
	}
	if n := tb.Stats().Policy - pol; n != 0 {
		t.Fatalf("policy asked %d times", n)
	}
}

// TestFragmentICMPErrors: an error quoting a non-first fragment cannot be
// matched (no ports) and is never forwarded (the policy may hand it to the
// router's stack, homePolicy does for the WAN address); one quoting a
// first fragment is translated like any other.
func TestFragmentICMPErrors(t *testing.T) {
	tb, _ := newTable(t, Config{}, homePolicy(0))
	_, f := bigUDP(t, ap(hostA, 5000), ap(remote, 53), 1)
	forwardFrags(t, tb, f, lan, wan, 0, 1, 2)
	later := quoteICMPError(hop, wanAddr, icmpTimeExceed, 0, f[1], 28)
	keep := bytes.Clone(later)
	if v := tb.Forward(later, wan); v.Action != Local || v.Conn != nil || !bytes.Equal(later, keep) {
		t.Fatalf("error about a later fragment: %+v", v)
	}
	later = quoteICMPError(hop, remote, icmpTimeExceed, 0, f[1], 28) // not for the router
	if v := tb.Forward(later, wan); v.Action != Drop || v.Reason != Invalid {
		t.Fatalf("error about a later fragment: %+v", v)
	}
	e := quoteICMPError(hop, wanAddr, icmpTimeExceed, 0, f[0], 28)
	if v := mustForward(t, tb, e, wan, lan); v.Dir != Reply || dstOf(e) != hostA {
		t.Fatalf("error about the first fragment: %+v", v)
	}
}

// TestTinyFirstFragment: a first fragment that splits the TCP header
// (RFC 1858) is malformed.
func TestTinyFirstFragment(t *testing.T) {
	tb, _ := newTable(t, Config{}, homePolicy(0))
	p := tcpPkt(ap(hostA, 1), ap(remote, 80), tcpSYN, 1, 0, nil, 100)
	frags := fragmentIP(p, 36, 5) // 16 data bytes per fragment
	if v := tb.Forward(frags[0], lan); v.Action != Drop || v.Reason != Malformed {
		t.Fatalf("%+v", v)
	}
	if v := tb.Forward(frags[1], lan); v.Action != Drop || v.Reason != Fragment {
		t.Fatalf("%+v", v)
	}
}

func TestFragmentConfig(t *testing.T) {
	size := unsafe.Sizeof(fragEntry{})
	t.Logf("fragEntry is %d bytes; %d entries take %d bytes", size, DefaultMaxFrags, int(size)*DefaultMaxFrags)
	if size > 48 {
		t.Fatalf("fragEntry grew to %d bytes", size)
	}
	for _, n := range []int{-1, maxMaxFrags + 1} {
		if _, err := New(Config{MaxFrags: n}, homePolicy(0)); err == nil {
			t.Errorf("MaxFrags %d accepted", n)
		}
	}
	for n, want := range map[int]int{0: DefaultMaxFrags, 1: 4, 5: 8, 256: 256} {
		tb, err := New(Config{MaxFrags: n}, homePolicy(0))
		if err != nil || len(tb.frags) != want {
			t.Errorf("MaxFrags %d: %d entries (%v)", n, len(tb.frags), err)
		}
	}
}
