package nat

import (
	"encoding/binary"
	"net/netip"
)

// icmpError translates an ICMP error (destination unreachable, time
// exceeded, parameter problem) about a packet of a tracked connection: the
// quoted packet is the one the router sent, after NAT, so the error
// travels in the other direction of the same connection. The outer
// destination becomes the connection's origin, the quoted header gets its
// original addresses and ports back, and every checksum involved is
// updated incrementally. Source quench (deprecated, RFC 6633) and
// redirects (meaningless across NAT) are not translated: they reach the
// policy like any untracked ICMP message.
func (t *Table) icmpError(p *packet, in Iface) Verdict {
	b := p.b
	io := p.ihl + icmpHeader // the quoted IP header
	inner := b[io:]
	if len(inner) < ipMinHeader || inner[0]>>4 != 4 {
		return t.dropped(Drop, Malformed)
	}
	iihl := int(inner[0]&0x0f) * 4
	if iihl < ipMinHeader || len(inner) < iihl+8 { // RFC 792: header + 64 bits of data
		return t.dropped(Drop, Malformed)
	}
	it := tuple{
		src:   binary.BigEndian.Uint32(inner[ipOffSrc:]),
		dst:   binary.BigEndian.Uint32(inner[ipOffDst:]),
		proto: inner[ipOffProto],
	}
	il4 := inner[iihl:]
	if binary.BigEndian.Uint16(inner[ipOffFrag:])&ipFragOffset != 0 {
		return t.icmpNoMatch(p, in) // a later fragment: no ports to match
	}
	switch Proto(it.proto) {
	case ProtoTCP, ProtoUDP:
		it.sport, it.dport = binary.BigEndian.Uint16(il4[0:]), binary.BigEndian.Uint16(il4[2:])
	case ProtoICMP:
		if ty := il4[0]; ty == icmpEcho || ty == icmpEchoReply {
			it.sport, it.dport = binary.BigEndian.Uint16(il4[icmpOffID:]), uint16(ty)
		} else {
			return t.icmpNoMatch(p, in) // an error about an error, or an untracked message
		}
	}
	now := t.now()
	t.mu.Lock()
	c, e := t.lookup(it.inverse(), now) // e: the error's direction
	if c == nil {
		t.mu.Unlock()
		return t.icmpNoMatch(p, in)
	}
	d := 1 - e // the quoted packet's direction
	v := Verdict{Action: c.act[e], Out: c.out[e], Conn: c, Dir: e, Gen: c.gen.Load()}
	orig, ed, inE := c.tuple[d], c.tuple[e], c.in[e]
	t.mu.Unlock()
	switch {
	case v.Action == Drop || p.t.dst != ed.dst || in != inE:
		// Not sent to where the connection's packets in direction e go,
		// or not from their side: forged or misrouted.
		v.Action, v.Reason = Drop, Invalid
	case v.Action == Forward && b[ipOffTTL] <= 1:
		v.Action, v.Reason = Drop, TTLExceeded
	}
	switch v.Action {
	case Drop:
		t.drops[v.Reason].Add(1)
		return v
	case Local:
		return v // the router's own connection: no NAT to undo
	}

	// The quoted packet: restore it to how it entered the router.
	oc := p.ihl + icmpOffCsum // outer ICMP checksum, over b[p.ihl:]
	ics := -1                 // quoted transport checksum offset in b, -1 = none
	switch Proto(it.proto) {
	case ProtoTCP:
		if len(il4) >= tcpOffCsum+2 {
			ics = io + iihl + tcpOffCsum
		}
	case ProtoUDP:
		if binary.BigEndian.Uint16(il4[udpOffCsum:]) != 0 {
			ics = io + iihl + udpOffCsum
		}
	case ProtoICMP:
		ics = io + iihl + icmpOffCsum
	}
	pseudo := Proto(it.proto) == ProtoTCP || Proto(it.proto) == ProtoUDP
	quoted32 := func(off int, v uint32) {
		old := binary.BigEndian.Uint32(b[off:])
		if old == v {
			return
		}
		set16(b, io+ipOffCsum, csumUpdate16(csumUpdate16(binary.BigEndian.Uint16(b[io+ipOffCsum:]), uint16(old>>16), uint16(v>>16)), uint16(old), uint16(v)), oc, p.ihl)
		if pseudo && ics >= 0 {
			set16(b, ics, csumUpdate32(binary.BigEndian.Uint16(b[ics:]), old, v), oc, p.ihl)
		}
		set16(b, off, uint16(v>>16), oc, p.ihl)
		set16(b, off+2, uint16(v), oc, p.ihl)
	}
	quoted16 := func(off int, v uint16) {
		old := binary.BigEndian.Uint16(b[off:])
		if old == v {
			return
		}
		if ics >= 0 {
			set16(b, ics, csumUpdate16(binary.BigEndian.Uint16(b[ics:]), old, v), oc, p.ihl)
		}
		set16(b, off, v, oc, p.ihl)
	}
	quoted32(io+ipOffSrc, orig.src)
	quoted32(io+ipOffDst, orig.dst)
	switch Proto(it.proto) {
	case ProtoTCP, ProtoUDP:
		quoted16(io+iihl, orig.sport)
		quoted16(io+iihl+2, orig.dport)
	case ProtoICMP:
		quoted16(io+iihl+icmpOffID, orig.sport)
	}
	if Proto(it.proto) == ProtoUDP && ics >= 0 && binary.BigEndian.Uint16(b[ics:]) == 0 {
		set16(b, ics, 0xffff, oc, p.ihl)
	}

	// The outer header leaves like packets in direction e: to the
	// connection's origin, and from its original destination when the
	// error comes from the (translated) destination itself.
	to := orig.inverse()
	if p.t.src == ed.src {
		binary.BigEndian.PutUint32(b[ipOffSrc:], to.src)
	}
	binary.BigEndian.PutUint32(b[ipOffDst:], to.dst)
	b[ipOffTTL]--
	binary.BigEndian.PutUint16(b[ipOffCsum:], ipHeaderChecksum(b[:p.ihl]))
	return v
}

// icmpNoMatch handles an ICMP error about nothing tracked: the router's
// stack gets it if the policy delivers it locally (errors about the
// router's untracked packets), otherwise it is dropped as Invalid; it is
// never forwarded, since nothing says where its quoted packet came from.
func (t *Table) icmpNoMatch(p *packet, in Iface) Verdict {
	if t.askAddrs(p, in) == Local {
		return Verdict{Action: Local}
	}
	return t.dropped(Drop, Invalid)
}

// Limits of ICMP errors (RFC 1812 section 4.3.2.3: an error holds as much
// of the original datagram as fits in 576 bytes).
const (
	icmpErrMaxLen = 576
	answerTTL     = 64 // RFC 1700 "Assigned Numbers" default TTL
	// RFC 1812 section 4.3.2.5: ICMP errors go out with precedence 6
	// (internetwork control).
	icmpErrTOS = 0xc0
)

// ICMPError builds, in dst, an IPv4 ICMP error of type typ and code from
// address src about orig (an IPv4 packet), quoting orig's header and as
// much of its data as fits in 576 bytes (RFC 1812 4.3.2.3). It returns the
// length written, or 0 when dst is too small, orig is too malformed to
// quote, or RFC 1812 4.3.2.7 forbids an error: orig is an ICMP error, a
// fragment other than the first, addressed to a broadcast or multicast
// address, or from an address that is not one host (0.0.0.0, loopback,
// multicast, broadcast, class E). The caller must not answer packets it
// received as link-layer broadcast; it cannot be seen here. It allocates
// nothing.
func ICMPError(dst []byte, orig []byte, typ, code uint8, src netip.Addr) int {
	return ICMPErrorParam(dst, orig, typ, code, 0, src)
}

// ICMPErrorParam is ICMPError with the 32-bit field after the checksum
// set: the next-hop MTU in its low 16 bits for "fragmentation needed"
// (type 3 code 4, RFC 1191 section 4), the pointer in its top byte for
// parameter problem (RFC 792).
func ICMPErrorParam(dst []byte, orig []byte, typ, code uint8, param uint32, src netip.Addr) int {
	var p packet
	if !src.Is4() || p.parseIP(orig) != ReasonNone || !p.firstFr {
		return 0
	}
	if !unicastSource(p.t.src) || !unicastDest(p.t.dst) {
		return 0
	}
	if Proto(p.t.proto) == ProtoICMP {
		l4 := p.b[p.ihl:]
		if len(l4) < 1 || isICMPErrorType(l4[0]) {
			return 0
		}
	}
	q := len(p.b)
	if q > icmpErrMaxLen-ipMinHeader-icmpHeader {
		q = icmpErrMaxLen - ipMinHeader - icmpHeader
	}
	if q > len(dst)-ipMinHeader-icmpHeader {
		q = len(dst) - ipMinHeader - icmpHeader
	}
	if q < p.ihl+8 && q < len(p.b) { // RFC 792: at least the header and 64 bits of data
		return 0
	}
	n := ipMinHeader + icmpHeader + q
	writeIPHeader(dst, n, icmpErrTOS, uint8(ProtoICMP), u32(src), p.t.src)
	m := dst[ipMinHeader:n]
	m[0], m[1], m[2], m[3] = typ, code, 0, 0
	binary.BigEndian.PutUint32(m[4:], param)
	copy(m[icmpHeader:], p.b[:q])
	binary.BigEndian.PutUint16(m[icmpOffCsum:], ^csumFold(csumAdd(0, m)))
	return n
}

func isICMPErrorType(ty uint8) bool {
	switch ty {
	case icmpUnreach, icmpQuench, icmpRedirect, icmpTimeExceed, icmpParamProb:
		return true
	}
	return false
}

// unicastSource: RFC 1812 4.3.2.7 and 5.3.7: not 0/8 ("this network"),
// 127/8, multicast 224/4, class E 240/4 or 255.255.255.255.
func unicastSource(a uint32) bool {
	switch a >> 24 {
	case 0, 127:
		return false
	}
	return a>>28 < 0xe
}

// unicastDest: not multicast, not class E or the limited broadcast.
// Directed broadcasts of attached subnets are the caller's to filter.
func unicastDest(a uint32) bool { return a != 0 && a>>28 < 0xe }

// writeIPHeader writes a 20-byte IPv4 header with DF clear, id 0 and its
// checksum.
func writeIPHeader(b []byte, totLen int, tos, proto uint8, src, dst uint32) {
	h := b[:ipMinHeader]
	h[0], h[1] = 0x45, tos
	binary.BigEndian.PutUint16(h[ipOffTotLen:], uint16(totLen))
	h[4], h[5], h[6], h[7] = 0, 0, 0, 0
	h[ipOffTTL], h[ipOffProto] = answerTTL, proto
	binary.BigEndian.PutUint32(h[ipOffSrc:], src)
	binary.BigEndian.PutUint32(h[ipOffDst:], dst)
	binary.BigEndian.PutUint16(h[ipOffCsum:], ipHeaderChecksum(h))
}

// TCPReset builds, in dst, the IPv4 TCP RST that answers orig (RFC 9293
// section 3.10.7.1, a segment for a connection that does not exist): if
// orig has ACK, the reset's sequence number is orig's acknowledgment
// number; otherwise its sequence number is 0 and it acknowledges orig's
// sequence number plus its length (SYN and FIN count one each). It returns
// the length written (40), or 0 when dst is too small, orig is not a
// well-formed unfragmented TCP segment, is itself a RST (never answered),
// or is addressed to or from a non-unicast address. It allocates nothing.
func TCPReset(dst []byte, orig []byte) int {
	var p packet
	const n = ipMinHeader + tcpMinHeader
	if len(dst) < n || p.parse(orig) != ReasonNone || p.frag || Proto(p.t.proto) != ProtoTCP {
		return 0
	}
	if p.tcpFlags&tcpRST != 0 || !unicastSource(p.t.src) || !unicastDest(p.t.dst) {
		return 0
	}
	seg := p.b[p.ihl:]
	writeIPHeader(dst, n, 0, uint8(ProtoTCP), p.t.dst, p.t.src)
	h := dst[ipMinHeader:n]
	clear(h)
	binary.BigEndian.PutUint16(h[0:], p.t.dport)
	binary.BigEndian.PutUint16(h[2:], p.t.sport)
	h[12] = tcpMinHeader / 4 << 4
	if p.tcpFlags&tcpACK != 0 {
		copy(h[tcpOffSeq:tcpOffSeq+4], seg[tcpOffAck:tcpOffAck+4])
		h[tcpOffFlags] = tcpRST
	} else {
		segLen := uint32(len(seg) - p.tcpDoff)
		if p.tcpFlags&tcpSYN != 0 {
			segLen++
		}
		if p.tcpFlags&tcpFIN != 0 {
			segLen++
		}
		binary.BigEndian.PutUint32(h[tcpOffAck:], binary.BigEndian.Uint32(seg[tcpOffSeq:])+segLen)
		h[tcpOffFlags] = tcpRST | tcpACK
	}
	sum := pseudoSum(p.t.dst, p.t.src, uint8(ProtoTCP), tcpMinHeader)
	binary.BigEndian.PutUint16(h[tcpOffCsum:], ^csumFold(csumAdd(sum, h)))
	return n
}

// pseudoSum is the one's complement sum of the TCP/UDP pseudo-header
// (RFC 9293 section 3.1, RFC 768).
func pseudoSum(src, dst uint32, proto uint8, l4len int) uint32 {
	return src>>16 + src&0xffff + dst>>16 + dst&0xffff + uint32(proto) + uint32(l4len)
}
