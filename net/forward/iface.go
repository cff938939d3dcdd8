package forward

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"

	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/net/nat"
	"gvisor.dev/gvisor/pkg/buffer"
)

// IfaceConfig describes one routed interface.
type IfaceConfig struct {
	Name string   // "lan", "wan": the firewall's network name
	NIC  gnet.NIC // the lower NIC: br-lan's host port, a WAN driver
	// Track records the router's own transmissions in the connection
	// table, so that their replies pass the input chain as established
	// traffic. Set it on interfaces whose zone rejects input (the WAN).
	Track bool
	// Intercept, if set, sees each received frame first and keeps those
	// it returns true for (borrowed, as from a driver): the WAN's DHCP
	// client takes its replies this way before the interface has an
	// address.
	Intercept func(frame []byte) bool
	// StackNIC is the number the router's stack knows the interface by
	// (for the Resolver).
	StackNIC int32
}

// Iface is one routed interface: the NIC the stack's endpoint above it
// uses, and the handler of the lower NIC below it.
type Iface struct {
	f         *Forwarder
	id        nat.Iface
	name      string
	lower     gnet.NIC
	viewTx    viewTransmitter // lower's by-reference transmit, if it has one
	track     bool
	intercept func([]byte) bool
	stackNIC  int32
	mac       gnet.MAC
	mtu       int

	addr atomic.Pointer[ifAddr]
	gw   atomic.Pointer[netip.Addr]

	// upper is the handler Start was given, published for the
	// per-frame paths: one atomic load, where a read lock is two atomic
	// read-modify-writes (some 40 instructions on mips32). hmu
	// serialises Start's and Stop's changes of it.
	hmu   sync.Mutex
	upper atomic.Pointer[uppers]
	// passTo is the upper told of the passes open now (passes of
	// them), kept so that a pass opened on one handler ends on it.
	passTo gnet.PassHandler
	passes int

	txMu    sync.Mutex
	scratch [gnet.RxBufSize]byte // flattens gathered frames for tracking

	// copies: lower is done with a TxBuf when Transmit returns
	// (net.CapTxCopy), so the fast path may transmit from lent.
	copies  bool
	gathers bool // lower takes multi-segment TxBufs (net.CapScatterGather)
	sendsRx bool // lower sends kept receive buffers in place (net.CapTxRxBuf)
	// lent and lentTx serve processLent, on this interface's receive
	// path (serialised: one lower NIC's handler calls).
	lent   [gnet.RxBufSize]byte
	lentTx lentTxBuf
	// rxBuf is the ingress driver's buffer of the frame processLent
	// handles, if ReceiveLentBuf offered it: keepable.
	rxBuf gnet.RxBuf
	// fastSent counts the frames ReceiveLentBuf forwarded on the fast
	// path since the last ReceiveLentDone, which adds them to the
	// Forwarder's counters: two atomic adds per frame cost about 35
	// instructions on mips32 (natbench).
	fastSent uint32
	// localSent likewise counts the frames inputLent passed up to the
	// stack (Stats.Local).
	localSent uint32
	// accepted remembers the input chain's last acceptance on
	// inputLent's path (receive-side state, as lent is).
	accepted inputMemo
}

// lentTxBuf is a TxBuf over an interface's lent buffer, for a NIC that
// copies it before Transmit returns: Release has nothing to give back.
type lentTxBuf struct {
	segs [2][]byte
	n    int
}

func (t *lentTxBuf) Segments() [][]byte { return t.segs[:t.n] }
func (t *lentTxBuf) Len() int           { return len(t.segs[0]) + len(t.segs[1]) }
func (t *lentTxBuf) Release()           {}

// transmitLent sends hdr (in i's lent buffer) ++ rest (borrowed, empty
// unless out's NIC gathers) out of out, whose NIC copies it before
// Transmit returns.
func (i *Iface) transmitLent(out *Iface, hdr, rest []byte) bool {
	i.lentTx.segs[0], i.lentTx.segs[1], i.lentTx.n = hdr, rest, 1
	if len(rest) != 0 {
		i.lentTx.n = 2
	}
	err := out.lower.Transmit(&i.lentTx)
	i.lentTx.segs = [2][]byte{}
	if err != nil {
		i.f.Stats.TxErrors.Add(1)
		return false
	}
	return true
}

// viewHandler takes frames by reference (netstack.Endpoint; the same
// method as net/bridge's ViewHandler).
type viewHandler interface {
	ReceiveView(v *buffer.View)
}

// viewTransmitter sends a frame held in a gVisor buffer without copying
// it: the caller keeps its reference (bridge.HostNIC.TransmitView).
type viewTransmitter interface {
	TransmitView(v *buffer.View) error
}

var (
	_ gnet.NIC       = (*Iface)(nil)
	_ gnet.Handler   = (*Iface)(nil)
	_ viewHandler    = (*Iface)(nil)
	_ gnet.TxWaker   = (*Iface)(nil)
	_ gnet.TxBatcher = (*Iface)(nil)
)

// AddIface adds an interface. Interfaces are added before traffic flows;
// their numbers (nat.Iface) are given in order from 0.
func (f *Forwarder) AddIface(c IfaceConfig) (*Iface, error) {
	if c.NIC == nil || c.Name == "" {
		return nil, fmt.Errorf("%w: interface needs a name and a NIC", ErrConfig)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	n := int(f.n.Load())
	if n == MaxIfaces {
		return nil, fmt.Errorf("%w: more than %d interfaces", ErrConfig, MaxIfaces)
	}
	for _, o := range f.ifaces[:n] {
		if o.name == c.Name {
			return nil, fmt.Errorf("%w: duplicate interface %q", ErrConfig, c.Name)
		}
	}
	i := &Iface{
		f: f, id: nat.Iface(n), name: c.Name, lower: c.NIC, track: c.Track,
		intercept: c.Intercept, stackNIC: c.StackNIC,
		mac: c.NIC.MACAddress(), mtu: c.NIC.MTU(),
	}
	i.viewTx, _ = c.NIC.(viewTransmitter)
	i.copies = i.viewTx == nil && c.NIC.Capabilities()&gnet.CapTxCopy != 0
	i.gathers = c.NIC.Capabilities()&gnet.CapScatterGather != 0
	i.sendsRx = c.NIC.Capabilities()&gnet.CapTxRxBuf != 0
	f.ifaces[n] = i
	if m := f.minMTU.Load(); m == 0 || int32(i.mtu) < m {
		f.minMTU.Store(int32(i.mtu))
	}
	f.n.Store(int32(n + 1))
	return i, nil
}

// ID is the interface's number in the connection table and the firewall.
func (i *Iface) ID() nat.Iface { return i.id }

// Name is the interface's network name.
func (i *Iface) Name() string { return i.name }

// StackNIC is the router stack's number for the interface.
func (i *Iface) StackNIC() int32 { return i.stackNIC }

// Lower returns the NIC below the interface.
func (i *Iface) Lower() gnet.NIC { return i.lower }

// SetAddress sets the interface's address and prefix and its default
// gateway (invalid: none), as a DHCP lease or static configuration gives
// them. A changed address flushes the connections masqueraded to the
// old one: their peers would answer an address the router no longer has.
func (i *Iface) SetAddress(p netip.Prefix, gw netip.Addr) {
	old, oldGW := i.prefix(), i.gateway()
	if p.IsValid() {
		i.addr.Store(newIfAddr(p))
	} else {
		i.addr.Store(nil)
	}
	i.f.refreshLocals()
	if gw.IsValid() {
		i.gw.Store(&gw)
	} else {
		i.gw.Store(nil)
	}
	if old.IsValid() && old.Addr() != p.Addr() {
		i.f.table.SetAddress(old.Addr(), p.Addr())
	}
	if oldGW.IsValid() && oldGW != gw {
		i.f.table.ForgetHops(i.id)
	}
}

// Address returns the interface's address (invalid when it has none).
func (i *Iface) Address() netip.Prefix { return i.prefix() }

// Gateway returns the interface's default gateway (invalid: none).
func (i *Iface) Gateway() netip.Addr { return i.gateway() }

func (i *Iface) prefix() netip.Prefix {
	if a := i.addr.Load(); a != nil {
		return a.p
	}
	return netip.Prefix{}
}

// ifAddr is an interface's address as the per-packet checks use it: the
// prefix, and the address and subnet broadcast as words, computed once
// when the address is set rather than per packet from the netip values.
type ifAddr struct {
	p            netip.Prefix
	local, bcast uint32
}

func newIfAddr(p netip.Prefix) *ifAddr {
	a := &ifAddr{p: p, local: addr4(p.Addr())}
	a.bcast = a.local // /31 and /32 have no broadcast address
	if p.Bits() < 31 {
		a.bcast = a.local | ^uint32(0)>>p.Bits()
	}
	return a
}

// addr4 returns an IPv4 address as a big-endian word.
func addr4(a netip.Addr) uint32 {
	b := a.As4()
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

func (i *Iface) gateway() netip.Addr {
	if g := i.gw.Load(); g != nil {
		return *g
	}
	return netip.Addr{}
}

func (i *Iface) up() bool { return i.lower.Link().Up }

// MACAddress implements net.NIC.
func (i *Iface) MACAddress() gnet.MAC { return i.mac }

// MTU implements net.NIC.
func (i *Iface) MTU() int { return i.mtu }

// Capabilities implements net.NIC: the lower NIC's.
func (i *Iface) Capabilities() gnet.Capabilities { return i.lower.Capabilities() }

// Link implements net.NIC.
func (i *Iface) Link() gnet.LinkState { return i.lower.Link() }

// Start implements net.NIC: it starts the lower NIC with the interface
// as its handler.
func (i *Iface) Start(h gnet.Handler) error {
	if h == nil {
		return errors.New("forward: nil handler")
	}
	u := &uppers{h: h}
	u.view, _ = h.(viewHandler)
	u.pass, _ = h.(gnet.PassHandler)
	i.hmu.Lock()
	i.upper.Store(u)
	i.hmu.Unlock()
	return i.lower.Start(i)
}

// Stop implements net.NIC.
func (i *Iface) Stop() {
	i.lower.Stop()
	i.hmu.Lock()
	i.upper.Store(nil)
	i.hmu.Unlock()
}

// TxBatchBegin implements net.TxBatcher: the batch is the lower NIC's,
// if it batches.
func (i *Iface) TxBatchBegin() {
	if b, ok := i.lower.(gnet.TxBatcher); ok {
		b.TxBatchBegin()
	}
}

// TxBatchEnd implements net.TxBatcher.
func (i *Iface) TxBatchEnd() {
	if b, ok := i.lower.(gnet.TxBatcher); ok {
		b.TxBatchEnd()
	}
}

// Transmit implements net.NIC: the stack's frames go to the lower NIC,
// recorded in the connection table first on a tracked interface.
func (i *Iface) Transmit(tb gnet.TxBuf) error {
	if i.track {
		i.trackOutput(tb)
	}
	return i.lower.Transmit(tb)
}

func (i *Iface) trackOutput(tb gnet.TxBuf) {
	segs := tb.Segments()
	if len(segs) == 0 || len(segs[0]) < gnet.EthHeaderLen || etherType(segs[0]) != etherIPv4 {
		return
	}
	if len(segs) == 1 {
		i.f.table.Output(segs[0][gnet.EthHeaderLen:], i.id)
		return
	}
	i.txMu.Lock()
	k := 0
	for _, s := range segs {
		k += copy(i.scratch[k:], s)
	}
	i.f.table.Output(i.scratch[gnet.EthHeaderLen:k], i.id)
	i.txMu.Unlock()
}

// LinkChanged implements net.Handler: passed up. A link that comes back
// may lead to another device (a replaced modem): connections leaving by
// the interface look their next hop up again.
func (i *Iface) LinkChanged(ls gnet.LinkState) {
	if ls.Up {
		i.f.table.ForgetHops(i.id)
	}
	if h := i.uppers().h; h != nil {
		h.LinkChanged(ls)
	}
}

// TxReady implements net.TxWaker: passed up to a stack endpoint that
// queues.
func (i *Iface) TxReady() {
	if w, ok := i.uppers().h.(gnet.TxWaker); ok {
		w.TxReady()
	}
}

// Receive implements net.Handler for a lower NIC that lends its frames.
func (i *Iface) Receive(frame []byte) {
	if i.intercept != nil && i.intercept(frame) {
		return
	}
	switch i.classify(frame) {
	case passUp:
		i.deliverFrame(frame)
		return
	case filtered:
		return
	}
	if i.f.processLent(i, frame) {
		return
	}
	v := buffer.NewViewSize(len(frame))
	copy(v.AsSlice(), frame) // fresh and unshared
	i.f.process(i, v)
}

// ReceiveLent implements net/bridge's LendHandler: br-lan's host port
// offers a frame that no other port kept before it hands the frame over
// by reference. A routable frame the fast path can take from borrowed
// memory is consumed here (processLent); anything else is left to
// ReceiveView.
func (i *Iface) ReceiveLent(frame []byte) bool {
	return i.lendable(frame) && i.f.processLent(i, frame)
}

// lendable is classify's route case, without its input chain for
// broadcasts: an IPv4 unicast frame to the interface's MAC, which the
// fast path may take borrowed.
func (i *Iface) lendable(frame []byte) bool {
	return i.intercept == nil && len(frame) >= gnet.EthHeaderLen+ipv4Min && etherType(frame) == etherIPv4 &&
		frame[0]&1 == 0 && isMAC(frame[0:6], &i.mac)
}

// isMAC reports whether b holds the address m: the six bytes' XORs ORed,
// one branch. Comparing [6]byte values calls runtime.memequal, which cost
// about 60 instructions per frame on mips32 (natbench).
func isMAC(b []byte, m *gnet.MAC) bool {
	_ = b[5]
	return (b[0]^m[0])|(b[1]^m[1])|(b[2]^m[2])|(b[3]^m[3])|(b[4]^m[4])|(b[5]^m[5]) == 0
}

// ReceiveLentBuf implements net/bridge's LendBufHandler: ReceiveLent,
// with the ingress driver's buffer, which the fast path keeps with its
// rewritten headers (net.RxBuf.KeepWith) for an egress NIC that sends such
// a buffer in place: the routed frame is not copied at all, and its
// payload, past the head the driver made readable (net.RxHeadLen), is
// not even read. Every other way out of processLent asks for the whole
// frame first (readable).
// Frames it forwards on the fast path are counted at the pass's end
// (ReceiveLentDone).
func (i *Iface) ReceiveLentBuf(frame []byte, r gnet.RxBuf) bool {
	if !i.lendable(frame) {
		return false
	}
	i.rxBuf = r
	ok := i.f.processLent(i, frame)
	i.rxBuf = nil
	return ok
}

// ReceiveLentDone implements net/bridge's LendBufHandler: the frames
// the pass's ReceiveLentBuf calls forwarded on the fast path are added to
// the Forwarder's counters.
func (i *Iface) ReceiveLentDone() {
	if k := i.fastSent; k != 0 {
		i.fastSent = 0
		i.f.Stats.Forwarded.Add(k)
		i.f.Stats.FastPath.Add(k)
	}
	if k := i.localSent; k != 0 {
		i.localSent = 0
		i.f.Stats.Local.Add(k)
	}
}

// ReceivePassOpen implements net.PassHandler (br-lan's host port calls
// it): the stack above is told too, so that it may hold the pass's frames
// for it, which reach it through this interface.
func (i *Iface) ReceivePassOpen() {
	if i.passes == 0 {
		i.passTo = i.uppers().pass
	}
	i.passes++
	if i.passTo != nil {
		i.passTo.ReceivePassOpen()
	}
}

// ReceivePassDone implements net.PassHandler.
func (i *Iface) ReceivePassDone() {
	if i.passes == 0 {
		return // not opened here: nothing to end
	}
	i.passes--
	if p := i.passTo; p != nil {
		if i.passes == 0 {
			i.passTo = nil
		}
		p.ReceivePassDone()
	}
}

// readable makes frame, the one processLent handles, readable whole if
// the driver lent only its head (net.RxBuf.Frame). A frame no longer
// than the head is readable already: no call.
func (i *Iface) readable(frame []byte) {
	if i.rxBuf != nil && len(frame) > gnet.RxHeadLen {
		i.rxBuf.Frame()
	}
}

// ReceiveView takes frames by reference from a lower NIC that hands them
// over (br-lan's host port).
func (i *Iface) ReceiveView(v *buffer.View) {
	b := v.AsSlice()
	if i.intercept != nil && i.intercept(b) {
		v.Release()
		return
	}
	switch i.classify(b) {
	case passUp:
		i.deliverView(v)
		return
	case filtered:
		v.Release()
		return
	}
	// Others (br-lan's egress ports) may still read this memory: take a
	// private copy before rewriting, if and only if it is shared.
	_, _ = v.WriteAt(b[:0], 0)
	i.f.process(i, v)
}

const (
	etherIPv4 = 0x0800
	ipv4Min   = 20
)

func etherType(b []byte) uint16 { return binary.BigEndian.Uint16(b[12:14]) }

// What the Forwarder does with a received frame.
type class uint8

const (
	route    class = iota // IPv4 unicast to the interface's MAC: the Forwarder's
	passUp                // not IPv4 (ARP) or not for the router: the stack's to judge
	filtered              // an IPv4 broadcast or multicast the input chain refused
)

// classify sorts a received frame. IPv4 unicast to the interface's MAC
// is the Forwarder's to route; an IPv4 broadcast or multicast on a
// tracked interface (the WAN) meets the input chain before the stack
// sees it, so no WAN broadcast reaches a service the firewall keeps
// closed; everything else (ARP, frames for other MACs) goes up as it is.
func (i *Iface) classify(b []byte) class {
	if len(b) < gnet.EthHeaderLen+ipv4Min || etherType(b) != etherIPv4 {
		return passUp
	}
	if b[0]&1 == 0 {
		if [6]byte(b[0:6]) == i.mac {
			return route
		}
		return passUp
	}
	if !i.track {
		return passUp
	}
	p, ok := peek(b[gnet.EthHeaderLen:])
	if !ok {
		i.f.Stats.InputDrop.Add(1)
		return filtered
	}
	p.In = uint8(i.id)
	if verdict(i.f.rules.Load().Input(&p)) != nat.Forward {
		i.f.Stats.InputDrop.Add(1)
		return filtered
	}
	return passUp
}

// uppers is the handler an Iface passes frames up to, as Start was given
// it, with the interfaces it also implements; never changed once
// published.
type uppers struct {
	h    gnet.Handler
	view viewHandler      // h, if it takes frames by reference
	pass gnet.PassHandler // h, if it is told of receive passes
}

// uppers returns the handlers frames go up to now (none before Start
// and after Stop).
func (i *Iface) uppers() *uppers {
	if u := i.upper.Load(); u != nil {
		return u
	}
	return &noUppers
}

// noUppers is what uppers returns while frames go up to nothing. Callers
// only read it, as they read the ones Start publishes: a pointer, not a
// copy of the three interfaces (on mips32 the copy was some 60
// instructions a frame).
var noUppers uppers

// deliverFrame passes a borrowed frame up to the stack.
func (i *Iface) deliverFrame(b []byte) {
	if h := i.uppers().h; h != nil {
		h.Receive(b)
	}
}

// deliverView passes a frame up to the stack by reference.
func (i *Iface) deliverView(v *buffer.View) {
	u := i.uppers()
	h, vh := u.h, u.view
	switch {
	case vh != nil:
		vh.ReceiveView(v)
	case h != nil:
		h.Receive(v.AsSlice())
		v.Release()
	default:
		v.Release()
	}
}

// transmit sends the frame in v out of the interface and releases v.
func (i *Iface) transmit(v *buffer.View) bool {
	if i.viewTx != nil {
		err := i.viewTx.TransmitView(v)
		v.Release()
		if err != nil {
			i.f.Stats.TxErrors.Add(1)
			return false
		}
		return true
	}
	tb := newTxBuf(v)
	if err := i.lower.Transmit(tb); err != nil {
		tb.Release()
		i.f.Stats.TxErrors.Add(1)
		return false
	}
	return true
}

// txBuf lends a gVisor buffer to a NIC as a TxBuf; both come from pools.
type txBuf struct {
	v    *buffer.View
	segs [1][]byte
}

var txBufPool = sync.Pool{New: func() any { return new(txBuf) }}

func newTxBuf(v *buffer.View) *txBuf {
	t := txBufPool.Get().(*txBuf)
	t.v = v
	t.segs[0] = v.AsSlice()
	return t
}

func (t *txBuf) Segments() [][]byte { return t.segs[:] }
func (t *txBuf) Len() int           { return len(t.segs[0]) }
func (t *txBuf) Release() {
	t.v.Release()
	t.v, t.segs[0] = nil, nil
	txBufPool.Put(t)
}
