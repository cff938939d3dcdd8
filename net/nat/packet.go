package nat

import "encoding/binary"

// IPv4 header layout (RFC 791 section 3.1).
const (
	ipMinHeader  = 20
	ipOffTotLen  = 2
	ipOffFrag    = 6
	ipOffTTL     = 8
	ipOffProto   = 9
	ipOffCsum    = 10
	ipOffSrc     = 12
	ipOffDst     = 16
	ipFlagMF     = 0x2000
	ipFragOffset = 0x1fff
)

// TCP header layout (RFC 9293 section 3.1).
const (
	tcpMinHeader = 20
	tcpOffSeq    = 4
	tcpOffAck    = 8
	tcpOffFlags  = 13
	tcpOffCsum   = 16
	tcpFIN       = 0x01
	tcpSYN       = 0x02
	tcpRST       = 0x04
	tcpACK       = 0x10
	tcpOptEnd    = 0
	tcpOptNOP    = 1
	tcpOptMSS    = 2
	tcpOptMSSLen = 4
)

// UDP (RFC 768) and ICMP (RFC 792) header layout.
const (
	udpHeader      = 8
	udpOffCsum     = 6
	icmpHeader     = 8
	icmpOffCsum    = 2
	icmpOffID      = 4
	icmpEchoReply  = 0
	icmpUnreach    = 3
	icmpQuench     = 4
	icmpRedirect   = 5
	icmpEcho       = 8
	icmpTimeExceed = 11
	icmpParamProb  = 12
)

// packet is a parsed IPv4 packet: offsets into b, nothing copied.
type packet struct {
	b        []byte // the packet cut to its IP total length
	ihl      int    // IP header length in bytes
	l4       int    // offset of the transport header
	frag     bool   // a fragment (MF set or offset > 0)
	firstFr  bool   // offset 0 (with frag: the first fragment)
	tcpFlags uint8
	tcpDoff  int // TCP header length in bytes
	icmpType uint8
	icmpCode uint8
	t        tuple
}

// parse validates the IPv4 header and, for unfragmented packets and
// first fragments, the transport header, and builds the packet's tuple.
// A first fragment must hold the whole TCP header (RFC 1858 section 3.2:
// tiny fragments that split it are refused) or UDP header; its UDP length
// covers the whole datagram, so it is not checked against the fragment.
func (p *packet) parse(b []byte) DropReason { return p.parseHeaders(b, true) }

// parseIP validates the IPv4 header of b and fills p's IP fields only.
func (p *packet) parseIP(b []byte) DropReason { return p.parseHeaders(b, false) }

// parseHeaders is parse, or parseIP when transport is false: one body,
// not an IP parser parse calls, because it runs for every packet and a
// call costs a score of instructions on mips32.
func (p *packet) parseHeaders(b []byte, transport bool) DropReason {
	if len(b) < ipMinHeader || b[0]>>4 != 4 {
		return Malformed
	}
	ihl := int(b[0]&0x0f) * 4
	tot := int(binary.BigEndian.Uint16(b[ipOffTotLen:]))
	if ihl < ipMinHeader || tot < ihl || tot > len(b) {
		return Malformed
	}
	p.b = b[:tot]
	p.ihl = ihl
	p.l4 = ihl
	frag := binary.BigEndian.Uint16(b[ipOffFrag:])
	p.firstFr = frag&ipFragOffset == 0
	p.frag = frag&(ipFlagMF|ipFragOffset) != 0
	p.t = tuple{
		src:   binary.BigEndian.Uint32(b[ipOffSrc:]),
		dst:   binary.BigEndian.Uint32(b[ipOffDst:]),
		proto: b[ipOffProto],
	}
	if !transport || (p.frag && !p.firstFr) {
		return ReasonNone
	}
	l4 := p.b[p.l4:]
	switch Proto(p.t.proto) {
	case ProtoTCP:
		if len(l4) < tcpMinHeader {
			return Malformed
		}
		doff := int(l4[12]>>4) * 4
		if doff < tcpMinHeader || doff > len(l4) {
			return Malformed
		}
		p.tcpDoff = doff
		p.tcpFlags = l4[tcpOffFlags]
		p.t.sport = binary.BigEndian.Uint16(l4[0:])
		p.t.dport = binary.BigEndian.Uint16(l4[2:])
	case ProtoUDP:
		if len(l4) < udpHeader {
			return Malformed
		}
		if ul := int(binary.BigEndian.Uint16(l4[4:])); ul < udpHeader || (ul > len(l4) && !p.frag) {
			return Malformed
		}
		p.t.sport = binary.BigEndian.Uint16(l4[0:])
		p.t.dport = binary.BigEndian.Uint16(l4[2:])
	case ProtoICMP:
		if len(l4) < icmpHeader {
			return Malformed
		}
		p.icmpType, p.icmpCode = l4[0], l4[1]
		if p.icmpType == icmpEcho || p.icmpType == icmpEchoReply {
			p.t.sport = binary.BigEndian.Uint16(l4[icmpOffID:])
			p.t.dport = uint16(p.icmpType)
		}
	}
	return ReasonNone
}

func (p *packet) isICMPError() bool {
	if Proto(p.t.proto) != ProtoICMP {
		return false
	}
	switch p.icmpType {
	case icmpUnreach, icmpTimeExceed, icmpParamProb:
		return true
	}
	return false
}

// canCreate says whether the packet may start a connection: a TCP SYN
// without ACK, any UDP datagram, an ICMP echo request, any packet of
// another protocol.
func (p *packet) canCreate() bool {
	switch Proto(p.t.proto) {
	case ProtoTCP:
		return p.tcpFlags&(tcpSYN|tcpACK|tcpRST|tcpFIN) == tcpSYN
	case ProtoICMP:
		return p.icmpType == icmpEcho
	}
	return true
}

// csumAdd adds b as big-endian 16-bit words to a one's complement sum
// (RFC 1071); an odd last byte is padded with a zero. A uint32 holds the
// sum of a 64 KiB packet without overflow.
func csumAdd(sum uint32, b []byte) uint32 {
	n := len(b)
	i := 0
	for ; i+1 < n; i += 2 {
		sum += uint32(b[i])<<8 | uint32(b[i+1])
	}
	if i < n {
		sum += uint32(b[i]) << 8
	}
	return sum
}

func csumFold(sum uint32) uint16 {
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	return uint16(sum)
}

// ipHeaderChecksum computes the checksum of an IPv4 header whose checksum
// field is zero or about to be replaced.
// It runs for every forwarded packet (TTL - 1), so the fixed 20 bytes
// are summed in straight-line code: a byte loop costs about four times
// as many instructions on mips32.
func ipHeaderChecksum(h []byte) uint16 {
	_ = h[ipMinHeader-1]
	be := binary.BigEndian
	sum := uint32(be.Uint16(h[0:])) + uint32(be.Uint16(h[2:])) + uint32(be.Uint16(h[4:])) +
		uint32(be.Uint16(h[6:])) + uint32(be.Uint16(h[8:])) + // h[10:12] is the checksum itself
		uint32(be.Uint16(h[12:])) + uint32(be.Uint16(h[14:])) + uint32(be.Uint16(h[16:])) + uint32(be.Uint16(h[18:]))
	sum = csumAdd(sum, h[ipMinHeader:]) // options
	return ^csumFold(sum)
}

// headerChecksumOK reports whether the IPv4 header h (options included)
// sums to all ones with its checksum (RFC 1071), which a router must
// check of every packet it forwards and drop it if not (RFC 1812 section
// 5.2.2): a damaged header can name the wrong connection, and the
// incremental rewrite would forward it damaged. The fixed 20 bytes are
// summed as two byte sums, the high and the low byte of each word, in
// straight-line code: about 45 instructions on mips32, where a 16-bit
// load is two byte loads and a loop costs several times that.
func headerChecksumOK(h []byte) bool {
	_ = h[ipMinHeader-1]
	hi := uint32(h[0]) + uint32(h[2]) + uint32(h[4]) + uint32(h[6]) + uint32(h[8]) +
		uint32(h[10]) + uint32(h[12]) + uint32(h[14]) + uint32(h[16]) + uint32(h[18])
	lo := uint32(h[1]) + uint32(h[3]) + uint32(h[5]) + uint32(h[7]) + uint32(h[9]) +
		uint32(h[11]) + uint32(h[13]) + uint32(h[15]) + uint32(h[17]) + uint32(h[19])
	sum := hi<<8 + lo
	if len(h) > ipMinHeader {
		sum = csumAdd(sum, h[ipMinHeader:]) // options
	}
	return csumFold(sum) == 0xffff
}

// csumUpdate16 is RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m'), the checksum
// after a 16-bit word of the covered data changes from m to m'.
func csumUpdate16(hc, m, m1 uint16) uint16 {
	return ^csumFold(uint32(^hc) + uint32(^m) + uint32(m1))
}

// csumDelta32 is the RFC 1624 eqn. 3 term ~m + m' of a 32-bit field
// (two words) changing from m to m1, to add to ~HC before folding.
func csumDelta32(m, m1 uint32) uint32 {
	return uint32(^uint16(m>>16)) + uint32(^uint16(m)) + uint32(uint16(m1>>16)) + uint32(uint16(m1))
}

// csumUpdate32 is csumUpdate16 for a 32-bit field (two words).
func csumUpdate32(hc uint16, m, m1 uint32) uint16 {
	return ^csumFold(uint32(^hc) + uint32(^uint16(m>>16)) + uint32(^uint16(m)) + uint32(uint16(m1>>16)) + uint32(uint16(m1)))
}

// set16 writes v at b[off:] and updates the checksum at b[csum:] when
// the word lies at an even distance from the start of the checksummed
// region (start); at an odd distance the word straddles two checksum
// words, which is the same as a byte-swapped word (RFC 1071 section 2(B)).
func set16(b []byte, off int, v uint16, csum, start int) {
	old := binary.BigEndian.Uint16(b[off:])
	if old == v {
		return
	}
	binary.BigEndian.PutUint16(b[off:], v)
	if csum < 0 {
		return
	}
	if (off-start)&1 == 1 {
		old = old<<8 | old>>8
		v = v<<8 | v>>8
	}
	hc := binary.BigEndian.Uint16(b[csum:])
	binary.BigEndian.PutUint16(b[csum:], csumUpdate16(hc, old, v))
}
