package nat

import (
	"errors"
	"math/rand/v2"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// Iface is an interface number the caller assigns (the forward layer uses
// 0 for lan, 1 for wan, ...). The engine only stores and returns it.
type Iface uint8

// Proto is an IP protocol number.
type Proto uint8

// The protocols the engine understands beyond their addresses (IANA
// "Assigned Internet Protocol Numbers").
const (
	ProtoICMP Proto = 1
	ProtoTCP  Proto = 6
	ProtoUDP  Proto = 17
)

// Dir is a packet's direction in its connection.
type Dir uint8

const (
	Original Dir = iota // the direction of the packet that created the connection
	Reply               // the other direction
)

func (d Dir) String() string {
	if d == Original {
		return "original"
	}
	return "reply"
}

// Action is what the caller does with a packet.
type Action uint8

const (
	Drop    Action = iota // drop; Verdict.Reason says why (counted in Stats)
	Forward               // packet rewritten in place (NAT, TTL-1, checksums, MSS clamp); send it out Verdict.Out
	Local                 // for the router itself: deliver to its stack
	Reject                // drop and answer: the caller builds the answer with TCPReset / ICMPError
)

func (a Action) String() string {
	switch a {
	case Drop:
		return "drop"
	case Forward:
		return "forward"
	case Local:
		return "local"
	case Reject:
		return "reject"
	}
	return "action?"
}

// DropReason says why a packet was dropped or rejected.
type DropReason uint8

const (
	ReasonNone  DropReason = iota // not dropped
	Malformed                     // IPv4/TCP/UDP/ICMP header lengths do not add up
	TTLExceeded                   // TTL <= 1 on Forward: the caller sends ICMP time exceeded (packet untouched)
	TableFull                     // no free entry and none evictable
	NoPort                        // no free masquerade port (or the reply tuple is taken and cannot be changed)
	Invalid                       // does not fit the connection's state, cannot start one, or an ICMP error about nothing tracked
	Denied                        // the Policy said Drop or Reject (named so as not to clash with the Policy interface)
	Fragment                      // a later IPv4 fragment whose first one did not pass or was forgotten, not for the router (see the package doc)
	BadChecksum                   // the IPv4 header checksum is wrong (RFC 1812 section 5.2.2: a router verifies it)
	NumDropReasons
)

var reasonNames = [NumDropReasons]string{"none", "malformed", "ttl-exceeded", "table-full", "no-port", "invalid", "denied", "fragment", "bad-checksum"}

func (r DropReason) String() string {
	if r < NumDropReasons {
		return reasonNames[r]
	}
	return "reason?"
}

// Request is the first packet of a would-be connection, as the policy sees it.
type Request struct {
	In       Iface
	Proto    Proto
	Src, Dst netip.AddrPort // TCP/UDP ports; ICMP echo: the id in both ports; others 0
	ICMPType uint8
	ICMPCode uint8
}

// Decision is a Policy's answer.
type Decision struct {
	Action Action         // Forward, Local, Drop or Reject
	Out    Iface          // for Forward
	SNAT   netip.Addr     // masquerade to this address (port-preserving when free, else a port from Config.PortRange); zero = no SNAT
	DNAT   netip.AddrPort // rewrite the destination (port forward); zero = none; port 0 keeps the port
	MSS    uint16         // clamp the MSS option of TCP SYNs in both directions to this; 0 = no clamp
}

// Policy decides the fate of a packet that matches no connection. It is
// called on the slow path only, without the table's lock held, possibly
// from several goroutines at once, and must not retain req. When the
// decision is Forward a connection entry is created, so later packets in
// either direction never call the policy. Local, Drop and Reject create no
// entry.
type Policy interface{ Decide(req *Request) Decision }

// Timeouts are the idle times after which a connection in a state expires.
// Zero fields take the defaults (DefaultTimeouts).
type Timeouts struct {
	TCPSynSent, TCPSynRecv, TCPEstablished, TCPFinWait time.Duration
	TCPCloseWait, TCPLastAck, TCPTimeWait, TCPClose    time.Duration
	UDP, UDPStream, ICMP                               time.Duration
	Generic                                            time.Duration // protocols other than TCP, UDP and ICMP
	Fragment                                           time.Duration // how long the fragments of a datagram may trail its first one
}

// DefaultTimeouts are Linux nf_conntrack's values with OpenWrt's overrides.
//   - TCP states: net/netfilter/nf_conntrack_proto_tcp.c, tcp_timeouts[]
//     (SYN_SENT 2 min, SYN_RECV 60 s, FIN_WAIT 2 min, CLOSE_WAIT 60 s,
//     LAST_ACK 30 s, TIME_WAIT 2 min, CLOSE 10 s); ESTABLISHED is 5 days
//     there, OpenWrt sets 7440 s (package/kernel/linux/files/sysctl-nf-conntrack.conf,
//     nf_conntrack_tcp_timeout_established) so that it outlives a 2 h TCP keepalive.
//   - UDP: nf_conntrack_proto_udp.c has 30 s / 120 s (stream); OpenWrt's
//     sysctl-nf-conntrack.conf sets nf_conntrack_udp_timeout=60 and
//     nf_conntrack_udp_timeout_stream=180.
//   - ICMP: nf_conntrack_proto_icmp.c, 30 s.
//   - Generic (other protocols): nf_conntrack_proto_generic.c, 600 s.
//   - Fragment: Linux keeps an incomplete datagram's fragments for
//     ipfrag_time, 30 s (Documentation/networking/ip-sysctl.rst; RFC 791
//     section 3.2 suggested 15 s for the reassembly timer).
var DefaultTimeouts = Timeouts{
	TCPSynSent:     2 * time.Minute,
	TCPSynRecv:     60 * time.Second,
	TCPEstablished: 7440 * time.Second,
	TCPFinWait:     2 * time.Minute,
	TCPCloseWait:   60 * time.Second,
	TCPLastAck:     30 * time.Second,
	TCPTimeWait:    2 * time.Minute,
	TCPClose:       10 * time.Second,
	UDP:            60 * time.Second,
	UDPStream:      180 * time.Second,
	ICMP:           30 * time.Second,
	Generic:        600 * time.Second,
	Fragment:       30 * time.Second,
}

// DefaultMaxConns sizes the table for a 32 MiB board. An entry (Conn) is
// 156 bytes on 32-bit MIPS (TestConnSize logs the figure) plus 4 bytes of
// bucket array, so 8192 entries take 1.3 MiB, 4% of RAM, allocated once
// at New. That is far more flows than a household keeps open (browsers
// keep tens, a BitTorrent client a few hundred), and eviction of
// unestablished entries keeps a SYN or UDP flood from locking others out.
// Linux sizes its default table from RAM too (nf_conntrack_core.c,
// nf_conntrack_init_start); a 64 MiB board can double this.
const DefaultMaxConns = 8192

// Default masquerade port range: the whole non-privileged range, as the
// task asks; port-preserving allocation usually keeps the host's port.
const (
	DefaultPortLow  = 1024
	DefaultPortHigh = 65535
)

// Config configures a Table.
type Config struct {
	MaxConns  int          // table size; 0 = DefaultMaxConns
	MaxFrags  int          // fragment table size (datagrams in flight, rounded up to a power of two, at least 4); 0 = DefaultMaxFrags
	Timeouts  Timeouts     // zero fields = DefaultTimeouts
	PortRange [2]uint16    // masquerade ports (and ICMP echo ids), inclusive; zero = 1024..65535
	Now       func() int64 // monotonic nanoseconds; nil = a monotonic clock
}

// Stats are a Table's counters, read without its lock.
type Stats struct {
	Conns   int                    // entries in use (expired ones count until a lookup or sweep reclaims them)
	Max     int                    // table size
	Created uint64                 // entries created (Forward and Output)
	Expired uint64                 // entries reclaimed after their timeout
	Evicted uint64                 // unestablished entries dropped to make room
	Flushed uint64                 // entries removed by Flush or SetAddress
	Policy  uint64                 // Policy.Decide calls
	Drops   [NumDropReasons]uint64 // Drop and Reject verdicts by reason

	FragTracked uint64 // first fragments recorded for their datagram's other fragments to follow
	FragEvicted uint64 // fragment table entries replaced while their datagram was still under way (table full)
}

// ErrConfig reports an unusable Config.
var ErrConfig = errors.New("nat: bad config")

// maxMaxConns keeps slot numbers (and node numbers, twice as many) in an int32.
const maxMaxConns = 1 << 24

// Table is the connection tracking table and NAT engine.
type Table struct {
	policy  Policy
	now     func() int64
	tmo     [numTimeouts]int64
	portLo  uint16
	portHi  uint16
	seed    uint32
	reqPool sync.Pool // *Request handed to the policy (an interface call would make a stack Request escape)

	mu       sync.Mutex
	conns    []Conn
	buckets  []int32 // head node of each chain, -1 = empty; node = slot<<1 | dir
	mask     uint32
	free     int32 // free list through next[0], -1 = empty
	sweepPos uint32
	frags    []fragEntry // the fragment table: sets of fragWays entries (frag.go)
	fragMask uint32      // sets - 1
	fragTmo  int64

	inUse                                    atomic.Int64
	created, expired, evicted, flushed, pols atomic.Uint64
	drops                                    [NumDropReasons]atomic.Uint64
	fragTracked, fragEvicted                 atomic.Uint64
}

// New makes a Table. The Policy decides packets that match no connection.
func New(cfg Config, p Policy) (*Table, error) {
	if p == nil {
		return nil, ErrConfig
	}
	n := cfg.MaxConns
	if n == 0 {
		n = DefaultMaxConns
	}
	if n < 1 || n > maxMaxConns {
		return nil, ErrConfig
	}
	nf := cfg.MaxFrags
	if nf == 0 {
		nf = DefaultMaxFrags
	}
	if nf < 0 || nf > maxMaxFrags {
		return nil, ErrConfig
	}
	lo, hi := cfg.PortRange[0], cfg.PortRange[1]
	if lo == 0 && hi == 0 {
		lo, hi = DefaultPortLow, DefaultPortHigh
	}
	if lo == 0 || hi < lo {
		return nil, ErrConfig
	}
	t := &Table{policy: p, now: cfg.Now, portLo: lo, portHi: hi, seed: rand.Uint32()}
	if t.now == nil {
		start := time.Now()
		t.now = func() int64 { return int64(time.Since(start)) } // time.Since reads the monotonic clock
	}
	t.setTimeouts(cfg.Timeouts)
	t.reqPool.New = func() any { return new(Request) }
	nb := 1
	for nb < n {
		nb <<= 1
	}
	t.conns = make([]Conn, n)
	t.buckets = make([]int32, nb)
	t.mask = uint32(nb - 1)
	sets := 1
	for sets*fragWays < nf {
		sets <<= 1
	}
	t.frags = make([]fragEntry, sets*fragWays)
	t.fragMask = uint32(sets - 1)
	t.mu.Lock()
	t.resetLocked()
	t.mu.Unlock()
	return t, nil
}

const (
	tmoSynSent = iota
	tmoSynRecv
	tmoEstablished
	tmoFinWait
	tmoCloseWait
	tmoLastAck
	tmoTimeWait
	tmoClose
	tmoUDP
	tmoUDPStream
	tmoICMP
	tmoGeneric
	numTimeouts
)

func (t *Table) setTimeouts(c Timeouts) {
	d := DefaultTimeouts
	pick := func(v, def time.Duration) int64 {
		if v > 0 {
			return int64(v)
		}
		return int64(def)
	}
	t.tmo = [numTimeouts]int64{
		pick(c.TCPSynSent, d.TCPSynSent), pick(c.TCPSynRecv, d.TCPSynRecv),
		pick(c.TCPEstablished, d.TCPEstablished), pick(c.TCPFinWait, d.TCPFinWait),
		pick(c.TCPCloseWait, d.TCPCloseWait), pick(c.TCPLastAck, d.TCPLastAck),
		pick(c.TCPTimeWait, d.TCPTimeWait), pick(c.TCPClose, d.TCPClose),
		pick(c.UDP, d.UDP), pick(c.UDPStream, d.UDPStream), pick(c.ICMP, d.ICMP),
		pick(c.Generic, d.Generic),
	}
	t.fragTmo = pick(c.Fragment, d.Fragment)
}

// Stats returns the counters.
func (t *Table) Stats() Stats {
	s := Stats{
		Conns:   int(t.inUse.Load()),
		Max:     len(t.conns),
		Created: t.created.Load(),
		Expired: t.expired.Load(),
		Evicted: t.evicted.Load(),
		Flushed: t.flushed.Load(),
		Policy:  t.pols.Load(),

		FragTracked: t.fragTracked.Load(),
		FragEvicted: t.fragEvicted.Load(),
	}
	for i := range s.Drops {
		s.Drops[i] = t.drops[i].Load()
	}
	return s
}
