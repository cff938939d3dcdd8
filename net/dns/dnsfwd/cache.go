package dnsfwd

import (
	"encoding/binary"
	"sync"
	"time"
)

// entry is one cached answer, kept in wire format as the upstream sent it
// (ID zeroed, OPT removed). Entries never change once built, so a
// reader may use one after the cache has evicted it.
type entry struct {
	key     string
	msg     []byte   // header, question, answer/authority/additional without OPT
	qEnd    int      // offset after the question in msg
	ttlOffs []uint16 // offsets of every record's TTL field in msg
	ttls    []uint32 // those TTLs as received
	stored  time.Time
	expires time.Time
	prev    *entry // LRU list, most recent at head.next
	next    *entry
}

func (e *entry) size() int { return len(e.msg) + len(e.key) + 6*len(e.ttlOffs) + entryOverhead }

// entryOverhead approximates an entry's fixed cost in bytes: the struct,
// the map slot and the slice headers, so CacheBytes bounds real memory.
const entryOverhead = 160

// cache is a bounded LRU of answers keyed by (qname lowercased, qtype,
// qclass, DO, CD). Both its entry count and its bytes are bounded.
type cache struct {
	mu       sync.Mutex
	m        map[string]*entry
	head     entry // sentinel of the LRU ring
	bytes    int
	maxN     int
	maxBytes int
	evicted  uint64
}

func newCache(maxN, maxBytes int) *cache {
	c := &cache{m: make(map[string]*entry, maxN), maxN: maxN, maxBytes: maxBytes}
	c.head.next, c.head.prev = &c.head, &c.head
	return c
}

func (c *cache) unlink(e *entry) {
	e.prev.next, e.next.prev = e.next, e.prev
	e.prev, e.next = nil, nil
}

func (c *cache) pushFront(e *entry) {
	e.prev, e.next = &c.head, c.head.next
	c.head.next.prev = e
	c.head.next = e
}

func (c *cache) remove(e *entry) {
	c.unlink(e)
	delete(c.m, e.key)
	c.bytes -= e.size()
}

// get returns the live entry for key, or nil. The map index with a
// converted []byte does not allocate.
func (c *cache) get(key []byte, now time.Time) *entry {
	c.mu.Lock()
	e := c.m[string(key)]
	if e != nil {
		if !now.Before(e.expires) {
			c.remove(e)
			e = nil
		} else {
			c.unlink(e)
			c.pushFront(e)
		}
	}
	c.mu.Unlock()
	return e
}

// put stores e, replacing an entry with its key, and evicts the least
// recently used entries until both bounds hold.
func (c *cache) put(e *entry) {
	if c.maxN <= 0 || e.size() > c.maxBytes/8 {
		return // one answer may not take more than an eighth of the cache
	}
	c.mu.Lock()
	if old := c.m[e.key]; old != nil {
		c.remove(old)
	}
	c.m[e.key] = e
	c.pushFront(e)
	c.bytes += e.size()
	for len(c.m) > c.maxN || c.bytes > c.maxBytes {
		c.remove(c.head.prev)
		c.evicted++
	}
	c.mu.Unlock()
}

func (c *cache) flush() {
	c.mu.Lock()
	clear(c.m)
	c.head.next, c.head.prev = &c.head, &c.head
	c.bytes = 0
	c.mu.Unlock()
}

func (c *cache) len() (n, bytes int, evicted uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m), c.bytes, c.evicted
}

// appendEntry appends e as the answer to q: the client's ID, flags and
// question spelling, every TTL lowered by the time e has been held
// (RFC 1035 §7.4 / RFC 2308 §5), and an OPT RR if the client sent one.
// If the answer does not fit limit it appends a truncated answer
// instead (header, question, OPT; TC set) so the client retries over
// TCP (RFC 1035 §4.2.1, RFC 7766 §5).
func appendEntry(out, in []byte, q *query, e *entry, limit int, now time.Time) ([]byte, bool) {
	an := int(binary.BigEndian.Uint16(e.msg[6:]))
	ns := int(binary.BigEndian.Uint16(e.msg[8:]))
	ar := int(binary.BigEndian.Uint16(e.msg[10:]))
	rcode := int(e.msg[3] & 0xF)
	size := len(e.msg)
	if q.edns {
		ar++
		size += optRRLen
	}
	if size > limit {
		n := 0
		if q.edns {
			n = 1
		}
		out = appendHeader(out, q, rcode, false, true, 1, 0, 0, n)
		out = append(out, in[headerLen:q.qEnd]...)
		if q.edns {
			out = appendOPT(out, rcode, q.do, false)
		}
		return out, true
	}
	start := len(out)
	out = appendHeader(out, q, rcode, false, false, 1, an, ns, ar)
	out = append(out, in[headerLen:q.qEnd]...)
	out = append(out, e.msg[e.qEnd:]...)
	held := now.Sub(e.stored)
	if held < 0 {
		held = 0
	}
	age := uint32(held / time.Second)
	for i, off := range e.ttlOffs {
		ttl := e.ttls[i]
		if ttl > age {
			ttl -= age
		} else {
			ttl = 0
		}
		binary.BigEndian.PutUint32(out[start+int(off):], ttl)
	}
	if q.edns {
		out = appendOPT(out, rcode, q.do, false)
	}
	return out, false
}
