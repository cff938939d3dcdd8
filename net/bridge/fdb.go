package bridge

import (
	"sync"
	"sync/atomic"
	"time"
)

// fdb is the forwarding database: (VLAN, MAC) -> port, with aging. It is a
// fixed-size open-addressing hash table with a bounded probe length, so
// neither learning nor lookup ever allocates per frame, and a MAC-flooding
// attacker can at worst fill the table (further stations are flooded, as
// with a hardware ATU), never slow a lookup beyond maxProbe slots.
// Learning is independent per VLAN (IVL): the key includes the VID.
//
// Every ingress port's goroutine reads the table for every frame, so the
// common operations take no lock and, in the steady state, write nothing:
// a lock or a counter shared by the ports would move one cache line
// between CPUs on every frame, and with a TCP transfer's data and ACKs
// bridged on two CPUs that doubled the per-frame cost
// (BenchmarkBridgeBidirectional).
//
//   - A slot is three atomic 32-bit words: the key in two (hi: VID and
//     the MAC's first two bytes, never 0 since VID 0 is never learned;
//     lo: the MAC's last four bytes) and the value (port, liveness, time
//     last seen). Lookup is a lock-free probe. No word is 64 bits wide:
//     on 32-bit MIPS every 64-bit atomic takes the Go runtime's one
//     global spinlock, five of them per frame cost more than the rest of
//     the bridge's decision.
//   - Learning a station already in the table at the same port writes
//     only when its timestamp is more than refreshNS old, and then only
//     its value word, without a lock.
//   - A slot's key never changes while its table is in use. New stations
//     go into empty slots under mu, value first, then the key's lo word,
//     then its hi word: a reader that sees hi sees a valid lo and value.
//   - Aged-out and flushed entries keep their slot (flushed ones as
//     tombstones) until sweep builds a fresh table from the live entries
//     and publishes it with one pointer store. Readers still probing the
//     old table finish there; the garbage collector frees it once they
//     have. That is one allocation per sweep, at most twice per aging
//     period (or once a second while new stations find no free slot),
//     never one per frame.
//
// Races the design accepts: a refresh that lands in the old table while a
// sweep copies it is lost (the entry is then up to refreshNS older, or
// keeps its old port until the station's next frame), and a frame learned
// at the moment its port's link goes down may revive the flushed entry
// (frames for it are then flooded, because the bridge never sends to a
// port that is down). Neither misdelivers a frame to a wrong, working port
// for longer than it takes the station to send again.
type fdb struct {
	tab       atomic.Pointer[fdbTable]
	seed      uint64
	age       uint32        // entry lifetime, in time units (timeShift)
	lastSweep atomic.Uint32 // time of the last sweep, in time units (wrapping)

	mu   sync.Mutex // serialises inserts, flushes and sweeps
	full uint64     // learn attempts that found no slot (under mu)
}

type fdbTable struct {
	slots []fdbSlot
	mask  uint64
	shift uint // 64 - log2(table size)
}

// fdbSlot: the key vid<<48 | mac in hi (its upper word) and lo; hi is 0
// for an empty slot (VID 0 is never learned). val packs the entry (see
// pack).
type fdbSlot struct {
	hi, lo, val atomic.Uint32
}

// key returns the slot's key, 0 if it is empty.
func (s *fdbSlot) key() uint64 {
	h := s.hi.Load()
	if h == 0 {
		return 0
	}
	return uint64(h)<<32 | uint64(s.lo.Load())
}

// publish fills an empty slot (under fdb.mu): value, lo, then hi.
func (s *fdbSlot) publish(key uint64, v uint32) {
	s.val.Store(v)
	s.lo.Store(uint32(key))
	s.hi.Store(uint32(key >> 32))
}

// Time is kept in units of 2^timeShift ns (about 67 ms; 802.1D ages in
// seconds) in timeBits bits, wrapping: the value word is time last seen
// in bits 31..7, the port in 6..1 (MaxPorts is 64), valLive in bit 0.
const (
	timeShift = 26
	timeBits  = 25
	timeMask  = 1<<timeBits - 1
	valLive   = 1
	// maxAgeUnits bounds the ages a wrapping timestamp can tell apart:
	// a difference of half the range or more reads as "from the future"
	// (just seen). AgeTime may not exceed it, and a bridge silent for
	// longer forgets every station (sweep), so no timestamp is ever read
	// a whole wrap late.
	maxAgeUnits = 1 << (timeBits - 1)
	// refreshNS is how stale a known station's timestamp may get before
	// learning rewrites it: aging has a one-second granularity, like
	// 802.1D's.
	refreshNS = 1 << 30
	// refreshUnits is refreshNS in time units.
	refreshUnits = refreshNS >> timeShift
)

// MaxAgeTime is the longest FDB entry lifetime a bridge supports (Config.
// AgeTime), about 13 days.
const MaxAgeTime = time.Duration(maxAgeUnits) << timeShift

// units returns a time in ns as time units (wrapping at 2^32 units).
func units(now int64) uint32 { return uint32(uint64(now) >> timeShift) }

func pack(now int64, port uint8) uint32 {
	return units(now)&timeMask<<7 | uint32(port)<<1 | valLive
}

func valPort(v uint32) int { return int(v >> 1 & 0x3f) }

// seenAgo is how long ago, in time units, an entry was last seen. A
// timestamp from the future (another CPU's later clock read) counts as
// just seen.
func seenAgo(v uint32, now int64) uint32 {
	d := (units(now) - v>>7) & timeMask
	if d >= maxAgeUnits {
		return 0
	}
	return d
}

// maxProbe bounds per-frame table work.
const maxProbe = 16

// newFDB returns a table of size slots (rounded up to a power of two)
// whose entries live age ns (at most MaxAgeTime).
func newFDB(size int, age int64, seed uint64) *fdb {
	t := &fdb{seed: seed | 1, age: uint32(min(max(age>>timeShift, 1), maxAgeUnits-1))}
	t.tab.Store(newTable(size))
	return t
}

func newTable(size int) *fdbTable {
	n, bits := 1, uint(0)
	for n < size {
		n <<= 1
		bits++
	}
	return &fdbTable{slots: make([]fdbSlot, n), mask: uint64(n - 1), shift: 64 - bits}
}

func fdbKey(vid uint16, mac []byte) uint64 {
	return uint64(vid)<<48 | uint64(mac[0])<<40 | uint64(mac[1])<<32 |
		uint64(mac[2])<<24 | uint64(mac[3])<<16 | uint64(mac[4])<<8 | uint64(mac[5])
}

func (t *fdb) hash(tab *fdbTable, key uint64) uint64 {
	// Fibonacci hashing of the seeded key: the top bits of the product
	// depend on every key bit (MAC and VID alike). The per-bridge random
	// seed keeps an outsider from precomputing colliding MACs.
	return ((key ^ t.seed) * 0x9e3779b97f4a7c15) >> tab.shift
}

func (t *fdb) live(v uint32, now int64) bool {
	return v&valLive != 0 && seenAgo(v, now) < t.age
}

// slotCache remembers, for one ingress port, the slot of the station it
// last learned and of the destination it last found, so the next frame of
// the same conversation refreshes and finds them without hashing (a
// 64-bit multiply, a runtime sequence on mips32) or probing: about 100
// instructions per key (natbench). A slot's key never changes while its
// table is in use (see fdb), so a cached slot of the current table still
// holds its key, and it is the slot a probe would find first; a new table
// (sweep) empties the cache. Input is serialised per ingress port, so the
// cache needs no lock. (A port that falls silent after a sweep keeps the
// old table reachable until its next frame.)
type slotCache struct {
	tab            *fdbTable
	srcKey, dstKey uint64
	src, dst       *fdbSlot
}

// learnLookup records that src (key) was seen on port, then looks up dst.
// c is the ingress port's cache, nil for none.
func (t *fdb) learnLookup(src uint64, learn bool, port uint8, dst uint64, lookup bool, now int64, c *slotCache) (int, bool) {
	if units(now)-t.lastSweep.Load() >= t.age/2 {
		t.mu.Lock()
		if units(now)-t.lastSweep.Load() >= t.age/2 {
			t.sweepLocked(now)
		}
		t.mu.Unlock()
	}
	if c == nil {
		if learn {
			t.learn(src, port, now)
		}
		if lookup {
			return t.lookup(dst, now)
		}
		return -1, false
	}
	if tab := t.tab.Load(); c.tab != tab {
		*c = slotCache{tab: tab}
	}
	if learn {
		if c.src != nil && c.srcKey == src {
			t.refresh(c.src, port, now)
		} else if s := t.learn(src, port, now); s != nil {
			c.src, c.srcKey = s, src
		} else if tab := t.tab.Load(); c.tab != tab {
			*c = slotCache{tab: tab} // the insert swept
		}
	}
	if lookup {
		if c.dst != nil && c.dstKey == dst {
			if v := c.dst.val.Load(); t.live(v, now) {
				return valPort(v), true
			}
			return -1, false
		}
		s, p, ok := t.lookupSlot(dst, now)
		if s != nil {
			c.dst, c.dstKey = s, dst
		}
		return p, ok
	}
	return -1, false
}

// learnCached is learnLookup(src, true, port, 0, false, now, c), learning
// alone, for inputToHost: a station the port's cache holds, with no sweep
// due, is refreshed without learnLookup's call of eight arguments and its
// branches (about 25 instructions per frame on mips32, natbench).
func (t *fdb) learnCached(src uint64, port uint8, now int64, c *slotCache) {
	if c.src != nil && c.srcKey == src && c.tab == t.tab.Load() && units(now)-t.lastSweep.Load() < t.age/2 {
		t.refresh(c.src, port, now)
		return
	}
	t.learnLookup(src, true, port, 0, false, now, c)
}

// refresh records that the station in slot s was seen on port.
func (t *fdb) refresh(s *fdbSlot, port uint8, now int64) {
	v := s.val.Load()
	if v&valLive != 0 && valPort(v) == int(port) && seenAgo(v, now) < refreshUnits {
		return // known, here, recently: nothing to write
	}
	s.val.Store(pack(now, port)) // refresh, revival or station move
}

// learn records that key was seen on port. It returns the key's slot if
// the key was in the table already (nil if it inserted it: an insert may
// sweep, and the slot would then belong to the old table).
func (t *fdb) learn(key uint64, port uint8, now int64) *fdbSlot {
	tab := t.tab.Load()
	h := t.hash(tab, key)
	for i := uint64(0); i < maxProbe; i++ {
		s := &tab.slots[(h+i)&tab.mask]
		k := s.key()
		if k == 0 {
			break
		}
		if k == key {
			t.refresh(s, port, now)
			return s
		}
	}
	t.mu.Lock()
	t.insertLocked(key, port, now)
	t.mu.Unlock()
	return nil
}

// insertLocked adds key (or updates it, if another port inserted it
// meanwhile). If its probe window holds no empty slot but a dead one a
// sweep could free, it sweeps first, at most once a second.
func (t *fdb) insertLocked(key uint64, port uint8, now int64) {
	for try := 0; try < 2; try++ {
		tab := t.tab.Load()
		h := t.hash(tab, key)
		reclaimable := false
		for i := uint64(0); i < maxProbe; i++ {
			s := &tab.slots[(h+i)&tab.mask]
			switch k := s.key(); {
			case k == 0:
				s.publish(key, pack(now, port))
				return
			case k == key:
				s.val.Store(pack(now, port))
				return
			case !t.live(s.val.Load(), now):
				reclaimable = true
			}
		}
		if !reclaimable || try > 0 || units(now)-t.lastSweep.Load() < refreshUnits {
			break
		}
		t.sweepLocked(now)
	}
	t.full++
}

func (t *fdb) lookup(key uint64, now int64) (int, bool) {
	_, p, ok := t.lookupSlot(key, now)
	return p, ok
}

// lookupSlot is lookup that also returns key's slot, nil if the key is
// not in the table.
func (t *fdb) lookupSlot(key uint64, now int64) (*fdbSlot, int, bool) {
	tab := t.tab.Load()
	h := t.hash(tab, key)
	for i := uint64(0); i < maxProbe; i++ {
		s := &tab.slots[(h+i)&tab.mask]
		switch s.key() {
		case 0:
			return nil, -1, false
		case key:
			if v := s.val.Load(); t.live(v, now) {
				return s, valPort(v), true
			}
			return s, -1, false
		}
	}
	return nil, -1, false
}

// sweepLocked replaces the table by a fresh one holding only the live
// entries, which frees the slots of aged and flushed ones.
func (t *fdb) sweepLocked(now int64) {
	// Silent for longer than timestamps can tell: start empty rather
	// than read a timestamp a whole wrap late.
	silent := units(now)-t.lastSweep.Load() >= maxAgeUnits
	t.lastSweep.Store(units(now))
	old := t.tab.Load()
	tab := newTable(len(old.slots))
	for i := range old.slots {
		s := &old.slots[i]
		k, v := s.key(), s.val.Load()
		if k == 0 || silent || !t.live(v, now) {
			continue
		}
		h := t.hash(tab, k)
		for j := uint64(0); j < maxProbe; j++ {
			d := &tab.slots[(h+j)&tab.mask]
			if d.key() == 0 {
				d.publish(k, v)
				break
			}
		}
		// An entry whose window is full in the new table (it fitted in
		// the old one only thanks to a since-removed neighbour order)
		// is forgotten: the station is flooded to until it sends again.
	}
	t.tab.Store(tab)
}

// flushPort forgets every station learned on port (its link went down or
// its VLAN membership changed).
func (t *fdb) flushPort(port uint8) {
	t.mu.Lock()
	tab := t.tab.Load()
	for i := range tab.slots {
		s := &tab.slots[i]
		// CAS: a lock-free refresh that moved the station meanwhile wins.
		if v := s.val.Load(); s.key() != 0 && valPort(v) == int(port) {
			s.val.CompareAndSwap(v, v&^valLive)
		}
	}
	t.mu.Unlock()
}

// entries counts live entries (for tests and status pages).
func (t *fdb) entries(now int64) int {
	tab := t.tab.Load()
	n := 0
	for i := range tab.slots {
		s := &tab.slots[i]
		if s.key() != 0 && t.live(s.val.Load(), now) {
			n++
		}
	}
	return n
}
