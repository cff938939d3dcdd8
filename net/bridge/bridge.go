// Package bridge is gowrt's software Ethernet bridge: the fast path that
// moves frames between LAN ports without entering the gVisor stack.
//
// It is an IEEE 802.1Q VLAN-aware learning bridge (the model of Linux's
// bridge with vlan_filtering=1):
//
//   - every port has a PVID (the VLAN of untagged and priority-tagged
//     ingress frames; 0 = untagged frames are dropped) and a set of VLANs
//     it is a member of, each either tagged or untagged on egress;
//   - frames of a VLAN the ingress port is not a member of are dropped;
//   - source addresses are learned per VLAN with aging; known unicast goes
//     to one port, unknown unicast, broadcast and multicast are flooded to
//     the VLAN's member ports;
//   - no frame ever leaves through its ingress port (hairpin), frames
//     carrying the bridge's own MAC as source from outside (a loop) and
//     malformed frames are counted and dropped; IEEE 802.1D link-local
//     frames (01:80:C2:00:00:0x, e.g. STP BPDUs) are never forwarded, only
//     delivered to the host port.
//
// The router's own gVisor stack joins as the host port (AddHostPort),
// whose net.NIC is then wrapped by netstack.NewEndpoint.
//
// Per-frame work does not allocate: parsing uses offsets, the forwarding
// database is a fixed-size table, configuration is an immutable snapshot
// read with one atomic load, egress re-tagging writes into a per-port
// scratch header, and frame buffers come from gVisor's pools.
//
// Copies. A driver lends the bridge its receive buffer for the duration of
// Receive (the net.Handler contract). Ports that keep a frame beyond that
// (NIC ports, whose transmission completes later, and the host port, whose
// stack queues packets) share one copy of it: the first of them to need
// the frame copies it into a pooled, refcounted gVisor buffer, and each
// takes a reference (the last one, and the host port is served last,
// takes over the bridge's own); egress re-tagging sends a private header
// in front of the shared payload. So a forwarded frame, flooded to any number of ports and the
// router's stack or not, costs one copy, and a dropped frame none. A
// re-tagged frame for a NIC that cannot gather, or for the host port, gets
// a flat copy of its own instead. gVisor parses a frame in place when it
// holds the only reference, and copies the headers it parses (copy-on-
// write) when a NIC is still transmitting the same buffer: a flooded frame
// can cost the stack a second copy, a frame for the router alone never
// does (see HostNIC). Ports added with AddPort only borrow the frame
// (Link.Send), and so does a NIC that copies the frame before Transmit
// returns (net.CapTxCopy: pcnet, the TAP device): it is lent the driver's
// receive buffer itself, so a frame forwarded between such NICs costs the
// bridge no copy and no buffer at all (the egress driver's copy into its
// ring is the only one). And a driver that offers its receive buffers for
// keeping (net.BufHandler) gets no copy at all for a frame forwarded
// unchanged to a NIC that sends such buffers in place (net.CapTxRxBuf):
// the egress port, the last to get the frame, keeps the buffer and
// transmits it. The host port offers that buffer to a LendBufHandler (the
// router's forwarding layer), which may keep it to send a routed frame.
//
// There is no spanning tree: the default configuration (one bridge over
// the LAN ports) creates no loop, and a loop made by cabling shows up as
// ReasonOwnSource drops of the host port's own frames.
package bridge

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	gnet "github.com/gowrt/gowrt/net"
	"golang.org/x/sys/cpu"
	"gvisor.dev/gvisor/pkg/buffer"
)

// MaxPorts is the number of ports a bridge can have (bitmask width).
const MaxPorts = 64

// Link is a bridge port's transmit side.
type Link interface {
	// Send transmits the frame hdr ++ payload (no FCS). The slices are
	// only valid during the call: an implementation that queues the frame
	// must copy it or hold its own reference. Send must not block and
	// must not call back into the bridge's Input for the same port.
	// It reports whether the frame was queued.
	Send(hdr, payload []byte) bool
}

// A keeper is a port that keeps frames beyond the bridge's call (a NIC
// port, the host port). Instead of Send it gets the ingress frame itself,
// so that every keeper of one frame shares one copy.
type keeper interface {
	Link
	// keep sends hdr ++ frame[rest:], or frame unchanged if hdr is nil.
	// frame is the ingress frame, borrowed from Input's caller; hdr is
	// only valid during the call. A keeper that holds on to the frame
	// takes a reference to x.view(frame), or, if x.last (no port gets the
	// frame after it), takes over the bridge's with x.take(frame); it
	// must not write to the buffer.
	keep(x *ingress, frame, hdr []byte, rest int) bool
}

// ingress is the shared copy of the frame one Input call bridges. It
// lives in the ingress port (Input is serialised per port), so bridging
// allocates nothing of its own, and it stays empty, costing nothing, for
// a frame no keeper needs.
type ingress struct {
	v    *buffer.View // the frame in a shared buffer; nil until a keeper needs it
	own  bool         // v is the bridge's copy, released when Input returns
	last bool         // set before each send: no port gets the frame after this one
	lent lentFrame    // the TxBuf lending the frame to a NIC that copies (CapTxCopy)
	// rxBuf lets the last port keep the ingress driver's buffer
	// (net.RxBuf), if the driver offered it; nil otherwise.
	rxBuf gnet.RxBuf
	// lentTo is the host port whose handler was given a frame during
	// the driver's receive pass, owed ReceiveLentDone (if it was lent
	// one) and ReceivePassDone (passTo) at the pass's end.
	lentTo *HostNIC
	// passTo is the host handler told ReceivePassOpen in this pass
	// (net.PassHandler), nil if none.
	passTo gnet.PassHandler
}

// readable makes the ingress frame readable whole where the driver lent
// only its head (net.RxBuf.Frame): before anything but the host
// handler's ReceiveLentBuf, which asks for itself, reads past the head.
func (x *ingress) readable() {
	if x.rxBuf != nil {
		x.rxBuf.Frame()
	}
}

// view returns frame in a refcounted buffer keepers take references to,
// copying it the first time a keeper needs it: the one copy a forwarded
// frame costs.
func (x *ingress) view(frame []byte) *buffer.View {
	if x.v == nil {
		x.v = copyFrame(frame)
		x.own = true
	}
	return x.v
}

// take returns a reference to the frame's copy for a keeper that is the
// last to see the frame: the bridge's own reference if it holds one (no
// copy, no new reference), a new reference to the caller's buffer
// (InputView), or a fresh copy if no keeper needed one before. It saves
// a reference per frame, and more for the stack: a buffer whose only
// reference its holder has is one gVisor parses in place, while with
// others reading it too gVisor copies the headers it parses
// (copy-on-write); with the bridge's reference handed over, the stack's
// is the only one once the other ports are done with the frame.
func (x *ingress) take(frame []byte) *buffer.View {
	v := x.v
	switch {
	case v == nil:
		v = copyFrame(frame)
	case x.own:
		x.v, x.own = nil, false
	default:
		v = v.Clone()
	}
	return v
}

// done drops the bridge's own reference once Input has sent the frame
// (a frame that is dropped has no copy).
func (x *ingress) done() {
	if x.v != nil {
		if x.own {
			x.v.Release()
		}
		x.v, x.own = nil, false
	}
}

// copyFrame returns a fresh pooled buffer holding f.
func copyFrame(f []byte) *buffer.View {
	v := buffer.NewViewSize(len(f))
	copy(v.AsSlice(), f) // fresh and unshared: safe to fill in place
	return v
}

// copyView returns a fresh pooled buffer holding hdr ++ payload.
func copyView(hdr, payload []byte) *buffer.View {
	v := buffer.NewViewSize(len(hdr) + len(payload))
	b := v.AsSlice() // fresh and unshared: safe to fill in place
	copy(b[copy(b, hdr):], payload)
	return v
}

// Config configures a bridge.
type Config struct {
	MAC     gnet.MAC      // the bridge's (and host port's) address
	MTU     int           // default 1500
	AgeTime time.Duration // FDB entry lifetime, default 300 s (802.1D default), at most MaxAgeTime
	FDBSize int           // FDB slots, rounded up to a power of two; default 4096
	// FloodRate is storm control: the frames per second each port may
	// flood (broadcast, multicast, unknown unicast), in bursts of up to a
	// tenth of a second's worth; more are dropped and counted
	// (ReasonStorm), so a looped cable or a flooding host cannot make the
	// bridge copy its storm to every port and the router's own stack.
	// Known unicast is never limited, nor is the host port. Default
	// DefaultFloodRate; negative disables storm control.
	FloodRate int
	// Now returns a monotonic time in nanoseconds, read once per frame
	// (FDB aging, storm control). The default reads the time package's
	// monotonic clock; a platform whose clock is cheaper read another way
	// passes that (net/router passes netstack.CoarseNanotime, which on
	// the gowrt kernel is a variable refreshed every 10 ms instead of a
	// system call). Tests inject a fake clock.
	Now func() int64
}

// clockStart is the origin of monotonic.
var clockStart = time.Now()

// monotonic is the default Config.Now: nanoseconds on the time package's
// monotonic clock.
func monotonic() int64 { return int64(time.Since(clockStart)) }

// DefaultFloodRate is the default storm-control limit: far above what
// ARP, DHCP, neighbour discovery and mDNS need on a home LAN, far below
// what a storm delivers.
const DefaultFloodRate = 10000

// maxFloodRate keeps the token arithmetic (frame-nanoseconds) in range:
// more than any port can carry anyway.
const maxFloodRate = 100_000_000

// PortVLANs is a port's 802.1Q membership.
type PortVLANs struct {
	PVID     uint16   // VLAN of untagged ingress; 0 = drop untagged
	Untagged []uint16 // member VLANs sent untagged
	Tagged   []uint16 // member VLANs sent tagged
}

// DefaultVLANs makes a port an untagged member of VLAN 1 with PVID 1, the
// VLAN-unaware behaviour (Linux's default_pvid).
var DefaultVLANs = PortVLANs{PVID: 1, Untagged: []uint16{1}}

// PortStats are per-port counters. The receive side is written only by
// the port's own ingress path, the transmit side by every other port's:
// the padding keeps them on separate cache lines, so two CPUs bridging in
// opposite directions do not pass one line back and forth per frame.
//
// They are gnet.Counters: 32-bit atomics, as a 64-bit atomic takes the
// Go runtime's global spinlock on 32-bit MIPS.
type PortStats struct {
	RxFrames, RxBytes gnet.Counter // accepted on ingress
	Forwarded         gnet.Counter // ingress frames sent to one known port
	Flooded           gnet.Counter // ingress frames flooded
	_                 cpu.CacheLinePad
	TxFrames, TxBytes gnet.Counter // handed to the Link
	TxDropped         gnet.Counter // Link refused (TX ring full)
	_                 cpu.CacheLinePad
}

// Stats are bridge-wide drop counters (Forwarded and Flooded sum the
// ports' counters).
type Stats struct {
	Drops [numReasons]atomic.Uint64
}

// Dropped returns the drop counter for r.
func (s *Stats) Dropped(r Reason) uint64 { return s.Drops[r].Load() }

type port struct {
	link   Link
	keeper keeper   // link, if it keeps frames beyond the call
	host   *HostNIC // the host port's NIC, if this is the host port
	_      cpu.CacheLinePad
	// Written by this port's ingress path only.
	scratch [ethHdrLen + tagLen]byte // egress header when a tag is added/changed
	rx      ingress                  // the frame being bridged
	fdb     slotCache                // the FDB slots this port's frames used last
	flood   tokenBucket              // storm control
	// pend holds counts for stats of the frames this port handed to the
	// host during a driver's receive pass (nicPort.ReceiveBuf), added
	// at its end (ReceiveDone): five atomic adds per frame cost about 90
	// instructions on mips32 (natbench).
	pend  hostCounts
	stats PortStats
}

// hostCounts are a port's deferred counts of frames to the host: its
// own RxFrames, RxBytes and Forwarded (rx), and TxFrames and TxBytes of
// the host port it sent them to (tx).
type hostCounts struct {
	rx, rxBytes, tx, txBytes uint32
	host                     *port
	// learned is the FDB key (source and VLAN) the pass's hand-offs
	// last learned, 0 for none: later frames of the pass from the same
	// station skip the learn and its clock read (about 110 instructions
	// per NATed frame on mips32, natbench); its timestamp is refreshed
	// once per pass, which aging in seconds does not notice.
	learned uint64
}

// countToHost counts a frame of n bytes handed to host port hp (sent:
// taken), deferred to flushCounts if deferred (a driver's receive pass,
// which ReceiveDone ends).
func (p *port) countToHost(hp *port, sent bool, n int, deferred bool) {
	if !deferred || !sent {
		if deferred {
			p.flushCounts() // keep the counters' order: rx before tx
		}
		p.stats.RxFrames.Add(1)
		p.stats.RxBytes.Add(uint32(n))
		p.stats.Forwarded.Add(1)
		hp.count(sent, n)
		return
	}
	d := &p.pend
	if d.host != hp {
		p.flushCounts()
		d.host = hp
	}
	d.rx++
	d.rxBytes += uint32(n)
	d.tx++
	d.txBytes += uint32(n)
}

// flushCounts adds the deferred counts to the counters.
func (p *port) flushCounts() {
	d := &p.pend
	if d.rx != 0 {
		p.stats.RxFrames.Add(d.rx)
		p.stats.RxBytes.Add(d.rxBytes)
		p.stats.Forwarded.Add(d.rx)
		d.host.stats.TxFrames.Add(d.tx)
		d.host.stats.TxBytes.Add(d.txBytes)
		d.rx, d.rxBytes, d.tx, d.txBytes = 0, 0, 0, 0
	}
}

// tokenBucket limits a port's flooded frames. Only the port's ingress
// path uses it, so it needs no lock. Tokens are counted in
// frame-nanoseconds: a frame costs 1e9, and every nanosecond adds rate.
type tokenBucket struct {
	tokens, last int64
}

func (t *tokenBucket) allow(now int64, rate, burst int64) bool {
	if t.last != 0 {
		// A second refills any bucket (bursts are a tenth of one); the
		// cap keeps a long idle time from overflowing the product.
		t.tokens = min(t.tokens+min(now-t.last, 1e9)*rate, burst)
	} else {
		t.tokens = burst
	}
	t.last = now
	if t.tokens < 1e9 {
		return false
	}
	t.tokens -= 1e9
	return true
}

// vlanTable is an immutable configuration snapshot.
type vlanTable struct {
	pvid     [MaxPorts]uint16
	members  [MaxVID + 1]uint64 // VID -> ports that are members
	untagged [MaxVID + 1]uint64 // VID -> ports that send it untagged
	// toHost[p] is port p's PVID if an untagged frame received on p may
	// reach the host port untagged (both are members of the PVID, the
	// host untagged), 0 otherwise: inputToHost's VLAN check, decided
	// once per configuration instead of per frame.
	toHost [MaxPorts]uint16
	host   int // the host port, -1 if none
}

// setToHost fills t.toHost for host port host (-1: none).
func (t *vlanTable) setToHost(host int) {
	t.host = host
	t.toHost = [MaxPorts]uint16{}
	if host < 0 {
		return
	}
	hb := uint64(1) << host
	for p, vid := range t.pvid {
		if p != host && vid != 0 && t.members[vid]&(uint64(1)<<p) != 0 &&
			t.members[vid]&hb != 0 && t.untagged[vid]&hb != 0 {
			t.toHost[p] = vid
		}
	}
}

// Bridge is a learning bridge. Input may be called concurrently for
// different ports; calls for one port must be serialised (which the NIC
// Handler contract guarantees).
type Bridge struct {
	mac   gnet.MAC
	macK  uint64
	mtu   int
	now   func() int64
	fdb   *fdb
	vlans atomic.Pointer[vlanTable]
	up    portMask // ports whose link is up and that forward
	nport atomic.Int32
	host  atomic.Int32 // host port number, -1 if none
	// keepers counts the ports that may keep a frame beyond the call
	// that sends it (keepsFrames). While it is 0, a frame can be bridged
	// from memory the sender reuses right after: the host port's
	// Transmit then needs no buffer of its own.
	keepers atomic.Int32
	// batchers are the NIC ports' NICs that batch doorbells
	// (net.TxBatcher), which the host port's batches span.
	batchers atomic.Pointer[[]gnet.TxBatcher]

	floodRate, floodBurst int64 // storm control; rate 0 = off

	cfgMu sync.Mutex // serialises configuration writers
	ports [MaxPorts]*port

	Stats Stats
}

// New creates a bridge with no ports.
func New(c Config) (*Bridge, error) {
	if c.MAC.IsMulticast() || c.MAC.IsZero() {
		return nil, fmt.Errorf("bridge: MAC %v is not a unicast address", c.MAC)
	}
	if c.MTU == 0 {
		c.MTU = gnet.DefaultMTU
	}
	if c.MTU < 68 || c.MTU > gnet.RxBufSize-ethHdrLen-tagLen {
		return nil, fmt.Errorf("bridge: MTU %d out of range", c.MTU)
	}
	if c.AgeTime == 0 {
		c.AgeTime = 300 * time.Second
	}
	if c.AgeTime < 0 || c.AgeTime > MaxAgeTime {
		return nil, fmt.Errorf("bridge: AgeTime %v outside 0..%v", c.AgeTime, MaxAgeTime)
	}
	if c.FDBSize == 0 {
		c.FDBSize = 4096
	}
	if c.FDBSize < maxProbe || c.FDBSize > 1<<20 {
		return nil, fmt.Errorf("bridge: FDBSize %d out of range", c.FDBSize)
	}
	switch {
	case c.FloodRate > maxFloodRate:
		return nil, fmt.Errorf("bridge: FloodRate %d above %d frames/s (negative disables storm control)", c.FloodRate, maxFloodRate)
	case c.FloodRate == 0:
		c.FloodRate = DefaultFloodRate
	case c.FloodRate < 0:
		c.FloodRate = 0
	}
	if c.Now == nil {
		c.Now = monotonic
	}
	b := &Bridge{
		mac:  c.MAC,
		macK: fdbKey(0, c.MAC[:]),
		mtu:  c.MTU,
		now:  c.Now,
		fdb:  newFDB(c.FDBSize, int64(c.AgeTime), rand.Uint64()),
		// Burst: a tenth of a second's worth, at least one frame.
		floodRate:  int64(c.FloodRate),
		floodBurst: max(int64(c.FloodRate)*1e8, 1e9),
	}
	t := new(vlanTable)
	t.setToHost(-1)
	b.vlans.Store(t)
	b.host.Store(-1)
	return b, nil
}

// MAC returns the bridge's address.
func (b *Bridge) MAC() gnet.MAC { return b.mac }

// AddPort adds a port with the given VLAN membership, link down. It
// returns the port number to pass to Input and SetLink.
func (b *Bridge) AddPort(l Link, v PortVLANs) (int, error) {
	if l == nil {
		return -1, errors.New("bridge: nil Link")
	}
	b.cfgMu.Lock()
	defer b.cfgMu.Unlock()
	n := int(b.nport.Load())
	if n >= MaxPorts {
		return -1, fmt.Errorf("bridge: more than %d ports", MaxPorts)
	}
	host := int(b.host.Load())
	hl, isHost := l.(hostLink)
	if isHost {
		host = n
	}
	t, err := b.withVLANs(n, v, host)
	if err != nil {
		return -1, err
	}
	k, _ := l.(keeper)
	b.ports[n] = &port{link: l, keeper: k}
	if keepsFrames(l) {
		b.keepers.Add(1)
	}
	if np, ok := l.(*nicPort); ok {
		if tb, ok := np.nic.(gnet.TxBatcher); ok {
			var bs []gnet.TxBatcher
			if old := b.batchers.Load(); old != nil {
				bs = append(bs, *old...)
			}
			bs = append(bs, tb)
			b.batchers.Store(&bs)
		}
	}
	if isHost {
		b.ports[n].host = hl.n
	}
	b.vlans.Store(t)
	b.nport.Store(int32(n + 1))
	return n, nil
}

// keepsFrames reports whether l may hold on to a frame after the call
// that sends it: a NIC that transmits by DMA from the frame's memory, or a
// Link that keeps frames. A NIC that copies (CapTxCopy) and the host port
// (which copies or lends within the call) do not.
func keepsFrames(l Link) bool {
	switch l := l.(type) {
	case *nicPort:
		return !l.copies
	case hostLink:
		return false
	}
	_, k := l.(keeper)
	return k
}

// SetVLANs replaces port p's VLAN membership. Stations learned on p are
// forgotten.
func (b *Bridge) SetVLANs(p int, v PortVLANs) error {
	b.cfgMu.Lock()
	defer b.cfgMu.Unlock()
	if p < 0 || p >= int(b.nport.Load()) {
		return fmt.Errorf("bridge: no port %d", p)
	}
	t, err := b.withVLANs(p, v, int(b.host.Load()))
	if err != nil {
		return err
	}
	b.vlans.Store(t)
	b.fdb.flushPort(uint8(p))
	return nil
}

// withVLANs returns a copy of the current table with port p's membership
// replaced by v, and host as the host port.
func (b *Bridge) withVLANs(p int, v PortVLANs, host int) (*vlanTable, error) {
	if v.PVID > MaxVID {
		return nil, fmt.Errorf("bridge: PVID %d out of range", v.PVID)
	}
	t := new(vlanTable)
	*t = *b.vlans.Load()
	bit := uint64(1) << p
	for vid := range t.members {
		t.members[vid] &^= bit
		t.untagged[vid] &^= bit
	}
	for _, vid := range v.Tagged {
		if vid == 0 || vid > MaxVID {
			return nil, fmt.Errorf("bridge: VID %d out of range 1..%d", vid, MaxVID)
		}
		t.members[vid] |= bit
	}
	for _, vid := range v.Untagged {
		if vid == 0 || vid > MaxVID {
			return nil, fmt.Errorf("bridge: VID %d out of range 1..%d", vid, MaxVID)
		}
		if t.members[vid]&bit != 0 && t.untagged[vid]&bit == 0 {
			return nil, fmt.Errorf("bridge: VID %d both tagged and untagged", vid)
		}
		t.members[vid] |= bit
		t.untagged[vid] |= bit
	}
	if v.PVID != 0 && t.members[v.PVID]&bit == 0 {
		return nil, fmt.Errorf("bridge: PVID %d is not a member VLAN", v.PVID)
	}
	t.pvid[p] = v.PVID
	t.setToHost(host)
	return t, nil
}

// portMask is a set of ports in two 32-bit words: every port's bit lives
// in one word, so each bit of a load is that port's current state, without
// the 64-bit atomics that take the Go runtime's global spinlock on 32-bit
// MIPS.
type portMask struct{ w [MaxPorts / 32]atomic.Uint32 }

// set adds (on) or removes port p.
func (m *portMask) set(p int, on bool) {
	w, bit := &m.w[p/32], uint32(1)<<(p%32)
	if on {
		w.Or(bit)
	} else {
		w.And(^bit)
	}
}

// has reports whether port p (0 <= p < MaxPorts) is in the set.
func (m *portMask) has(p int) bool {
	return m.w[uint(p)/32].Load()&(1<<(uint(p)%32)) != 0
}

// load returns the set as a bitmask of ports.
func (m *portMask) load() uint64 {
	return uint64(m.w[1].Load())<<32 | uint64(m.w[0].Load())
}

// SetLink marks port p forwarding (up) or not. Going down forgets the
// stations learned on p, so traffic to them floods until relearned.
func (b *Bridge) SetLink(p int, up bool) error {
	if p < 0 || p >= int(b.nport.Load()) {
		return fmt.Errorf("bridge: no port %d", p)
	}
	b.up.set(p, up)
	if !up {
		b.fdb.flushPort(uint8(p))
	}
	return nil
}

// PortStats returns port p's counters (nil for an unknown port).
func (b *Bridge) PortStats(p int) *PortStats {
	if p < 0 || p >= int(b.nport.Load()) {
		return nil
	}
	return &b.ports[p].stats
}

// FDBEntries counts the live learned stations.
func (b *Bridge) FDBEntries() int { return b.fdb.entries(b.now()) }

// FDBFull counts stations not learned because their slots were taken.
func (b *Bridge) FDBFull() uint64 {
	b.fdb.mu.Lock()
	defer b.fdb.mu.Unlock()
	return b.fdb.full
}

// Lookup returns the port a station is learned on in VLAN vid.
func (b *Bridge) Lookup(vid uint16, mac gnet.MAC) (int, bool) {
	return b.fdb.learnLookup(0, false, 0, fdbKey(vid, mac[:]), true, b.now(), nil)
}

// Forwarded counts frames sent to exactly one known port.
func (b *Bridge) Forwarded() uint64 {
	var n uint64
	for p := range int(b.nport.Load()) {
		n += b.ports[p].stats.Forwarded.Load()
	}
	return n
}

// Flooded counts frames flooded to every member port of their VLAN.
func (b *Bridge) Flooded() uint64 {
	var n uint64
	for p := range int(b.nport.Load()) {
		n += b.ports[p].stats.Flooded.Load()
	}
	return n
}

func (b *Bridge) drop(r Reason) { b.Stats.Drops[r].Add(1) }

// isLinkLocal reports 01:80:C2:00:00:00..0F, the IEEE 802.1D reserved
// group addresses a bridge must not forward.
func isLinkLocal(d []byte) bool {
	return d[0] == 0x01 && d[1] == 0x80 && d[2] == 0xc2 && d[3] == 0 && d[4] == 0 && d[5]&0xf0 == 0
}

// InputView bridges the frame in v, received on port in, like Input, but
// ports that keep the frame share v (each takes its own reference)
// instead of a copy. The caller keeps its reference and releases it after
// the call as usual.
func (b *Bridge) InputView(in int, v *buffer.View) {
	if in < 0 || in >= int(b.nport.Load()) {
		b.drop(ReasonNoPort)
		return
	}
	p := b.ports[in]
	p.rx.v = v
	b.Input(in, v.AsSlice())
	p.rx.v = nil // dropped frames leave it set
}

// Input bridges one frame received on port in. The frame is borrowed: it
// is only read, and only during the call (the net.Handler contract), and
// the caller keeps its memory. Ports that keep the frame longer share one
// copy of it.
func (b *Bridge) Input(in int, frame []byte) {
	if in < 0 || in >= int(b.nport.Load()) {
		b.drop(ReasonNoPort)
		return
	}
	p := b.ports[in]
	f, r, ok := Parse(frame, b.mtu)
	if !ok {
		b.drop(r)
		return
	}
	bit := uint64(1) << in
	up := b.up.load()
	if up&bit == 0 {
		b.drop(ReasonPortDown)
		return
	}
	t := b.vlans.Load()
	vid := f.VID()
	if vid == 0 {
		vid = t.pvid[in]
		if vid == 0 {
			b.drop(ReasonVLANFiltered)
			return
		}
	}
	if t.members[vid]&bit == 0 {
		b.drop(ReasonVLANFiltered)
		return
	}
	host := int(b.host.Load())
	src := fdbKey(0, frame[6:12])
	if src == b.macK && in != host {
		b.drop(ReasonOwnSource)
		return
	}
	p.stats.RxFrames.Add(1)
	p.stats.RxBytes.Add(uint32(len(frame)))

	dst := frame[0:6]
	mcast := dst[0]&1 != 0
	lookup := !mcast
	toHost := false
	if !mcast && fdbKey(0, dst) == b.macK {
		toHost, lookup = true, false
	}
	now := b.now()
	var dstK uint64
	if lookup {
		dstK = fdbKey(vid, dst)
	}
	out, known := b.fdb.learnLookup(src|uint64(vid)<<48, in != host, uint8(in), dstK, lookup, now, &p.fdb)

	switch {
	case mcast && isLinkLocal(dst):
		if host < 0 || in == host || up&(uint64(1)<<host) == 0 {
			b.drop(ReasonLinkLocal)
			return
		}
		p.rx.last = true
		b.send(t, host, vid, &f, frame, p)
		p.rx.done()
		return
	case toHost:
		if host < 0 || t.members[vid]&(uint64(1)<<host) == 0 {
			b.drop(ReasonVLANFiltered)
			return
		}
		if in == host {
			b.drop(ReasonHairpin)
			return
		}
		if up&(uint64(1)<<host) == 0 {
			b.drop(ReasonPortDown)
			return
		}
		p.stats.Forwarded.Add(1)
		p.rx.last = true
		if hl, ok := b.ports[host].keeper.(hostLink); ok && !f.Tagged && t.untagged[vid]&(uint64(1)<<host) != 0 {
			// Untagged in and out: the frame goes to the host port
			// unchanged, as send would find after choosing its header
			// and calling the keeper. Frames for the router (the NAT
			// fast path among them) skip those two calls and the
			// switch: about 100 instructions per frame on mips32
			// (natbench).
			b.ports[host].count(hl.deliver(&p.rx, nil, frame), len(frame))
		} else {
			b.send(t, host, vid, &f, frame, p)
		}
		p.rx.done()
		return
	case known:
		if out == in {
			b.drop(ReasonHairpin)
			return
		}
		ob := uint64(1) << out
		if t.members[vid]&ob != 0 && up&ob != 0 {
			p.stats.Forwarded.Add(1)
			p.rx.last = true
			b.send(t, out, vid, &f, frame, p)
			p.rx.done()
			return
		}
		// Learned port left the VLAN or went down: flood instead.
	}
	if b.floodRate != 0 && in != host && !p.flood.allow(now, b.floodRate, b.floodBurst) {
		b.drop(ReasonStorm)
		return
	}
	mask := t.members[vid] & up &^ bit
	p.stats.Flooded.Add(1)
	// The host port last, taking over the bridge's reference: its stack
	// parses the frame in place if the ports before it are done with the
	// shared copy (see ingress.take). (A negative host shifts the bit
	// out: no host port.)
	hb := mask & (uint64(1) << uint(host))
	mask &^= hb
	p.rx.last = false
	for mask != 0 {
		o := bits.TrailingZeros64(mask)
		mask &= mask - 1
		b.send(t, o, vid, &f, frame, p)
	}
	if hb != 0 {
		p.rx.last = true
		b.send(t, host, vid, &f, frame, p)
	}
	p.rx.done()
}

// toOwnMAC reports whether frame is addressed to the bridge's MAC, with
// at least an Ethernet header: the test before inputToHost, inlined into
// the NIC port's handler.
func (b *Bridge) toOwnMAC(frame []byte) bool {
	m := &b.mac
	if len(frame) < ethHdrLen {
		return false
	}
	// One branch, not one per byte.
	return (frame[0]^m[0])|(frame[1]^m[1])|(frame[2]^m[2])|(frame[3]^m[3])|(frame[4]^m[4])|(frame[5]^m[5]) == 0
}

// inputToHost is Input for the frames the router's forwarding fast path
// takes: untagged unicast to the bridge's own MAC, received on a port
// whose PVID the host port is an untagged member of. It makes Input's
// checks and has Input's effects (the counters, learning the source,
// delivery to the host port as the frame's last port), but reads the
// VLAN decision from the configuration snapshot (vlanTable.toHost), the
// port states as two bits, and checks only an untagged frame's framing,
// without Parse: Input's general path does a 64-bit shift per check, and
// the shortcut saves about 175 instructions per NATed frame on mips32
// (natbench). frame must pass toOwnMAC. inputToHost reports false,
// having done nothing, for any other frame and for one that fails a
// check, which Input then handles and counts. NIC ports call it before
// Input for frames toOwnMAC finds (nicPort.Receive), so frames between
// stations and from the host port do not pay for a call.
func (b *Bridge) inputToHost(in int, p *port, frame []byte, deferred bool) bool {
	n := len(frame)
	if n > ethHdrLen+b.mtu {
		return false
	}
	// Parse's checks of an untagged frame: a type (or an 802.3 length),
	// a unicast source other than zero.
	typ := uint16(frame[12])<<8 | uint16(frame[13])
	if typ == tpid8021Q || (typ > maxLenField && typ < minTypeField) ||
		frame[6]&1 != 0 || frame[6]|frame[7]|frame[8]|frame[9]|frame[10]|frame[11] == 0 {
		return false
	}
	t := b.vlans.Load()
	vid := t.toHost[in]
	if vid == 0 || !b.up.has(in) || !b.up.has(t.host) {
		return false
	}
	src := fdbKey(0, frame[6:12])
	if src == b.macK {
		return false // a loop: Input drops it
	}
	if key := src | uint64(vid)<<48; !deferred || key != p.pend.learned {
		b.fdb.learnCached(key, uint8(in), b.now(), &p.fdb)
		if deferred {
			p.pend.learned = key
		}
	}
	p.rx.last = true
	hp := b.ports[t.host]
	p.countToHost(hp, hostLink{hp.host}.deliver(&p.rx, nil, frame), n, deferred)
	p.rx.done()
	return true
}

// inputFromHost is Input for the frames the host's stack sends to one
// station: untagged unicast from the host port in, a station the bridge
// knows on a port that is an untagged member of the host port's PVID,
// that port a NIC which copies the frame before Transmit returns and
// gathers it (CapTxCopy and CapScatterGather: pcnet). The frame is lent
// to that NIC as the stack's own gather list, segs (n bytes, the
// Ethernet header within segs[0]), so bridging it copies nothing: before,
// HostNIC.Transmit gathered it into a flat buffer first, a second copy
// of every byte a TCP download sends (about 8% of what the router spends
// per segment on mips32, XferInstructionsMaltaLE). It makes Input's
// checks and has its effects (the counters; the host port learns no
// source) and reports false, having done nothing, for any other frame
// and for one that fails a check, which Input then handles and counts.
// The caller holds the host port's txMu.
func (b *Bridge) inputFromHost(in int, segs [][]byte, n int, sum partialSum) bool {
	h := segs[0]
	if len(h) < ethHdrLen || n > ethHdrLen+b.mtu {
		return false
	}
	// Parse's checks of an untagged frame, and Input's of a unicast
	// destination other than the bridge itself.
	typ := uint16(h[12])<<8 | uint16(h[13])
	if typ == tpid8021Q || (typ > maxLenField && typ < minTypeField) ||
		h[6]&1 != 0 || h[6]|h[7]|h[8]|h[9]|h[10]|h[11] == 0 || h[0]&1 != 0 {
		return false
	}
	dstK := fdbKey(0, h[0:6])
	if dstK == b.macK {
		return false
	}
	t := b.vlans.Load()
	vid := t.pvid[in]
	bit := uint64(1) << in
	up := b.up.load()
	if vid == 0 || t.members[vid]&bit == 0 || up&bit == 0 {
		return false
	}
	p := b.ports[in]
	out, known := b.fdb.learnLookup(0, false, uint8(in), dstK|uint64(vid)<<48, true, b.now(), &p.fdb)
	if !known || out == in {
		return false
	}
	ob := uint64(1) << out
	if t.members[vid]&ob == 0 || t.untagged[vid]&ob == 0 || up&ob == 0 {
		return false
	}
	q := b.ports[out]
	np, ok := q.keeper.(*nicPort)
	if !ok || !np.copies || !np.gather {
		return false
	}
	p.stats.RxFrames.Add(1)
	p.stats.RxBytes.Add(uint32(n))
	p.stats.Forwarded.Add(1)
	q.count(np.lendGather(&p.rx, segs, n, sum), n)
	return true
}

// send emits frame on port o in VLAN vid, tagging or untagging as o's
// membership requires. in is the ingress port, whose scratch header is
// free to use (Input is serialised per ingress port), and whose rx.last
// the caller has set.
func (b *Bridge) send(t *vlanTable, o int, vid uint16, f *Frame, frame []byte, in *port) {
	q := b.ports[o]
	var hdr []byte
	payload := frame[f.Rest:]
	switch {
	case t.untagged[vid]&(uint64(1)<<o) != 0:
		hdr = frame[0:12]
	case f.Tagged && f.TCI&vidMask == vid:
		hdr = frame[0:16]
	default:
		// Add a tag, or rewrite a priority tag's VID; keep PCP and DEI.
		copy(in.scratch[0:12], frame[0:12])
		binary.BigEndian.PutUint16(in.scratch[12:14], tpid8021Q)
		binary.BigEndian.PutUint16(in.scratch[14:16], f.TCI&^vidMask|vid)
		hdr = in.scratch[0:16]
	}
	var sent bool
	switch {
	case q.keeper == nil:
		sent = q.link.Send(hdr, payload)
	case len(hdr) == f.Rest && &hdr[0] == &frame[0]:
		sent = q.keeper.keep(&in.rx, frame, nil, 0) // leaves unchanged
	default:
		sent = q.keeper.keep(&in.rx, frame, hdr, f.Rest)
	}
	q.count(sent, len(hdr)+len(payload))
}

// count counts a frame of n bytes the bridge sent out of port q, or
// tried to.
func (q *port) count(sent bool, n int) {
	if sent {
		q.stats.TxFrames.Add(1)
		q.stats.TxBytes.Add(uint32(n))
	} else {
		q.stats.TxDropped.Add(1)
	}
}
