// Package forward routes IPv4 between the router's interfaces (br-lan,
// the WAN port, later tunnels) beside the gVisor stack: the flow fast
// path of OpenWrt's software flow offload, with connection tracking, NAT
// and the firewall on its slow path.
//
// Each Iface sits between a lower NIC (the bridge's host port for br-lan,
// the WAN port's driver) and the router's stack endpoint above it, which
// sees the Iface as its NIC. Every IPv4 frame sent to the interface's MAC
// passes through the Forwarder first:
//
//   - frames for the router itself (its addresses, broadcasts) go up to
//     the stack as they came, after the firewall's input chain for the
//     zones that need one (the WAN);
//   - everything else is handed to the connection tracker (net/nat). A
//     packet of a known connection is rewritten there (NAT, TTL,
//     checksums) and, with the next hop's MAC cached in the connection,
//     sent straight out of the egress interface: one table lookup, no
//     firewall, no gVisor. That is the fast path.
//   - the first packet of a connection takes the slow path: nat asks the
//     Forwarder (its Policy) what to do, which routes the packet, runs the
//     firewall's forward chain and picks masquerading, port forwards and
//     MSS clamping; the next hop's MAC comes from the stack's neighbour
//     cache (ARP), once per connection and direction.
//
// gVisor's own forwarding, NAT and iptables are not used: its connection
// tracking is internal to the stack, so a flow table beside it could not
// share its state (ports chosen, TCP state), and its per-packet path
// through iptables allocates. gVisor serves the router's own sockets only.
//
// Frames the stack transmits on a tracked interface (the WAN) pass through
// the Iface too and are recorded as the router's own connections, so their
// replies are accepted by the WAN's input chain as established traffic.
//
// Copies. A frame forwarded from br-lan is the bridge's copy (a gVisor
// buffer the host port hands over by reference) and is rewritten in place
// unless someone else still reads it. A frame from a NIC port is borrowed
// and copied once into a pooled buffer. Either way the egress interface
// gets the buffer by reference: br-lan's ports share it, a NIC transmits
// from it. So a forwarded frame costs one copy and no allocation.
//
// When the egress NIC copies before Transmit returns (net.CapTxCopy:
// pcnet, the TAP device), the fast path takes the frame borrowed instead,
// from the driver or from br-lan (the Iface is the host port's
// bridge.LendHandler, so the bridge makes no copy of its own): it copies
// it into the ingress interface's own buffer, rewrites it there and the
// egress driver copies it into its ring. No gVisor buffer, whose pool
// lookup and 64-bit reference counts cost more than a copy on 32-bit
// MIPS; and for TCP and UDP, which nat rewrites in the headers alone, only
// the headers are copied when the egress NIC gathers: the payload goes
// from the ingress driver's buffer to the egress driver's ring, the one
// copy of the frame (processLent).
//
// No copy at all when br-lan's host port also offers the ingress
// driver's buffer (the Iface is a bridge.LendBufHandler) and the egress
// NIC sends such a buffer in place (net.CapTxRxBuf: pcnet to pcnet): the
// fast path keeps the buffer with the rewritten headers written over its
// own (net.RxBuf.KeepWith) and the egress chip sends it from there. Only
// frames with at least keepMinTail bytes after the headers go that way;
// for shorter ones the copy is cheaper than keeping.
package forward

import (
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"

	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/net/firewall"
	"github.com/gowrt/gowrt/net/nat"
)

// MaxIfaces bounds the interfaces of one Forwarder.
const MaxIfaces = 8

// Resolver finds the MAC address of a neighbour: the router's stack,
// whose ARP cache (and requests) serve the forwarding path too.
type Resolver interface {
	// Resolve calls done once with addr's MAC on the interface, or ok =
	// false when resolution failed. It may call done before returning
	// (a cached neighbour), or later from another goroutine; done must
	// not block.
	Resolve(i *Iface, addr, local netip.Addr, done func(mac gnet.MAC, ok bool))
}

// Config configures a Forwarder.
type Config struct {
	// NAT configures the connection tracking table (sizes, timeouts).
	NAT nat.Config
	// Rules is the firewall (required); SetRules replaces it.
	Rules *firewall.Ruleset
	// Resolver finds next hops' MAC addresses (required).
	Resolver Resolver
	// MaxPending bounds the frames held while their next hop is being
	// resolved (default 64); more are dropped and counted.
	MaxPending int
}

// Forwarder routes between its interfaces.
type Forwarder struct {
	table    *nat.Table
	rules    atomic.Pointer[firewall.Ruleset]
	resolver Resolver

	mu     sync.Mutex // guards ifaces' growth (appends happen before traffic) and locals' writes
	ifaces [MaxIfaces]*Iface
	n      atomic.Int32
	// locals holds every interface's address and subnet broadcast
	// address as big-endian words, rebuilt whenever an address changes:
	// isLocal4 reads it for every routed frame, and an atomic load per
	// interface cost about 35 instructions more on mips32 (natbench).
	locals atomic.Pointer[[]uint32]

	pending    atomic.Int32
	maxPending int32
	minMTU     atomic.Int32 // the smallest interface MTU

	Stats Stats
}

// Stats counts what the Forwarder did, without locks.
type Stats struct {
	Forwarded   gnet.Counter // packets sent out after a rewrite
	FastPath    gnet.Counter // of those, with the next hop cached in the connection
	Local       gnet.Counter // delivered to the router's stack
	NoRoute     gnet.Counter // no interface for the destination
	Rejected    gnet.Counter // answered with an ICMP error or a TCP reset
	Answers     gnet.Counter // ICMP errors / resets actually sent
	Unresolved  gnet.Counter // next hop did not answer ARP
	PendingFull gnet.Counter // dropped: too many frames already waiting for ARP
	TxErrors    gnet.Counter // egress NIC refused the frame (ring full, link down)
	TooBig      gnet.Counter // longer than the egress MTU: "fragmentation needed" sent (DF) or dropped
	InputDrop   gnet.Counter // the input chain dropped or rejected a packet for the router
}

// ErrConfig reports an invalid configuration.
var ErrConfig = errors.New("forward: invalid configuration")

// New builds a Forwarder and its connection table.
func New(cfg Config) (*Forwarder, error) {
	if cfg.Rules == nil || cfg.Resolver == nil {
		return nil, fmt.Errorf("%w: need a firewall ruleset and a resolver", ErrConfig)
	}
	if cfg.MaxPending <= 0 {
		cfg.MaxPending = 64
	}
	f := &Forwarder{resolver: cfg.Resolver, maxPending: int32(cfg.MaxPending)}
	f.rules.Store(cfg.Rules)
	t, err := nat.New(cfg.NAT, policy{f})
	if err != nil {
		return nil, fmt.Errorf("forward: %w", err)
	}
	f.table = t
	return f, nil
}

// Table returns the connection tracking table.
func (f *Forwarder) Table() *nat.Table { return f.table }

// Rules returns the firewall in use.
func (f *Forwarder) Rules() *firewall.Ruleset { return f.rules.Load() }

// SetRules replaces the firewall. Connections already tracked keep
// flowing (as on Linux, a rule change does not cut established
// connections); new ones see the new rules.
func (f *Forwarder) SetRules(r *firewall.Ruleset) {
	if r != nil {
		f.rules.Store(r)
	}
}

// iface returns interface id, or nil.
func (f *Forwarder) iface(id nat.Iface) *Iface {
	if int(id) >= int(f.n.Load()) {
		return nil
	}
	return f.ifaces[id]
}

// Ifaces returns the interfaces in the order they were added.
func (f *Forwarder) Ifaces() []*Iface {
	n := int(f.n.Load())
	return append([]*Iface(nil), f.ifaces[:n]...)
}

// isLocal reports whether a is one of the router's addresses, or a
// broadcast address of one of its subnets.
func (f *Forwarder) isLocal(a netip.Addr) bool {
	if !a.Is4() {
		return false
	}
	return f.isLocal4(addr4(a))
}

// isLocal4 is isLocal for an address as a big-endian word.
func (f *Forwarder) isLocal4(w uint32) bool {
	if w == 0xffffffff { // the limited broadcast
		return true
	}
	if ls := f.locals.Load(); ls != nil {
		for _, a := range *ls {
			if w == a {
				return true
			}
		}
	}
	return false
}

// refreshLocals rebuilds locals from the interfaces' addresses.
func (f *Forwarder) refreshLocals() {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ls []uint32
	for _, i := range f.ifaces[:f.n.Load()] {
		if ia := i.addr.Load(); ia != nil {
			ls = append(ls, ia.local, ia.bcast)
		}
	}
	f.locals.Store(&ls)
}

// route returns the interface and next hop for dst: the interface whose
// subnet holds it (longest prefix), else the default route.
func (f *Forwarder) route(dst netip.Addr) (*Iface, netip.Addr) {
	var best *Iface
	bits := -1
	var def *Iface
	n := int(f.n.Load())
	for _, i := range f.ifaces[:n] {
		p := i.prefix()
		if p.IsValid() && p.Contains(dst) && p.Bits() > bits {
			best, bits = i, p.Bits()
		}
		if def == nil && i.gateway().IsValid() {
			def = i
		}
	}
	if best != nil {
		return best, dst
	}
	if def != nil {
		return def, def.gateway()
	}
	return nil, netip.Addr{}
}
