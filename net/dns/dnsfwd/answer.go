package dnsfwd

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"time"
)

// TTL bounds for cached answers.
const (
	// maxPositiveTTL caps how long an answer is held, whatever its TTL:
	// one day, so a record changed upstream is seen within a day.
	maxPositiveTTL = 24 * 60 * 60
	// maxNegativeTTL caps NXDOMAIN/NODATA caching; RFC 2308 §5 reports
	// one to three hours working well.
	maxNegativeTTL = 3 * 60 * 60
	// maxTTL is the largest TTL value; larger ones (top bit set) mean 0
	// (RFC 2181 §8).
	maxTTL = 1<<31 - 1
)

var (
	errBadAnswer     = errors.New("dnsfwd: malformed upstream answer")
	errAnswerNotOurs = errors.New("dnsfwd: upstream answer does not match the query")
)

// upstreamAnswer is a validated upstream answer.
type upstreamAnswer struct {
	e       *entry
	ttl     uint32 // how long it may be cached; 0: not at all
	rcode   int
	tc      bool
	private bool // an A/AAAA in the answer section points into private space
}

// matchAnswer checks that resp answers the query we sent (same ID, a
// response, QUERY, the same question up to case) — the checks that make
// blind spoofing need the random ID and source port (RFC 5452 §4.1-4.3).
func matchAnswer(resp []byte, id uint16, q *query) bool {
	if len(resp) < headerLen || binary.BigEndian.Uint16(resp) != id {
		return false
	}
	flags := binary.BigEndian.Uint16(resp[2:])
	if flags&flagQR == 0 || opcode(flags) != opcodeQuery || binary.BigEndian.Uint16(resp[4:]) != 1 {
		return false
	}
	qlen := q.qEnd - headerLen
	if len(resp) < headerLen+qlen {
		return false
	}
	name := q.name()
	return NameEqualFold(resp[headerLen:headerLen+len(name)], name) &&
		binary.BigEndian.Uint16(resp[headerLen+len(name):]) == q.qtype &&
		binary.BigEndian.Uint16(resp[headerLen+len(name)+2:]) == q.qclass
}

// parseAnswer turns a matched upstream answer into a cache entry: it
// walks every record (so a malformed answer is never passed on), notes
// TTL offsets, removes the upstream's OPT RR (the client gets ours),
// finds the cache lifetime and whether an address in the answer is
// private. It never panics on any input.
func parseAnswer(resp []byte, q *query, now time.Time) (upstreamAnswer, error) {
	var a upstreamAnswer
	if len(resp) < q.qEnd {
		return a, errBadAnswer
	}
	flags := binary.BigEndian.Uint16(resp[2:])
	a.rcode = int(flags & 0xF)
	a.tc = flags&flagTC != 0
	an := int(binary.BigEndian.Uint16(resp[6:]))
	ns := int(binary.BigEndian.Uint16(resp[8:]))
	ar := int(binary.BigEndian.Uint16(resp[10:]))
	off := q.qEnd
	var (
		offs     []uint16
		ttls     []uint32
		minAns   uint32 = maxTTL
		negTTL   uint32
		haveSOA  bool
		arStart  int
		keptAR   = ar
		end      int
		optCount int
	)
	for i := 0; i < an+ns+ar; i++ {
		if i == an+ns {
			arStart = off
		}
		start := off
		rr, next, ok := walkRR(resp, off)
		if !ok {
			if a.tc {
				// A truncated answer may stop anywhere; it is only used
				// to decide on a TCP retry.
				break
			}
			return a, errBadAnswer
		}
		off = next
		if rr.typ == typeOPT {
			if i < an+ns || resp[start] != 0 || optCount > 0 {
				return a, errBadAnswer
			}
			optCount++
			if i != an+ns+ar-1 {
				// Not the last record: drop the additional section rather
				// than move records that later names may point into.
				keptAR, end = 0, arStart
				offs, ttls = trimOffs(offs, ttls, arStart)
				break
			}
			keptAR, end = ar-1, start
			continue
		}
		ttl := binary.BigEndian.Uint32(resp[rr.ttlOff:])
		if ttl > maxTTL {
			ttl = 0
		}
		offs = append(offs, uint16(rr.ttlOff))
		ttls = append(ttls, ttl)
		end = next
		switch {
		case i < an:
			minAns = min(minAns, ttl)
			if rr.class == classINET && isPrivateRR(resp, rr) {
				a.private = true
			}
		case i < an+ns && rr.typ == typeSOA:
			// RFC 2308 §5: a negative answer lives for the smaller of
			// the SOA's TTL and its MINIMUM field.
			p, ok := skipName(resp, rr.rdOff)
			if ok {
				p, ok = skipName(resp, p)
			}
			if !ok || p+20 != rr.rdOff+rr.rdLen {
				return a, errBadAnswer
			}
			negTTL = min(ttl, binary.BigEndian.Uint32(resp[p+16:]))
			haveSOA = true
		}
	}
	if an+ns+ar == 0 {
		end = q.qEnd
	}
	if a.tc {
		return a, nil // never cached nor served; the caller retries over TCP
	}
	switch {
	case a.rcode == rcodeSuccess && an > 0:
		a.ttl = min(minAns, maxPositiveTTL)
	case (a.rcode == rcodeSuccess || a.rcode == rcodeNameError) && haveSOA:
		a.ttl = min(negTTL, maxNegativeTTL)
	}
	msg := make([]byte, end)
	copy(msg, resp[:end])
	binary.BigEndian.PutUint16(msg[0:], 0)
	binary.BigEndian.PutUint16(msg[10:], uint16(keptAR))
	a.e = &entry{
		key:     string(q.key),
		msg:     msg,
		qEnd:    q.qEnd,
		ttlOffs: offs,
		ttls:    ttls,
		stored:  now,
		expires: now.Add(time.Duration(a.ttl) * time.Second),
	}
	return a, nil
}

// trimOffs drops the TTL offsets at or after cut.
func trimOffs(offs []uint16, ttls []uint32, cut int) ([]uint16, []uint32) {
	n := len(offs)
	for n > 0 && int(offs[n-1]) >= cut {
		n--
	}
	return offs[:n], ttls[:n]
}

func isPrivateRR(msg []byte, rr rrInfo) bool {
	switch {
	case rr.typ == typeA && rr.rdLen == 4:
		return isPrivate(netip.AddrFrom4([4]byte(msg[rr.rdOff : rr.rdOff+4])))
	case rr.typ == typeAAAA && rr.rdLen == 16:
		return isPrivate(netip.AddrFrom16([16]byte(msg[rr.rdOff : rr.rdOff+16])))
	}
	return false
}

// privateNets are the ranges rebind protection refuses in answers for
// names that are not the router's own: the ranges dnsmasq's
// --stop-dns-rebind checks (its private_net(): RFC 1918, loopback,
// "this network", CGNAT, link-local, IETF protocol assignments, the
// documentation nets, broadcast), plus their IPv6 counterparts
// (unspecified, loopback, link-local, unique-local; RFC 4291 §2.4,
// RFC 4193).
var privateNets = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // RFC 1122 §3.2.1.3 "this network"
	netip.MustParsePrefix("10.0.0.0/8"),      // RFC 1918
	netip.MustParsePrefix("100.64.0.0/10"),   // RFC 6598 shared (CGNAT)
	netip.MustParsePrefix("127.0.0.0/8"),     // RFC 1122 loopback
	netip.MustParsePrefix("169.254.0.0/16"),  // RFC 3927 link-local
	netip.MustParsePrefix("172.16.0.0/12"),   // RFC 1918
	netip.MustParsePrefix("192.0.0.0/24"),    // RFC 6890 IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // RFC 5737 TEST-NET-1
	netip.MustParsePrefix("192.168.0.0/16"),  // RFC 1918
	netip.MustParsePrefix("198.51.100.0/24"), // RFC 5737 TEST-NET-2
	netip.MustParsePrefix("203.0.113.0/24"),  // RFC 5737 TEST-NET-3
	netip.MustParsePrefix("255.255.255.255/32"),
	netip.MustParsePrefix("::/128"),
	netip.MustParsePrefix("::1/128"),
	netip.MustParsePrefix("fe80::/10"),
	netip.MustParsePrefix("fc00::/7"),
}

func isPrivate(a netip.Addr) bool {
	a = a.Unmap() // ::ffff:10.0.0.1 is 10.0.0.1
	for _, p := range privateNets {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
