package bridge

import "sync"

// fdb is the forwarding database: (VLAN, MAC) -> port, with aging. It is a
// fixed-size open-addressing hash table with a bounded probe length, so
// neither learning nor lookup ever allocates, and a MAC-flooding attacker
// can at worst fill the table (further stations are flooded, as with a
// hardware ATU), never slow a lookup beyond maxProbe slots. Learning is
// independent per VLAN (IVL): the key includes the VID.
//
// Expired and flushed entries stay in place as tombstones (so probe chains
// have no holes) until sweep rebuilds the table.
type fdb struct {
	mu        sync.Mutex
	slots     []fdbEntry
	scratch   []fdbEntry // sweep's rebuild area, preallocated
	mask      uint64
	shift     uint // 64 - log2(table size)
	seed      uint64
	age       int64 // entry lifetime, ns
	lastSweep int64
	full      uint64 // learn attempts that found no slot
}

type fdbEntry struct {
	key  uint64 // vid<<48 | mac
	seen int64  // last time the source was seen, ns
	port uint8
	used bool // slot holds an entry or a tombstone
	dead bool // flushed: a tombstone until the next sweep
}

// maxProbe bounds per-frame table work.
const maxProbe = 16

func newFDB(size int, age int64, seed uint64) *fdb {
	n, bits := 1, uint(0)
	for n < size {
		n <<= 1
		bits++
	}
	return &fdb{
		slots:   make([]fdbEntry, n),
		scratch: make([]fdbEntry, 0, n),
		mask:    uint64(n - 1),
		shift:   64 - bits,
		seed:    seed | 1,
		age:     age,
	}
}

func fdbKey(vid uint16, mac []byte) uint64 {
	return uint64(vid)<<48 | uint64(mac[0])<<40 | uint64(mac[1])<<32 |
		uint64(mac[2])<<24 | uint64(mac[3])<<16 | uint64(mac[4])<<8 | uint64(mac[5])
}

func (t *fdb) hash(key uint64) uint64 {
	// Fibonacci hashing of the seeded key: the top bits of the product
	// depend on every key bit (MAC and VID alike). The per-bridge random
	// seed keeps an outsider from precomputing colliding MACs.
	return ((key ^ t.seed) * 0x9e3779b97f4a7c15) >> t.shift
}

func (t *fdb) live(e *fdbEntry, now int64) bool {
	return !e.dead && now-e.seen < t.age
}

// learnLookup records that src (key) was seen on port, then looks up dst.
// Doing both under one lock acquisition keeps the per-frame cost to one
// uncontended mutex.
func (t *fdb) learnLookup(src uint64, learn bool, port uint8, dst uint64, lookup bool, now int64) (int, bool) {
	t.mu.Lock()
	if now-t.lastSweep >= t.age/2 {
		t.sweepLocked(now)
	}
	if learn {
		t.learnLocked(src, port, now)
	}
	out, ok := -1, false
	if lookup {
		out, ok = t.lookupLocked(dst, now)
	}
	t.mu.Unlock()
	return out, ok
}

func (t *fdb) learnLocked(key uint64, port uint8, now int64) {
	h := t.hash(key)
	var free *fdbEntry
	for i := uint64(0); i < maxProbe; i++ {
		e := &t.slots[(h+i)&t.mask]
		if !e.used {
			if free == nil {
				free = e
			}
			break
		}
		if e.key == key {
			e.port, e.seen, e.dead = port, now, false // refresh, or station moved
			return
		}
		if free == nil && !t.live(e, now) {
			free = e
		}
	}
	if free == nil {
		t.full++
		return
	}
	*free = fdbEntry{key: key, seen: now, port: port, used: true}
}

func (t *fdb) lookupLocked(key uint64, now int64) (int, bool) {
	h := t.hash(key)
	for i := uint64(0); i < maxProbe; i++ {
		e := &t.slots[(h+i)&t.mask]
		if !e.used {
			return -1, false
		}
		if e.key == key {
			if t.live(e, now) {
				return int(e.port), true
			}
			return -1, false
		}
	}
	return -1, false
}

// sweepLocked rebuilds the table without expired entries, turning
// tombstones back into free slots. O(table size), no allocation; run at
// most twice per aging period.
func (t *fdb) sweepLocked(now int64) {
	t.lastSweep = now
	t.scratch = t.scratch[:0]
	for i := range t.slots {
		if e := &t.slots[i]; e.used && t.live(e, now) {
			t.scratch = append(t.scratch, *e)
		}
	}
	clear(t.slots)
	for i := range t.scratch {
		e := &t.scratch[i]
		t.learnLocked(e.key, e.port, e.seen)
	}
}

// flushPort forgets every station learned on port (its link went down or
// its VLAN membership changed).
func (t *fdb) flushPort(port uint8) {
	t.mu.Lock()
	for i := range t.slots {
		if e := &t.slots[i]; e.used && e.port == port {
			e.dead = true
		}
	}
	t.mu.Unlock()
}

// entries counts live entries (for tests and status pages).
func (t *fdb) entries(now int64) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for i := range t.slots {
		if e := &t.slots[i]; e.used && t.live(e, now) {
			n++
		}
	}
	return n
}
