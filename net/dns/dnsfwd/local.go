package dnsfwd

import (
	"encoding/binary"
	"net/netip"
)

// localTTL is the TTL of answers made from the router's own names and
// DHCP leases: 0, dnsmasq's local-ttl default, because a lease can move
// to another address at any time.
const localTTL = 0

// scope says who answers a name.
type scope uint8

const (
	scopeForward scope = iota // an upstream
	scopeLocal                // the router, from its names and leases
)

// wireName encodes a dotted name as lowercase wire format; it returns
// nil for a name that is not valid.
func wireName(s string) []byte {
	if s == "" || s == "." {
		return []byte{0}
	}
	if s[len(s)-1] != '.' {
		s += "."
	}
	var out []byte
	label := 0
	out = append(out, 0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '.' {
			if label == 0 || label > maxLabel {
				return nil
			}
			out[len(out)-label-1] = byte(label)
			out = append(out, 0)
			label = 0
			continue
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		out = append(out, c)
		label++
	}
	if len(out) > maxNameLen {
		return nil
	}
	return out
}

// labels counts the labels of a wire name (the root has none).
func labels(name []byte) int {
	n := 0
	for off := 0; off < len(name) && name[off] != 0; off += 1 + int(name[off]) {
		n++
	}
	return n
}

// firstLabel returns the first label's bytes.
func firstLabel(name []byte) []byte { return name[1 : 1+int(name[0])] }

// hasSuffix says whether wire name ends with the wire name suffix on a
// label boundary.
func hasSuffix(name, suffix []byte) bool {
	for off := 0; off < len(name); off += 1 + int(name[off]) {
		if len(name)-off == len(suffix) && string(name[off:]) == string(suffix) {
			return true
		}
		if name[off] == 0 {
			break
		}
	}
	return false
}

// inAddrArpa is "in-addr.arpa." in wire format (RFC 1035 §3.5).
var inAddrArpa = []byte("\x07in-addr\x04arpa\x00")

// reverseV4 reads the octets of an in-addr.arpa name, most significant
// first. n is how many leading octet labels there are; full is true
// when the name is exactly four octets (an address, not a zone).
func reverseV4(name []byte) (oct [4]byte, n int, full bool, ok bool) {
	if !hasSuffix(name, inAddrArpa) {
		return oct, 0, false, false
	}
	// Label offsets, least significant octet first; a name has at most
	// 127 labels, so the array stays on the stack.
	var labs [maxNameLen / 2]int
	nl := 0
	for off := 0; off < len(name)-len(inAddrArpa); off += 1 + int(name[off]) {
		labs[nl] = off
		nl++
	}
	for i := nl - 1; i >= 0 && n < 4; i-- {
		off := labs[i]
		v, good := decimalOctet(name[off+1 : off+1+int(name[off])])
		if !good {
			break
		}
		oct[n] = v
		n++
	}
	full = n == 4 && nl == 4
	return oct, n, full, true
}

func decimalOctet(b []byte) (byte, bool) {
	if len(b) == 0 || len(b) > 3 || (len(b) > 1 && b[0] == '0') {
		return 0, false
	}
	v := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return byte(v), v <= 255
}

// privateReverse says whether the first n octets name a zone inside
// private space, which must not be asked upstream (dnsmasq's
// --bogus-priv): the upstream cannot know our LAN, and the question
// would tell it our addresses.
func privateReverse(oct [4]byte, n int) bool {
	if n == 0 {
		return false
	}
	switch oct[0] {
	case 0, 10, 127:
		return true
	case 100:
		return n >= 2 && oct[1] >= 64 && oct[1] <= 127
	case 169:
		return n >= 2 && oct[1] == 254
	case 172:
		return n >= 2 && oct[1] >= 16 && oct[1] <= 31
	case 192:
		return n >= 2 && oct[1] == 168
	}
	return false
}

// answerLocal answers a name the router owns, or says it must be
// forwarded. It never asks an upstream about the LAN domain, single-label
// names or private reverse zones.
func (f *Forwarder) answerLocal(out, in []byte, q *query) ([]byte, scope) {
	name := q.name()
	nl := labels(name)
	switch {
	case nl == 0:
		return out, scopeForward
	case nl == 1:
		// dnsmasq --domain-needed: a plain name is never sent upstream;
		// it may still be a host on the LAN.
		return f.answerHost(out, in, q, firstLabel(name)), scopeLocal
	case len(f.domain) > 1 && hasSuffix(name, f.domain):
		if len(name) == len(f.domain) {
			return appendRcodeOnly(out, in, q, rcodeSuccess, true, false), scopeLocal
		}
		if nl != labels(f.domain)+1 {
			return appendRcodeOnly(out, in, q, rcodeNameError, true, false), scopeLocal
		}
		return f.answerHost(out, in, q, firstLabel(name)), scopeLocal
	}
	oct, n, full, ok := reverseV4(name)
	if !ok || !privateReverse(oct, n) {
		return out, scopeForward
	}
	if !full {
		return appendRcodeOnly(out, in, q, rcodeNameError, true, false), scopeLocal
	}
	// The name counts octets least significant first; oct reads them in
	// address order already.
	addr := netip.AddrFrom4(oct)
	host, found := f.reverse(addr)
	if !found {
		return appendRcodeOnly(out, in, q, rcodeNameError, true, false), scopeLocal
	}
	if q.qtype != typePTR && q.qtype != typeANY {
		return appendRcodeOnly(out, in, q, rcodeSuccess, true, false), scopeLocal
	}
	target := wireName(host)
	if host == "" || target == nil || len(target)+len(f.domain)-1 > maxNameLen {
		return appendRcodeOnly(out, in, q, rcodeNameError, true, false), scopeLocal
	}
	if f.domain != nil {
		target = append(target[:len(target)-1], f.domain...)
	}
	out = f.appendLocalRR(out, in, q, typePTR, target)
	return out, scopeLocal
}

// answerHost answers <host> or <host>.<domain>.
func (f *Forwarder) answerHost(out, in []byte, q *query, host []byte) []byte {
	var addr netip.Addr
	var found bool
	if string(host) == f.routerName {
		addr = f.routerAddress()
		found = addr.IsValid()
	} else if f.cfg.Local != nil {
		addr, found = f.cfg.Local.Lookup(string(host))
	}
	if !found || !addr.IsValid() {
		return appendRcodeOnly(out, in, q, rcodeNameError, true, false)
	}
	addr = addr.Unmap()
	switch {
	case addr.Is4() && (q.qtype == typeA || q.qtype == typeANY):
		a := addr.As4()
		return f.appendLocalRR(out, in, q, typeA, a[:])
	case addr.Is6() && (q.qtype == typeAAAA || q.qtype == typeANY):
		a := addr.As16()
		return f.appendLocalRR(out, in, q, typeAAAA, a[:])
	}
	// The name exists, but not with this type: NODATA.
	return appendRcodeOnly(out, in, q, rcodeSuccess, true, false)
}

// reverse finds the name of a LAN address: the router's own, else the
// DHCP server's if it can look up by address.
func (f *Forwarder) reverse(addr netip.Addr) (string, bool) {
	if ra := f.routerAddress(); ra.IsValid() && addr == ra.Unmap() && f.routerName != "" {
		return f.routerName, true
	}
	if r, ok := f.cfg.Local.(LocalReverse); ok {
		return r.LookupAddr(addr)
	}
	return "", false
}

// appendLocalRR appends an authoritative answer of one record owned by
// the question's name (a compression pointer to offset 12).
func (f *Forwarder) appendLocalRR(out, in []byte, q *query, typ uint16, rdata []byte) []byte {
	ar := 0
	if q.edns {
		ar = 1
	}
	out = appendHeader(out, q, rcodeSuccess, true, false, 1, 1, 0, ar)
	out = append(out, in[headerLen:q.qEnd]...)
	out = append(out, 0xC0, headerLen)
	out = binary.BigEndian.AppendUint16(out, typ)
	out = binary.BigEndian.AppendUint16(out, classINET)
	out = binary.BigEndian.AppendUint32(out, localTTL)
	out = binary.BigEndian.AppendUint16(out, uint16(len(rdata)))
	out = append(out, rdata...)
	if q.edns {
		out = appendOPT(out, rcodeSuccess, q.do, false)
	}
	return out
}
