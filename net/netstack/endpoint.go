package netstack

import (
	"encoding/binary"
	"errors"
	"sync"
	"sync/atomic"

	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/net/inetsum"
	"gvisor.dev/gvisor/pkg/buffer"
	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/header"
	"gvisor.dev/gvisor/pkg/tcpip/stack"
)

// Stats are the Endpoint's counters. Every frame that enters Receive ends
// in exactly one Rx counter; every frame given to WritePackets ends in
// exactly one of TxFrames, TxRingFull, TxLinkDown, TxErrors (frames still
// in the software queue are in none yet). TxQueued and LinkChanges count
// events.
type Stats struct {
	RxFrames      gnet.Counter // delivered to the stack
	RxBytes       gnet.Counter
	RxMalformed   gnet.Counter // shorter than an Ethernet header
	RxOversize    gnet.Counter // longer than MTU + header (+ one VLAN tag)
	RxUnsupported gnet.Counter // 802.3 length frames (LLC), not for IP
	RxNotAttached gnet.Counter // arrived before Attach / after detach
	TxFrames      gnet.Counter // accepted by the NIC
	TxBytes       gnet.Counter
	TxQueued      gnet.Counter // found the ring full and waited in the queue
	TxRingFull    gnet.Counter // dropped: TX ring and software queue full
	TxLinkDown    gnet.Counter // dropped: carrier down
	TxErrors      gnet.Counter // dropped: oversize or other NIC error
	// TxOffloaded counts the packets the stack handed over for
	// segmentation (see gso.go); the frames cut from them are in
	// TxFrames and the other Tx counters like any others.
	TxOffloaded gnet.Counter
	// RxCoalesced counts the frames delivered merged into an earlier
	// one's packet and the pure ACKs a later one superseded (see
	// coalesce.go); they are in RxFrames too.
	RxCoalesced gnet.Counter
	// RxChunks counts the chunks the coalescer had gVisor make for
	// copied payloads, RxChunksReused the filled ones it wrote again
	// instead, once the stack had let them go (coalesce.go).
	RxChunks, RxChunksReused gnet.Counter
	LinkChanges              gnet.Counter
	// TimestampsRefused counts connection requests whose TCP Timestamps
	// option was removed (Options.NoTCPTimestamps).
	TimestampsRefused gnet.Counter
}

// Endpoint adapts a NIC to gVisor's stack.LinkEndpoint, Ethernet framing
// included (it does the job of gVisor's link/ethernet wrapper itself, so RX
// has one less indirection).
//
// Link state reaches the stack through BindStack: carrier loss disables the
// gVisor NIC (which, as Linux does on carrier loss, flushes its neighbour
// cache) and carrier gain enables it again; addresses and routes are kept.
type Endpoint struct {
	nic     gnet.NIC
	caps    gnet.Capabilities
	batcher gnet.TxBatcher // nic, if it batches doorbells

	mu         sync.RWMutex
	dispatcher stack.NetworkDispatcher
	mtu        uint32
	addr       tcpip.LinkAddress
	// conf is the three above as of their last change (publishLocked),
	// for the per-frame paths: one atomic load, where a read lock is two
	// atomic read-modify-writes (some 40 instructions on mips32).
	conf     atomic.Pointer[linkConf]
	onClose  func()
	started  bool
	st       *stack.Stack
	nicID    tcpip.NICID
	onLink   func(gnet.LinkState)
	startErr error

	linkUp atomic.Bool

	// rxVerified is set while the packet being delivered had its
	// checksums verified here (the coalescer's): gVisor takes checksum
	// offload to be a property of the link, read once per received packet
	// as the stack takes it over (stack/nic.go, DeliverNetworkPacket),
	// so Capabilities reports it for that packet alone. Deliveries are
	// serialised (receive-side state); the atomic is for the transmit
	// side's calls of Capabilities, which look at other bits.
	rxVerified atomic.Bool

	noTCPTimestamps bool
	gso             bool
	coalesce        bool

	// Receive passes open (net.PassHandler) and the segments held in
	// them; receive-side state, serialised as the NIC's handler calls.
	passes int
	held   coalescer

	// Software TX queue for frames that found the ring full; FIFO in a
	// fixed ring so queueing does not allocate.
	txMu   sync.Mutex
	txq    []gnet.TxBuf
	txHead int
	txLen  int
	seg    segmenter // cuts offloaded packets; guarded by txMu

	Stats Stats
}

// linkConf is a snapshot of an Endpoint's dispatcher, MTU and link
// address; it is never changed once published.
type linkConf struct {
	d    stack.NetworkDispatcher
	mtu  uint32
	addr tcpip.LinkAddress
}

// publishLocked publishes the dispatcher, MTU and link address. The caller
// holds e.mu.
func (e *Endpoint) publishLocked() {
	e.conf.Store(&linkConf{d: e.dispatcher, mtu: e.mtu, addr: e.addr})
}

var _ stack.LinkEndpoint = (*Endpoint)(nil)
var _ gnet.Handler = (*Endpoint)(nil)
var _ gnet.TxWaker = (*Endpoint)(nil)
var _ stack.GSOEndpoint = (*Endpoint)(nil)
var _ gnet.PassHandler = (*Endpoint)(nil)

// Options tune an Endpoint.
type Options struct {
	// TxQueueLen is how many frames may wait for TX descriptors when the
	// ring is full (Linux's txqueuelen). 0 means DefaultTxQueueLen; -1
	// disables queueing (every ring-full frame is dropped).
	TxQueueLen int
	// NoTCPTimestamps turns TCP timestamps off for the connections the
	// stack accepts, as Linux's net.ipv4.tcp_timestamps=0 does: the
	// Endpoint removes the option from arriving connection requests (see
	// tcpts.go for why a router on an FPU-less CPU wants this).
	NoTCPTimestamps bool
	// NoSegmentationOffload makes the stack cut its TCP segments itself,
	// one IP packet per wire frame, instead of handing the Endpoint
	// packets of many segments to cut (see gso.go).
	NoSegmentationOffload bool
	// NoReceiveCoalescing delivers every received TCP segment to the
	// stack on its own, instead of merging a receive pass's consecutive
	// segments of a connection (see coalesce.go).
	NoReceiveCoalescing bool
}

// DefaultTxQueueLen is Linux's default txqueuelen for Ethernet devices.
// gVisor's TCP sends a whole congestion window at once (hundreds of
// segments with its default 1 MiB send buffer); a smaller queue turns
// those bursts into losses and retransmission timeouts. The queue holds
// references, not copies: its cost is the frames' own memory.
const DefaultTxQueueLen = 1000

// NewEndpoint wraps nic with default options. The NIC is started on the
// first Attach.
func NewEndpoint(nic gnet.NIC) (*Endpoint, error) { return NewEndpointOptions(nic, Options{}) }

// NewEndpointOptions wraps nic.
func NewEndpointOptions(nic gnet.NIC, o Options) (*Endpoint, error) {
	switch {
	case o.TxQueueLen == 0:
		o.TxQueueLen = DefaultTxQueueLen
	case o.TxQueueLen < 0:
		o.TxQueueLen = 0
	}
	mtu := nic.MTU()
	if mtu < 68 || mtu > gnet.RxBufSize-gnet.EthHeaderLen-gnet.VLANTagLen {
		// 68: RFC 791's minimum IPv4 MTU. The upper bound keeps every
		// frame, tagged or not, within the contract's RxBufSize.
		return nil, errors.New("netstack: NIC MTU out of range")
	}
	mac := nic.MACAddress()
	if mac.IsMulticast() || mac.IsZero() {
		return nil, errors.New("netstack: NIC MAC " + mac.String() + " is not a unicast address")
	}
	e := &Endpoint{
		nic:  nic,
		caps: nic.Capabilities(),
		mtu:  uint32(mtu),
		addr: tcpip.LinkAddress(mac[:]),
		txq:  make([]gnet.TxBuf, o.TxQueueLen),

		noTCPTimestamps: o.NoTCPTimestamps,
		gso:             !o.NoSegmentationOffload,
		coalesce:        !o.NoReceiveCoalescing,
	}
	e.held.stats = &e.Stats
	e.batcher, _ = nic.(gnet.TxBatcher)
	e.linkUp.Store(nic.Link().Up)
	e.publishLocked() // not shared yet
	return e, nil
}

// BindStack makes carrier changes enable/disable NIC id of s. The current
// state is applied immediately.
func (e *Endpoint) BindStack(s *stack.Stack, id tcpip.NICID) error {
	e.mu.Lock()
	e.st, e.nicID = s, id
	e.mu.Unlock()
	return e.applyLink(e.linkUp.Load())
}

// OnLinkChange registers f to be called (from the NIC's context) after
// each carrier change has been applied to the stack.
func (e *Endpoint) OnLinkChange(f func(gnet.LinkState)) {
	e.mu.Lock()
	e.onLink = f
	e.mu.Unlock()
}

func (e *Endpoint) applyLink(up bool) error {
	e.mu.RLock()
	s, id := e.st, e.nicID
	e.mu.RUnlock()
	if s == nil {
		return nil
	}
	var err tcpip.Error
	if up {
		err = s.EnableNIC(id)
	} else {
		err = s.DisableNIC(id)
	}
	if err != nil {
		return errors.New("netstack: " + err.String())
	}
	return nil
}

// LinkUp reports the last carrier state the NIC reported.
func (e *Endpoint) LinkUp() bool { return e.linkUp.Load() }

// LinkChanged implements Handler.
func (e *Endpoint) LinkChanged(ls gnet.LinkState) {
	e.Stats.LinkChanges.Add(1)
	e.linkUp.Store(ls.Up)
	if !ls.Up {
		e.flushTxQueue()
	}
	_ = e.applyLink(ls.Up) // only fails for an unknown NIC id: nothing to apply to
	e.mu.RLock()
	f := e.onLink
	e.mu.RUnlock()
	if f != nil {
		f(ls)
	}
}

// Receive implements gnet.Handler: it validates the Ethernet framing and
// copies the borrowed frame once, into a pooled gVisor buffer the stack
// then owns (it may keep packets long after Receive returns: reassembly,
// TCP queues). In a receive pass, a TCP segment it can merge has only its
// payload copied, into the coalescer's chunks, its checksum verified in
// the same pass over the bytes (coalesce.go).
func (e *Endpoint) Receive(frame []byte) {
	typ, d, mac := e.accept(frame)
	if d == nil {
		return
	}
	if e.passes > 0 && e.coalesce && typ == etherTypeIPv4 {
		s, ok := mergeable(frame, mac)
		switch {
		case ok && s.plen > 0:
			if e.held.n > 0 && !e.held.continues(frame, s) {
				e.deliverHeld(d)
			}
			if e.held.addCopy(frame, s) {
				if e.held.n == maxCoalesce {
					e.deliverHeld(d)
				}
				return
			}
			// A wrong checksum: the frame goes up alone, after what is
			// held, for the stack to drop and count.
		case ok && len(frame) <= len(e.held.hdr) && inetsum.Fold(uint32(s.hsum)) == 0xffff:
			// A pure ACK with a valid checksum (no payload to add to
			// its sum): held as a copy of its bytes, so that one a
			// later ACK supersedes never costs a buffer.
			if e.held.n > 0 && !e.held.supersedes(frame, s) {
				e.deliverHeld(d)
			}
			e.countAck(e.held.holdAck(nil, frame, s))
			return
		}
	}
	v := buffer.NewViewSize(len(frame))
	copy(v.AsSlice(), frame) // a fresh view: nobody else sees it yet
	e.receive(d, mac, typ, v)
}

// ReceiveView delivers a frame the caller already holds in a gVisor
// buffer, without copying: the Endpoint takes over the reference v, and
// the stack releases it when done with the packet. The bridge's host port
// delivers this way (it is the bridge's ViewHandler), handing the stack
// the buffer its egress ports transmit from; since others may read that
// memory meanwhile, the caller passes only frames the stack does not
// rewrite in place (see net/bridge).
func (e *Endpoint) ReceiveView(v *buffer.View) {
	typ, d, mac := e.accept(v.AsSlice())
	if d == nil {
		v.Release()
		return
	}
	e.receive(d, mac, typ, v)
}

// receive delivers an accepted frame, held in v, or, in a receive pass,
// holds it to merge with the pass's next ones (coalesce.go). Anything it
// does not hold goes up after what is held: the stack sees the frames in
// their order.
func (e *Endpoint) receive(d stack.NetworkDispatcher, mac tcpip.LinkAddress, typ uint16, v *buffer.View) {
	if e.passes > 0 && e.coalesce && typ == etherTypeIPv4 {
		b := v.AsSlice()
		s, ok := mergeable(b, mac)
		var sum uint16
		if ok {
			sum, ok = verify(b, s)
		}
		if ok {
			if s.plen == 0 { // a pure ACK
				if e.held.n > 0 && !e.held.supersedes(b, s) {
					e.deliverHeld(d)
				}
				e.countAck(e.held.holdAck(v, b, s))
				return
			}
			if e.held.n > 0 && !e.held.continues(b, s) {
				e.deliverHeld(d)
			}
			e.held.add(v, s, sum)
			if e.held.n == maxCoalesce {
				e.deliverHeld(d)
			}
			return
		}
	}
	if e.held.n > 0 {
		e.deliverHeld(d)
	}
	e.deliver(d, typ, v)
}

// countAck counts a pure ACK held in place of one it superseded, which
// the stack never sees, as delivered and coalesced.
func (e *Endpoint) countAck(replaced bool) {
	if replaced {
		e.Stats.RxFrames.Add(1)
		e.Stats.RxBytes.Add(uint32(e.held.hlen))
		e.Stats.RxCoalesced.Add(1)
	}
}

// deliverHeld delivers the segments held as one packet.
func (e *Endpoint) deliverHeld(d stack.NetworkDispatcher) {
	n, size := e.held.n, e.held.size
	buf := e.held.merged()
	if d == nil { // detached since
		buf.Release()
		return
	}
	pkt := stack.NewPacketBuffer(stack.PacketBufferOptions{Payload: buf})
	e.ParseHeader(pkt) // cannot fail: mergeable checked the headers
	pkt.PktType = tcpip.PacketHost
	e.Stats.RxFrames.Add(uint32(n))
	e.Stats.RxBytes.Add(uint32(size + n*(e.held.hlen)))
	e.Stats.RxCoalesced.Add(uint32(n - 1))
	e.rxVerified.Store(true) // the coalescer verified every checksum
	d.DeliverNetworkPacket(header.IPv4ProtocolNumber, pkt)
	e.rxVerified.Store(false)
	pkt.DecRef()
}

// ReceivePassOpen implements net.PassHandler.
func (e *Endpoint) ReceivePassOpen() { e.passes++ }

// ReceivePassDone implements net.PassHandler: what the pass left held goes
// up.
func (e *Endpoint) ReceivePassDone() {
	if e.passes > 0 {
		e.passes--
	}
	if e.held.n > 0 {
		e.deliverHeld(e.conf.Load().d)
	}
	e.held.passDone()
}

// accept checks a received frame's framing and that the endpoint is
// attached, counting what it refuses. It returns the EtherType, the
// stack's dispatcher and the link address, with a nil dispatcher for a
// refused frame.
func (e *Endpoint) accept(b []byte) (uint16, stack.NetworkDispatcher, tcpip.LinkAddress) {
	n := len(b)
	if n < gnet.EthHeaderLen {
		e.Stats.RxMalformed.Add(1)
		return 0, nil, ""
	}
	c := e.conf.Load()
	d, mtu, addr := c.d, c.mtu, c.addr
	typ := binary.BigEndian.Uint16(b[12:14])
	max := int(mtu) + gnet.EthHeaderLen
	if typ == 0x8100 {
		// A tagged frame may carry a full MTU; gVisor has no VLAN
		// sub-interfaces, so it will drop it as an unknown protocol, but
		// it is not oversize.
		max += gnet.VLANTagLen
	}
	if n > max {
		e.Stats.RxOversize.Add(1)
		return 0, nil, ""
	}
	if typ < gnet.MinTypeValue {
		e.Stats.RxUnsupported.Add(1)
		return 0, nil, ""
	}
	if d == nil {
		e.Stats.RxNotAttached.Add(1)
	}
	return typ, d, addr
}

// deliver hands an accepted frame, held in v, to the stack; the packet
// takes over v.
func (e *Endpoint) deliver(d stack.NetworkDispatcher, typ uint16, v *buffer.View) {
	if e.noTCPTimestamps && typ == etherTypeIPv4 {
		if opt, tcp, ok := synTimestamp(v.AsSlice()); ok {
			// A copy, since others may share v's memory (the bridge's);
			// one per connection request.
			c := buffer.NewViewSize(v.Size())
			copy(c.AsSlice(), v.AsSlice())
			v.Release()
			v = c
			stripTimestamp(v.AsSlice(), opt, tcp)
			e.Stats.TimestampsRefused.Add(1)
		}
	}
	// Classify before gVisor parses: parsing a buffer others share too
	// (the bridge's) replaces the packet's memory by a copy, after which
	// v's memory may be recycled by its other holders.
	b := v.AsSlice()
	n := len(b)
	var pt tcpip.PacketType
	dst := tcpip.LinkAddress(b[0:6])
	switch {
	case b[0] == 0xff && dst == header.EthernetBroadcastAddress:
		pt = tcpip.PacketBroadcast
	case b[0]&1 != 0:
		pt = tcpip.PacketMulticast
	case dst == e.LinkAddress():
		pt = tcpip.PacketHost
	default:
		pt = tcpip.PacketOtherHost
	}
	pkt := stack.NewPacketBuffer(stack.PacketBufferOptions{Payload: buffer.MakeWithView(v)})
	if !e.ParseHeader(pkt) { // cannot fail: accept checked the length
		e.Stats.RxMalformed.Add(1)
		pkt.DecRef()
		return
	}
	pkt.PktType = pt
	pkt.RXChecksumValidated = e.caps&gnet.CapRxChecksum != 0
	e.Stats.RxFrames.Add(1)
	e.Stats.RxBytes.Add(uint32(n))
	d.DeliverNetworkPacket(tcpip.NetworkProtocolNumber(typ), pkt)
	pkt.DecRef()
}

// MTU implements stack.LinkEndpoint.
func (e *Endpoint) MTU() uint32 { return e.conf.Load().mtu }

// SetMTU implements stack.LinkEndpoint. The MTU can only be lowered below
// what the NIC supports.
func (e *Endpoint) SetMTU(mtu uint32) {
	if mtu > uint32(e.nic.MTU()) {
		mtu = uint32(e.nic.MTU())
	}
	e.mu.Lock()
	e.mtu = mtu
	e.publishLocked()
	e.mu.Unlock()
}

// MaxHeaderLength implements stack.LinkEndpoint.
func (*Endpoint) MaxHeaderLength() uint16 { return gnet.EthHeaderLen }

// LinkAddress implements stack.LinkEndpoint.
func (e *Endpoint) LinkAddress() tcpip.LinkAddress { return e.conf.Load().addr }

// SetLinkAddress implements stack.LinkEndpoint. It only changes the source
// address the stack uses; the NIC's station address filter is the driver's.
func (e *Endpoint) SetLinkAddress(addr tcpip.LinkAddress) {
	e.mu.Lock()
	e.addr = addr
	e.publishLocked()
	e.mu.Unlock()
}

// Capabilities implements stack.LinkEndpoint.
func (e *Endpoint) Capabilities() stack.LinkEndpointCapabilities {
	c := stack.CapabilityResolutionRequired
	if e.caps&gnet.CapRxChecksum != 0 || e.rxVerified.Load() {
		c |= stack.CapabilityRXChecksumOffload
	}
	if e.caps&gnet.CapTxChecksum != 0 {
		c |= stack.CapabilityTXChecksumOffload
	}
	return c
}

// SupportedGSO implements stack.GSOEndpoint: unless the Options turned it
// off, the Endpoint segments TCP packets itself (gso.go), as a NIC with
// segmentation offload would: stack.HostGSOSupported is how gVisor calls
// that.
func (e *Endpoint) SupportedGSO() stack.SupportedGSO {
	if e.gso {
		return stack.HostGSOSupported
	}
	return stack.GSONotSupported
}

// GSOMaxSize implements stack.GSOEndpoint.
func (e *Endpoint) GSOMaxSize() uint32 {
	if !e.gso {
		return 0
	}
	return gsoMaxSize(e.MTU())
}

// Attach implements stack.LinkEndpoint. The first non-nil Attach starts the
// NIC; a start failure leaves the endpoint detached (gVisor's Attach cannot
// return an error) and is reported by StartError.
func (e *Endpoint) Attach(d stack.NetworkDispatcher) {
	e.mu.Lock()
	start := d != nil && !e.started
	if start {
		e.started = true
	}
	e.dispatcher = d
	e.publishLocked()
	e.mu.Unlock()
	if start {
		if err := e.nic.Start(e); err != nil {
			e.mu.Lock()
			e.dispatcher = nil
			e.publishLocked()
			e.started = false
			e.startErr = err
			e.mu.Unlock()
		}
	}
}

// StartError returns why the NIC failed to start on Attach, if it did.
func (e *Endpoint) StartError() error {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.startErr
}

// IsAttached implements stack.LinkEndpoint.
func (e *Endpoint) IsAttached() bool {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.dispatcher != nil
}

// Wait implements stack.LinkEndpoint. The endpoint owns no goroutines.
func (*Endpoint) Wait() {}

// ARPHardwareType implements stack.LinkEndpoint.
func (*Endpoint) ARPHardwareType() header.ARPHardwareType { return header.ARPHardwareEther }

// AddHeader implements stack.LinkEndpoint.
func (e *Endpoint) AddHeader(pkt *stack.PacketBuffer) {
	eth := header.Ethernet(pkt.LinkHeader().Push(header.EthernetMinimumSize))
	src := pkt.EgressRoute.LocalLinkAddress
	if src == "" {
		src = e.LinkAddress()
	}
	eth.Encode(&header.EthernetFields{
		SrcAddr: src,
		DstAddr: pkt.EgressRoute.RemoteLinkAddress,
		Type:    pkt.NetworkProtocolNumber,
	})
}

// ParseHeader implements stack.LinkEndpoint.
func (*Endpoint) ParseHeader(pkt *stack.PacketBuffer) bool {
	_, ok := pkt.LinkHeader().Consume(header.EthernetMinimumSize)
	return ok
}

// Close implements stack.LinkEndpoint: it stops the NIC.
func (e *Endpoint) Close() {
	e.mu.Lock()
	f := e.onClose
	started := e.started
	e.started = false
	e.dispatcher = nil
	e.publishLocked()
	e.mu.Unlock()
	if f != nil {
		f()
	}
	if started {
		e.nic.Stop()
	}
	e.flushTxQueue()
}

// SetOnCloseAction implements stack.LinkEndpoint.
func (e *Endpoint) SetOnCloseAction(f func()) {
	e.mu.Lock()
	e.onClose = f
	e.mu.Unlock()
}

// WritePackets implements stack.LinkWriter. It never blocks: a frame that
// finds the TX ring full waits in the bounded software queue until the NIC
// reports TxReady; when the queue is full too the frame is dropped, counted,
// and ErrNoBufferSpace is returned so the stack accounts for it
// (transports retransmit). A packet offloaded for segmentation is cut into
// frames here (gso.go), each of which counts as a frame; one that cannot be
// cut counts once, in TxErrors. More than one frame to send is a batch
// for a NIC that batches its doorbells (net.TxBatcher), rung once at the
// end.
func (e *Endpoint) WritePackets(pkts stack.PacketBufferList) (int, tcpip.Error) {
	return e.write(pkts.AsSlice())
}

// QDisc returns the queueing discipline to create e's stack NIC with
// (stack.NICOptions.QDisc; CreateNIC does): it hands each packet the
// stack sends straight to e, as gVisor's default one does, but without
// the one-packet list that one makes, a heap allocation per packet sent
// (the list's slice escapes into the LinkWriter interface call).
func (e *Endpoint) QDisc() stack.QueueingDiscipline { return directQDisc{e} }

// directQDisc is Endpoint.QDisc's discipline: none, as gVisor's default.
type directQDisc struct{ e *Endpoint }

// WritePacket implements stack.QueueingDiscipline.
func (q directQDisc) WritePacket(pkt *stack.PacketBuffer) tcpip.Error {
	one := [1]*stack.PacketBuffer{pkt}
	_, err := q.e.write(one[:])
	return err
}

// Close implements stack.QueueingDiscipline: there is no queue to close.
func (directQDisc) Close() {}

// CreateNIC adds e to s as NIC id, with e's QDisc.
func CreateNIC(s *stack.Stack, id tcpip.NICID, e *Endpoint) tcpip.Error {
	return s.CreateNICWithOptions(id, e, stack.NICOptions{QDisc: e.QDisc()})
}

// write is WritePackets for the packets of list, which it does not keep.
func (e *Endpoint) write(list []*stack.PacketBuffer) (int, tcpip.Error) {
	max := int(e.MTU()) + gnet.EthHeaderLen
	sg := e.caps&gnet.CapScatterGather != 0
	if e.batcher != nil && burst(list) {
		e.batcher.TxBatchBegin()
		defer e.batcher.TxBatchEnd() // after the unlock below
	}
	e.txMu.Lock()
	defer e.txMu.Unlock()
	e.drainLocked()
	for i, pkt := range list {
		if !e.linkUp.Load() {
			e.Stats.TxLinkDown.Add(uint32(len(list) - i))
			return i, &tcpip.ErrClosedForSend{}
		}
		var err error
		lost := 1 // frames of pkt lost if err != nil
		switch {
		case gsoType(pkt):
			lost, err = e.writeOffloadedLocked(pkt, max, sg)
		case pkt.Size() > max:
			err = errOversize
		default:
			err = e.sendLocked(newTxPacket(pkt, sg))
		}
		if err != nil {
			return i, e.txFailed(err, uint32(lost+len(list)-i-1))
		}
	}
	return len(list), nil
}

// burst reports whether list makes more than one frame: more than one
// packet, or one offloaded packet of more than one segment. A single
// frame (most often a pure ACK) does not pay for a batch.
func burst(list []*stack.PacketBuffer) bool {
	if len(list) != 1 {
		return len(list) > 1
	}
	p := list[0]
	return gsoType(p) && p.Data().Size() > int(p.GSOOptions.MSS)
}

// errOversize is a packet longer than the MTU that was not offloaded.
var errOversize = errors.New("netstack: packet longer than the MTU")

// txFailed counts frames lost to a transmit error and returns the error
// the stack expects for it.
func (e *Endpoint) txFailed(err error, frames uint32) tcpip.Error {
	switch err {
	case gnet.ErrTxFull:
		e.Stats.TxRingFull.Add(frames)
		return &tcpip.ErrNoBufferSpace{}
	case gnet.ErrLinkDown:
		e.Stats.TxLinkDown.Add(frames)
		return &tcpip.ErrClosedForSend{}
	case errOversize:
		e.Stats.TxErrors.Add(frames)
		return &tcpip.ErrMessageTooLong{}
	default:
		e.Stats.TxErrors.Add(frames)
		return &tcpip.ErrInvalidEndpointState{}
	}
}

// sendLocked hands tb to the NIC, or queues it when the ring is full (or
// earlier frames wait: FIFO). It returns the NIC's error for a frame
// neither took, having released it.
func (e *Endpoint) sendLocked(tb gnet.TxBuf) error {
	n := tb.Len() // tb may be gone once the NIC has it
	var err error
	if e.txLen == 0 {
		err = e.nic.Transmit(tb)
	} else {
		err = gnet.ErrTxFull // keep FIFO order behind queued frames
	}
	if err == gnet.ErrTxFull && e.txLen < len(e.txq) {
		e.txq[(e.txHead+e.txLen)%len(e.txq)] = tb
		e.txLen++
		e.Stats.TxQueued.Add(1)
		return nil
	}
	if err != nil {
		tb.Release()
		return err
	}
	e.Stats.TxFrames.Add(1)
	e.Stats.TxBytes.Add(uint32(n))
	return nil
}

// writeOffloadedLocked cuts pkt into frames and sends them. On an error it
// returns how many of pkt's frames were lost: the failed one and those not
// cut yet.
func (e *Endpoint) writeOffloadedLocked(pkt *stack.PacketBuffer, max int, sg bool) (int, error) {
	s := &e.seg
	defer func() { s.pkt, s.v = nil, nil }() // keep no reference past the call
	if err := s.start(pkt); err != nil {
		return 1, err
	}
	if s.hlen+min(s.mss, s.left) > max {
		return 1, errOversize
	}
	e.Stats.TxOffloaded.Add(1)
	partial := e.caps&gnet.CapTxChecksumCopy != 0
	for s.more() {
		t := txPool.Get().(*txPacket)
		s.next(t, partial)
		if !sg {
			t.flatten()
		}
		if err := e.sendLocked(t); err != nil {
			return 1 + (s.left+s.mss-1)/s.mss, err
		}
	}
	return 0, nil
}

// Queued is the number of frames waiting in the software TX queue.
func (e *Endpoint) Queued() int {
	e.txMu.Lock()
	defer e.txMu.Unlock()
	return e.txLen
}

// TxReady implements TxWaker: move queued frames into the freed
// descriptors.
func (e *Endpoint) TxReady() {
	if e.batcher != nil {
		e.batcher.TxBatchBegin()
		defer e.batcher.TxBatchEnd()
	}
	e.txMu.Lock()
	e.drainLocked()
	e.txMu.Unlock()
}

// drainLocked hands queued frames to the NIC until the ring is full again.
// Also run on every WritePackets, so a NIC that never calls TxReady delays
// frames but cannot wedge the queue.
func (e *Endpoint) drainLocked() {
	for e.txLen > 0 {
		tb := e.txq[e.txHead]
		err := e.nic.Transmit(tb)
		if err == gnet.ErrTxFull {
			return
		}
		e.txq[e.txHead] = nil
		e.txHead = (e.txHead + 1) % len(e.txq)
		e.txLen--
		if err == nil {
			e.Stats.TxFrames.Add(1)
			e.Stats.TxBytes.Add(uint32(tb.Len()))
		} else {
			// Link went down or the NIC refused the frame.
			tb.Release()
			if err == gnet.ErrLinkDown {
				e.Stats.TxLinkDown.Add(1)
			} else {
				e.Stats.TxErrors.Add(1)
			}
		}
	}
}

// flushTxQueue drops every queued frame (carrier loss, Close).
func (e *Endpoint) flushTxQueue() {
	e.txMu.Lock()
	for e.txLen > 0 {
		e.txq[e.txHead].Release()
		e.txq[e.txHead] = nil
		e.txHead = (e.txHead + 1) % len(e.txq)
		e.txLen--
		e.Stats.TxLinkDown.Add(1)
	}
	e.txMu.Unlock()
}

// txPacket is the TxBuf the Endpoint hands to a NIC. It holds a reference
// on the PacketBuffer so gVisor cannot recycle the memory while the NIC's
// DMA still reads it.
type txPacket struct {
	pkt  *stack.PacketBuffer
	flat *buffer.View // non-nil when the frame was flattened for a non-SG NIC
	segs [][]byte
	n    int
	// hdr holds the headers of a frame cut from an offloaded packet
	// (segs[0]); its payload stays in pkt's memory.
	hdr [maxSegHeaders]byte
	// The TCP checksum the NIC is to complete, if partial
	// (net.TxChecksum): it sums from sumStart; the field is at sumField.
	sumStart, sumField int
	partial            bool
}

var _ gnet.TxChecksum = (*txPacket)(nil)

// ChecksumPartial implements net.TxChecksum.
func (t *txPacket) ChecksumPartial() (int, int, bool) { return t.sumStart, t.sumField, t.partial }

var txPool = sync.Pool{New: func() any { return new(txPacket) }}

func newTxPacket(pkt *stack.PacketBuffer, sg bool) *txPacket {
	t := txPool.Get().(*txPacket)
	t.pkt = pkt.IncRef()
	t.n = pkt.Size()
	t.segs = t.segs[:0]
	// The packet's views from its first header byte on, without
	// PacketBuffer.AsSlices' allocation.
	vl, skip := pkt.AsViewList()
	for v := vl.Front(); v != nil; v = v.Next() {
		b := v.AsSlice()
		if skip >= len(b) {
			skip -= len(b)
			continue
		}
		t.segs = append(t.segs, b[skip:])
		skip = 0
	}
	if !sg {
		t.flatten()
	}
	return t
}

// flatten gathers the frame into one buffer: one copy, which a NIC without
// gather DMA needs anyway.
func (t *txPacket) flatten() {
	if len(t.segs) == 1 {
		return
	}
	t.flat = buffer.NewViewSize(t.n)
	b := t.flat.AsSlice()
	if t.partial { // completed in the copy
		_, sum := inetsum.CopyGather(b, t.segs, t.sumStart)
		binary.BigEndian.PutUint16(b[t.sumField:], inetsum.Checksum(sum))
		t.partial = false
	} else {
		k := 0
		for _, s := range t.segs {
			k += copy(b[k:], s)
		}
	}
	clear(t.segs)
	t.segs = append(t.segs[:0], b)
}

func (t *txPacket) Segments() [][]byte { return t.segs }
func (t *txPacket) Len() int           { return t.n }

func (t *txPacket) Release() {
	if t.pkt == nil {
		panic("netstack: TxBuf released twice")
	}
	if t.flat != nil {
		t.flat.Release()
		t.flat = nil
	}
	t.pkt.DecRef()
	t.pkt = nil
	t.partial = false
	clear(t.segs)
	txPool.Put(t)
}
