package bridge

import (
	"errors"
	"sync"
	"sync/atomic"

	gnet "github.com/gowrt/gowrt/net"
)

// HostNIC is the bridge port leading to the router's own network stack.
// It implements net.NIC, so netstack.NewEndpoint turns it into the gVisor
// LinkEndpoint of the bridge interface (br-lan).
//
// Frames the bridge delivers to the host are copied once into a pooled RX
// view: the bridge does not own its ingress buffers beyond Input, and
// gVisor keeps packets indefinitely (reassembly, TCP queues). Frames the
// stack transmits are gathered into a view and bridged synchronously;
// egress NIC ports share that view, and the stack's TxBuf is released at
// once: the bridge never holds one.
type HostNIC struct {
	b    *Bridge
	port int

	rxMu    sync.Mutex // serialises calls into h
	h       gnet.Handler
	started atomic.Bool

	txMu sync.Mutex // serialises Input for the host port

	// RxNoHandler counts frames for the host before Start or after Stop.
	RxNoHandler atomic.Uint64
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

var _ gnet.NIC = (*HostNIC)(nil)

// MACAddress implements net.NIC: the host port uses the bridge's MAC.
func (n *HostNIC) MACAddress() gnet.MAC { return n.b.mac }

// MTU implements net.NIC.
func (n *HostNIC) MTU() int { return n.b.mtu }

// Capabilities implements net.NIC: Transmit flattens itself, so gather
// lists are welcome and spare the Endpoint a copy.
func (n *HostNIC) Capabilities() gnet.Capabilities { return gnet.CapScatterGather }

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
	n.h = nil
	n.rxMu.Unlock()
}

// Transmit implements net.NIC: the frame enters the bridge as if received
// on the host port. It is gathered once into a view, which the egress
// NIC ports then share (InputView) instead of copying again.
func (n *HostNIC) Transmit(tb gnet.TxBuf) error {
	segs := tb.Segments()
	if tb.Len() > gnet.RxBufSize || len(segs) == 0 {
		return errors.New("bridge: frame empty or larger than a bridge buffer")
	}
	v := gnet.CopyRxView(segs[0], segs[1:]...)
	tb.Release()
	n.txMu.Lock()
	n.b.InputView(n.port, v)
	n.txMu.Unlock()
	v.Release()
	return nil
}

// hostLink is the bridge-side Link of the host port.
type hostLink struct{ n *HostNIC }

func (l hostLink) Send(hdr, payload []byte) bool {
	n := l.n
	if len(hdr)+len(payload) > gnet.RxBufSize {
		return false
	}
	v := gnet.CopyRxView(hdr, payload)
	n.rxMu.Lock()
	defer n.rxMu.Unlock()
	if n.h == nil {
		n.RxNoHandler.Add(1)
		v.Release()
		return false
	}
	n.h.Receive(v)
	return true
}
