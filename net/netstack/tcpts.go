package netstack

import (
	"encoding/binary"

	gnet "github.com/gowrt/gowrt/net"
)

// TCP timestamps off, the way Linux's net.ipv4.tcp_timestamps=0 turns
// them off for connections it accepts: gVisor has no such switch, and it
// negotiates the option (RFC 7323) whenever a connection request carries
// it. With timestamps, gVisor's sender updates its RTT estimate on every
// ACK in float64 arithmetic (tcp/snd.go updateRTO, RFC 7323 appendix G),
// which on a CPU without an FPU is software division, about a tenth of a
// bulk download's instructions on malta (XferInstructionsMaltaLE).
// Without them it samples the RTT once per window in integer arithmetic
// (RFC 6298), and each full segment carries 12 more bytes of payload.
//
// The Endpoint removes the Timestamps option from connection requests (SYN
// without ACK) before the stack sees them; the stack then answers without
// one, and neither side uses timestamps on that connection (RFC 7323
// section 3.2: both SYNs must carry the option). Connections the stack
// opens itself are left alone: their peer's SYN-ACK answers an offer the
// stack already made.

// Header offsets and values (RFC 791 section 3.1, RFC 9293 section 3.1,
// RFC 7323 section 3).
const (
	ipv4MinHeader   = 20
	ipv4ProtoTCP    = 6
	ipv4FragMask    = 0x3fff // MF flag and fragment offset
	tcpMinHeader    = 20
	tcpFlagSYN      = 0x02
	tcpFlagACK      = 0x10
	tcpOptEnd       = 0
	tcpOptNOP       = 1
	tcpOptTimestamp = 8
	tcpOptTSLen     = 10
	etherTypeIPv4   = 0x0800
)

// synTimestamp returns where, in the Ethernet frame, the Timestamps
// option of an IPv4 TCP connection request (SYN without ACK) starts, and
// where its TCP header starts; ok is false for any other frame, including
// malformed ones. A frame whose IP header or TCP options do not parse is
// left for the stack to judge.
func synTimestamp(frame []byte) (opt, tcp int, ok bool) {
	if len(frame) < gnet.EthHeaderLen+ipv4MinHeader+tcpMinHeader ||
		binary.BigEndian.Uint16(frame[12:14]) != etherTypeIPv4 {
		return 0, 0, false
	}
	ip := frame[gnet.EthHeaderLen:]
	ihl := int(ip[0]&0x0f) * 4
	total := int(binary.BigEndian.Uint16(ip[2:4]))
	if ip[0]>>4 != 4 || ihl < ipv4MinHeader || ip[9] != ipv4ProtoTCP ||
		binary.BigEndian.Uint16(ip[6:8])&ipv4FragMask != 0 || total > len(ip) || total < ihl+tcpMinHeader {
		return 0, 0, false
	}
	t := ip[ihl:total]
	doff := int(t[12]>>4) * 4
	if t[13]&(tcpFlagSYN|tcpFlagACK) != tcpFlagSYN || doff < tcpMinHeader || doff > len(t) {
		return 0, 0, false
	}
	opts := t[tcpMinHeader:doff]
	for i := 0; i < len(opts); {
		switch opts[i] {
		case tcpOptEnd:
			return 0, 0, false
		case tcpOptNOP:
			i++
			continue
		}
		if i+1 >= len(opts) {
			return 0, 0, false
		}
		n := int(opts[i+1])
		if n < 2 || i+n > len(opts) {
			return 0, 0, false
		}
		if opts[i] == tcpOptTimestamp {
			if n != tcpOptTSLen {
				return 0, 0, false
			}
			tcp = gnet.EthHeaderLen + ihl
			return tcp + tcpMinHeader + i, tcp, true
		}
		i += n
	}
	return 0, 0, false
}

// stripTimestamp overwrites the Timestamps option at frame[opt:] with
// NOPs and updates the TCP checksum of the segment starting at
// frame[tcp:] to match (RFC 1624 equation 3, over the 16-bit words the
// option touches). A segment whose checksum was wrong stays wrong, so the
// stack still drops it.
func stripTimestamp(frame []byte, opt, tcp int) {
	// The checksum's 16-bit words are aligned to the TCP header.
	lo := tcp + (opt-tcp)&^1
	hi := tcp + (opt+tcpOptTSLen-tcp+1)&^1
	before := onesSum(frame[lo:hi])
	for i := opt; i < opt+tcpOptTSLen; i++ {
		frame[i] = tcpOptNOP
	}
	after := onesSum(frame[lo:hi])
	ck := frame[tcp+16 : tcp+18]
	hc := uint32(^binary.BigEndian.Uint16(ck))
	hc += uint32(^before) + uint32(after)
	for hc > 0xffff {
		hc = hc&0xffff + hc>>16
	}
	binary.BigEndian.PutUint16(ck, ^uint16(hc))
}

// onesSum is the 16-bit one's complement sum of b (even length).
func onesSum(b []byte) uint16 {
	var s uint32
	for i := 0; i+1 < len(b); i += 2 {
		s += uint32(binary.BigEndian.Uint16(b[i:]))
	}
	for s > 0xffff {
		s = s&0xffff + s>>16
	}
	return uint16(s)
}
