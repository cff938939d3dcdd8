package sta

import (
	"errors"
	"sync"

	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/wlan/internal/gather"
)

// ErrFrameSize is returned by NIC.Transmit for a frame larger than
// gnet.RxBufSize.
var ErrFrameSize = errors.New("sta: frame too large for the port")

// NIC presents the station as an Ethernet port (gnet.NIC): a network
// stack, or a bridge when the station is in 4-address mode, sits on it.
// The link is up while the station is authorized. Its address is the
// station's.
type NIC struct {
	s    *Station
	txMu sync.Mutex
	flat [gnet.RxBufSize]byte
}

// NIC returns the station's Ethernet port; it replaces Config.Receive
// once started.
func (s *Station) NIC() *NIC { return &NIC{s: s} }

var _ gnet.NIC = (*NIC)(nil)

// MACAddress implements gnet.NIC.
func (n *NIC) MACAddress() gnet.MAC { return gnet.MAC(n.s.cfg.Addr) }

// MTU implements gnet.NIC.
func (n *NIC) MTU() int { return gnet.DefaultMTU }

// Capabilities implements gnet.NIC: Transmit gathers segments itself and
// is done with the frame when it returns (it is encrypted into a buffer
// of the station's own).
func (n *NIC) Capabilities() gnet.Capabilities { return gnet.CapTxCopy | gnet.CapScatterGather }

// Link implements gnet.NIC.
func (n *NIC) Link() gnet.LinkState {
	up := n.s.State() == Authorized
	return gnet.LinkState{Up: up, FullDuplex: up}
}

// Start implements gnet.NIC.
func (n *NIC) Start(h gnet.Handler) error {
	n.s.mu.Lock()
	n.s.recv = func(eth []byte) {
		if len(eth) <= gnet.RxBufSize {
			h.Receive(eth)
		}
	}
	n.s.onLink = func(up bool) { h.LinkChanged(gnet.LinkState{Up: up, FullDuplex: up}) }
	n.s.linkUp = n.s.state == Authorized
	n.s.mu.Unlock()
	h.LinkChanged(n.Link())
	return nil
}

// Stop implements gnet.NIC.
func (n *NIC) Stop() {
	n.s.mu.Lock()
	n.s.recv, n.s.onLink = nil, nil
	n.s.mu.Unlock()
}

// Transmit implements gnet.NIC.
func (n *NIC) Transmit(b gnet.TxBuf) error {
	n.txMu.Lock()
	defer n.txMu.Unlock()
	frame, ok := gather.Flat(b, n.flat[:])
	if !ok {
		return ErrFrameSize
	}
	switch err := n.s.Send(frame); err {
	case ErrNotAuthorized:
		return gnet.ErrLinkDown
	case nil:
		b.Release()
		return nil
	default:
		return err
	}
}
