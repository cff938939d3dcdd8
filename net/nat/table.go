package nat

import (
	"net/netip"
	"time"
)

// Verdict is what Forward decided about a packet.
type Verdict struct {
	Action Action
	Out    Iface
	Reason DropReason // for Drop and Reject
	Conn   *Conn      // the connection the packet belongs to (nil if none)
	Dir    Dir        // the packet's direction in Conn
	New    bool       // this packet created Conn
	Gen    uint32     // Conn's generation when the verdict was made (see Hop)
}

const (
	nilNode = -1
	// evictScanBuckets bounds the search for an entry to evict when the
	// table is full, like Linux's early_drop scan of a few buckets
	// (nf_conntrack_core.c), so a full table costs a bounded time per
	// new connection.
	evictScanBuckets = 32
	// sweepPerInsert is how many buckets each created connection sweeps
	// for expired entries, so expired entries are reclaimed in
	// proportion to new ones without a timer goroutine.
	sweepPerInsert = 4
	// maxPortTries bounds the search for a free masquerade port.
	maxPortTries = 128
)

// resetLocked empties the table.
func (t *Table) resetLocked() {
	for i := range t.buckets {
		t.buckets[i] = nilNode
	}
	for i := range t.conns {
		c := &t.conns[i]
		if c.used || c.gen.Load() == 0 {
			c.used = false
			t.bumpGen(c) // generations start at 1: 0 means none in a Hop
		}
		c.self = int32(i)
		c.next[0] = int32(i + 1)
	}
	t.conns[len(t.conns)-1].next[0] = nilNode
	t.free = 0
	t.inUse.Store(0)
	t.resetFragsLocked()
}

func (t *Table) bumpGen(c *Conn) {
	g := c.gen.Add(1)
	if g == 0 {
		c.gen.Add(1) // 0 means "no generation" in a Hop
	}
}

func (t *Table) bucket(k tuple) *int32 { return &t.buckets[k.hash(t.seed)&t.mask] }

// lookup returns the live connection holding k; an expired one is
// reclaimed and not returned.
// It walks the chain itself rather than call find: it runs for every
// packet, and a call costs a score of instructions on mips32.
func (t *Table) lookup(k tuple, now int64) (*Conn, Dir) {
	for n := *t.bucket(k); n != nilNode; {
		c := &t.conns[n>>1]
		d := Dir(n & 1)
		if c.tuple[d].is(&k) {
			if now-c.expires >= 0 {
				t.remove(c)
				t.expired.Add(1)
				return nil, 0
			}
			return c, d
		}
		n = c.next[d]
	}
	return nil, 0
}

// taken reports whether k is held by a live connection.
func (t *Table) taken(k tuple, now int64) bool {
	c, _ := t.lookup(k, now)
	return c != nil
}

// unlink removes node n (of connection c, direction d) from its chain.
func (t *Table) unlink(c *Conn, d Dir, n int32) {
	p := t.bucket(c.tuple[d])
	for *p != nilNode {
		if *p == n {
			*p = c.next[d]
			return
		}
		pc := &t.conns[*p>>1]
		p = &pc.next[*p&1]
	}
}

// remove frees connection c.
func (t *Table) remove(c *Conn) {
	i := c.self
	t.unlink(c, Original, i<<1)
	t.unlink(c, Reply, i<<1|1)
	c.used = false
	t.bumpGen(c)
	c.next[0] = t.free
	t.free = i
	t.inUse.Add(-1)
}

// insert links c (slot i) into both chains.
func (t *Table) insert(c *Conn, i int32) {
	for d := Original; d <= Reply; d++ {
		b := t.bucket(c.tuple[d])
		c.next[d] = *b
		*b = i<<1 | int32(d)
	}
}

// alloc takes a free slot, sweeping and evicting when needed. It returns
// nil when the table is full of connections that may not be evicted.
func (t *Table) alloc(k tuple, now int64) (*Conn, int32) {
	t.sweepLocked(sweepPerInsert, now)
	if t.free == nilNode {
		t.evict(k, now)
	}
	if t.free == nilNode {
		return nil, nilNode
	}
	i := t.free
	c := &t.conns[i]
	t.free = c.next[0]
	t.inUse.Add(1)
	return c, i
}

// evict frees one entry from the buckets near k's: an expired one if
// any, else the unassured one closest to expiry (Linux's early_drop).
func (t *Table) evict(k tuple, now int64) {
	h := k.hash(t.seed)
	var victim *Conn
	for i := uint32(0); i < evictScanBuckets && i <= t.mask; i++ {
		for n := t.buckets[(h+i)&t.mask]; n != nilNode; {
			c := &t.conns[n>>1]
			d := Dir(n & 1)
			n = c.next[d]
			if now-c.expires >= 0 {
				t.remove(c)
				t.expired.Add(1)
				return
			}
			if c.flags.Load()&flagAssured == 0 && (victim == nil || c.expires < victim.expires) {
				victim = c
			}
		}
	}
	if victim != nil {
		t.remove(victim)
		t.evicted.Add(1)
	}
}

// sweepLocked reclaims expired entries in the next n buckets.
func (t *Table) sweepLocked(n int, now int64) {
	for ; n > 0; n-- {
		b := t.sweepPos & t.mask
		t.sweepPos++
	rescan:
		for node := t.buckets[b]; node != nilNode; {
			c := &t.conns[node>>1]
			node = c.next[node&1]
			if now-c.expires >= 0 {
				// Removing c unlinks both its nodes, and the other may
				// be the next one in this chain: start the chain again.
				t.remove(c)
				t.expired.Add(1)
				goto rescan
			}
		}
	}
}

// Sweep reclaims every expired entry. Lookups reclaim the expired entries
// they meet and each new connection sweeps a few buckets, so Sweep is only
// needed for Stats.Conns to be exact; running it every few seconds from a
// housekeeping goroutine is plenty. It holds the lock for one pass over
// the table.
func (t *Table) Sweep() {
	now := t.now()
	t.mu.Lock()
	t.sweepLocked(len(t.buckets), now)
	t.mu.Unlock()
}

// Flush removes every connection.
func (t *Table) Flush() {
	t.mu.Lock()
	n := t.inUse.Load()
	t.resetLocked()
	t.mu.Unlock()
	t.flushed.Add(uint64(n))
}

// ForgetHops clears the cached next hops of every connection leaving by
// interface out, so that their next packets look the hop up again: the
// caller's neighbour changed (a new gateway, a link that came back up,
// possibly to another device). The connections themselves stay.
func (t *Table) ForgetHops(out Iface) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := range t.conns {
		c := &t.conns[i]
		if !c.used {
			continue
		}
		for d := Original; d <= Reply; d++ {
			if h := c.Hop(d); h.Valid && h.Out == out {
				c.SetHop(d, Hop{Gen: h.Gen})
			}
		}
	}
}

// SetAddress is called when the router's address old is replaced by new
// (a DHCP renewal on the WAN). Every connection that carries old as a
// source or destination in either direction (masqueraded to it, port
// forwarded from it, or the router's own) is removed: its peers answer
// an address the router no longer has. new is not needed to decide this;
// it is in the signature so the call reads as what happened.
func (t *Table) SetAddress(old, new netip.Addr) {
	if !old.Is4() || old == new {
		return
	}
	a := u32(old)
	t.mu.Lock()
	var n uint64
	for i := range t.conns {
		c := &t.conns[i]
		if !c.used {
			continue
		}
		o, r := c.tuple[Original], c.tuple[Reply]
		if o.src == a || o.dst == a || r.src == a || r.dst == a {
			t.remove(c)
			n++
		}
	}
	t.mu.Unlock()
	t.flushed.Add(n)
}

// ConnInfo is a snapshot of one connection for listings.
type ConnInfo struct {
	Proto       Proto
	State       TCPState // TCP only
	Orig, Reply struct {
		Src, Dst netip.AddrPort // as packets in this direction arrive
	}
	In, Out     Iface // original direction's input and output (Out = Reply's input)
	Local       bool  // the router's own connection (created by Output)
	Established bool
	Assured     bool
	Expires     time.Duration // time left
	Packets     [2]uint64     // per Dir
	Bytes       [2]uint64
}

// Conns calls yield for a snapshot of the live connections until it
// returns false; use it as `for c := range t.Conns`. It copies the table
// under the lock first (it allocates), so yield may call into the table.
func (t *Table) Conns(yield func(ConnInfo) bool) {
	now := t.now()
	t.mu.Lock()
	list := make([]ConnInfo, 0, t.inUse.Load())
	for i := range t.conns {
		c := &t.conns[i]
		if !c.used || now-c.expires >= 0 {
			continue
		}
		f := c.flags.Load()
		ci := ConnInfo{
			Proto: Proto(c.tuple[0].proto), State: c.state,
			In: c.in[Original], Out: c.out[Original], Local: c.local,
			Established: f&flagReplied != 0, Assured: f&flagAssured != 0,
			Expires: time.Duration(c.expires - now),
			Packets: c.pkts, Bytes: c.bytes,
		}
		ci.Orig.Src, ci.Orig.Dst = c.tuple[Original].addrPorts()
		ci.Reply.Src, ci.Reply.Dst = c.tuple[Reply].addrPorts()
		list = append(list, ci)
	}
	t.mu.Unlock()
	for _, ci := range list {
		if !yield(ci) {
			return
		}
	}
}
