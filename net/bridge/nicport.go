package bridge

import (
	"sync"

	gnet "github.com/gowrt/gowrt/net"
	"gvisor.dev/gvisor/pkg/buffer"
)

// AttachNIC adds a driver's NIC as a bridge port with VLAN membership v
// and starts it: the frames it receives are bridged straight from the
// driver's receive buffer, and carrier changes open and close the port.
//
// A NIC that copies before Transmit returns (net.CapTxCopy) is lent the
// ingress driver's buffer, with a private header in front if the bridge
// rewrote it and the NIC gathers. Other egress shares the ingress copy: the TxBuf handed to the driver holds a
// reference to the bridge's one copy of the frame (see the package
// documentation) until the driver releases it at TX completion, so a
// frame flooded to several ports is one buffer with several readers. Only
// a frame whose header the bridge rewrote (a VLAN tag added or removed)
// for a NIC that cannot gather a separate header gets a flat copy of its
// own.
//
// The port does not queue: a frame that finds the egress ring full is
// dropped and counted (PortStats.TxDropped), as a switch drops at a
// congested port, so a slow port never holds up the others.
func (b *Bridge) AttachNIC(nic gnet.NIC, v PortVLANs) (int, error) {
	caps := nic.Capabilities()
	np := &nicPort{b: b, nic: nic, gather: caps&gnet.CapScatterGather != 0, copies: caps&gnet.CapTxCopy != 0,
		sendsRx: caps&gnet.CapTxRxBuf != 0, sums: caps&gnet.CapTxChecksumCopy != 0}
	p, err := b.AddPort(np, v)
	if err != nil {
		return -1, err
	}
	np.port, np.in = p, b.ports[p]
	if err := nic.Start(np); err != nil {
		return -1, err
	}
	if err := b.SetLink(p, nic.Link().Up); err != nil {
		return -1, err
	}
	return p, nil
}

type nicPort struct {
	b       *Bridge
	nic     gnet.NIC
	port    int
	in      *port // the bridge's port np.port
	gather  bool  // the NIC takes multi-segment TxBufs
	copies  bool  // the NIC is done with a TxBuf when Transmit returns (CapTxCopy)
	sendsRx bool  // the NIC sends kept receive buffers in place (CapTxRxBuf)
	sums    bool  // the NIC completes partial checksums as it copies (CapTxChecksumCopy)
}

// Receive implements net.Handler: the borrowed frame is bridged at once.
func (np *nicPort) Receive(frame []byte) {
	if b := np.b; !b.toOwnMAC(frame) || !b.inputToHost(np.port, np.in, frame, false) {
		np.b.Input(np.port, frame)
	}
}

// ReceiveBuf implements net.BufHandler: the frame is bridged like a
// borrowed one, but an egress NIC that sends kept receive buffers in
// place (net.CapTxRxBuf) may be given the driver's buffer itself. Of the
// frame only the head is readable at first (net.RxHeadLen): a frame for
// the host stays so as far as the host's handler (hostLink.deliver),
// others are made readable whole before Input.
func (np *nicPort) ReceiveBuf(frame []byte, r gnet.RxBuf) {
	x := &np.in.rx
	x.rxBuf = r
	if b := np.b; !b.toOwnMAC(frame) || !b.inputToHost(np.port, np.in, frame, true) {
		if len(frame) > gnet.RxHeadLen {
			r.Frame()
		}
		np.b.Input(np.port, frame)
	}
	x.rxBuf = nil
}

// ReceiveDone implements net.BufHandler: the counts of the frames the
// pass handed to the host are added to the counters, the next pass
// learns its stations anew, and a host handler given frames in the pass
// is told the pass ended.
func (np *nicPort) ReceiveDone() {
	np.in.flushCounts()
	np.in.pend.learned = 0
	if h := np.in.rx.lentTo; h != nil {
		ph := np.in.rx.passTo
		np.in.rx.lentTo, np.in.rx.passTo = nil, nil
		h.lentDone(ph)
	}
}

// LinkChanged implements net.Handler.
func (np *nicPort) LinkChanged(ls gnet.LinkState) {
	_ = np.b.SetLink(np.port, ls.Up) // port exists: cannot fail
}

// Send implements Link: hdr ++ payload, copied into a buffer of its own.
func (np *nicPort) Send(hdr, payload []byte) bool {
	if len(hdr)+len(payload) > gnet.RxBufSize {
		return false
	}
	t := txFramePool.Get().(*txFrame)
	t.v = copyView(hdr, payload)
	t.segs[0], t.nseg = t.v.AsSlice(), 1
	if np.nic.Transmit(t) != nil {
		t.Release()
		return false
	}
	return true
}

// keep implements keeper: a NIC that copies before Transmit returns
// (CapTxCopy) transmits the borrowed ingress frame itself; others get a
// TxBuf that shares the ingress copy.
func (np *nicPort) keep(x *ingress, frame, hdr []byte, rest int) bool {
	if x.rxBuf != nil && x.last && hdr == nil && np.sendsRx {
		// The last port to get the frame, unchanged: it may have the
		// driver's buffer, sent without a copy.
		if t := x.rxBuf.Keep(); t != nil {
			x.rxBuf = nil
			if np.nic.Transmit(t) != nil {
				t.Release()
				return false
			}
			return true
		}
	}
	if np.copies && (hdr == nil || np.gather) {
		return np.lend(x, frame, hdr, rest)
	}
	if hdr != nil && !np.gather {
		return np.Send(hdr, frame[rest:])
	}
	t := txFramePool.Get().(*txFrame)
	switch {
	case x.v == nil && x.last:
		// The frame's only keeper: the one copy is this TxBuf's.
		t.v = buffer.NewViewSize(len(frame))
		copy(t.v.AsSlice(), frame) // fresh and unshared
	case x.own && x.last:
		t.v = x.take(frame)
	default:
		t.v = x.view(frame).Clone()
	}
	if hdr == nil {
		t.segs[0], t.nseg = t.v.AsSlice(), 1
	} else {
		t.segs[0] = t.hdr[:copy(t.hdr[:], hdr)]
		t.segs[1], t.nseg = t.v.AsSlice()[rest:], 2
	}
	if np.nic.Transmit(t) != nil {
		t.Release()
		return false
	}
	return true
}

// txFrame is a TxBuf holding a reference to a buffer: the frame's shared
// ingress copy, with a private header if the bridge rewrote it, or a flat
// copy of its own.
type txFrame struct {
	v    *buffer.View
	hdr  [ethHdrLen + tagLen]byte
	segs [2][]byte
	nseg int
}

var txFramePool = sync.Pool{New: func() any { return new(txFrame) }}

func (t *txFrame) Segments() [][]byte { return t.segs[:t.nseg] }
func (t *txFrame) Len() int {
	n := 0
	for _, s := range t.segs[:t.nseg] {
		n += len(s)
	}
	return n
}
func (t *txFrame) Release() {
	t.v.Release()
	t.v, t.segs, t.nseg = nil, [2][]byte{}, 0
	txFramePool.Put(t)
}

// lend transmits hdr ++ frame[rest:] (frame if hdr is nil) straight from
// the memory the bridge borrows, through the ingress port's lentFrame: the
// NIC copies it before Transmit returns (CapTxCopy), so the frame costs
// the bridge no copy, no buffer and no reference count.
func (np *nicPort) lend(x *ingress, frame, hdr []byte, rest int) bool {
	l := &x.lent
	if hdr == nil {
		l.segs[0], l.nseg = frame, 1
	} else {
		l.segs[0], l.segs[1], l.nseg = hdr, frame[rest:], 2
	}
	err := np.nic.Transmit(l)
	l.segs, l.nseg = [2][]byte{}, 0 // keep no reference to the borrowed frame
	return err == nil
}

// lendGather transmits the frame gathered from segs, n bytes, straight
// from the memory the bridge borrows: the NIC copies and gathers it
// (CapTxCopy and CapScatterGather) before Transmit returns.
func (np *nicPort) lendGather(x *ingress, segs [][]byte, n int, sum partialSum) bool {
	if !np.sums {
		sum.complete(segs) // the NIC would send the partial sum as it is
		sum = partialSum{}
	}
	l := &x.lent
	l.gather, l.n, l.sum = segs, n, sum
	err := np.nic.Transmit(l)
	l.gather, l.n, l.sum = nil, 0, partialSum{} // keep no reference to the borrowed frame
	return err == nil
}

// lentFrame is a TxBuf over borrowed memory, for a NIC that is done with
// it when Transmit returns (CapTxCopy): Release has nothing to give back.
// Each ingress port has one; a port's ingress path is serialised, and the
// NIC is done with the frame before the next one is lent.
type lentFrame struct {
	segs [2][]byte
	nseg int
	// gather, if not nil, is the frame instead of segs: a gather list
	// of n bytes lent whole (nicPort.lendGather).
	gather [][]byte
	n      int
	sum    partialSum // the gather list's checksum left to the NIC
}

// ChecksumPartial implements net.TxChecksum.
func (l *lentFrame) ChecksumPartial() (int, int, bool) { return l.sum.start, l.sum.field, l.sum.ok }

func (l *lentFrame) Segments() [][]byte {
	if l.gather != nil {
		return l.gather
	}
	return l.segs[:l.nseg]
}
func (l *lentFrame) Len() int {
	if l.gather != nil {
		return l.n
	}
	n := 0
	for _, s := range l.segs[:l.nseg] {
		n += len(s)
	}
	return n
}
func (l *lentFrame) Release() {}
