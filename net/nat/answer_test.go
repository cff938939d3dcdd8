package nat

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"testing"
)

func TestICMPError(t *testing.T) {
	orig := udpPkt(ap(hostA, 1000), ap(remote, 53), 1400)
	dst := make([]byte, 1500)
	n := ICMPError(dst, orig, icmpTimeExceed, 0, routerLAN)
	if n != icmpErrMaxLen {
		t.Fatalf("length %d, want %d (RFC 1812 4.3.2.3)", n, icmpErrMaxLen)
	}
	e := dst[:n]
	if !ipOK(e) || !l4OK(e) || int(binary.BigEndian.Uint16(e[2:])) != n {
		t.Fatal("checksums or length wrong")
	}
	if srcOf(e) != routerLAN || dstOf(e) != hostA || e[9] != 1 || e[20] != icmpTimeExceed || e[21] != 0 || e[8] != answerTTL {
		t.Fatalf("header %x", e[:28])
	}
	if !bytes.Equal(e[28:], orig[:n-28]) {
		t.Fatal("quote is not the start of the original")
	}
	// A small packet is quoted whole; the MTU goes in the second word.
	small := udpPkt(ap(hostA, 1000), ap(remote, 53), 3)
	n = ICMPErrorParam(dst, small, icmpUnreach, 4, 1492, routerLAN)
	if n != 28+len(small) || binary.BigEndian.Uint16(dst[26:]) != 1492 || !l4OK(dst[:n]) {
		t.Fatalf("frag-needed: n %d mtu %d", n, binary.BigEndian.Uint16(dst[26:]))
	}
	// A short buffer quotes less, but at least header + 8 bytes.
	if n := ICMPError(dst[:28+28], orig, icmpUnreach, 1, routerLAN); n != 56 || !l4OK(dst[:n]) {
		t.Fatalf("short buffer: %d", n)
	}
	if n := ICMPError(dst[:28+27], orig, icmpUnreach, 1, routerLAN); n != 0 {
		t.Fatalf("too short buffer: %d", n)
	}

	// RFC 1812 4.3.2.7: no error about these.
	frag := bytes.Clone(orig)
	binary.BigEndian.PutUint16(frag[6:], 185)
	bcast := udpPkt(ap(hostA, 1), ap(netip.MustParseAddr("255.255.255.255"), 2), 1)
	mcast := udpPkt(ap(hostA, 1), ap(netip.MustParseAddr("224.0.0.251"), 5353), 1)
	zero := udpPkt(ap(netip.MustParseAddr("0.0.0.0"), 68), ap(remote, 67), 1)
	loop := udpPkt(ap(netip.MustParseAddr("127.0.0.1"), 68), ap(remote, 67), 1)
	errICMP := quoteICMPError(hop, hostA, icmpUnreach, 3, orig, 28)
	for name, p := range map[string][]byte{
		"fragment": frag, "broadcast": bcast, "multicast": mcast, "source 0": zero,
		"loopback source": loop, "icmp error": errICMP, "malformed": orig[:10],
	} {
		if n := ICMPError(dst, p, icmpUnreach, 3, routerLAN); n != 0 {
			t.Errorf("%s: answered with %d bytes", name, n)
		}
	}
	// An echo request is a query: it may get an error.
	if n := ICMPError(dst, echoPkt(hostA, remote, icmpEcho, 1, 1), icmpTimeExceed, 0, routerLAN); n == 0 {
		t.Error("no error for an echo request")
	}
	if n := ICMPError(dst, orig, icmpUnreach, 3, netip.MustParseAddr("::1")); n != 0 {
		t.Error("IPv6 source accepted")
	}
}

func TestTCPReset(t *testing.T) {
	dst := make([]byte, 64)
	// A SYN (no ACK): seq 0, ack = seq + 1 (the SYN counts).
	syn := tcpPkt(ap(remote, 5555), ap(wanAddr, 23), tcpSYN, 1000, 0, mssOpts(0, 1460), 0)
	n := TCPReset(dst, syn)
	if n != 40 || !ipOK(dst[:n]) || !l4OK(dst[:n]) {
		t.Fatalf("n %d", n)
	}
	r := dst[:n]
	if srcOf(r) != wanAddr || dstOf(r) != remote || sportOf(r) != 23 || dportOf(r) != 5555 {
		t.Fatal("addresses or ports")
	}
	if seq, ack, fl := binary.BigEndian.Uint32(r[24:]), binary.BigEndian.Uint32(r[28:]), r[33]; seq != 0 || ack != 1001 || fl != tcpRST|tcpACK {
		t.Fatalf("seq %d ack %d flags %#x", seq, ack, fl)
	}
	// Data with FIN, no ACK: ack = seq + len + 1.
	fin := tcpPkt(ap(remote, 5555), ap(wanAddr, 23), tcpFIN, 0xfffffff0, 0, nil, 100)
	TCPReset(dst, fin)
	if ack := binary.BigEndian.Uint32(dst[28:]); ack != 101-0x10 {
		t.Fatalf("ack %#x", ack)
	}
	// With ACK: seq = the segment's ack, RST alone.
	a := tcpPkt(ap(remote, 5555), ap(wanAddr, 23), tcpACK|0x08, 1, 0xdeadbeef, nil, 10)
	TCPReset(dst, a)
	if seq, fl := binary.BigEndian.Uint32(dst[24:]), dst[33]; seq != 0xdeadbeef || fl != tcpRST || !l4OK(dst[:40]) {
		t.Fatalf("seq %#x flags %#x", seq, fl)
	}
	for name, p := range map[string][]byte{
		"rst":       tcpPkt(ap(remote, 1), ap(wanAddr, 2), tcpRST, 1, 0, nil, 0),
		"udp":       udpPkt(ap(remote, 1), ap(wanAddr, 2), 0),
		"broadcast": tcpPkt(ap(remote, 1), ap(netip.MustParseAddr("255.255.255.255"), 2), tcpSYN, 1, 0, nil, 0),
		"short":     syn[:30],
	} {
		if n := TCPReset(dst, p); n != 0 {
			t.Errorf("%s answered", name)
		}
	}
	if n := TCPReset(dst[:39], syn); n != 0 {
		t.Error("short buffer written")
	}
}
