package bridge

import (
	"sync"
	"sync/atomic"
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
//   - A slot is two atomic words, key and value (port, liveness, time
//     last seen). Lookup is a lock-free probe.
//   - Learning a station already in the table at the same port writes
//     only when its timestamp is more than refreshNS old, and then only
//     its value word, without a lock.
//   - A slot's key never changes while its table is in use. New stations
//     go into empty slots under mu, value first, then key: a reader that
//     sees the key sees a valid value.
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
	age       int64 // entry lifetime, ns
	lastSweep atomic.Int64

	mu   sync.Mutex // serialises inserts, flushes and sweeps
	full uint64     // learn attempts that found no slot (under mu)
}

type fdbTable struct {
	slots []fdbSlot
	mask  uint64
	shift uint // 64 - log2(table size)
}

// fdbSlot: key is vid<<48 | mac, 0 for an empty slot (VID 0 is never
// learned, so no station has key 0); val packs the entry (see pack).
type fdbSlot struct {
	key, val atomic.Uint64
}

// Value word: time last seen in units of 2^timeShift ns (about 1 ms) in
// bits 63..16, the port in 15..8, flags in 7..0.
const (
	timeShift = 20
	valLive   = 1 // learned and not flushed
	// refreshNS is how stale a known station's timestamp may get before
	// learning rewrites it: aging has a one-second granularity, like
	// 802.1D's.
	refreshNS = 1 << 30
)

func pack(now int64, port uint8) uint64 {
	return uint64(now)>>timeShift<<16 | uint64(port)<<8 | valLive
}

func valPort(v uint64) int { return int(v >> 8 & 0xff) }

// seenAgo is how long ago (ns, to 2^timeShift) an entry was last seen.
// A timestamp from the future (another CPU's later clock read) counts as
// just seen.
func seenAgo(v uint64, now int64) int64 {
	return (int64(uint64(now)>>timeShift) - int64(v>>16)) << timeShift
}

// maxProbe bounds per-frame table work.
const maxProbe = 16

func newFDB(size int, age int64, seed uint64) *fdb {
	t := &fdb{seed: seed | 1, age: age}
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

func (t *fdb) live(v uint64, now int64) bool {
	return v&valLive != 0 && seenAgo(v, now) < t.age
}

// learnLookup records that src (key) was seen on port, then looks up dst.
func (t *fdb) learnLookup(src uint64, learn bool, port uint8, dst uint64, lookup bool, now int64) (int, bool) {
	if now-t.lastSweep.Load() >= t.age/2 {
		t.mu.Lock()
		if now-t.lastSweep.Load() >= t.age/2 {
			t.sweepLocked(now)
		}
		t.mu.Unlock()
	}
	if learn {
		t.learn(src, port, now)
	}
	if lookup {
		return t.lookup(dst, now)
	}
	return -1, false
}

func (t *fdb) learn(key uint64, port uint8, now int64) {
	tab := t.tab.Load()
	h := t.hash(tab, key)
	for i := uint64(0); i < maxProbe; i++ {
		s := &tab.slots[(h+i)&tab.mask]
		k := s.key.Load()
		if k == 0 {
			break
		}
		if k == key {
			v := s.val.Load()
			if v&valLive != 0 && valPort(v) == int(port) && seenAgo(v, now) < refreshNS {
				return // known, here, recently: nothing to write
			}
			s.val.Store(pack(now, port)) // refresh, revival or station move
			return
		}
	}
	t.mu.Lock()
	t.insertLocked(key, port, now)
	t.mu.Unlock()
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
			switch k := s.key.Load(); {
			case k == 0:
				s.val.Store(pack(now, port))
				s.key.Store(key) // publishes the slot
				return
			case k == key:
				s.val.Store(pack(now, port))
				return
			case !t.live(s.val.Load(), now):
				reclaimable = true
			}
		}
		if !reclaimable || try > 0 || now-t.lastSweep.Load() < refreshNS {
			break
		}
		t.sweepLocked(now)
	}
	t.full++
}

func (t *fdb) lookup(key uint64, now int64) (int, bool) {
	tab := t.tab.Load()
	h := t.hash(tab, key)
	for i := uint64(0); i < maxProbe; i++ {
		s := &tab.slots[(h+i)&tab.mask]
		switch s.key.Load() {
		case 0:
			return -1, false
		case key:
			if v := s.val.Load(); t.live(v, now) {
				return valPort(v), true
			}
			return -1, false
		}
	}
	return -1, false
}

// sweepLocked replaces the table by a fresh one holding only the live
// entries, which frees the slots of aged and flushed ones.
func (t *fdb) sweepLocked(now int64) {
	t.lastSweep.Store(now)
	old := t.tab.Load()
	tab := newTable(len(old.slots))
	for i := range old.slots {
		s := &old.slots[i]
		k, v := s.key.Load(), s.val.Load()
		if k == 0 || !t.live(v, now) {
			continue
		}
		h := t.hash(tab, k)
		for j := uint64(0); j < maxProbe; j++ {
			d := &tab.slots[(h+j)&tab.mask]
			if d.key.Load() == 0 {
				d.val.Store(v)
				d.key.Store(k)
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
		if v := s.val.Load(); s.key.Load() != 0 && valPort(v) == int(port) {
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
		if s.key.Load() != 0 && t.live(s.val.Load(), now) {
			n++
		}
	}
	return n
}
