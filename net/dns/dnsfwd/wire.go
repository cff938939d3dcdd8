package dnsfwd

import (
	"encoding/binary"
)

// Wire-format constants (RFC 1035 §4.1).
const (
	headerLen  = 12  // RFC 1035 §4.1.1
	maxNameLen = 255 // RFC 1035 §2.3.4, wire octets including the root label
	maxLabel   = 63  // RFC 1035 §2.3.4
	// keyFlagsLen is the byte after qname, qtype and qclass in a cache
	// key holding the query flags that change the answer (DO, CD).
	keyExtra = 5

	flagQR = 1 << 15
	flagAA = 1 << 10
	flagTC = 1 << 9
	flagRD = 1 << 8
	flagRA = 1 << 7
	flagAD = 1 << 5
	flagCD = 1 << 4

	optDO = 1 << 15 // RFC 3225 §3: DO is the top bit of the OPT TTL's flags

	// optRRLen is an OPT RR without options: root name, type, class,
	// TTL, RDLENGTH (RFC 6891 §6.1.2).
	optRRLen = 1 + 2 + 2 + 4 + 2
	// edeBlockedLen is an EDNS option carrying an Extended DNS Error
	// code without text: code, length, INFO-CODE (RFC 8914 §2).
	edeBlockedLen = 2 + 2 + 2
)

// Registry values the forwarder reads and writes. They are untyped so
// they compare with both the uint16 wire fields and the int RCODEs.
const (
	// RR TYPEs and QTYPEs.
	typeA    = 1   // RFC 1035 §3.2.2
	typeSOA  = 6   // RFC 1035 §3.2.2
	typePTR  = 12  // RFC 1035 §3.2.2
	typeAAAA = 28  // RFC 3596 §2.1
	typeOPT  = 41  // RFC 6891 §6.1.1
	typeIXFR = 251 // RFC 1995 §3
	typeAXFR = 252 // RFC 1035 §3.2.3, RFC 5936 §2
	typeANY  = 255 // RFC 1035 §3.2.3 ("*")

	classINET = 1 // RFC 1035 §3.2.4 (IN)

	opcodeQuery = 0 // RFC 1035 §4.1.1 (standard query)

	// RCODEs. The first six fit the header's 4 bits (RFC 1035 §4.1.1);
	// BADVERS needs the OPT RR's extended RCODE bits (RFC 6891 §6.1.3).
	rcodeSuccess        = 0  // NOERROR
	rcodeFormatError    = 1  // FORMERR
	rcodeServerFailure  = 2  // SERVFAIL
	rcodeNameError      = 3  // NXDOMAIN
	rcodeNotImplemented = 4  // NOTIMP
	rcodeRefused        = 5  // REFUSED
	rcodeBadVers        = 16 // BADVERS, RFC 6891 §6.1.3 and §9

	// optionEDE is the EDNS option code of an Extended DNS Error
	// (RFC 8914 §2 and §5.1) and edeBlocked its INFO-CODE 15 "Blocked"
	// (RFC 8914 §4.16).
	optionEDE  = 15
	edeBlocked = 15
)

// verdict is what the parser says to do with a query.
type verdict uint8

const (
	verdictOK      verdict = iota
	verdictDrop            // not a query we may answer: shorter than a header, or a response
	verdictFormErr         // answer FORMERR with the header only
	verdictNotImp          // answer NOTIMP: an opcode other than QUERY
)

// query is what the forwarder needs from a client's message. The
// question itself stays in the client's buffer (msg[headerLen:qEnd]) so
// answers echo the client's spelling (DNS 0x20 case randomisation).
type query struct {
	id      uint16
	flags   uint16
	qEnd    int // offset just after the question
	qtype   uint16
	qclass  uint16
	edns    bool
	version uint8 // EDNS version
	do      bool
	udpSize uint16
	// key is the cache key: the lowercased wire name, qtype, qclass and
	// a byte of DO/CD bits. It points into keyBuf.
	key    []byte
	keyBuf [maxNameLen + keyExtra]byte
}

func (q *query) name() []byte { return q.key[:len(q.key)-keyExtra] }
func (q *query) cd() bool     { return q.flags&flagCD != 0 }

// parseQuery reads a client's query. It never panics on any input; it
// reads the question without name compression (no client compresses the
// first name of a message, and refusing pointers there keeps the
// question's length equal to its canonical form, which the cache relies
// on) and looks for an OPT RR among the additional records.
func parseQuery(msg []byte, q *query) verdict {
	if len(msg) < headerLen {
		return verdictDrop
	}
	q.id = binary.BigEndian.Uint16(msg[0:])
	q.flags = binary.BigEndian.Uint16(msg[2:])
	q.edns, q.do, q.version, q.udpSize = false, false, 0, 0
	if q.flags&flagQR != 0 {
		// A response sent to us: answering could start a loop between two servers.
		return verdictDrop
	}
	if opcode(q.flags) != opcodeQuery {
		return verdictNotImp
	}
	if binary.BigEndian.Uint16(msg[4:]) != 1 {
		return verdictFormErr // RFC 9619: QDCOUNT must be 1 for QUERY
	}
	off, ok := lowerName(msg, headerLen, q.keyBuf[:0])
	if !ok || off+4 > len(msg) {
		return verdictFormErr
	}
	n := off - headerLen
	q.qtype = binary.BigEndian.Uint16(msg[off:])
	q.qclass = binary.BigEndian.Uint16(msg[off+2:])
	q.qEnd = off + 4
	an := int(binary.BigEndian.Uint16(msg[6:]))
	ns := int(binary.BigEndian.Uint16(msg[8:]))
	ar := int(binary.BigEndian.Uint16(msg[10:]))
	off = q.qEnd
	for i := 0; i < an+ns; i++ {
		var rr rrInfo
		if rr, off, ok = walkRR(msg, off); !ok {
			return verdictFormErr
		}
		_ = rr
	}
	for i := 0; i < ar; i++ {
		start := off
		var rr rrInfo
		if rr, off, ok = walkRR(msg, off); !ok {
			return verdictFormErr
		}
		if rr.typ != typeOPT {
			continue
		}
		if q.edns || msg[start] != 0 {
			return verdictFormErr // RFC 6891 §6.1.1: one OPT, owned by the root
		}
		q.edns = true
		q.udpSize = rr.class
		q.version = msg[rr.ttlOff+1]
		q.do = binary.BigEndian.Uint16(msg[rr.ttlOff+2:])&optDO != 0
	}
	k := q.keyBuf[:n+keyExtra]
	binary.BigEndian.PutUint16(k[n:], q.qtype)
	binary.BigEndian.PutUint16(k[n+2:], q.qclass)
	var bits byte
	if q.do {
		bits |= 1
	}
	if q.cd() {
		bits |= 2
	}
	k[n+4] = bits
	q.key = k
	return verdictOK
}

func opcode(flags uint16) int { return int(flags>>11) & 0xF }

// lowerName copies the uncompressed name at off into dst lowercased and
// returns the offset after it. dst must have room for maxNameLen bytes.
func lowerName(msg []byte, off int, dst []byte) (int, bool) {
	for {
		if off >= len(msg) {
			return 0, false
		}
		l := int(msg[off])
		if l > maxLabel { // a pointer or a reserved label type
			return 0, false
		}
		if off+1+l > len(msg) || len(dst)+1+l > maxNameLen {
			return 0, false
		}
		dst = append(dst, byte(l))
		for _, c := range msg[off+1 : off+1+l] {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			dst = append(dst, c)
		}
		off += 1 + l
		if l == 0 {
			return off, true
		}
	}
}

// skipName returns the offset after the (possibly compressed) name at
// off. A pointer ends the name where it stands, so following it is not
// needed to skip; it must still point backwards into the message
// (RFC 1035 §4.1.4: "a prior occurrence").
func skipName(msg []byte, off int) (int, bool) {
	start, total := off, 0
	for {
		if off >= len(msg) {
			return 0, false
		}
		l := int(msg[off])
		switch l & 0xC0 {
		case 0x00:
			total += 1 + l
			if total > maxNameLen {
				return 0, false
			}
			off += 1 + l
			if l == 0 {
				return off, true
			}
		case 0xC0:
			if off+2 > len(msg) {
				return 0, false
			}
			if int(binary.BigEndian.Uint16(msg[off:])&0x3FFF) >= start {
				return 0, false
			}
			return off + 2, true
		default:
			return 0, false // 0x40 and 0x80 label types (RFC 6891 §5)
		}
	}
}

// rrInfo locates one resource record's fields in a message.
type rrInfo struct {
	typ    uint16
	class  uint16
	ttlOff int
	rdOff  int
	rdLen  int
}

// walkRR reads the resource record at off and returns where it ends.
func walkRR(msg []byte, off int) (rrInfo, int, bool) {
	off, ok := skipName(msg, off)
	if !ok || off+10 > len(msg) {
		return rrInfo{}, 0, false
	}
	rr := rrInfo{
		typ:    binary.BigEndian.Uint16(msg[off:]),
		class:  binary.BigEndian.Uint16(msg[off+2:]),
		ttlOff: off + 4,
		rdOff:  off + 10,
		rdLen:  int(binary.BigEndian.Uint16(msg[off+8:])),
	}
	end := rr.rdOff + rr.rdLen
	if end > len(msg) {
		return rrInfo{}, 0, false
	}
	return rr, end, true
}

// NameEqualFold reports whether two domain names, both uncompressed wire
// names or both text, are equal as DNS compares them: ASCII letters
// without regard to case, every other byte as it is (RFC 4343 §3). Not
// bytes.EqualFold, which folds Unicode and takes any two bytes that are
// not UTF-8 for equal.
func NameEqualFold(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// appendHeader appends a response header for q.
func appendHeader(out []byte, q *query, rcode int, aa, tc bool, qd, an, ns, ar int) []byte {
	flags := flagQR | flagRA | q.flags&(flagRD|flagCD) | uint16(opcode(q.flags))<<11 | uint16(rcode&0xF)
	if aa {
		flags |= flagAA
	}
	if tc {
		flags |= flagTC
	}
	out = binary.BigEndian.AppendUint16(out, q.id)
	out = binary.BigEndian.AppendUint16(out, flags)
	out = binary.BigEndian.AppendUint16(out, uint16(qd))
	out = binary.BigEndian.AppendUint16(out, uint16(an))
	out = binary.BigEndian.AppendUint16(out, uint16(ns))
	return binary.BigEndian.AppendUint16(out, uint16(ar))
}

// appendOPT appends the forwarder's OPT RR: its UDP payload size, the
// upper bits of an extended RCODE, the client's DO bit echoed
// (RFC 3225 §3) and, if blocked, an Extended DNS Error "Blocked"
// (RFC 8914 §4.16).
func appendOPT(out []byte, rcode int, do, blocked bool) []byte {
	out = append(out, 0) // root
	out = binary.BigEndian.AppendUint16(out, typeOPT)
	out = binary.BigEndian.AppendUint16(out, ednsUDPSize)
	out = append(out, byte(rcode>>4), 0) // extended RCODE, version 0
	var fl uint16
	if do {
		fl = optDO
	}
	out = binary.BigEndian.AppendUint16(out, fl)
	if !blocked {
		return binary.BigEndian.AppendUint16(out, 0)
	}
	out = binary.BigEndian.AppendUint16(out, edeBlockedLen)
	out = binary.BigEndian.AppendUint16(out, optionEDE)
	out = binary.BigEndian.AppendUint16(out, 2)
	return binary.BigEndian.AppendUint16(out, edeBlocked)
}

// appendRcodeOnly appends an answer with no records: header, the
// client's question and, if the client sent one, an OPT RR.
func appendRcodeOnly(out, in []byte, q *query, rcode int, aa, blocked bool) []byte {
	ar := 0
	if q.edns {
		ar = 1
	}
	out = appendHeader(out, q, rcode, aa, false, 1, 0, 0, ar)
	out = append(out, in[headerLen:q.qEnd]...)
	if q.edns {
		out = appendOPT(out, rcode, q.do, blocked)
	}
	return out
}

// appendHeaderOnly answers a query whose question could not be read:
// FORMERR or NOTIMP with the header only, as RFC 1035 §4.1.1 allows.
func appendHeaderOnly(out, in []byte, rcode int) []byte {
	id := binary.BigEndian.Uint16(in[0:])
	flags := binary.BigEndian.Uint16(in[2:])
	q := query{id: id, flags: flags}
	return appendHeader(out, &q, rcode, false, false, 0, 0, 0, 0)
}
