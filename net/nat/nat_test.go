package nat

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"
	"unsafe"
)

func TestChecksumRFC1624Example(t *testing.T) {
	// RFC 1624 section 4: m = 0x5555 becomes m' = 0x3285 in a header whose
	// other words sum to 0xCD7A; HC = 0xDD2F and the correct new checksum
	// is 0x0000 (eqn. 3), where the older eqn. 2 gave 0xFFFF.
	if got := csumUpdate16(0xDD2F, 0x5555, 0x3285); got != 0x0000 {
		t.Fatalf("csumUpdate16 = %#04x, want 0x0000", got)
	}
	if hc := ^csumFold(0xCD7A + 0x5555); hc != 0xDD2F {
		t.Fatalf("HC = %#04x, want 0xDD2F", hc)
	}
}

func TestChecksumIncrementalRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 5000; i++ {
		n := 2 + r.IntN(200)
		b := make([]byte, n)
		for j := range b {
			b[j] = byte(r.Uint32())
		}
		// The checksum field at a random even offset, the changed word at
		// any offset (odd ones straddle two checksum words).
		cs := 2 * r.IntN(n/2)
		binary.BigEndian.PutUint16(b[cs:], 0)
		binary.BigEndian.PutUint16(b[cs:], refChecksum(b))
		off := r.IntN(n - 1)
		if off >= cs-1 && off <= cs+1 {
			continue
		}
		set16(b, off, uint16(r.Uint32()), cs, 0)
		if refSum(b) != 0xffff {
			t.Fatalf("set16 at %d (csum %d) does not verify", off, cs)
		}
		if n >= 8 && cs >= 4 {
			old := binary.BigEndian.Uint32(b[0:])
			nw := r.Uint32()
			binary.BigEndian.PutUint32(b[0:], nw)
			binary.BigEndian.PutUint16(b[cs:], csumUpdate32(binary.BigEndian.Uint16(b[cs:]), old, nw))
			if refSum(b) != 0xffff {
				t.Fatalf("csumUpdate32 does not verify")
			}
		}
	}
	// The package's full checksum agrees with the test's.
	for i := 0; i < 1000; i++ {
		b := make([]byte, r.IntN(1500))
		for j := range b {
			b[j] = byte(r.Uint32())
		}
		if got, want := ^csumFold(csumAdd(0, b)), refChecksum(b); got != want {
			t.Fatalf("checksum %#x, reference %#x", got, want)
		}
	}
}

// TestIPHeaderChecksum holds the unrolled header sum to the reference
// over headers of every length, options included, whatever the checksum
// field held before.
func TestIPHeaderChecksum(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 2000; i++ {
		h := make([]byte, ipMinHeader+4*r.IntN(11))
		for j := range h {
			h[j] = byte(r.Uint32())
		}
		got := ipHeaderChecksum(h)
		binary.BigEndian.PutUint16(h[ipOffCsum:], 0)
		if want := refChecksum(h); got != want {
			t.Fatalf("%d-byte header: checksum %#04x, reference %#04x", len(h), got, want)
		}
	}
}

// TestRewriteUpdatesIPChecksum: rewrite's incremental IPv4 header
// checksum (RFC 1624) equals the header's recomputed checksum over
// random headers, options included, every TTL a forwarded packet can
// have and random address rewrites; and a header whose checksum was
// wrong stays wrong by as much.
func TestRewriteUpdatesIPChecksum(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 5000; i++ {
		ihl := ipMinHeader + 4*r.IntN(11)
		b := make([]byte, ihl+udpHeader)
		for j := range b {
			b[j] = byte(r.Uint32())
		}
		b[0] = 0x40 | byte(ihl/4)
		b[ipOffTTL] = byte(2 + r.IntN(254))
		b[ipOffProto] = uint8(ProtoUDP)
		binary.BigEndian.PutUint16(b[ipOffTotLen:], uint16(len(b)))
		binary.BigEndian.PutUint16(b[ipOffCsum:], ipHeaderChecksum(b[:ihl]))
		damaged := i%4 == 3
		if damaged {
			b[ipOffCsum] ^= 0x10
		}
		p := packet{b: b, ihl: ihl, l4: ihl, t: tuple{
			src: binary.BigEndian.Uint32(b[ipOffSrc:]), dst: binary.BigEndian.Uint32(b[ipOffDst:]), proto: uint8(ProtoUDP),
			sport: binary.BigEndian.Uint16(b[ihl:]), dport: binary.BigEndian.Uint16(b[ihl+2:]),
		}}
		to := p.t
		switch r.IntN(4) {
		case 0:
			to.src = r.Uint32()
		case 1:
			to.dst = r.Uint32()
		case 2:
			to.src, to.dst = r.Uint32(), r.Uint32()
		} // 3: TTL only
		ttl := b[ipOffTTL]
		sumBefore := refSum(b[:ihl]) // 0xffff if the checksum verifies
		rewrite(&p, &to, 0)
		got := binary.BigEndian.Uint16(b[ipOffCsum:])
		if want := ipHeaderChecksum(b[:ihl]); b[ipOffTTL] != ttl-1 || (!damaged && got != want) {
			t.Fatalf("%d-byte header, TTL %d: checksum %#04x after rewrite, recomputed %#04x", ihl, ttl, got, want)
		}
		if sumAfter := refSum(b[:ihl]); sumAfter != sumBefore {
			t.Fatalf("%d-byte header, TTL %d, damaged %v: header sums to %#04x after rewrite, %#04x before",
				ihl, ttl, damaged, sumAfter, sumBefore)
		}
	}
}

func TestSNATTCPRoundTrip(t *testing.T) {
	tb, _ := newTable(t, Config{}, homePolicy(0))
	syn := tcpPkt(ap(hostA, 40000), ap(remote, 443), tcpSYN, 1000, 0, nil, 0)
	v := mustForward(t, tb, syn, lan, wan)
	if !v.New || v.Dir != Original || v.Conn == nil || v.Conn.Established() {
		t.Fatalf("verdict %+v", v)
	}
	if srcOf(syn) != wanAddr || sportOf(syn) != 40000 || dstOf(syn) != remote || dportOf(syn) != 443 || syn[8] != 63 {
		t.Fatalf("SYN left as %v:%d -> %v:%d ttl %d", srcOf(syn), sportOf(syn), dstOf(syn), dportOf(syn), syn[8])
	}
	sa := tcpPkt(ap(remote, 443), ap(wanAddr, 40000), tcpSYN|tcpACK, 5000, 1001, nil, 0)
	v2 := mustForward(t, tb, sa, wan, lan)
	if v2.Conn != v.Conn || v2.Dir != Reply || v2.New || !v2.Conn.Established() {
		t.Fatalf("reply verdict %+v", v2)
	}
	if dstOf(sa) != hostA || dportOf(sa) != 40000 || srcOf(sa) != remote || sportOf(sa) != 443 {
		t.Fatalf("SYN-ACK left as %v:%d -> %v:%d", srcOf(sa), sportOf(sa), dstOf(sa), dportOf(sa))
	}
	ack := tcpPkt(ap(hostA, 40000), ap(remote, 443), tcpACK, 1001, 5001, nil, 1400)
	mustForward(t, tb, ack, lan, wan)
	if s := tb.Stats(); s.Conns != 1 || s.Created != 1 || s.Policy != 1 {
		t.Fatalf("stats %+v", s)
	}
}

func TestSNATUDPRoundTrip(t *testing.T) {
	tb, _ := newTable(t, Config{}, homePolicy(0))
	q := udpPkt(ap(hostA, 5353), ap(remote, 53), 40)
	mustForward(t, tb, q, lan, wan)
	if srcOf(q) != wanAddr || sportOf(q) != 5353 {
		t.Fatalf("query left from %v:%d", srcOf(q), sportOf(q))
	}
	a := udpPkt(ap(remote, 53), ap(wanAddr, 5353), 100)
	mustForward(t, tb, a, wan, lan)
	if dstOf(a) != hostA || dportOf(a) != 5353 {
		t.Fatalf("answer went to %v:%d", dstOf(a), dportOf(a))
	}
	// A datagram sent without checksum keeps none (RFC 768).
	z := udpPkt(ap(hostA, 5353), ap(remote, 53), 40)
	z[26], z[27] = 0, 0
	mustForward(t, tb, z, lan, wan)
	if z[26] != 0 || z[27] != 0 {
		t.Fatalf("zero UDP checksum became %#x", binary.BigEndian.Uint16(z[26:]))
	}
}

func TestSNATICMPEcho(t *testing.T) {
	tb, _ := newTable(t, Config{}, homePolicy(0))
	ra := echoPkt(hostA, remote, icmpEcho, 77, 1)
	mustForward(t, tb, ra, lan, wan)
	if srcOf(ra) != wanAddr || binary.BigEndian.Uint16(ra[24:]) != 77 {
		t.Fatalf("echo left from %v id %d", srcOf(ra), binary.BigEndian.Uint16(ra[24:]))
	}
	// Host B pings the same remote with the same id: another id on the WAN.
	rb := echoPkt(hostB, remote, icmpEcho, 77, 1)
	mustForward(t, tb, rb, lan, wan)
	idB := binary.BigEndian.Uint16(rb[24:])
	if idB == 77 || idB < DefaultPortLow {
		t.Fatalf("second pinger got id %d", idB)
	}
	for _, c := range []struct {
		id   uint16
		host netip.Addr
	}{{77, hostA}, {idB, hostB}} {
		rep := echoPkt(remote, wanAddr, icmpEchoReply, c.id, 1)
		mustForward(t, tb, rep, wan, lan)
		if dstOf(rep) != c.host || binary.BigEndian.Uint16(rep[24:]) != 77 {
			t.Fatalf("reply for id %d went to %v id %d", c.id, dstOf(rep), binary.BigEndian.Uint16(rep[24:]))
		}
	}
	// An echo request from the internet with the mapped id is not a reply:
	// the policy gets it (Local: to the router).
	if v := tb.Forward(echoPkt(remote, wanAddr, icmpEcho, 77, 9), wan); v.Action != Local || v.Conn != nil {
		t.Fatalf("inbound echo request: %+v", v)
	}
}

func TestDNATRoundTrip(t *testing.T) {
	tb, _ := newTable(t, Config{}, homePolicy(0))
	syn := tcpPkt(ap(remote, 50000), ap(wanAddr, 8080), tcpSYN, 1, 0, nil, 0)
	mustForward(t, tb, syn, wan, lan)
	if dstOf(syn) != server || dportOf(syn) != 80 || srcOf(syn) != remote || sportOf(syn) != 50000 {
		t.Fatalf("forwarded to %v:%d from %v:%d", dstOf(syn), dportOf(syn), srcOf(syn), sportOf(syn))
	}
	sa := tcpPkt(ap(server, 80), ap(remote, 50000), tcpSYN|tcpACK, 9, 2, nil, 0)
	v := mustForward(t, tb, sa, lan, wan)
	if v.Dir != Reply || srcOf(sa) != wanAddr || sportOf(sa) != 8080 || dstOf(sa) != remote {
		t.Fatalf("reply left as %v:%d -> %v (dir %v)", srcOf(sa), sportOf(sa), dstOf(sa), v.Dir)
	}
}

func TestPortCollision(t *testing.T) {
	tb, _ := newTable(t, Config{PortRange: [2]uint16{20000, 20099}}, homePolicy(0))
	a := udpPkt(ap(hostA, 33333), ap(remote, 3478), 10)
	mustForward(t, tb, a, lan, wan)
	b := udpPkt(ap(hostB, 33333), ap(remote, 3478), 10)
	mustForward(t, tb, b, lan, wan)
	if sportOf(a) != 33333 {
		t.Fatalf("first host's port not preserved: %d", sportOf(a))
	}
	pb := sportOf(b)
	if pb < 20000 || pb > 20099 {
		t.Fatalf("second host got port %d, want one in 20000..20099", pb)
	}
	// The same source port to another destination is preserved.
	c := udpPkt(ap(hostB, 33333), ap(remote, 3479), 10)
	mustForward(t, tb, c, lan, wan)
	if sportOf(c) != 33333 {
		t.Fatalf("port not preserved for another destination: %d", sportOf(c))
	}
	for _, x := range []struct {
		port uint16
		host netip.Addr
	}{{33333, hostA}, {pb, hostB}} {
		r := udpPkt(ap(remote, 3478), ap(wanAddr, x.port), 10)
		mustForward(t, tb, r, wan, lan)
		if dstOf(r) != x.host || dportOf(r) != 33333 {
			t.Fatalf("reply to port %d went to %v:%d", x.port, dstOf(r), dportOf(r))
		}
	}
}

func TestNoPort(t *testing.T) {
	tb, _ := newTable(t, Config{PortRange: [2]uint16{20000, 20001}}, homePolicy(0))
	for i, h := range []string{"192.168.1.2", "192.168.1.3", "192.168.1.4"} {
		p := udpPkt(ap(netip.MustParseAddr(h), 20000), ap(remote, 53), 0)
		v := tb.Forward(p, lan)
		if i < 2 && v.Action != Forward {
			t.Fatalf("host %d: %+v", i, v)
		}
		if i == 2 && (v.Action != Drop || v.Reason != NoPort) {
			t.Fatalf("third host: %+v, want drop no-port", v)
		}
	}
	if tb.Stats().Drops[NoPort] != 1 {
		t.Fatalf("no-port drops not counted: %+v", tb.Stats())
	}
}

// quoteICMPError builds the ICMP error a router on the path (from) sends
// about packet p (as it left our router).
func quoteICMPError(from, to netip.Addr, typ, code uint8, p []byte, quote int) []byte {
	m := make([]byte, 8+quote)
	m[0], m[1] = typ, code
	copy(m[8:], p[:quote])
	return fixL4(ipPacket(from, to, 1, 64, m))
}

func TestICMPErrorTranslation(t *testing.T) {
	tb, _ := newTable(t, Config{}, homePolicy(0))
	// A traceroute probe from host A: UDP, masqueraded (host B already
	// holds port 33434 so A's probe gets another port).
	mustForward(t, tb, udpPkt(ap(hostB, 33434), ap(remote, 33434), 12), lan, wan)
	orig := udpPkt(ap(hostA, 33434), ap(remote, 33434), 12)
	sent := bytes.Clone(orig)
	v := mustForward(t, tb, sent, lan, wan)
	if sportOf(sent) == 33434 {
		t.Fatal("probe kept its port; the test needs a translated one")
	}
	for _, quote := range []int{28, len(sent)} { // header + 8 bytes (RFC 792), and the whole packet
		e := quoteICMPError(hop, wanAddr, icmpTimeExceed, 0, sent, quote)
		ve := mustForward(t, tb, e, wan, lan)
		if ve.Conn != v.Conn || ve.Dir != Reply {
			t.Fatalf("error verdict %+v", ve)
		}
		if srcOf(e) != hop || dstOf(e) != hostA {
			t.Fatalf("error went %v -> %v", srcOf(e), dstOf(e))
		}
		inner := e[28:]
		// The quoted packet is host A's probe as the router forwarded it:
		// the original with TTL - 1 and a recomputed header checksum.
		want := bytes.Clone(orig[:quote])
		want[8]--
		want[10], want[11] = 0, 0
		binary.BigEndian.PutUint16(want[10:], refChecksum(want[:20]))
		if !bytes.Equal(inner, want) {
			t.Fatalf("quoted packet\n got %x\nwant %x", inner, want)
		}
	}
	// An error from the destination itself about a port-forwarded flow
	// gets its outer source translated too.
	syn := tcpPkt(ap(remote, 50000), ap(wanAddr, 8080), tcpSYN, 1, 0, nil, 0)
	mustForward(t, tb, syn, wan, lan)
	sa := tcpPkt(ap(server, 80), ap(remote, 50000), tcpSYN|tcpACK, 9, 2, nil, 0)
	origSA := bytes.Clone(sa)
	mustForward(t, tb, sa, lan, wan)
	e := quoteICMPError(remote, wanAddr, icmpUnreach, 3, sa, len(sa))
	mustForward(t, tb, e, wan, lan)
	if dstOf(e) != server || srcOf(e) != remote {
		t.Fatalf("error went %v -> %v, want %v -> %v", srcOf(e), dstOf(e), remote, server)
	}
	if got := e[28+20:]; !bytes.Equal(got, origSA[20:]) {
		t.Fatalf("quoted TCP segment not restored\n got %x\nwant %x", got, origSA[20:])
	}
	// An error quoting nothing tracked goes to the router's stack if
	// the policy delivers it there, else it is dropped; one aimed at
	// another address than the connection's is dropped too.
	stray := quoteICMPError(hop, wanAddr, icmpUnreach, 1, udpPkt(ap(wanAddr, 1), ap(remote, 2), 0), 28)
	if v := tb.Forward(stray, wan); v.Action != Local || v.Conn != nil {
		t.Fatalf("stray error to the router: %+v", v)
	}
	stray = quoteICMPError(hop, hostA, icmpUnreach, 1, udpPkt(ap(hostA, 1), ap(remote, 2), 0), 28)
	if v := tb.Forward(stray, wan); v.Action != Drop || v.Reason != Invalid {
		t.Fatalf("stray error: %+v", v)
	}
	forged := quoteICMPError(hop, netip.MustParseAddr("203.0.113.6"), icmpTimeExceed, 0, sent, 28)
	if v := tb.Forward(forged, wan); v.Action != Drop || v.Reason != Invalid {
		t.Fatalf("misaddressed error: %+v", v)
	}
}

func TestICMPErrorAboutEcho(t *testing.T) {
	tb, _ := newTable(t, Config{}, homePolicy(0))
	mustForward(t, tb, echoPkt(hostB, remote, icmpEcho, 5, 1), lan, wan)
	p := echoPkt(hostA, remote, icmpEcho, 5, 1)
	orig := bytes.Clone(p)
	mustForward(t, tb, p, lan, wan)
	e := quoteICMPError(hop, wanAddr, icmpUnreach, 1, p, len(p))
	mustForward(t, tb, e, wan, lan)
	if dstOf(e) != hostA || !bytes.Equal(e[48:], orig[20:]) {
		t.Fatalf("error to %v quoting %x, want %v quoting %x", dstOf(e), e[48:], hostA, orig[20:])
	}
}

func TestTTL(t *testing.T) {
	tb, _ := newTable(t, Config{}, homePolicy(0))
	p := udpPkt(ap(hostA, 1000), ap(remote, 53), 4)
	p[8] = 1
	binary.BigEndian.PutUint16(p[10:], 0)
	binary.BigEndian.PutUint16(p[10:], refChecksum(p[:20]))
	keep := bytes.Clone(p)
	if v := tb.Forward(p, lan); v.Action != Drop || v.Reason != TTLExceeded {
		t.Fatalf("ttl 1 new: %+v", v)
	}
	if tb.Stats().Conns != 0 {
		t.Fatal("a TTL-exceeded packet created a connection")
	}
	mustForward(t, tb, udpPkt(ap(hostA, 1000), ap(remote, 53), 4), lan, wan)
	if v := tb.Forward(p, lan); v.Action != Drop || v.Reason != TTLExceeded || v.Conn == nil {
		t.Fatalf("ttl 1 on a connection: %+v", v)
	}
	if !bytes.Equal(p, keep) {
		t.Fatal("dropped packet was modified")
	}
	// TTL does not matter for packets to the router.
	l := udpPkt(ap(hostA, 1000), ap(routerLAN, 53), 4)
	setTTL(l, 1)
	if v := tb.Forward(l, lan); v.Action != Local {
		t.Fatalf("local ttl 1: %+v", v)
	}
}

func mssOpts(pre int, mss uint16) []byte {
	o := make([]byte, 0, 8)
	for i := 0; i < pre; i++ {
		o = append(o, tcpOptNOP)
	}
	o = append(o, tcpOptMSS, 4, byte(mss>>8), byte(mss))
	for len(o)%4 != 0 {
		o = append(o, tcpOptEnd)
	}
	return o
}

func mssOf(p []byte) uint16 {
	h := p[20:]
	for i := 20; i+3 < int(h[12]>>4)*4; i++ {
		if h[i] == tcpOptMSS && h[i+1] == 4 {
			return binary.BigEndian.Uint16(h[i+2:])
		}
	}
	return 0
}

func TestMSSClamp(t *testing.T) {
	for pre := 0; pre < 4; pre++ { // NOPs before the option: even and odd offsets
		tb, _ := newTable(t, Config{}, homePolicy(1452))
		syn := tcpPkt(ap(hostA, 40000+uint16(pre)), ap(remote, 80), tcpSYN, 1, 0, mssOpts(pre, 1460), 0)
		mustForward(t, tb, syn, lan, wan)
		if m := mssOf(syn); m != 1452 {
			t.Fatalf("pre %d: SYN MSS %d, want 1452", pre, m)
		}
		sa := tcpPkt(ap(remote, 80), ap(wanAddr, 40000+uint16(pre)), tcpSYN|tcpACK, 1, 2, mssOpts(pre, 1400), 0)
		mustForward(t, tb, sa, wan, lan)
		if m := mssOf(sa); m != 1400 {
			t.Fatalf("pre %d: a smaller MSS was changed to %d", pre, m)
		}
		sa2 := tcpPkt(ap(remote, 80), ap(wanAddr, 40000+uint16(pre)), tcpSYN|tcpACK, 1, 2, mssOpts(pre, 8960), 0)
		mustForward(t, tb, sa2, wan, lan)
		if m := mssOf(sa2); m != 1452 {
			t.Fatalf("pre %d: SYN-ACK MSS %d, want 1452", pre, m)
		}
	}
	// A broken option list is left alone.
	tb, _ := newTable(t, Config{}, homePolicy(1000))
	syn := tcpPkt(ap(hostA, 1), ap(remote, 80), tcpSYN, 1, 0, []byte{tcpOptMSS, 9, 5, 0xb4}, 0)
	mustForward(t, tb, syn, lan, wan)
	if binary.BigEndian.Uint16(syn[42:]) != 0x05b4 {
		t.Fatal("malformed MSS option rewritten")
	}
}

func connState(tb *Table) (TCPState, time.Duration) {
	for c := range tb.Conns {
		return c.State, c.Expires
	}
	return 0, -1
}

func TestTCPStates(t *testing.T) {
	tb, clk := newTable(t, Config{}, homePolicy(0))
	a, r, w := ap(hostA, 40000), ap(remote, 443), ap(wanAddr, 40000)
	steps := []struct {
		in    Iface
		src   netip.AddrPort
		dst   netip.AddrPort
		flags uint8
		state TCPState
		tmo   time.Duration
	}{
		{lan, a, r, tcpSYN, TCPSynSent, 2 * time.Minute},
		{wan, r, w, tcpSYN | tcpACK, TCPSynRecv, 60 * time.Second},
		{lan, a, r, tcpACK, TCPEstablished, 7440 * time.Second},
		{lan, a, r, tcpACK, TCPEstablished, 7440 * time.Second},
		{lan, a, r, tcpFIN | tcpACK, TCPFinWait, 2 * time.Minute},
		{wan, r, w, tcpACK, TCPCloseWait, 60 * time.Second},
		{wan, r, w, tcpFIN | tcpACK, TCPLastAck, 30 * time.Second},
		{lan, a, r, tcpACK, TCPTimeWait, 2 * time.Minute},
		{lan, a, r, tcpSYN, TCPSynSent, 2 * time.Minute}, // reopened
		{wan, r, w, tcpRST | tcpACK, TCPClose, 10 * time.Second},
	}
	for i, s := range steps {
		out := wan
		if s.in == wan {
			out = lan
		}
		mustForward(t, tb, tcpPkt(s.src, s.dst, s.flags, 1, 1, nil, 0), s.in, out)
		st, exp := connState(tb)
		if st != s.state || exp != s.tmo {
			t.Fatalf("step %d: state %v expires in %v, want %v %v", i, st, exp, s.state, s.tmo)
		}
		clk.advance(int64(time.Second))
	}
	if tb.Stats().Created != 1 {
		t.Fatalf("reopening created a new entry: %+v", tb.Stats())
	}
	// CLOSE expires after 10 s; a late ACK then has no connection.
	clk.advance(int64(10 * time.Second))
	if v := tb.Forward(tcpPkt(a, r, tcpACK, 1, 1, nil, 0), lan); v.Action != Drop || v.Reason != Invalid {
		t.Fatalf("ACK after expiry: %+v", v)
	}
	if s := tb.Stats(); s.Expired != 1 || s.Conns != 0 {
		t.Fatalf("stats after expiry %+v", s)
	}
}

func TestTCPInvalid(t *testing.T) {
	tb, _ := newTable(t, Config{}, homePolicy(0))
	// Non-SYN without an entry: the policy may deliver it locally, never
	// create a connection.
	if v := tb.Forward(tcpPkt(ap(hostA, 1), ap(remote, 2), tcpACK, 1, 1, nil, 0), lan); v.Action != Drop || v.Reason != Invalid {
		t.Fatalf("ACK without entry: %+v", v)
	}
	if v := tb.Forward(tcpPkt(ap(hostA, 1), ap(routerLAN, 22), tcpACK, 1, 1, nil, 0), lan); v.Action != Local {
		t.Fatalf("ACK to the router: %+v", v)
	}
	if v := tb.Forward(tcpPkt(ap(hostA, 1), ap(remote, 2), tcpSYN|tcpACK, 1, 1, nil, 0), lan); v.Action != Drop || v.Reason != Invalid {
		t.Fatalf("SYN-ACK without entry: %+v", v)
	}
	// In SYN_SENT only a SYN-ACK or RST may answer.
	mustForward(t, tb, tcpPkt(ap(hostA, 3), ap(remote, 4), tcpSYN, 1, 0, nil, 0), lan, wan)
	if v := tb.Forward(tcpPkt(ap(remote, 4), ap(wanAddr, 3), tcpACK, 1, 1, nil, 0), wan); v.Action != Drop || v.Reason != Invalid {
		t.Fatalf("bare ACK answering a SYN: %+v", v)
	}
	if tb.Stats().Conns != 1 {
		t.Fatalf("conns %d", tb.Stats().Conns)
	}
}

func TestUDPTimeouts(t *testing.T) {
	tb, clk := newTable(t, Config{}, homePolicy(0))
	q, r := udpPkt(ap(hostA, 7000), ap(remote, 7000), 1), udpPkt(ap(remote, 7000), ap(wanAddr, 7000), 1)
	mustForward(t, tb, bytes.Clone(q), lan, wan)
	if _, e := connState(tb); e != 60*time.Second {
		t.Fatalf("unreplied timeout %v", e)
	}
	mustForward(t, tb, bytes.Clone(r), wan, lan)
	if _, e := connState(tb); e != 60*time.Second {
		t.Fatalf("replied-once timeout %v", e)
	}
	mustForward(t, tb, bytes.Clone(q), lan, wan)
	if _, e := connState(tb); e != 180*time.Second {
		t.Fatalf("stream timeout %v", e)
	}
	clk.advance(int64(180 * time.Second))
	tb.Sweep()
	if s := tb.Stats(); s.Conns != 0 || s.Expired != 1 {
		t.Fatalf("after sweep %+v", s)
	}
}

func TestTableFullEviction(t *testing.T) {
	tb, clk := newTable(t, Config{MaxConns: 4}, homePolicy(0))
	send := func(port uint16) Verdict {
		clk.advance(int64(time.Millisecond))
		return tb.Forward(udpPkt(ap(hostA, port), ap(remote, 53), 1), lan)
	}
	for p := uint16(1); p <= 4; p++ {
		if v := send(p); v.Action != Forward {
			t.Fatalf("conn %d: %+v", p, v)
		}
	}
	// Full of unanswered flows: the oldest (port 1) goes.
	if v := send(5); v.Action != Forward {
		t.Fatalf("fifth: %+v", v)
	}
	if tb.Stats().Evicted != 1 {
		t.Fatalf("stats %+v", tb.Stats())
	}
	if v := tb.Forward(udpPkt(ap(remote, 53), ap(wanAddr, 1), 1), wan); v.Action == Forward {
		t.Fatal("evicted connection still answers")
	}
	// Make every connection a stream (assured): nothing may be evicted.
	for p := uint16(2); p <= 5; p++ {
		mustForward(t, tb, udpPkt(ap(remote, 53), ap(wanAddr, p), 1), wan, lan)
		mustForward(t, tb, udpPkt(ap(hostA, p), ap(remote, 53), 1), lan, wan)
	}
	if v := send(6); v.Action != Drop || v.Reason != TableFull {
		t.Fatalf("full of assured: %+v", v)
	}
	if tb.Stats().Drops[TableFull] != 1 {
		t.Fatal("table-full drop not counted")
	}
	// Output reports a full table.
	if tb.Output(udpPkt(ap(wanAddr, 9), ap(remote, 53), 1), wan) {
		t.Fatal("Output on a full table returned true")
	}
}

func TestSetAddressAndFlush(t *testing.T) {
	tb, _ := newTable(t, Config{}, homePolicy(0))
	mustForward(t, tb, udpPkt(ap(hostA, 1), ap(remote, 53), 1), lan, wan)
	mustForward(t, tb, tcpPkt(ap(remote, 2), ap(wanAddr, 8080), tcpSYN, 1, 0, nil, 0), wan, lan)
	tb.Output(udpPkt(ap(wanAddr, 3), ap(remote, 123), 1), wan)
	tb.Output(udpPkt(ap(routerLAN, 67), ap(hostA, 68), 1), lan)
	if n := tb.Stats().Conns; n != 4 {
		t.Fatalf("conns %d", n)
	}
	tb.SetAddress(wanAddr, netip.MustParseAddr("203.0.113.77"))
	if s := tb.Stats(); s.Conns != 1 || s.Flushed != 3 {
		t.Fatalf("after SetAddress: %+v", s)
	}
	if v := tb.Forward(udpPkt(ap(remote, 53), ap(wanAddr, 1), 1), wan); v.Action == Forward {
		t.Fatal("a connection of the old address still forwards")
	}
	tb.Flush()
	if s := tb.Stats(); s.Conns != 0 || s.Flushed != 4 {
		t.Fatalf("after Flush: %+v", s)
	}
}

func TestOutputLocal(t *testing.T) {
	tb, _ := newTable(t, Config{}, policyFunc(func(*Request) Decision { return Decision{Action: Drop} }))
	if !tb.Output(udpPkt(ap(wanAddr, 40000), ap(remote, 53), 30), wan) {
		t.Fatal("Output failed")
	}
	a := udpPkt(ap(remote, 53), ap(wanAddr, 40000), 100)
	keep := bytes.Clone(a)
	v := tb.Forward(a, wan)
	if v.Action != Local || v.Conn == nil || v.Dir != Reply || !v.Conn.Established() {
		t.Fatalf("reply to the router: %+v", v)
	}
	if !bytes.Equal(a, keep) {
		t.Fatal("local packet modified")
	}
	// A packet in the router's own direction coming in is forged.
	if v := tb.Forward(udpPkt(ap(wanAddr, 40000), ap(remote, 53), 1), wan); v.Action != Drop || v.Reason != Invalid {
		t.Fatalf("forged router packet: %+v", v)
	}
	// The router's TCP connection follows the handshake.
	tb.Output(tcpPkt(ap(wanAddr, 40001), ap(remote, 80), tcpSYN, 1, 0, nil, 0), wan)
	if v := tb.Forward(tcpPkt(ap(remote, 80), ap(wanAddr, 40001), tcpSYN|tcpACK, 1, 2, nil, 0), wan); v.Action != Local || !v.Conn.Established() {
		t.Fatalf("SYN-ACK to the router: %+v", v)
	}
	if s := tb.Stats(); s.Policy != 0 {
		t.Fatalf("policy asked %d times for the router's own traffic", s.Policy)
	}
	// An error about the router's packet comes back Local.
	e := quoteICMPError(hop, wanAddr, icmpTimeExceed, 0, udpPkt(ap(wanAddr, 40000), ap(remote, 53), 30), 28)
	if v := tb.Forward(e, wan); v.Action != Local || v.Conn == nil {
		t.Fatalf("error about the router's packet: %+v", v)
	}
}

// TestFragments: fragments without a first one are dropped unless they
// are for the router.
func TestFragments(t *testing.T) {
	tb, _ := newTable(t, Config{}, homePolicy(0))
	frag := func(dst netip.Addr, off uint16, mf bool) []byte {
		p := udpPkt(ap(hostA, 1), ap(dst, 2), 40)
		f := off / 8
		if mf {
			f |= ipFlagMF
		}
		binary.BigEndian.PutUint16(p[6:], f)
		binary.BigEndian.PutUint16(p[10:], 0)
		binary.BigEndian.PutUint16(p[10:], refChecksum(p[:20]))
		return p
	}
	for _, c := range []struct {
		dst  netip.Addr
		off  uint16
		mf   bool
		want Action
	}{
		{remote, 1480, false, Drop}, {remote, 8, true, Drop}, // no first fragment passed (frag_test.go has the rest)
		{routerLAN, 0, true, Local}, {routerLAN, 1480, false, Local},
	} {
		v := tb.Forward(frag(c.dst, c.off, c.mf), lan)
		if v.Action != c.want || (c.want == Drop && v.Reason != Fragment) {
			t.Fatalf("fragment to %v off %d mf %v: %+v", c.dst, c.off, c.mf, v)
		}
	}
	if tb.Stats().Conns != 0 {
		t.Fatal("a fragment created a connection")
	}
}

func TestMalformed(t *testing.T) {
	tb, _ := newTable(t, Config{}, homePolicy(0))
	good := tcpPkt(ap(hostA, 1), ap(remote, 2), tcpSYN, 1, 0, nil, 0)
	cases := map[string]func([]byte) []byte{
		"short":          func(p []byte) []byte { return p[:19] },
		"version 6":      func(p []byte) []byte { p[0] = 0x65; return p },
		"ihl 4":          func(p []byte) []byte { p[0] = 0x44; return p },
		"total > slice":  func(p []byte) []byte { binary.BigEndian.PutUint16(p[2:], 41); return p },
		"total < ihl":    func(p []byte) []byte { binary.BigEndian.PutUint16(p[2:], 19); return p },
		"tcp short":      func(p []byte) []byte { binary.BigEndian.PutUint16(p[2:], 39); return p[:39] },
		"tcp doff 4":     func(p []byte) []byte { p[32] = 0x40; return p },
		"tcp doff 15":    func(p []byte) []byte { p[32] = 0xf0; return p },
		"ihl past total": func(p []byte) []byte { p[0] = 0x4f; binary.BigEndian.PutUint16(p[2:], 40); return p },
	}
	for name, mut := range cases {
		if v := tb.Forward(mut(bytes.Clone(good)), lan); v.Action != Drop || v.Reason != Malformed {
			t.Errorf("%s: %+v", name, v)
		}
	}
	// Ethernet padding past the total length is ignored.
	padded := append(bytes.Clone(good), 0, 0, 0, 0, 0, 0)
	mustForward(t, tb, padded, lan, wan)
	u := udpPkt(ap(hostA, 1), ap(remote, 2), 4)
	binary.BigEndian.PutUint16(u[24:], 100)
	if v := tb.Forward(u, lan); v.Reason != Malformed {
		t.Errorf("udp length past packet: %+v", v)
	}
}

func TestStaleConn(t *testing.T) {
	tb, clk := newTable(t, Config{MaxConns: 1}, homePolicy(0))
	v := mustForward(t, tb, udpPkt(ap(hostA, 1), ap(remote, 53), 1), lan, wan)
	h := Hop{Valid: true, Out: wan, Dst: [6]byte{1, 2, 3, 4, 5, 6}, Src: [6]byte{7, 8, 9, 10, 11, 12}}
	v.SetHop(h)
	if got := v.Hop(); !got.Valid || got.Dst != h.Dst || got.Src != h.Src || got.Out != wan {
		t.Fatalf("hop %+v", got)
	}
	eth := bytes.Repeat([]byte{0xee}, 14)
	if !v.PutHop(eth) || !bytes.Equal(eth, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0xee, 0xee}) {
		t.Fatalf("PutHop wrote % x", eth)
	}
	if !v.PutHop(eth[:12]) || v.PutHop(eth[:11]) {
		t.Fatal("PutHop does not take exactly a 12-byte header")
	}
	if other := (Verdict{Conn: v.Conn, Gen: v.Gen, Dir: v.Dir, Out: lan}); other.PutHop(eth) {
		t.Fatal("PutHop took a hop cached for another interface")
	}
	if got := v.Conn.Hop(Reply); got.Valid {
		t.Fatal("reply direction has a hop")
	}
	if rv := (Verdict{Conn: v.Conn, Gen: v.Gen, Dir: Reply, Out: lan}); rv.PutHop(eth) {
		t.Fatal("PutHop found a hop in the reply direction")
	}
	// The entry expires and its slot takes another connection.
	clk.advance(int64(time.Hour))
	v2 := mustForward(t, tb, udpPkt(ap(hostB, 2), ap(remote, 53), 1), lan, wan)
	if v2.Conn != v.Conn {
		t.Fatal("the test needs the slot recycled")
	}
	if v2.Gen == v.Gen {
		t.Fatal("generation did not change")
	}
	if got := v2.Hop(); got.Valid {
		t.Fatal("the new connection inherited the old hop")
	}
	v.SetHop(Hop{Valid: true, Out: 3}) // stale: ignored
	v.Conn.SetHop(Original, Hop{Valid: true, Out: 3})
	if got := v2.Hop(); got.Valid {
		t.Fatalf("a stale SetHop reached the new connection: %+v", got)
	}
	if got := v.Hop(); got.Valid {
		t.Fatal("a stale verdict reads a hop")
	}
	eth = bytes.Repeat([]byte{0xee}, 12)
	v2.SetHop(Hop{Valid: true, Out: wan, Dst: h.Dst, Src: h.Src})
	if v.PutHop(eth) || !bytes.Equal(eth, bytes.Repeat([]byte{0xee}, 12)) {
		t.Fatal("a stale verdict's PutHop wrote the new connection's hop")
	}
	if !v2.PutHop(eth) {
		t.Fatal("PutHop of the current verdict failed")
	}
	if (&Verdict{}).PutHop(eth) {
		t.Fatal("PutHop without a connection")
	}
	v2.SetHop(Hop{Valid: true, Out: 2})
	if got := v2.Hop(); !got.Valid || got.Out != 2 {
		t.Fatalf("hop %+v", got)
	}
}

func TestConns(t *testing.T) {
	tb, _ := newTable(t, Config{}, homePolicy(0))
	mustForward(t, tb, udpPkt(ap(hostA, 1), ap(remote, 53), 1), lan, wan)
	mustForward(t, tb, udpPkt(ap(remote, 53), ap(wanAddr, 1), 1), wan, lan)
	var list []ConnInfo
	for c := range tb.Conns {
		list = append(list, c)
	}
	if len(list) != 1 {
		t.Fatalf("%d conns", len(list))
	}
	c := list[0]
	if c.Proto != ProtoUDP || c.Orig.Src != ap(hostA, 1) || c.Reply.Dst != ap(wanAddr, 1) || !c.Established || c.Packets != [2]uint64{1, 1} || c.In != lan || c.Out != wan {
		t.Fatalf("%+v", c)
	}
}

func TestConfig(t *testing.T) {
	for _, c := range []Config{{MaxConns: -1}, {PortRange: [2]uint16{2000, 1000}}, {PortRange: [2]uint16{0, 10}}} {
		if _, err := New(c, homePolicy(0)); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
	if _, err := New(Config{}, nil); err == nil {
		t.Error("nil policy accepted")
	}
	tb, err := New(Config{}, homePolicy(0))
	if err != nil || tb.Stats().Max != DefaultMaxConns {
		t.Fatal(err)
	}
}

func TestConnSize(t *testing.T) {
	// The DefaultMaxConns comment relies on this: 156 bytes on 32-bit
	// MIPS, 160 on 64-bit hosts.
	size := unsafe.Sizeof(Conn{})
	t.Logf("Conn is %d bytes; %d entries take %d KiB with buckets", size, DefaultMaxConns, (int(size)+4)*DefaultMaxConns/1024)
	if size > 256 {
		t.Fatalf("Conn grew to %d bytes", size)
	}
}

func TestSweepBothNodesInOneBucket(t *testing.T) {
	// With one bucket both tuples of every connection share a chain:
	// removing one connection unlinks two consecutive nodes.
	tb, clk := newTable(t, Config{MaxConns: 1}, homePolicy(0))
	mustForward(t, tb, udpPkt(ap(hostA, 1), ap(remote, 53), 1), lan, wan)
	clk.advance(int64(time.Hour))
	tb.Sweep()
	if s := tb.Stats(); s.Conns != 0 || s.Expired != 1 {
		t.Fatalf("%+v", s)
	}
	for i := uint16(0); i < 10; i++ {
		mustForward(t, tb, udpPkt(ap(hostA, 2+i), ap(remote, 53), 1), lan, wan)
		clk.advance(int64(time.Hour))
	}
	if s := tb.Stats(); s.Conns != 1 || s.Expired != 10 {
		t.Fatalf("%+v", s)
	}
}

// TestBadHeaderChecksum: a packet whose IPv4 header checksum is wrong is
// dropped untouched and counted (RFC 1812 section 5.2.2), new or of a
// known connection, with or without options; fixed, it passes.
func TestBadHeaderChecksum(t *testing.T) {
	tb, _ := newTable(t, Config{}, homePolicy(0))
	known := udpPkt(ap(hostA, 1000), ap(remote, 53), 4)
	mustForward(t, tb, bytes.Clone(known), lan, wan)
	withOpts := ipPacket(hostA, remote, 17, 64, nil)
	withOpts = append(withOpts[:20:20], 0x94, 0x04, 0, 0) // router alert (RFC 2113)
	withOpts = append(withOpts, udpPkt(ap(hostA, 2000), ap(remote, 53), 4)[20:]...)
	withOpts[0] = 0x46
	binary.BigEndian.PutUint16(withOpts[2:], uint16(len(withOpts)))
	fixIPChecksum(withOpts)
	fixL4(withOpts)
	for name, p := range map[string][]byte{
		"known":   known,
		"new":     udpPkt(ap(hostA, 1001), ap(remote, 53), 4),
		"options": withOpts,
	} {
		for _, at := range []int{1, 10, 15, len(p[:int(p[0]&0x0f)*4]) - 1} {
			bad := bytes.Clone(p)
			bad[at] ^= 0x40
			before := tb.Stats().Drops[BadChecksum]
			conns := tb.Stats().Conns
			if v := tb.Forward(bad, lan); v.Action != Drop || v.Reason != BadChecksum {
				t.Fatalf("%s, byte %d flipped: %+v", name, at, v)
			}
			if s := tb.Stats(); s.Drops[BadChecksum] != before+1 || s.Conns != conns {
				t.Fatalf("%s, byte %d flipped: %d drops counted, %d -> %d connections", name, at, s.Drops[BadChecksum]-before, conns, s.Conns)
			}
			if !bytes.Equal(bad[:at], p[:at]) || !bytes.Equal(bad[at+1:], p[at+1:]) {
				t.Fatalf("%s: dropped packet modified", name)
			}
		}
		if v := tb.Forward(bytes.Clone(p), lan); v.Action != Forward {
			t.Fatalf("%s, checksum right: %+v", name, v)
		}
	}
}
