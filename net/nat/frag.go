package nat

import (
	"encoding/binary"
	"math"
)

// Fragment tracking: the first fragment of a datagram carries the
// transport header and is tracked and translated like any packet; the
// others carry only an IP header and the datagram's middle or end. The
// first one leaves a fragEntry behind, keyed by the IP header fields that
// identify a datagram (RFC 791 section 3.2: source, destination,
// protocol, identification) as it arrived, that the later fragments find
// and follow: the same connection, direction and rewritten addresses.
//
// The table is set-associative: a key hashes to one set of fragWays
// entries, so a lookup reads at most fragWays entries and a full set
// replaces its oldest entry. It lives under Table.mu, beside the
// connections it points to.

const (
	// DefaultMaxFrags is the default size of the fragment table: the
	// fragmented datagrams in flight through the router at once. An
	// entry is freed when its datagram has passed, so it holds only
	// datagrams whose fragments are still on the way; 256 entries take
	// 12 KiB (TestFragmentConfig logs the figure).
	DefaultMaxFrags = 256
	// fragWays is the associativity of the fragment table.
	fragWays = 4
	// maxMaxFrags keeps the table small enough to preallocate.
	maxMaxFrags = 1 << 16
)

// fragKey identifies a datagram as its fragments arrive (RFC 791 section
// 3.2, "Identification").
type fragKey struct {
	src, dst uint32
	id       uint16
	proto    uint8
}

// fragEntry follows one fragmented datagram of a connection.
type fragEntry struct {
	expires  int64
	key      fragKey
	src, dst uint32 // the addresses the fragments leave with (Forward)
	slot     int32  // the connection's slot in Table.conns
	gen      uint32 // the connection's generation; 0 = free entry
	have     uint32 // payload bytes of the datagram seen so far
	total    uint32 // the datagram's payload length once its last fragment was seen, else 0
	dir      Dir
	act      Action // Forward or Local
}

func (p *packet) fragKey() fragKey {
	return fragKey{src: p.t.src, dst: p.t.dst, id: binary.BigEndian.Uint16(p.b[4:]), proto: p.t.proto}
}

// fragPayload is the fragment's data length and its offset in the
// datagram (RFC 791: the offset field counts 8-byte units).
func (p *packet) fragPayload() (off, n uint32) {
	f := binary.BigEndian.Uint16(p.b[ipOffFrag:])
	return uint32(f&ipFragOffset) * 8, uint32(len(p.b) - p.ihl)
}

func (p *packet) moreFragments() bool {
	return binary.BigEndian.Uint16(p.b[ipOffFrag:])&ipFlagMF != 0
}

// fragSet returns the set of entries k hashes to.
func (t *Table) fragSet(k fragKey) []fragEntry {
	h := tuple{src: k.src, dst: k.dst, sport: k.id, proto: k.proto}.hash(t.seed ^ 0x5bd1e995)
	i := int(h&t.fragMask) * fragWays
	return t.frags[i : i+fragWays]
}

// fragFind returns the entry of set that holds k, or nil.
func fragFind(set []fragEntry, k fragKey) *fragEntry {
	for i := range set {
		if set[i].gen != 0 && set[i].key == k {
			return &set[i]
		}
	}
	return nil
}

// fragAge orders the entries of a set for replacement: free and expired
// ones first, then the one closest to expiry (the oldest).
func fragAge(e *fragEntry, now int64) int64 {
	if e.gen == 0 || now-e.expires >= 0 {
		return math.MinInt64
	}
	return e.expires
}

// fragFirstLocked records p in the fragment table when it is a first
// fragment that passes (forwarded, or delivered to the router as part of
// one of its own connections).
func (t *Table) fragFirstLocked(p *packet, pl *plan, now int64) {
	if p.frag && (pl.v.Action == Forward || pl.v.Action == Local) && pl.v.Conn != nil {
		t.recordFragLocked(p, &pl.v, pl.to, now)
	}
}

// recordFragLocked remembers the first fragment p, which got verdict v
// (Forward or Local, with its connection) and leaves as tuple to, so that
// the datagram's other fragments follow it. A set with no free or expired
// entry gives up its oldest one (counted in Stats.FragEvicted; that
// datagram's remaining fragments are then dropped).
func (t *Table) recordFragLocked(p *packet, v *Verdict, to tuple, now int64) {
	k := p.fragKey()
	set := t.fragSet(k)
	e := fragFind(set, k) // the same datagram again (a duplicate), or its id reused
	if e == nil {
		e = &set[0]
		for i := range set {
			if fragAge(&set[i], now) < fragAge(e, now) {
				e = &set[i]
			}
		}
		if fragAge(e, now) != math.MinInt64 {
			t.fragEvicted.Add(1)
		}
	}
	_, n := p.fragPayload()
	*e = fragEntry{
		key: k, src: to.src, dst: to.dst, expires: now + t.fragTmo,
		slot: v.Conn.self, gen: v.Gen, have: n, dir: v.Dir, act: v.Action,
	}
	t.fragTracked.Add(1)
}

// fragment handles a fragment that carries no transport header (offset
// > 0), or a fragmented ICMP error. A fragment of a datagram whose first
// fragment passed (fragment table hit) follows it: same connection and
// direction, the same addresses rewritten, TTL - 1, the IP header
// checksum; its transport checksum needs nothing, the first fragment's
// update covers the whole datagram. Fragments that arrive before their
// first one are not held back: they find nothing and, unless the policy
// delivers them locally (the router's stack reassembles them), are
// dropped with reason Fragment.
func (t *Table) fragment(p *packet, in Iface) Verdict {
	if !p.firstFr {
		now := t.now()
		t.mu.Lock()
		v, to, ok := t.fragHitLocked(p, in, now)
		t.mu.Unlock()
		if ok {
			switch v.Action {
			case Forward:
				b := p.b
				binary.BigEndian.PutUint32(b[ipOffSrc:], to.src)
				binary.BigEndian.PutUint32(b[ipOffDst:], to.dst)
				b[ipOffTTL]--
				binary.BigEndian.PutUint16(b[ipOffCsum:], ipHeaderChecksum(b[:p.ihl]))
			case Drop:
				t.drops[v.Reason].Add(1)
			}
			return v
		}
	}
	if t.askAddrs(p, in) == Local {
		return Verdict{Action: Local}
	}
	return t.dropped(Drop, Fragment)
}

// fragHitLocked looks the fragment up in the fragment table. ok is false
// when no live entry of a live connection holds it. The returned tuple
// carries the addresses a Forward fragment leaves with.
func (t *Table) fragHitLocked(p *packet, in Iface, now int64) (v Verdict, to tuple, ok bool) {
	e := fragFind(t.fragSet(p.fragKey()), p.fragKey())
	if e == nil {
		return v, to, false
	}
	c := &t.conns[e.slot]
	if now-e.expires >= 0 || c.gen.Load() != e.gen || !c.used || now-c.expires >= 0 {
		// Expired, or its connection ended (its slot may hold another
		// one now): the datagram cannot be followed any more.
		e.gen = 0
		return v, to, false
	}
	d := e.dir
	v = Verdict{Action: e.act, Out: c.out[d], Conn: c, Dir: d, Gen: e.gen}
	switch {
	case in != c.in[d]:
		v.Action, v.Reason = Drop, Invalid
		return v, to, true
	case v.Action == Forward && p.b[ipOffTTL] <= 1:
		v.Action, v.Reason = Drop, TTLExceeded
		return v, to, true
	}
	c.pkts[d]++
	c.bytes[d] += uint64(len(p.b))
	off, n := p.fragPayload()
	e.have += n
	if !p.moreFragments() {
		e.total = off + n
	}
	if e.total != 0 && e.have >= e.total {
		// Every byte of the datagram has passed (duplicates counted
		// twice may free it early; their datagram is then lost, as
		// after any other loss).
		e.gen = 0
	}
	return v, tuple{src: e.src, dst: e.dst}, true
}

// resetFragsLocked empties the fragment table.
func (t *Table) resetFragsLocked() { clear(t.frags) }
