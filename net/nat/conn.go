package nat

import (
	"net/netip"
	"runtime"
	"sync/atomic"
)

// tuple identifies one direction of a connection. For ICMP echo, sport is
// the identifier and dport the message type (8 request, 0 reply), so that
// an echo request never matches the reply side of another ping; other
// protocols without ports have both ports zero.
type tuple struct {
	src, dst     uint32
	sport, dport uint16
	proto        uint8
}

// is reports whether t equals k, field by field: == on the struct is a
// call to the generated equality function on mips32, about 20
// instructions per lookup (natbench).
func (t *tuple) is(k *tuple) bool {
	return t.src == k.src && t.dst == k.dst && t.sport == k.sport && t.dport == k.dport && t.proto == k.proto
}

// inverse is the tuple a packet answering t carries.
func (t tuple) inverse() tuple {
	if Proto(t.proto) == ProtoICMP {
		return tuple{src: t.dst, dst: t.src, sport: t.sport, dport: icmpEcho - t.dport, proto: t.proto}
	}
	return tuple{src: t.dst, dst: t.src, sport: t.dport, dport: t.sport, proto: t.proto}
}

func (t tuple) hash(seed uint32) uint32 {
	h := seed ^ t.src*0x9e3779b1
	h ^= t.dst * 0x85ebca77
	h ^= (uint32(t.sport)<<16 | uint32(t.dport)) * 0xc2b2ae3d
	h ^= uint32(t.proto)
	// murmur3's finaliser spreads every input bit over the bucket index.
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}

func addr4(a uint32) netip.Addr {
	return netip.AddrFrom4([4]byte{byte(a >> 24), byte(a >> 16), byte(a >> 8), byte(a)})
}

func u32(a netip.Addr) uint32 {
	b := a.As4()
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

// src and dst as address:port; ICMP echo shows the id as both ports.
func (t tuple) addrPorts() (src, dst netip.AddrPort) {
	sp, dp := t.sport, t.dport
	if Proto(t.proto) == ProtoICMP {
		dp = sp
	}
	return netip.AddrPortFrom(addr4(t.src), sp), netip.AddrPortFrom(addr4(t.dst), dp)
}

// TCPState is a TCP connection's tracking state (a simplification of
// Linux's nf_conntrack_proto_tcp.c states, RFC 9293 section 3.3.2).
type TCPState uint8

const (
	TCPNone TCPState = iota // not TCP
	TCPSynSent
	TCPSynRecv
	TCPEstablished
	TCPFinWait
	TCPCloseWait
	TCPLastAck
	TCPTimeWait
	TCPClose
)

var tcpStateNames = [...]string{"", "SYN_SENT", "SYN_RECV", "ESTABLISHED", "FIN_WAIT", "CLOSE_WAIT", "LAST_ACK", "TIME_WAIT", "CLOSE"}

func (s TCPState) String() string {
	if int(s) < len(tcpStateNames) {
		return tcpStateNames[s]
	}
	return "state?"
}

// Conn flags, read without the table's lock.
const (
	flagReplied uint32 = 1 << iota // a packet was seen in the reply direction
	flagAssured                    // TCP: handshake completed; UDP: stream (not evicted early)
)

// Hop is the next-hop cache of one direction of a connection, filled by the
// forward layer so an established flow needs no neighbour lookup.
//
// Gen ties the hop to one life of the Conn: Conn.Hop returns the current
// generation in it, and SetHop stores the hop only when h.Gen is the Conn's
// current generation. The rule for callers: take Gen from the Verdict that
// returned the Conn (Verdict.Gen), or from a Hop read from it, never make
// one up. Verdict.Hop and Verdict.SetHop do this for you.
type Hop struct {
	Valid    bool
	Out      Iface
	Dst, Src [6]byte // Ethernet destination and source
	Gen      uint32  // the Conn generation this hop belongs to
}

// hopCache is a seqlock over atomic words, so a reader never sees half a
// hop and never blocks: an even seq is stable, odd means a write is in
// progress. Plain atomics keep it clean for the race detector and 32-bit
// word atomics keep it cheap on MIPS32.
type hopCache struct {
	seq atomic.Uint32
	w   [5]atomic.Uint32 // valid|out|dst[0:2], dst[2:6], src[0:4], src[4:6], gen
}

// Conn is one tracked connection: a slot of the table's preallocated array.
// Slots are recycled; a *Conn held past its Verdict may describe a newer
// connection. Its generation (Gen) changes on every recycling, and the hop
// cache checks it, so a stale *Conn cannot give a new connection a wrong
// next hop. Other fields are only read through the table (Conns).
type Conn struct {
	gen   atomic.Uint32
	flags atomic.Uint32
	hop   [2]hopCache

	// Guarded by Table.mu.
	tuple   [2]tuple // as packets in each direction arrive
	next    [2]int32 // hash chain links of the two nodes
	self    int32    // this slot's index
	expires int64
	pkts    [2]uint64
	bytes   [2]uint64
	act     [2]Action // what to do with a packet in each direction: Forward, Local or Drop (Invalid)
	out     [2]Iface
	in      [2]Iface // where packets in each direction must arrive
	mss     uint16
	state   TCPState
	finDir  Dir  // direction of the first FIN
	used    bool // slot holds a connection
	local   bool // created by Output (the router is the originator)
	udpSeen uint8
}

// Gen is the connection's generation: it changes when the slot is recycled.
func (c *Conn) Gen() uint32 { return c.gen.Load() }

// Established reports whether a reply was seen (TCP: the SYN-ACK; UDP and
// ICMP: any reply).
func (c *Conn) Established() bool { return c.flags.Load()&flagReplied != 0 }

// Hop reads the next-hop cache of direction d. It returns Valid false when
// nothing is cached for the connection's current generation. It never
// blocks and never allocates.
func (c *Conn) Hop(d Dir) Hop {
	w0, w1, w2, w3, g := c.hop[d&1].load()
	cur := c.gen.Load()
	if g != cur || w0>>31 == 0 {
		return Hop{Gen: cur}
	}
	return Hop{
		Valid: true,
		Out:   Iface(w0 >> 16),
		Dst:   [6]byte{byte(w0 >> 8), byte(w0), byte(w1 >> 24), byte(w1 >> 16), byte(w1 >> 8), byte(w1)},
		Src:   [6]byte{byte(w2 >> 24), byte(w2 >> 16), byte(w2 >> 8), byte(w2), byte(w3 >> 24), byte(w3 >> 16)},
		Gen:   g,
	}
}

// load reads the cache's words consistently: a seqlock read, retried
// while SetHop writes (odd sequence) or if it wrote meanwhile.
func (hc *hopCache) load() (w0, w1, w2, w3, g uint32) {
	for {
		s := hc.seq.Load()
		if s&1 != 0 {
			runtime.Gosched()
			continue
		}
		w0, w1, w2, w3, g = hc.w[0].Load(), hc.w[1].Load(), hc.w[2].Load(), hc.w[3].Load(), hc.w[4].Load()
		if hc.seq.Load() == s {
			return w0, w1, w2, w3, g
		}
	}
}

// SetHop stores the next hop of direction d. It stores nothing when h.Gen
// is not the connection's current generation (the *Conn is stale: its
// slot now holds another connection). Setting a hop with Valid false
// clears the cache.
func (c *Conn) SetHop(d Dir, h Hop) {
	if h.Gen == 0 || h.Gen != c.gen.Load() {
		return
	}
	hc := &c.hop[d&1]
	var s uint32
	for {
		s = hc.seq.Load()
		if s&1 == 0 && hc.seq.CompareAndSwap(s, s+1) {
			break
		}
		runtime.Gosched()
	}
	var v uint32
	if h.Valid {
		v = 1 << 31
	}
	hc.w[0].Store(v | uint32(h.Out)<<16 | uint32(h.Dst[0])<<8 | uint32(h.Dst[1]))
	hc.w[1].Store(uint32(h.Dst[2])<<24 | uint32(h.Dst[3])<<16 | uint32(h.Dst[4])<<8 | uint32(h.Dst[5]))
	hc.w[2].Store(uint32(h.Src[0])<<24 | uint32(h.Src[1])<<16 | uint32(h.Src[2])<<8 | uint32(h.Src[3]))
	hc.w[3].Store(uint32(h.Src[4])<<24 | uint32(h.Src[5])<<16)
	hc.w[4].Store(h.Gen)
	hc.seq.Store(s + 2)
}

// Hop reads the hop cache of the verdict's connection in the verdict's
// direction; Valid is false if there is none or the connection has been
// recycled since the verdict.
func (v *Verdict) Hop() Hop {
	if v.Conn == nil {
		return Hop{}
	}
	h := v.Conn.Hop(v.Dir)
	if h.Gen != v.Gen {
		return Hop{}
	}
	return h
}

// PutHop writes the cached next hop of the verdict's connection and
// direction into the Ethernet header eth (destination and source MAC, 12
// bytes) and reports true, if there is one for the verdict's connection
// generation and its egress interface Out. Otherwise it reports false and
// leaves eth alone. It is Hop for the forwarding fast path: no Hop value
// is built and copied around.
func (v *Verdict) PutHop(eth []byte) bool {
	c := v.Conn
	if c == nil || len(eth) < 12 {
		return false
	}
	w0, w1, w2, w3, g := c.hop[v.Dir&1].load()
	// The Conn's current generation is v.Gen's while the cached one
	// is: SetHop stores only hops of the current generation.
	if g != v.Gen || g != c.gen.Load() || w0>>31 == 0 || Iface(w0>>16) != v.Out {
		return false
	}
	eth = eth[:12]
	eth[0], eth[1], eth[2], eth[3], eth[4], eth[5] = byte(w0>>8), byte(w0), byte(w1>>24), byte(w1>>16), byte(w1>>8), byte(w1)
	eth[6], eth[7], eth[8], eth[9], eth[10], eth[11] = byte(w2>>24), byte(w2>>16), byte(w2>>8), byte(w2), byte(w3>>24), byte(w3>>16)
	return true
}

// SetHop caches h for the verdict's connection and direction, unless the
// connection has been recycled since the verdict.
func (v *Verdict) SetHop(h Hop) {
	if v.Conn == nil {
		return
	}
	h.Gen = v.Gen
	v.Conn.SetHop(v.Dir, h)
}
