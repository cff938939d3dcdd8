package netstack

import (
	"encoding/binary"
	"errors"

	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/net/inetsum"
	"gvisor.dev/gvisor/pkg/buffer"
	"gvisor.dev/gvisor/pkg/tcpip/header"
	"gvisor.dev/gvisor/pkg/tcpip/stack"
)

// Segmentation offload, done in software by the Endpoint.
//
// gVisor's TCP costs most of its instructions per segment it sends, not per
// byte: the sender's bookkeeping, building headers, the IP layer's route
// and counters, the link's queue. On mips32, where each of its 64-bit
// counters takes the runtime's lock, that is some tens of thousands of
// instructions per 1460-byte segment. An Endpoint therefore tells the stack
// it offloads segmentation (stack.HostGSOSupported): TCP then hands it one
// packet of up to gsoSegments segments' payload, with headers for the
// first, and the Endpoint cuts the wire frames itself. Each frame gets a
// copy of the headers, fixed up (IPv4 total length, identification and
// header checksum, IPv6 payload length, TCP sequence number and flags, TCP
// checksum), and its payload as slices of the packet's own memory: no copy
// here; the NIC gathers or flattens as it always does. What is left per
// wire frame is a header copy, the checksum (which gVisor computed before
// too; csum.go's costs about half as much on mips32) and the NIC's
// transmit.
//
// It is what Linux calls GSO, one layer lower than gVisor's own gVisor-GSO
// (stack.GVisorGSOSupported), which still runs the IP layer per segment.

// gsoSegments is how many full segments one offloaded packet carries at
// most: the amortisation levels off well before this (each offloaded
// packet still costs about one segment's worth), and it keeps a burst
// within the TX queue several times over.
const gsoSegments = 22

// gsoHeaderReserve is what gVisor's TCP sender subtracts from GSOMaxSize
// to get the most payload it puts in one packet
// (header.TCPTotalHeaderMaximumSize + 1; pkg/tcpip/transport/tcp/snd.go,
// sendData).
const gsoHeaderReserve = header.TCPTotalHeaderMaximumSize + 1

// maxSegHeaders is the longest header stack a cut frame can carry:
// Ethernet, an IPv4 header with options (60; IPv6 without extension
// headers is 40), a TCP header with options (60).
const maxSegHeaders = header.EthernetMinimumSize + header.IPv4MaximumHeaderSize + header.TCPHeaderMaximumSize

// errGSOPacket reports an offloaded packet the Endpoint cannot cut: not
// Ethernet + IPv4/IPv6 + TCP as gVisor's TCP builds them. Nothing of
// gVisor's sends such a packet; the check keeps a malformed one from
// going out with a wrong checksum.
var errGSOPacket = errors.New("netstack: offloaded packet is not Ethernet/IP/TCP")

// gsoMaxSize is the GSOMaxSize an Endpoint of the given MTU reports: room
// for gsoSegments full segments (no TCP options) after gVisor's reserve,
// so a long transfer's packets cut into full frames only.
func gsoMaxSize(mtu uint32) uint32 {
	return uint32(gsoSegments)*(mtu-header.IPv4MinimumSize-header.TCPMinimumSize) + gsoHeaderReserve
}

// segmenter cuts one offloaded packet into wire frames, front to back.
type segmenter struct {
	pkt  *stack.PacketBuffer
	hdr  [maxSegHeaders]byte // the packet's headers, as the stack built them
	hlen int                 // Ethernet + IP + TCP
	ip   int                 // offset of the IP header in hdr
	tcp  int                 // offset of the TCP header in hdr
	v6   bool
	mss  int
	seq  uint32 // the first frame's sequence number
	id   uint16 // the first frame's IPv4 identification
	n    int    // frames cut so far
	// addrSum is the pseudo-header's sum but for the TCP length, the one
	// field that changes from frame to frame: the addresses and the
	// protocol number.
	addrSum uint32

	pseudo [40]byte // scratch for pseudoHeader

	// The payload not yet cut: left bytes from offset off of view v.
	v    *buffer.View
	off  int
	left int
}

// start prepares s to cut pkt, whose GSOOptions ask for TCP segmentation.
func (s *segmenter) start(pkt *stack.PacketBuffer) error {
	*s = segmenter{pkt: pkt, mss: int(pkt.GSOOptions.MSS)}
	h := pkt.HeaderSize()
	if h > len(s.hdr) || h < header.EthernetMinimumSize+header.IPv4MinimumSize+header.TCPMinimumSize || s.mss <= 0 {
		return errGSOPacket
	}
	// Walk the packet's views: the headers first (into hdr), then the
	// payload's first byte (into v/off), without PacketBuffer's
	// allocating accessors.
	vl, skip := pkt.AsViewList()
	want := h // header bytes still to copy
	for v := vl.Front(); v != nil; v = v.Next() {
		b := v.AsSlice()
		if skip >= len(b) {
			skip -= len(b)
			continue
		}
		b = b[skip:]
		base := skip
		skip = 0
		if want > 0 {
			k := copy(s.hdr[s.hlen:h], b)
			s.hlen += k
			want -= k
			base += k
			b = b[k:]
		}
		if want == 0 && len(b) > 0 {
			s.v, s.off = v, base
			break
		}
	}
	if want != 0 {
		return errGSOPacket
	}
	s.left = pkt.Data().Size()
	// The views must hold the payload the packet claims, so that next
	// never runs off their end.
	have := 0
	if s.v != nil {
		have = len(s.v.AsSlice()) - s.off
		for v := s.v.Next(); v != nil; v = v.Next() {
			have += len(v.AsSlice())
		}
	}
	if have != s.left {
		return errGSOPacket
	}
	s.ip = header.EthernetMinimumSize
	switch binary.BigEndian.Uint16(s.hdr[12:14]) {
	case uint16(header.IPv4ProtocolNumber):
		ip := header.IPv4(s.hdr[s.ip:h])
		ihl := int(ip.HeaderLength())
		if header.IPVersion(ip) != header.IPv4Version || ihl < header.IPv4MinimumSize || s.ip+ihl > h ||
			ip.Protocol() != uint8(header.TCPProtocolNumber) {
			return errGSOPacket
		}
		s.tcp = s.ip + ihl
		s.id = ip.ID()
	case uint16(header.IPv6ProtocolNumber):
		ip := header.IPv6(s.hdr[s.ip:h])
		if len(ip) < header.IPv6MinimumSize || ip.NextHeader() != uint8(header.TCPProtocolNumber) {
			return errGSOPacket // extension headers: not something TCP sends
		}
		s.tcp = s.ip + header.IPv6MinimumSize
		s.v6 = true
	default:
		return errGSOPacket
	}
	if s.tcp+header.TCPMinimumSize > h {
		return errGSOPacket
	}
	tcpLen := int(header.TCP(s.hdr[s.tcp:h]).DataOffset())
	if tcpLen < header.TCPMinimumSize || s.tcp+tcpLen != h {
		return errGSOPacket
	}
	s.hlen = h
	s.seq = header.TCP(s.hdr[s.tcp:h]).SequenceNumber()
	addrs := s.hdr[s.ip+12 : s.ip+20]
	if s.v6 {
		addrs = s.hdr[s.ip+8 : s.ip+40]
	}
	s.addrSum = uint32(inetsum.Sum(addrs)) + uint32(header.TCPProtocolNumber)
	return nil
}

// more reports whether another frame is to be cut: the first always (a
// packet without payload, such as an ACK, still needs its checksum).
func (s *segmenter) more() bool { return s.n == 0 || s.left > 0 }

// next cuts the next frame into t, which takes a reference on the packet.
// With partial, the TCP checksum is left for the NIC to complete as it
// copies the frame (net.CapTxChecksumCopy): the field holds the
// pseudo-header's sum, and t says so (net.TxChecksum).
func (s *segmenter) next(t *txPacket, partial bool) {
	seg := min(s.mss, s.left)
	first, last := s.n == 0, s.left == seg
	t.pkt = s.pkt.IncRef()
	t.n = s.hlen + seg
	h := t.hdr[:s.hlen]
	copy(h, s.hdr[:s.hlen])
	t.segs = append(t.segs[:0], h)
	for k := seg; k > 0; {
		b := s.v.AsSlice()[s.off:]
		if len(b) == 0 { // start checked the views hold the payload
			s.v, s.off = s.v.Next(), 0
			continue
		}
		if len(b) > k {
			b = b[:k]
		}
		t.segs = append(t.segs, b)
		k -= len(b)
		s.off += len(b)
	}
	s.left -= seg

	tcpLen := len(h) - s.tcp + seg
	if s.v6 {
		header.IPv6(h[s.ip:]).SetPayloadLength(uint16(tcpLen))
	} else {
		ip := header.IPv4(h[s.ip:s.tcp])
		ip.SetTotalLength(uint16(len(h) - s.ip + seg))
		ip.SetID(s.id + uint16(s.n))
		ip.SetChecksum(0)
		ip.SetChecksum(^inetsum.Sum(ip))
	}
	tcp := header.TCP(h[s.tcp:])
	tcp.SetSequenceNumber(s.seq + uint32(s.n*s.mss))
	flags := tcp.Flags()
	if !last {
		flags &^= header.TCPFlagFin | header.TCPFlagPsh
	}
	if !first {
		flags &^= header.TCPFlagCwr
	}
	tcp.SetFlags(uint8(flags))
	if partial {
		// The pseudo-header's sum (pseudoHeader's bytes: the length is
		// a 16-bit word for IPv4, the low half of a 32-bit one for
		// IPv6, and under 64 KiB).
		tcp.SetChecksum(inetsum.Fold(s.addrSum + uint32(tcpLen)))
		t.sumStart, t.sumField, t.partial = s.tcp, s.tcp+header.TCPChecksumOffset, true
		s.n++
		return
	}
	tcp.SetChecksum(0)
	var c inetsum.Checksummer
	c.Add(s.pseudoHeader(tcpLen))
	c.Add(tcp)
	for _, b := range t.segs[1:] {
		c.Add(b)
	}
	tcp.SetChecksum(^c.Sum())
	s.n++
}

// pseudoHeader returns the TCP checksum's pseudo-header (RFC 9293 3.1 for
// IPv4, RFC 8200 8.1 for IPv6) for a segment of tcpLen bytes. It is an
// even number of bytes long, so the checksum continues on the TCP header
// without realignment.
func (s *segmenter) pseudoHeader(tcpLen int) []byte {
	var p []byte
	if s.v6 {
		// Source and destination, then the upper-layer length and next
		// header as 32-bit words.
		p = s.pseudo[:0]
		p = append(p, s.hdr[s.ip+8:s.ip+40]...)
		p = binary.BigEndian.AppendUint32(p, uint32(tcpLen))
		p = append(p, 0, 0, 0, uint8(header.TCPProtocolNumber))
	} else {
		p = s.pseudo[:0]
		p = append(p, s.hdr[s.ip+12:s.ip+20]...)
		p = append(p, 0, uint8(header.TCPProtocolNumber))
		p = binary.BigEndian.AppendUint16(p, uint16(tcpLen))
	}
	return p
}

// gsoType reports whether pkt asks the Endpoint to segment it and
// complete its TCP checksum.
func gsoType(pkt *stack.PacketBuffer) bool {
	t := pkt.GSOOptions.Type
	return t == stack.GSOTCPv4 || t == stack.GSOTCPv6
}

var _ gnet.TxBuf = (*txPacket)(nil)
