package netstack

import (
	"encoding/binary"
	"github.com/gowrt/gowrt/net/inetsum"
	"math/bits"
	"unsafe"

	"gvisor.dev/gvisor/pkg/buffer"
	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/header"
)

// Receive coalescing (what Linux calls GRO), for IPv4 TCP.
//
// Receiving, gVisor's TCP costs most of its instructions per segment, as
// it does sending (gso.go): the IP layer's address lookup, the
// demultiplexer, the segment queue, an ACK per two segments. Within a
// receive pass (net.PassHandler: the lower NIC says which frames arrive
// together), the Endpoint therefore holds the consecutive in-order data
// segments of one connection and hands the stack one packet carrying
// them all, with the first segment's headers: total length and checksums
// recomputed, PSH if any had it. The payloads stay in the frames'
// own buffers. At the pass's end, or when a frame that does not continue
// the held segments arrives, the held packet goes up first: the stack
// sees every byte in the order it arrived.
//
// A push does not end the run, as it ends Linux's GRO packet: the pass
// ends within some 44 segments' work anyway, and the stack acts on PSH
// no differently from other data (gVisor wakes readers on any). A Linux
// sender sets PSH at the end of every write and at least every half
// window, which on a bulk upload ended a run every 31 segments, and gave
// the stack a third more packets, each costing it some 40 k
// instructions: 5.82 instructions per byte before, 5.34 to 5.58 after.
//
// A segment is merged only if nothing the stack would act on differs
// from the first one's: addresses, ports, TOS, TTL, DF, ACK number,
// window, TCP options; only ACK and PSH set; IPv4 without options or
// fragmentation, with a valid header checksum.
//
// Each segment's checksums are verified as it is held: the IPv4 header's
// by mergeable, the TCP checksum over pseudo-header, header and payload
// by verify, with this package's 32-bit sum (csum.go). A segment that
// fails is not held: it goes up alone, after what was held, and the
// stack, checking it as it checks any packet, drops and counts it. The
// merged packet's checksum is then recomputed from the headers and the
// payloads' sums, and the stack is told it was verified (Endpoint's
// rxVerified), so it does not sum every payload byte again with its own
// 64-bit arithmetic, which mips32 emulates: that was a fifth of the
// router's instructions receiving a bulk upload.

// Pure ACKs are thinned the same way: a pass's run of ACKs of one
// connection, each acknowledging more than the one before and alike in
// all else (no data, only ACK set, the same options, so never one
// carrying SACK blocks), reaches the stack as its last ACK, which
// acknowledges everything the others did and carries the newest window:
// as if the others had been lost on the way, which TCP's cumulative ACKs
// are made for. A duplicate ACK (the same ACK number: the fast
// retransmit signal) is never thinned. A sending connection's stack then
// runs its ACK processing and its next send once per pass rather than per
// ACK; gVisor's congestion control counts the segments an ACK covers, not
// ACKs, so the window grows as before.

// maxCoalesce caps the segments merged into one packet (64 KiB of full
// segments is 44).
const maxCoalesce = 44

// Chunks for copied payloads: the first of a connection's has room for
// one full-sized segment, each next one twice the room of the one before,
// up to lastChunk. A connection's chunks then hold at most about twice
// the bytes merged (what the stack's receive buffer accounts for),
// whether a pass brings it one segment or 44.
//
// lastChunk is gVisor's largest pooled chunk (buffer.MaxChunkSize).
// Every chunk costs a pool lookup when it is made and another when it
// is freed, each a loop over the size's bits (bits.MostSignificantOne64
// is a bit-at-a-time loop on mips32, some 500 instructions), and its
// views' reference counting: 64 KiB chunks rather than 16 KiB took a
// bulk upload from 6.03 to 5.82 instructions per byte.
//
// The last chunk outlives the packet that took its first bytes: the
// stack gets a clone of its view, covering the bytes merged so far, and
// the coalescer keeps writing after them while the same connection's
// segments come, in the next run and in the next pass (a bulk upload's
// passes bring some 20 segments). Before,
// every run began again at firstChunk, and its last chunk was on average
// half empty: gVisor clears every chunk it hands out, and a bulk upload
// cleared 1.45 bytes of chunk per byte merged. A chunk the stack shares
// is never written by it (gVisor's views copy a shared chunk before
// writing, View.Write, availableSlice), and the coalescer writes only
// past the bytes the stack's views cover. Keeping it for one connection
// only keeps the bound above: another connection's segment releases it.
//
// Filled 64 KiB chunks are written again once the stack has let them go
// (spares, chunkrefs.go), so that gVisor need not make and clear another:
// that clearing was 0.41 instructions per byte of a bulk upload, which
// then took 5.34 to 5.67 instructions per byte (median 5.53), and with
// reuse 4.73 to 5.40 (median 5.08, 21 samples).
const (
	firstChunk = 2 << 10
	lastChunk  = 64 << 10
	// keepMin is the least room worth keeping a chunk for: a segment
	// of the smallest MSS a host must accept (RFC 9293 3.7.1: 536).
	keepMin = 536
)

// coalescer holds the segments merged so far (n of them), in nv views:
// frames the Endpoint was handed in gVisor buffers (ReceiveView), each
// holding one segment, or chunks of the coalescer's own, into which the
// payloads of borrowed frames (Receive) were copied.
type coalescer struct {
	n int
	// hdr starts 2 bytes past a word, as drivers place frames (pcnet's
	// rxAlign, Linux's NET_IP_ALIGN), so that the header fields alike
	// compares sit at the same offsets within a word in both
	// (TestCoalescerHeaderAlignment) and compare a word at a time.
	_      [2]byte
	hdr    [header.EthernetMinimumSize + header.IPv4MinimumSize + header.TCPHeaderMaximumSize]byte
	ack    bool // the held frame is a pure ACK (n is 1)
	hlen   int  // Ethernet, IPv4, TCP headers of the first segment, in hdr
	alen   int  // the held ACK's frame length, if it is held in hdr
	size   int  // payload bytes merged
	next   uint32
	psh    bool
	sum    uint32 // the payloads' sums, placed at their offsets, folded
	nv     int
	views  [maxCoalesce]*buffer.View
	offs   [maxCoalesce]uint16 // where each view's payload starts
	lens   [maxCoalesce]uint16 // and its length
	open   bool                // views[nv-1] is a chunk that may take more payloads
	copied bool                // some payload was copied into a chunk
	chunk  int                 // the size of the last chunk opened
	// kept is the last chunk, past the bytes already delivered (empty,
	// its read index at its write index), while no run is held; keptFlow
	// is its connection's addresses and ports.
	kept     *buffer.View
	keptFlow [flowLen]byte
	// spares are lastChunk-sized chunks already filled, oldest first,
	// each held by a view of the coalescer's own, so that one is written
	// again, rather than a fresh chunk cleared, once the stack has
	// released every view of it (chunkrefs.go).
	spares [maxSpares]*buffer.View
	nspare int
	// idle counts the receive passes since one last copied a payload;
	// passCopied is whether this pass has.
	idle       int
	passCopied bool
	stats      *Stats
}

// maxSpares bounds the filled chunks the coalescer holds for reuse. The
// stack releases a chunk once its reader has read every byte in it,
// which on a bulk upload to the router (malta) came some two to four
// chunks behind the coalescer: with 2 spares it still made most of its
// chunks, with 4 none in a 5 M-instruction window. A reader that falls
// further behind leaves them all in use: the oldest is then let go, and
// the stack's release of it returns it to gVisor's pool.
const maxSpares = 4

// idlePasses is the receive passes without a copied payload after which
// the coalescer lets its kept and spare chunks go, so that up to five
// 64 KiB chunks are not held for good once a transfer has ended.
const idlePasses = 16

// A connection's addresses and ports: frame bytes [flowOff, flowOff+flowLen).
const (
	flowOff = ipOff + 12
	flowLen = 12
)

// tcpSeg is what coalescing reads of an IPv4 TCP frame.
type tcpSeg struct {
	thl   int // TCP header length
	plen  int // payload length
	seq   uint32
	flags uint8
	// hsum is the sum over the pseudo-header and the TCP header, its
	// checksum field included: with the payload's sum added, 0xffff if
	// the TCP checksum is right.
	hsum uint16
}

const (
	ipOff  = header.EthernetMinimumSize
	tcpOff = ipOff + header.IPv4MinimumSize
)

// mergeable parses b as a frame coalescing may take: to mac, IPv4 without
// options or fragmentation with a valid header checksum, TCP with
// payload and only ACK (and PSH) set, or a pure ACK (no payload, only ACK
// set).
func mergeable(b []byte, mac tcpip.LinkAddress) (tcpSeg, bool) {
	var s tcpSeg
	if len(b) < tcpOff+header.TCPMinimumSize || !isMAC(b, mac) ||
		binary.BigEndian.Uint16(b[12:14]) != uint16(header.IPv4ProtocolNumber) ||
		b[ipOff] != 0x45 || b[ipOff+9] != uint8(header.TCPProtocolNumber) ||
		binary.BigEndian.Uint16(b[ipOff+6:])&0x3fff != 0 { // MF, fragment offset
		return s, false
	}
	tot := int(binary.BigEndian.Uint16(b[ipOff+2:]))
	s.thl = int(b[tcpOff+12]>>4) * 4
	s.flags = b[tcpOff+13]
	if ipOff+tot > len(b) || s.thl < header.TCPMinimumSize || header.IPv4MinimumSize+s.thl > tot ||
		s.flags&^uint8(header.TCPFlagPsh) != uint8(header.TCPFlagAck) {
		return s, false
	}
	ipSum, tcpSum := headerSums(b, s.thl)
	if ipSum != 0xffff {
		return s, false
	}
	s.plen = tot - header.IPv4MinimumSize - s.thl
	s.hsum = inetsum.Fold(uint32(tcpSum) + uint32(header.TCPProtocolNumber) + uint32(s.thl+s.plen))
	if s.plen == 0 && s.flags != uint8(header.TCPFlagAck) {
		return s, false
	}
	s.seq = binary.BigEndian.Uint32(b[tcpOff+4:])
	return s, true
}

// continues reports whether segment s of frame b carries on from the
// held ones: the same connection and header fields, the next sequence
// number, room left.
func (c *coalescer) continues(b []byte, s tcpSeg) bool {
	if c.ack || s.plen == 0 || s.seq != c.next || c.n == maxCoalesce ||
		c.size+s.plen > 0xffff-header.IPv4MinimumSize-s.thl || c.hlen != tcpOff+s.thl {
		return false
	}
	if uintptr(unsafe.Pointer(&b[ipOff]))&3 == 0 {
		return c.sameHeaderWords(b)
	}
	return c.alike(b, s, true)
}

// Masks of a native 32-bit load that keep some of the word's four bytes,
// numbered in memory order.
var (
	bytes01  = binary.NativeEndian.Uint32([]byte{0xff, 0xff, 0, 0})
	bytes23  = binary.NativeEndian.Uint32([]byte{0, 0, 0xff, 0xff})
	bytes023 = binary.NativeEndian.Uint32([]byte{0xff, 0, 0xff, 0xff})
)

// sameHeaderWords is alike with sameAck for a frame whose IPv4 header is
// word-aligned, as the held copy's is (hdr's placement) and as drivers
// place frames (NET_IP_ALIGN): the headers are compared as words, the
// fields a run's segments may differ in masked out (total length,
// identification, header checksum; sequence number, flags, TCP checksum
// and urgent pointer: mergeable and continues look at those). The
// fragment field is compared whole: mergeable took only unfragmented
// segments, so that compares DF. About a sixth of alike's instructions.
// The caller checked that both TCP headers are as long.
func (c *coalescer) sameHeaderWords(b []byte) bool {
	p, q := unsafe.Pointer(&b[ipOff]), unsafe.Pointer(&c.hdr[ipOff])
	w := func(x unsafe.Pointer, off uintptr) uint32 { return *(*uint32)(unsafe.Add(x, off)) }
	const t = header.IPv4MinimumSize // the TCP header, from the IPv4 header
	d := (w(p, 0)^w(q, 0))&bytes01 | // version, IHL, TOS
		(w(p, 4)^w(q, 4))&bytes23 | // flags, fragment offset
		(w(p, 8)^w(q, 8))&bytes01 | // TTL, protocol
		(w(p, 12) ^ w(q, 12)) | (w(p, 16) ^ w(q, 16)) | // addresses
		(w(p, t) ^ w(q, t)) | // ports
		(w(p, t+8) ^ w(q, t+8)) | // ACK number
		(w(p, t+12)^w(q, t+12))&bytes023 // data offset, window
	for off := uintptr(t + header.TCPMinimumSize); off < uintptr(c.hlen-ipOff); off += 4 {
		d |= w(p, off) ^ w(q, off) // options
	}
	return d == 0
}

// supersedes reports whether pure ACK s in frame b acknowledges more than
// the held pure ACK and is alike in all else but the window.
func (c *coalescer) supersedes(b []byte, s tcpSeg) bool {
	h := c.hdr[:c.hlen]
	return c.ack && s.plen == 0 && s.seq == c.next &&
		int32(binary.BigEndian.Uint32(b[tcpOff+8:])-binary.BigEndian.Uint32(h[tcpOff+8:])) > 0 &&
		c.alike(b, s, false)
}

// alike reports whether frame b's headers agree with the held ones: the
// connection, TOS, DF, TTL, data offset, options; the ACK number and
// window too if sameAck.
func (c *coalescer) alike(b []byte, s tcpSeg, sameAck bool) bool {
	h := c.hdr[:c.hlen]
	if sameAck && (!sameWords(b[tcpOff+8:tcpOff+12], h[tcpOff+8:tcpOff+12]) || // ACK number
		b[tcpOff+14] != h[tcpOff+14] || b[tcpOff+15] != h[tcpOff+15]) { // window
		return false
	}
	return c.hlen == tcpOff+s.thl &&
		b[ipOff+1] == h[ipOff+1] && // TOS
		b[ipOff+6] == h[ipOff+6] && // flags (DF: mergeable took no fragment)
		b[ipOff+8] == h[ipOff+8] && // TTL
		sameWords(b[ipOff+12:ipOff+20], h[ipOff+12:ipOff+20]) && // addresses
		sameWords(b[tcpOff:tcpOff+4], h[tcpOff:tcpOff+4]) && // ports
		b[tcpOff+12] == h[tcpOff+12] && // data offset
		sameWords(b[tcpOff+20:tcpOff+s.thl], h[tcpOff+20:c.hlen]) // options
}

// sameWords reports whether a and b, as long as each other and a
// multiple of 4 long (header fields), hold the same bytes: a word at a
// time if both are word-aligned, as they are when the frame's driver
// places frames as hdr is placed, else byte by byte.
func sameWords(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) > 0 && (uintptr(unsafe.Pointer(&a[0]))|uintptr(unsafe.Pointer(&b[0])))&3 == 0 {
		for i := 0; i+4 <= len(a); i += 4 {
			if *(*uint32)(unsafe.Pointer(&a[i])) != *(*uint32)(unsafe.Pointer(&b[i])) {
				return false
			}
		}
		return true
	}
	return equal(a, b)
}

// isMAC reports whether frame b (at least 6 bytes long) is addressed to
// mac: its six bytes compared at once, without a branch per byte (a
// quarter of equal's instructions on mips32).
func isMAC(b []byte, mac tcpip.LinkAddress) bool {
	if len(mac) != 6 {
		return false
	}
	_ = b[5]
	return (b[0]^mac[0])|(b[1]^mac[1])|(b[2]^mac[2])|(b[3]^mac[3])|(b[4]^mac[4])|(b[5]^mac[5]) == 0
}

// equal reports whether a and b hold the same bytes. For a header field's
// few bytes a loop costs less than comparing strings, a call of
// runtime.memequal (about 60 instructions on mips32).
func equal[T ~string | ~[]byte](a []byte, b T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// verify reports whether segment s of frame b has a valid TCP checksum,
// and returns its payload's sum.
func verify(b []byte, s tcpSeg) (uint16, bool) {
	p := inetsum.Sum(b[tcpOff+s.thl : tcpOff+s.thl+s.plen])
	return p, inetsum.Fold(uint32(s.hsum)+uint32(p)) == 0xffff
}

// headerSums returns the sums over frame b's IPv4 header (without
// options: 0xffff if its checksum is right) and over its addresses and
// the thl bytes of TCP header after it (with the pseudo-header's other
// fields, the start of the TCP checksum's sum). The three runs (the IPv4
// header before the addresses, the addresses, the TCP header) are summed
// once each, as halfwords, which a frame's even offsets keep aligned: a
// fifth of sum16's instructions for these few bytes, which it would take
// in three calls, each with its own alignment steps.
func headerSums(b []byte, thl int) (ip, tcp uint16) {
	b = b[:tcpOff+thl]
	if uintptr(unsafe.Pointer(&b[0]))&1 != 0 {
		a := uint32(inetsum.Sum(b[ipOff+12 : ipOff+20]))
		return inetsum.Fold(uint32(inetsum.Sum(b[ipOff:ipOff+12])) + a), inetsum.Fold(a + uint32(inetsum.Sum(b[tcpOff:])))
	}
	p := unsafe.Pointer(&b[0])
	h := func(off uintptr) uint32 { return uint32(*(*uint16)(unsafe.Add(p, off))) }
	// Written out for the fixed headers: the loops' steps and tests cost
	// as much as the loads and adds (halfSum took 184 instructions a
	// frame on mips32 for these 52 bytes).
	s1 := h(ipOff) + h(ipOff+2) + h(ipOff+4) + h(ipOff+6) + h(ipOff+8) + h(ipOff+10)
	s2 := h(ipOff+12) + h(ipOff+14) + h(ipOff+16) + h(ipOff+18)
	s3 := h(tcpOff) + h(tcpOff+2) + h(tcpOff+4) + h(tcpOff+6) + h(tcpOff+8) +
		h(tcpOff+10) + h(tcpOff+12) + h(tcpOff+14) + h(tcpOff+16) + h(tcpOff+18)
	if thl == 32 { // the timestamp option, as every segment of a connection that has it
		s3 += h(tcpOff+20) + h(tcpOff+22) + h(tcpOff+24) + h(tcpOff+26) + h(tcpOff+28) + h(tcpOff+30)
	} else if thl > header.TCPMinimumSize {
		s3 += halfSum(unsafe.Add(p, tcpOff+header.TCPMinimumSize), thl-header.TCPMinimumSize)
	}
	ip, tcp = inetsum.Fold(s1+s2), inetsum.Fold(s2+s3)
	if inetsum.LittleEndian {
		ip, tcp = bits.ReverseBytes16(ip), bits.ReverseBytes16(tcp)
	}
	return ip, tcp
}

// halfSum adds the n/2 native halfwords at the 2-byte aligned p (n even
// and under 128 KiB, so that the sum cannot overflow).
func halfSum(p unsafe.Pointer, n int) uint32 {
	var s uint32
	i := 0
	for ; i+8 <= n; i += 8 {
		q := unsafe.Add(p, i)
		s += uint32(*(*uint16)(q)) + uint32(*(*uint16)(unsafe.Add(q, 2))) +
			uint32(*(*uint16)(unsafe.Add(q, 4))) + uint32(*(*uint16)(unsafe.Add(q, 6)))
	}
	for ; i < n; i += 2 {
		s += uint32(*(*uint16)(unsafe.Add(p, i)))
	}
	return s
}

// holdAck holds pure ACK s of frame b in place of a held one it
// supersedes (released: the stack never sees it), or as the first frame
// held. v is b's buffer, which the coalescer takes over, or nil for a
// borrowed frame that fits hdr: its bytes, Ethernet padding included, are
// then held in hdr, and a buffer is made for it only if it goes up
// (merged). It returns whether it replaced one.
func (c *coalescer) holdAck(v *buffer.View, b []byte, s tcpSeg) bool {
	replaced := c.n == 1 && c.ack
	if replaced && c.views[0] != nil {
		c.views[0].Release()
	}
	c.hlen, c.alen = tcpOff+s.thl, len(b)
	if v == nil {
		copy(c.hdr[:], b)
	} else {
		copy(c.hdr[:], b[:c.hlen])
	}
	c.views[0], c.n, c.nv, c.ack = v, 1, 1, true
	c.offs[0], c.lens[0] = 0, uint16(len(b))
	c.size, c.next = 0, s.seq
	return replaced
}

// add merges segment s, in frame v, into the held ones (the first, if
// none are held); p is its payload's sum (verify). The coalescer takes
// over v.
func (c *coalescer) add(v *buffer.View, s tcpSeg, p uint16) {
	c.views[c.nv] = v
	c.offs[c.nv], c.lens[c.nv] = uint16(tcpOff+s.thl), uint16(s.plen)
	c.nv++
	c.open = false
	c.note(v.AsSlice(), s, p)
}

// addCopy merges segment s of the borrowed frame b into the held ones by
// copying its payload into a chunk of the coalescer's, verifying its
// checksum as it copies. If the checksum is wrong it holds nothing and
// returns false.
func (c *coalescer) addCopy(b []byte, s tcpSeg) bool {
	pay := b[tcpOff+s.thl : tcpOff+s.thl+s.plen]
	v := c.room(b, pay)
	w := v.Size()
	v.Grow(len(pay))
	p := inetsum.CopySum(v.AsSlice()[w:], pay)
	if inetsum.Fold(uint32(s.hsum)+uint32(p)) != 0xffff {
		v.CapLength(w)
		if w == 0 { // the chunk room opened for it
			v.Release()
			c.nv--
			c.views[c.nv], c.open = nil, false
		}
		return false
	}
	c.lens[c.nv-1] = uint16(v.Size())
	c.copied, c.passCopied = true, true
	c.note(b, s, p)
	return true
}

// room returns the open chunk if it has room for pay, or opens a new one
// whose data starts at pay's offset within a word, so that copySum copies
// whole words (a run's payloads usually keep that alignment: they start
// at the same offset in their frames and are a multiple of 4 long).
func (c *coalescer) room(b, pay []byte) *buffer.View {
	if c.open {
		if v := c.views[c.nv-1]; v.AvailableSize() >= len(pay) {
			return v
		}
	}
	size := firstChunk
	if c.open {
		size = min(2*c.chunk, lastChunk)
		if v := c.views[c.nv-1]; v.Capacity() == lastChunk {
			// Full: it goes up with the other views; a clone of it
			// waits to be written again.
			c.retire(v.Clone())
		}
	}
	if k := c.kept; k != nil {
		c.kept = nil
		if sameWords(b[flowOff:flowOff+flowLen], c.keptFlow[:]) {
			if k.AvailableSize() >= len(pay) {
				c.views[c.nv], c.offs[c.nv] = k, 0
				c.nv++
				c.open = true
				return k
			}
			size = min(2*c.chunk, lastChunk)
		}
		c.retire(k)
	}
	size = max(size, len(pay)+3)
	v := c.reuse(size)
	if v == nil {
		v = buffer.NewView(size)
		if c.stats != nil {
			c.stats.RxChunks.Add(1)
		}
	}
	v.Grow(4) // to see where the chunk starts
	pad := int(uintptr(unsafe.Pointer(&pay[0]))-uintptr(unsafe.Pointer(&v.AsSlice()[0]))) & 3
	v.CapLength(pad)
	v.TrimFront(pad)
	c.views[c.nv], c.offs[c.nv] = v, 0
	c.nv++
	c.open, c.chunk = true, size
	return v
}

// retire takes over v, a view of a chunk the coalescer filled: a
// lastChunk-sized one becomes the newest spare, letting the oldest go if
// there are maxSpares; another is released.
func (c *coalescer) retire(v *buffer.View) {
	if v.Capacity() != lastChunk {
		v.Release()
		return
	}
	if c.nspare == maxSpares {
		c.spares[0].Release()
		copy(c.spares[:], c.spares[1:])
		c.nspare--
	}
	c.spares[c.nspare] = v
	c.nspare++
}

// reuse returns a spare for a chunk of size bytes, empty, if one has
// size bytes and the stack has released every other view of it;
// otherwise nil.
func (c *coalescer) reuse(size int) *buffer.View {
	if size != lastChunk {
		return nil
	}
	for i, v := range c.spares[:c.nspare] {
		if chunkAlone(v) {
			copy(c.spares[i:], c.spares[i+1:c.nspare])
			c.nspare--
			c.spares[c.nspare] = nil
			v.Reset()
			if c.stats != nil {
				c.stats.RxChunksReused.Add(1)
			}
			return v
		}
	}
	return nil
}

// passDone notes a receive pass's end: after idlePasses in a row that
// copied no payload, the kept and spare chunks are let go.
func (c *coalescer) passDone() {
	if c.passCopied {
		c.passCopied, c.idle = false, 0
		return
	}
	if c.idle++; c.idle < idlePasses {
		return
	}
	if c.kept != nil && c.n == 0 {
		c.kept.Release()
		c.kept = nil
	}
	for i, v := range c.spares[:c.nspare] {
		v.Release()
		c.spares[i] = nil
	}
	c.nspare = 0
}

// note records segment s, of frame b, as held, its payload's sum being p.
func (c *coalescer) note(b []byte, s tcpSeg, p uint16) {
	if c.n == 0 {
		c.hlen = copy(c.hdr[:], b[:tcpOff+s.thl])
		c.size, c.sum, c.psh, c.ack = 0, 0, false, false
	}
	if c.size&1 == 1 { // the payload starts at an odd offset of the merged one
		p = bits.ReverseBytes16(p)
	}
	c.sum = uint32(inetsum.Fold(c.sum + uint32(p)))
	c.n++
	c.size += s.plen
	c.next = s.seq + uint32(s.plen)
	c.psh = c.psh || s.flags&uint8(header.TCPFlagPsh) != 0
}

// merged returns the held segments as one frame: fresh headers, then the
// payloads, in a buffer that takes over the views; it leaves c empty.
// With one frame held, it is that frame unchanged.
func (c *coalescer) merged() buffer.Buffer {
	defer func() {
		clear(c.views[:c.nv])
		c.n, c.nv, c.ack, c.open, c.copied = 0, 0, false, false, false
	}()
	if c.n == 1 && !c.copied {
		if c.views[0] == nil { // an ACK held as bytes (holdAck without a buffer)
			return buffer.MakeWithView(buffer.NewViewWithData(c.hdr[:c.alen]))
		}
		return buffer.MakeWithView(c.views[0])
	}
	h := c.hdr[:c.hlen]
	if c.open {
		v := c.views[c.nv-1]
		if v.AvailableSize() >= keepMin {
			// Keep the last chunk; the stack gets a clone of its view.
			c.views[c.nv-1] = v.Clone()
			v.TrimFront(v.Size())
			c.kept = v
			copy(c.keptFlow[:], h[flowOff:flowOff+flowLen])
		} else if v.Capacity() == lastChunk {
			c.retire(v.Clone())
		}
	}
	thl := c.hlen - tcpOff
	ip := header.IPv4(h[ipOff:tcpOff])
	ip.SetTotalLength(uint16(header.IPv4MinimumSize + thl + c.size))
	ip.SetChecksum(0)
	ip.SetChecksum(^inetsum.Sum(ip))
	tcp := header.TCP(h[tcpOff:])
	if c.psh {
		tcp.SetFlags(uint8(tcp.Flags() | header.TCPFlagPsh))
	}
	tcp.SetChecksum(0)
	var ck inetsum.Checksummer
	ck.Add(h[ipOff+12 : ipOff+20])
	ck.Add([]byte{0, uint8(header.TCPProtocolNumber), byte((thl + c.size) >> 8), byte(thl + c.size)})
	ck.Add(tcp)
	tcp.SetChecksum(^inetsum.Fold(uint32(ck.Sum()) + c.sum))

	buf := buffer.MakeWithView(buffer.NewViewWithData(h))
	for i, v := range c.views[:c.nv] {
		v.TrimFront(int(c.offs[i]))
		v.CapLength(int(c.lens[i]))
		// Merge, not Append: Append fills the room left in the last
		// view's chunk by copying the new view's bytes into it, some
		// 500 bytes per segment here (a frame's chunk has 2 KiB).
		p := buffer.MakeWithView(v)
		buf.Merge(&p)
	}
	return buf
}
