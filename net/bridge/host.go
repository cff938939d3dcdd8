package bridge

import (
	"encoding/binary"
	"errors"
	"sync"
	"sync/atomic"

	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/net/inetsum"
	"gvisor.dev/gvisor/pkg/buffer"
)

// HostNIC is the bridge port leading to the router's own network stack.
// It implements net.NIC, so netstack.NewEndpoint turns it into the gVisor
// LinkEndpoint of the bridge interface (br-lan).
//
// Frames the bridge delivers to the host go to the handler Start was
// given. A handler that implements ViewHandler (netstack.Endpoint does)
// gets them in the bridge's copy, by reference: the frame a LAN port
// received reaches gVisor in the memory the bridge copied it into, which
// the bridge's egress ports transmit from too, and the stack, which keeps
// packets indefinitely (reassembly, TCP queues), holds a reference of its
// own. A frame for the router alone (unicast to br-lan's MAC) is the
// stack's alone, and gVisor parses it in place: one copy from the
// driver's buffer to the stack. A flooded frame that another port is
// still transmitting when gVisor parses it is shared, and gVisor copies
// what it parses (copy-on-write), a second copy; NICs that copy on
// Transmit (pcnet, the TAP device) are done with it by then. A handler
// that also implements LendHandler (the router's forwarding layer) is
// offered the borrowed frame first, and a routed frame it consumes costs
// the bridge no copy. Any other handler borrows the frame for the call,
// as from a driver.
//
// Frames the stack transmits are bridged synchronously, and the stack's
// TxBuf is released at once: the bridge never holds one. A frame for one
// known station behind a NIC that copies and gathers (pcnet) is lent to
// that NIC as the stack's own gather list; any other is gathered into one
// buffer first, which egress NIC ports share.
type HostNIC struct {
	b    *Bridge
	port int

	rxMu    sync.Mutex // serialises calls into h
	h       gnet.Handler
	vh      ViewHandler      // h, if it takes frames by reference
	lh      LendHandler      // h, if it takes some frames borrowed first
	lbh     LendBufHandler   // h, if it can also keep the driver's buffer
	ph      gnet.PassHandler // h, if it is told where receive passes begin and end
	flat    [gnet.RxBufSize]byte
	started atomic.Bool

	txMu   sync.Mutex           // serialises Input for the host port
	txFlat [gnet.RxBufSize]byte // Transmit's frame, when no port keeps frames; guarded by txMu

	// The transmit batch open on the NIC ports (net.TxBatcher): the
	// ports it began on, ended by the end of the last overlapping one.
	batchMu    sync.Mutex
	batch      []gnet.TxBatcher
	batchDepth int

	// RxNoHandler counts frames for the host before Start or after Stop.
	RxNoHandler atomic.Uint64
}

// A ViewHandler is a host port handler that takes frames by reference
// instead of borrowing them: the bridge's consumer on the host side, the
// router's gVisor stack (netstack.Endpoint implements it).
type ViewHandler interface {
	gnet.Handler
	// ReceiveView delivers one frame (FCS excluded) held in v. The
	// handler owns the reference v and releases it when it is done,
	// which may be long after the call. Other ports may still be
	// transmitting from the same memory, so the handler must not write
	// to it while others hold references: gVisor's buffers copy a shared
	// chunk before handing out memory to write to (copy-on-write).
	ReceiveView(v *buffer.View)
}

// A LendHandler is a ViewHandler that can take some frames borrowed, for
// the call only, sparing the bridge its copy: the router's forwarding
// layer (net/forward's Iface) consumes routed frames that way, copying
// them once into a buffer of its own. The bridge offers ReceiveLent a
// frame no other port has needed a copy of; if it returns false, it
// did nothing and the frame goes to ReceiveView as usual. ReceiveLent
// must neither write to the frame nor keep it.
type LendHandler interface {
	ViewHandler
	ReceiveLent(frame []byte) bool
}

// A LendBufHandler is a LendHandler that can also keep the ingress
// driver's buffer (net.RxBuf): when the driver offered it and the host
// port is the frame's last port, the bridge calls ReceiveLentBuf instead
// of ReceiveLent, with the same contract plus r, whose Keep or KeepWith
// the handler may call during the call (the router's forwarding layer
// sends a rewritten frame out of another NIC from the driver's buffer),
// and net.BufHandler's rule for reading: only the frame's first
// net.RxHeadLen bytes are readable until the handler calls r.Frame.
// ReceiveLentDone follows the ReceiveLentBuf calls of each receive pass
// of an ingress driver (net.BufHandler.ReceiveDone), as that does
// ReceiveBuf's: a handler may defer per-frame work to it.
type LendBufHandler interface {
	LendHandler
	ReceiveLentBuf(frame []byte, r gnet.RxBuf) bool
	ReceiveLentDone()
}

// AddHostPort adds the router's own stack as a bridge port with VLAN
// membership v and returns its NIC. The port forwards once the NIC is
// started (attached to a stack). A bridge has at most one host port.
func (b *Bridge) AddHostPort(v PortVLANs) (*HostNIC, error) {
	if b.host.Load() >= 0 {
		return nil, errors.New("bridge: host port already added")
	}
	n := &HostNIC{b: b}
	p, err := b.AddPort(hostLink{n}, v)
	if err != nil {
		return nil, err
	}
	n.port = p
	b.host.Store(int32(p))
	return n, nil
}

// Port returns the host port's number.
func (n *HostNIC) Port() int { return n.port }

var (
	_ gnet.NIC       = (*HostNIC)(nil)
	_ gnet.TxBatcher = (*HostNIC)(nil)
)

// MACAddress implements net.NIC: the host port uses the bridge's MAC.
func (n *HostNIC) MACAddress() gnet.MAC { return n.b.mac }

// MTU implements net.NIC.
func (n *HostNIC) MTU() int { return n.b.mtu }

// Capabilities implements net.NIC: Transmit flattens itself, so gather
// lists are welcome and spare the Endpoint a copy; and it sees that a
// checksum the stack left partial (net.TxChecksum) is completed: by the
// egress NIC's copy if the frame is lent to one that completes it
// (net.CapTxChecksumCopy), otherwise by its own copy, or in place.
func (n *HostNIC) Capabilities() gnet.Capabilities {
	return gnet.CapScatterGather | gnet.CapTxChecksumCopy
}

// partialSum is where a frame's partial checksum starts and its field
// (net.TxChecksum), if ok.
type partialSum struct {
	start, field int
	ok           bool
}

// partialOf returns what tb leaves partial, if it does within its n
// bytes and with the field in its first segment, as the contract has it.
func partialOf(tb gnet.TxBuf, segs [][]byte, n int) partialSum {
	c, ok := tb.(gnet.TxChecksum)
	if !ok {
		return partialSum{}
	}
	start, field, ok := c.ChecksumPartial()
	if !ok || start < 0 || start > field || field+2 > len(segs[0]) || field+2 > n {
		return partialSum{}
	}
	return partialSum{start, field, true}
}

// complete completes p in place, in the frame's first segment.
func (p partialSum) complete(segs [][]byte) {
	if p.ok {
		binary.BigEndian.PutUint16(segs[0][p.field:], inetsum.Checksum(inetsum.SumGather(segs, p.start)))
	}
}

// gather copies segs into dst, completing p in dst, and returns the
// bytes copied.
func (p partialSum) gather(dst []byte, segs [][]byte) int {
	if !p.ok {
		k := 0
		for _, s := range segs {
			k += copy(dst[k:], s)
		}
		return k
	}
	k, sum := inetsum.CopyGather(dst, segs, p.start)
	binary.BigEndian.PutUint16(dst[p.field:], inetsum.Checksum(sum))
	return k
}

// Link implements net.NIC: a virtual port's carrier is always up.
func (n *HostNIC) Link() gnet.LinkState {
	return gnet.LinkState{Up: true, SpeedMbps: 1000, FullDuplex: true}
}

// Start implements net.NIC.
func (n *HostNIC) Start(h gnet.Handler) error {
	if h == nil {
		return errors.New("bridge: nil handler")
	}
	if !n.started.CompareAndSwap(false, true) {
		return errors.New("bridge: host NIC already started")
	}
	n.rxMu.Lock()
	n.h = h
	n.vh, _ = h.(ViewHandler)
	n.lh, _ = h.(LendHandler)
	n.lbh, _ = h.(LendBufHandler)
	n.ph, _ = h.(gnet.PassHandler)
	n.rxMu.Unlock()
	return n.b.SetLink(n.port, true)
}

// Stop implements net.NIC.
func (n *HostNIC) Stop() {
	if !n.started.CompareAndSwap(true, false) {
		return
	}
	_ = n.b.SetLink(n.port, false) // port exists: cannot fail
	n.rxMu.Lock()
	n.h, n.vh, n.lh, n.lbh, n.ph = nil, nil, nil, nil, nil // lentDone calls no LendBufHandler after Stop
	n.rxMu.Unlock()
}

// Transmit implements net.NIC: the frame enters the bridge as if received
// on the host port. A frame for one station behind a NIC that copies and
// gathers is lent to it as it is (Bridge.inputFromHost). Any other is
// gathered once into a buffer, which the egress NIC ports then share
// (InputView) instead of copying again. When no port
// keeps frames (every NIC port copies, CapTxCopy: pcnet), that buffer is
// the host port's own, reused for the next frame; a fresh buffer per frame
// costs gVisor's allocator about 3% of what the router's TCP spends per
// segment sent on mips32.
func (n *HostNIC) Transmit(tb gnet.TxBuf) error {
	segs := tb.Segments()
	if tb.Len() > gnet.RxBufSize || tb.Len() == 0 || len(segs) == 0 {
		return errors.New("bridge: frame empty or larger than a bridge buffer")
	}
	p := partialOf(tb, segs, tb.Len())
	if n.b.keepers.Load() == 0 {
		n.txMu.Lock()
		if n.b.inputFromHost(n.port, segs, tb.Len(), p) {
			n.txMu.Unlock()
			tb.Release()
			return nil
		}
		k := p.gather(n.txFlat[:], segs)
		tb.Release()
		// Borrowed, as from a driver's receive buffer: a port added
		// meanwhile that keeps frames makes its own copy (Input's
		// contract), so the count is a hint, never a hazard.
		n.b.Input(n.port, n.txFlat[:k])
		n.txMu.Unlock()
		return nil
	}
	v := buffer.NewViewSize(tb.Len())
	p.gather(v.AsSlice(), segs) // fresh and unshared: safe to fill in place
	tb.Release()
	err := n.TransmitView(v)
	v.Release()
	return err
}

// TxBatchBegin implements net.TxBatcher: a batch of the host's frames is
// a batch on every NIC port that batches, as any of them may send one.
// Overlapping batches make one, ended with the last of them on the ports
// it began on (a port attached meanwhile is not in it).
func (n *HostNIC) TxBatchBegin() {
	n.batchMu.Lock()
	defer n.batchMu.Unlock()
	if n.batchDepth == 0 {
		if bs := n.b.batchers.Load(); bs != nil {
			n.batch = *bs
		}
		for _, b := range n.batch {
			b.TxBatchBegin()
		}
	}
	n.batchDepth++
}

// TxBatchEnd implements net.TxBatcher.
func (n *HostNIC) TxBatchEnd() {
	n.batchMu.Lock()
	n.batchDepth--
	var end []gnet.TxBatcher
	if n.batchDepth == 0 {
		end, n.batch = n.batch, nil
	}
	n.batchMu.Unlock()
	for _, b := range end {
		b.TxBatchEnd()
	}
}

// TransmitView sends the frame in v into the bridge from the host port
// without copying it: egress NIC ports share v, each taking its own
// reference. The caller keeps its reference and releases it as usual,
// and must not write to the buffer afterwards (ports may still be
// transmitting from it). The router's forwarding layer sends the packets
// it routes onto br-lan this way.
func (n *HostNIC) TransmitView(v *buffer.View) error {
	if v.Size() > gnet.RxBufSize || v.Size() == 0 {
		return errors.New("bridge: frame empty or larger than a bridge buffer")
	}
	n.txMu.Lock()
	n.b.InputView(n.port, v)
	n.txMu.Unlock()
	return nil
}

// lentDone ends what an ingress driver's receive pass delivered to the
// handler: its ReceiveLentBuf calls (LendBufHandler.ReceiveLentDone) and
// the pass ph was told of (net.PassHandler), even if the handler was
// stopped since: a pass once opened is always closed.
func (n *HostNIC) lentDone(ph gnet.PassHandler) {
	n.rxMu.Lock()
	defer n.rxMu.Unlock()
	if n.lbh != nil {
		n.lbh.ReceiveLentDone()
	}
	if ph != nil {
		ph.ReceivePassDone()
	}
}

// hostLink is the bridge-side Link of the host port.
type hostLink struct{ n *HostNIC }

// Send implements Link: the frame hdr ++ payload is delivered in a copy
// of its own (or, to a handler that borrows frames, lent).
func (l hostLink) Send(hdr, payload []byte) bool {
	return l.deliver(nil, hdr, payload)
}

// keep implements keeper. The host port is the last port a frame is sent
// to (Input sees to it), so it takes over the bridge's reference.
func (l hostLink) keep(x *ingress, frame, hdr []byte, rest int) bool {
	return l.deliver(x, hdr, frame[rest:])
}

// deliver hands the host's handler the frame hdr ++ payload: when x is
// given and hdr is nil, the frame is payload, the ingress frame, which a
// ViewHandler gets by reference to the bridge's copy (taking over the
// bridge's reference if x.last) and any other handler borrows; otherwise it
// is a copy of its own, or flattened into the port's buffer for a
// borrowing handler.
func (l hostLink) deliver(x *ingress, hdr, payload []byte) bool {
	n := l.n
	if len(hdr)+len(payload) > gnet.RxBufSize {
		return false
	}
	n.rxMu.Lock()
	defer n.rxMu.Unlock()
	if x != nil && x.rxBuf != nil && n.h != nil {
		// In an ingress driver's receive pass, which ends with its
		// ReceiveDone (net.BufHandler): the handler is owed the end,
		// and a PassHandler is told the pass began.
		x.lentTo = n
		if x.passTo == nil && n.ph != nil {
			x.passTo = n.ph
			n.ph.ReceivePassOpen()
		}
	}
	if n.h != nil && hdr == nil && x != nil && x.v == nil && n.lh != nil {
		// Offered borrowed first, with the driver's buffer to keep if
		// the handler can and the host port is the frame's last port;
		// consumed means no copy of the bridge's.
		var took bool
		if n.lbh != nil && x.last && x.rxBuf != nil {
			took = n.lbh.ReceiveLentBuf(payload, x.rxBuf)
		} else {
			x.readable()
			took = n.lh.ReceiveLent(payload)
		}
		if took {
			return true
		}
	}
	if x != nil {
		x.readable() // copied below, or lent whole
	}
	switch {
	case n.h == nil:
		n.RxNoHandler.Add(1)
		return false
	case hdr == nil && x != nil && n.vh != nil && x.last:
		n.vh.ReceiveView(x.take(payload))
	case hdr == nil && x != nil && n.vh != nil:
		n.vh.ReceiveView(x.view(payload).Clone())
	case hdr == nil && x != nil:
		n.h.Receive(payload)
	case n.vh != nil:
		n.vh.ReceiveView(copyView(hdr, payload))
	default:
		k := copy(n.flat[:], hdr)
		k += copy(n.flat[k:], payload)
		n.h.Receive(n.flat[:k])
	}
	return true
}
