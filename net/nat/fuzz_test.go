package nat

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// fuzzTable holds a few connections of every kind, so fuzzed packets hit
// entries as well as the policy.
func fuzzTable(t testing.TB) *Table {
	tb, _ := newTable(t, Config{MaxConns: 64, PortRange: [2]uint16{20000, 20003}}, homePolicy(1400))
	for _, c := range []struct {
		p  []byte
		in Iface
	}{
		{tcpPkt(ap(hostA, 40000), ap(remote, 443), tcpSYN, 1, 0, mssOpts(1, 1460), 0), lan},
		{tcpPkt(ap(remote, 443), ap(wanAddr, 40000), tcpSYN|tcpACK, 1, 2, nil, 0), wan},
		{udpPkt(ap(hostA, 5353), ap(remote, 53), 10), lan},
		{udpPkt(ap(hostB, 5353), ap(remote, 53), 10), lan},
		{echoPkt(hostA, remote, icmpEcho, 7, 1), lan},
		{tcpPkt(ap(remote, 50000), ap(wanAddr, 8080), tcpSYN, 1, 0, nil, 0), wan},
	} {
		tb.Forward(c.p, c.in)
	}
	tb.Output(udpPkt(ap(wanAddr, 123), ap(remote, 123), 48), wan)
	// A fragmented datagram whose first fragment passed, so that fuzzed
	// later fragments (fuzzFrags' second and third) find it.
	tb.Forward(fuzzFrags()[0], lan)
	return tb
}

// fuzzFrags is a 3000-byte UDP datagram of host A's tracked flow in 3
// fragments.
func fuzzFrags() [][]byte {
	return fragmentIP(udpPkt(ap(hostA, 5353), ap(remote, 53), 3000-udpHeader), 1500, 0xf00d)
}

func fuzzSeeds(f *testing.F) {
	sent := udpPkt(ap(wanAddr, 5353), ap(remote, 53), 10)
	frags := fuzzFrags()
	other := fragmentIP(udpPkt(ap(remote, 53), ap(wanAddr, 5353), 1600), 576, 0xbeef) // the answer, before its first fragment
	local := fragmentIP(udpPkt(ap(hostA, 5353), ap(routerLAN, 53), 1600), 1500, 9)
	for _, p := range [][]byte{
		frags[0], frags[1], frags[2], other[0], other[1], other[2], local[1],
		fragmentIP(tcpPkt(ap(hostA, 40002), ap(remote, 443), tcpSYN, 1, 0, mssOpts(1, 1460), 64), 68, 3)[0],
		quoteICMPError(hop, wanAddr, icmpTimeExceed, 0, frags[1], 28),
		tcpPkt(ap(hostA, 40000), ap(remote, 443), tcpACK, 1, 1, nil, 100),
		tcpPkt(ap(remote, 443), ap(wanAddr, 40000), tcpACK|tcpFIN, 1, 1, nil, 0),
		tcpPkt(ap(hostA, 40001), ap(remote, 443), tcpSYN, 1, 0, mssOpts(3, 9000), 0),
		udpPkt(ap(remote, 53), ap(wanAddr, 5353), 30),
		udpPkt(ap(hostB, 9), ap(remote, 9), 0),
		echoPkt(remote, wanAddr, icmpEchoReply, 7, 1),
		echoPkt(hostB, remote, icmpEcho, 7, 1),
		quoteICMPError(hop, wanAddr, icmpTimeExceed, 0, sent, 28),
		quoteICMPError(hop, wanAddr, icmpUnreach, 3, sent, len(sent)),
		ipPacket(hostA, remote, 47, 64, make([]byte, 12)),
	} {
		f.Add(p, uint8(0))
		f.Add(p, uint8(1))
		f.Add(p, uint8(3))
	}
}

// FuzzForward: arbitrary bytes as a packet from either side (and, with
// bit 1 of in, first through Output) never panic,
// never write past the packet, leave other verdicts' packets untouched,
// and a Forward verdict leaves a valid IP header checksum valid (the
// established path updates it, RFC 1624, so a damaged one may stay
// damaged: TestRewriteUpdatesIPChecksum) and a valid transport checksum
// valid.
func FuzzForward(f *testing.F) {
	fuzzSeeds(f)
	tb := fuzzTable(f)
	f.Fuzz(func(t *testing.T, data []byte, in uint8) {
		buf := make([]byte, len(data)+16)
		copy(buf, data)
		for i := len(data); i < len(buf); i++ {
			buf[i] = 0xa5
		}
		pkt := buf[:len(data)]
		if in&4 != 0 && len(pkt) >= ipMinHeader && pkt[0]>>4 == 4 {
			// A right header checksum, so that mutations reach past
			// the check Forward makes first.
			if ihl := int(pkt[0]&0x0f) * 4; ihl >= ipMinHeader && ihl <= len(pkt) {
				fixIPChecksum(pkt)
			}
		}
		before := bytes.Clone(pkt)
		l4Valid, ipValid := false, false
		var p packet
		if p.parse(pkt) == ReasonNone {
			ipValid = ipOK(pkt)
			l4Valid = !p.frag && l4OK(pkt)
		}
		if in&2 != 0 { // the router's own packet: tracked, never changed
			tb.Output(pkt, Iface(in&1))
			if !bytes.Equal(pkt, before) {
				t.Fatal("Output modified the packet")
			}
		}
		v := tb.Forward(pkt, Iface(in&1))
		for _, b := range buf[len(data):] {
			if b != 0xa5 {
				t.Fatal("wrote past the packet")
			}
		}
		if v.Action == Forward && !ipValid {
			t.Fatal("forwarded a packet whose IP header checksum is wrong")
		}
		if v.Action != Forward {
			if !bytes.Equal(pkt, before) {
				t.Fatalf("%v verdict modified the packet", v.Action)
			}
			return
		}
		if ipValid && !ipOK(pkt) {
			t.Fatal("IP header checksum does not verify after Forward")
		}
		if l4Valid && !l4OK(pkt) {
			t.Fatal("a valid transport checksum broke")
		}
		tot := int(binary.BigEndian.Uint16(pkt[2:]))
		if !bytes.Equal(pkt[tot:], before[tot:]) {
			t.Fatal("padding modified")
		}
	})
}

func FuzzICMPError(f *testing.F) {
	fuzzSeeds(f)
	dst := make([]byte, 600)
	f.Fuzz(func(t *testing.T, orig []byte, typ uint8) {
		keep := bytes.Clone(orig)
		n := ICMPError(dst, orig, typ, 0, routerLAN)
		if !bytes.Equal(orig, keep) {
			t.Fatal("orig modified")
		}
		if n == 0 {
			return
		}
		if n > icmpErrMaxLen || n < 48 || !ipOK(dst[:n]) || refSum(dst[20:n]) != 0xffff {
			t.Fatalf("bad error of %d bytes", n)
		}
	})
}

func FuzzTCPReset(f *testing.F) {
	fuzzSeeds(f)
	dst := make([]byte, 40)
	f.Fuzz(func(t *testing.T, orig []byte, _ uint8) {
		keep := bytes.Clone(orig)
		n := TCPReset(dst, orig)
		if !bytes.Equal(orig, keep) {
			t.Fatal("orig modified")
		}
		if n != 0 && (n != 40 || !ipOK(dst) || !l4OK(dst) || dst[33]&tcpRST == 0) {
			t.Fatalf("bad reset %x", dst)
		}
	})
}
