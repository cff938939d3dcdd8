package ap

import (
	"errors"
	"sync"
	"sync/atomic"

	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/wlan/internal/gather"
)

// ErrFrameSize is returned by NIC.Transmit for a frame larger than
// gnet.RxBufSize.
var ErrFrameSize = errors.New("ap: frame too large for the port")

// NIC presents the AP as an Ethernet port (gnet.NIC) of the distribution
// system, such as a bridge port of br-lan: frames the stations send come
// out of the handler, frames transmitted go to the stations. Its address
// is the BSSID.
type NIC struct {
	ap *AP

	txMu sync.Mutex
	flat [gnet.RxBufSize]byte // gathers multi-segment frames

	hMu      sync.Mutex // serialises link reports; guards h and reported
	h        gnet.Handler
	reported gnet.LinkState

	// Oversize counts frames from stations too large for the port
	// (an MSDU may be 2304 octets, a port frame gnet.RxBufSize).
	Oversize atomic.Uint64
}

// NIC returns the AP's Ethernet port (the same one on every call). It
// replaces Config.ToDS once started.
func (a *AP) NIC() *NIC {
	a.portOnce.Do(func() { a.port = &NIC{ap: a} })
	return a.port
}

// linkChanged tells the port's handler, if the port was made and started,
// that the AP started or stopped (the link is up while it beacons).
func (a *AP) linkChanged() {
	a.portOnce.Do(func() { a.port = &NIC{ap: a} })
	a.port.report(false)
}

// report passes the link to the handler if it changed since the last
// report (or always, with force: the handler's first report).
func (n *NIC) report(force bool) {
	n.hMu.Lock()
	defer n.hMu.Unlock()
	if n.h == nil {
		return
	}
	l := n.Link()
	if force || l != n.reported {
		n.reported = l
		n.h.LinkChanged(l)
	}
}

var _ gnet.NIC = (*NIC)(nil)

// MACAddress implements gnet.NIC.
func (n *NIC) MACAddress() gnet.MAC { return gnet.MAC(n.ap.BSSID()) }

// MTU implements gnet.NIC.
func (n *NIC) MTU() int { return gnet.DefaultMTU }

// Capabilities implements gnet.NIC: Transmit gathers segments itself and
// is done with the frame when it returns (it is encrypted or copied into
// a frame of the AP's own), so the bridge may lend it its receive buffer.
func (n *NIC) Capabilities() gnet.Capabilities { return gnet.CapTxCopy | gnet.CapScatterGather }

// Link implements gnet.NIC: up while the AP beacons. The speed is left
// unknown; it is per station on the air.
func (n *NIC) Link() gnet.LinkState {
	n.ap.mu.Lock()
	defer n.ap.mu.Unlock()
	return gnet.LinkState{Up: n.ap.started, FullDuplex: n.ap.started}
}

// Start implements gnet.NIC.
func (n *NIC) Start(h gnet.Handler) error {
	n.ap.SetToDS(func(eth []byte) {
		if len(eth) > gnet.RxBufSize {
			n.Oversize.Add(1)
			return
		}
		h.Receive(eth)
	})
	n.hMu.Lock()
	n.h = h
	n.hMu.Unlock()
	n.report(true)
	return nil
}

// Stop implements gnet.NIC: delivery and link reports stop; the AP keeps
// running.
func (n *NIC) Stop() {
	n.ap.SetToDS(nil)
	n.hMu.Lock()
	n.h = nil
	n.hMu.Unlock()
}

// Transmit implements gnet.NIC. The frame is encrypted into the AP's own
// buffer and released at once. A frame for an address that is no
// authorized station is dropped (counted in Stats.TxDropped) like a
// frame a switch port sends to nobody, not refused.
func (n *NIC) Transmit(b gnet.TxBuf) error {
	n.txMu.Lock()
	defer n.txMu.Unlock()
	frame, ok := gather.Flat(b, n.flat[:])
	if !ok {
		return ErrFrameSize
	}
	err := n.ap.SendFromDS(frame)
	switch err {
	case ErrNotStarted:
		return gnet.ErrLinkDown
	case nil, ErrNoStation:
		b.Release()
		return nil
	default:
		return err
	}
}

// BSSID returns the AP's address.
func (a *AP) BSSID() [6]byte {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.cfg.BSSID
}
