package bridge

import (
	"sync"

	gnet "github.com/gowrt/gowrt/net"
	"gvisor.dev/gvisor/pkg/buffer"
)

// AttachNIC adds a driver's NIC as a bridge port with VLAN membership v
// and starts it: received frames are bridged straight from the RX view
// (no copy on ingress) and the view is released afterwards; carrier
// changes open and close the port.
//
// Egress copies each frame once into a pooled TX buffer: the bridge's
// frames are slices of another port's RX view that is recycled when Input
// returns, while the NIC keeps a TxBuf until TX completion. Sharing the RX
// view instead (refcounted, one reference per egress port) would remove
// that copy; it is left for when a driver with gather DMA needs it.
//
// The port does not queue: a frame that finds the egress ring full is
// dropped and counted (PortStats.TxDropped), as a switch drops at a
// congested port, so a slow port never holds up the others.
func (b *Bridge) AttachNIC(nic gnet.NIC, v PortVLANs) (int, error) {
	np := &nicPort{b: b, nic: nic}
	p, err := b.AddPort(np, v)
	if err != nil {
		return -1, err
	}
	np.port = p
	if err := nic.Start(np); err != nil {
		return -1, err
	}
	if err := b.SetLink(p, nic.Link().Up); err != nil {
		return -1, err
	}
	return p, nil
}

type nicPort struct {
	b    *Bridge
	nic  gnet.NIC
	port int
}

// Receive implements net.Handler.
func (np *nicPort) Receive(v *buffer.View) {
	np.b.Input(np.port, v.AsSlice())
	v.Release()
}

// LinkChanged implements net.Handler.
func (np *nicPort) LinkChanged(ls gnet.LinkState) {
	_ = np.b.SetLink(np.port, ls.Up) // port exists: cannot fail
}

// Send implements Link.
func (np *nicPort) Send(hdr, payload []byte) bool {
	n := len(hdr) + len(payload)
	if n > gnet.RxBufSize {
		return false
	}
	t := txFramePool.Get().(*txFrame)
	t.v = buffer.NewViewSize(n)
	buf := t.v.AsSlice() // fresh, unshared view: safe to fill in place
	copy(buf, hdr)
	copy(buf[len(hdr):], payload)
	t.segs[0] = buf
	if np.nic.Transmit(t) != nil {
		t.Release()
		return false
	}
	return true
}

// txFrame is a TxBuf holding one pooled view.
type txFrame struct {
	v    *buffer.View
	segs [1][]byte
}

var txFramePool = sync.Pool{New: func() any { return new(txFrame) }}

func (t *txFrame) Segments() [][]byte { return t.segs[:] }
func (t *txFrame) Len() int           { return len(t.segs[0]) }
func (t *txFrame) Release() {
	t.v.Release()
	t.v, t.segs[0] = nil, nil
	txFramePool.Put(t)
}
