package ethudp

import (
	"encoding/binary"
	"net/netip"
)

type verdict int

const (
	verdictOK verdict = iota
	verdictMalformed
	verdictNotForUs
)

// parse validates an Ethernet frame carrying IPv4/UDP to (mac, port) and
// returns the UDP payload (aliasing frame), the sender, the sender's MAC
// and the destination address. Malformed: any length, version, checksum
// or fragmentation rule of RFC 791/RFC 768 broken. Not for us: another
// unicast MAC, EtherType, protocol or port.
func parse(frame []byte, mac [6]byte, port uint16) (payload []byte, src netip.AddrPort, srcMAC [6]byte, dst netip.Addr, v verdict) {
	if len(frame) < ethHeaderLen {
		return nil, src, srcMAC, dst, verdictMalformed
	}
	var dstMAC [6]byte
	copy(dstMAC[:], frame[0:6])
	copy(srcMAC[:], frame[6:12])
	if dstMAC != mac && dstMAC != broadcastMAC {
		return nil, src, srcMAC, dst, verdictNotForUs
	}
	if binary.BigEndian.Uint16(frame[12:14]) != etherTypeIPv4 {
		return nil, src, srcMAC, dst, verdictNotForUs
	}
	ip := frame[ethHeaderLen:]
	if len(ip) < ipv4HeaderLen || ip[0]>>4 != 4 {
		return nil, src, srcMAC, dst, verdictMalformed
	}
	ihl := int(ip[0]&0x0f) * 4
	total := int(binary.BigEndian.Uint16(ip[2:4]))
	// Ethernet pads short frames, so the frame may be longer than the
	// packet; never shorter.
	if ihl < ipv4HeaderLen || total < ihl || total > len(ip) {
		return nil, src, srcMAC, dst, verdictMalformed
	}
	ip = ip[:total]
	if checksum(ip[:ihl], 0) != 0 {
		return nil, src, srcMAC, dst, verdictMalformed
	}
	// Fragments (MF set or a nonzero offset) are not reassembled.
	if binary.BigEndian.Uint16(ip[6:8])&0x3fff != 0 {
		return nil, src, srcMAC, dst, verdictMalformed
	}
	if ip[9] != protoUDP {
		return nil, src, srcMAC, dst, verdictNotForUs
	}
	srcIP := netip.AddrFrom4([4]byte(ip[12:16]))
	dst = netip.AddrFrom4([4]byte(ip[16:20]))
	udp := ip[ihl:]
	if len(udp) < udpHeaderLen {
		return nil, src, srcMAC, dst, verdictMalformed
	}
	ulen := int(binary.BigEndian.Uint16(udp[4:6]))
	if ulen < udpHeaderLen || ulen > len(udp) {
		return nil, src, srcMAC, dst, verdictMalformed
	}
	udp = udp[:ulen]
	// RFC 768: a zero checksum means the sender computed none.
	if binary.BigEndian.Uint16(udp[6:8]) != 0 && checksum(udp, pseudoHeaderSum(ip[12:16], ip[16:20], ulen)) != 0 {
		return nil, src, srcMAC, dst, verdictMalformed
	}
	if binary.BigEndian.Uint16(udp[2:4]) != port {
		return nil, src, srcMAC, dst, verdictNotForUs
	}
	src = netip.AddrPortFrom(srcIP, binary.BigEndian.Uint16(udp[0:2]))
	return udp[udpHeaderLen:], src, srcMAC, dst, verdictOK
}

// buildFrame writes Ethernet + IPv4 + UDP headers and p into buf and
// returns the frame. buf must hold headersLen+len(p) bytes.
func buildFrame(buf []byte, dstMAC, srcMAC [6]byte, src, dst netip.Addr, sport, dport uint16, p []byte) []byte {
	n := headersLen + len(p)
	f := buf[:n]
	copy(f[0:6], dstMAC[:])
	copy(f[6:12], srcMAC[:])
	binary.BigEndian.PutUint16(f[12:14], etherTypeIPv4)

	ip := f[ethHeaderLen:]
	ip[0] = 0x45 // version 4, 5 words of header
	ip[1] = 0    // DSCP/ECN
	binary.BigEndian.PutUint16(ip[2:4], uint16(ipv4HeaderLen+udpHeaderLen+len(p)))
	binary.BigEndian.PutUint16(ip[4:6], 0) // identification: DF set, never fragmented (RFC 6864 4.1)
	binary.BigEndian.PutUint16(ip[6:8], 0x4000)
	ip[8] = defaultTTL
	ip[9] = protoUDP
	ip[10], ip[11] = 0, 0
	s4, d4 := src.As4(), dst.As4()
	copy(ip[12:16], s4[:])
	copy(ip[16:20], d4[:])
	binary.BigEndian.PutUint16(ip[10:12], checksum(ip[:ipv4HeaderLen], 0))

	udp := ip[ipv4HeaderLen:]
	ulen := udpHeaderLen + len(p)
	binary.BigEndian.PutUint16(udp[0:2], sport)
	binary.BigEndian.PutUint16(udp[2:4], dport)
	binary.BigEndian.PutUint16(udp[4:6], uint16(ulen))
	udp[6], udp[7] = 0, 0
	copy(udp[udpHeaderLen:], p)
	cs := checksum(udp[:ulen], pseudoHeaderSum(ip[12:16], ip[16:20], ulen))
	if cs == 0 {
		cs = 0xffff // RFC 768: a computed zero is sent as all ones
	}
	binary.BigEndian.PutUint16(udp[6:8], cs)
	return f
}

// pseudoHeaderSum is the unfolded one's-complement sum of the UDP pseudo
// header (RFC 768): source, destination, protocol, UDP length.
func pseudoHeaderSum(src, dst []byte, ulen int) uint32 {
	var s uint32
	s += uint32(binary.BigEndian.Uint16(src[0:2])) + uint32(binary.BigEndian.Uint16(src[2:4]))
	s += uint32(binary.BigEndian.Uint16(dst[0:2])) + uint32(binary.BigEndian.Uint16(dst[2:4]))
	s += protoUDP + uint32(ulen)
	return s
}

// checksum is the Internet checksum (RFC 1071) of b with initial sum s:
// the one's complement of the one's-complement sum of 16-bit big-endian
// words, an odd final byte padded with zero. Over data that includes a
// correct checksum it returns 0.
func checksum(b []byte, s uint32) uint16 {
	for len(b) >= 2 {
		s += uint32(binary.BigEndian.Uint16(b))
		b = b[2:]
	}
	if len(b) == 1 {
		s += uint32(b[0]) << 8
	}
	for s>>16 != 0 {
		s = s&0xffff + s>>16
	}
	return ^uint16(s)
}
