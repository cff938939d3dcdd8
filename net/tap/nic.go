//go:build linux

package tap

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"

	gnet "github.com/gowrt/gowrt/net"
)

// NIC is a TAP device behind the gowrt NIC contract. Received frames are
// read into the NIC's receive buffer and lent from there to the handler
// (the read is the device's DMA: no further copy); frames to send are
// written with one write per frame (a multi-segment frame is gathered
// into a per-NIC buffer first, as a MAC without scatter-gather would).
type NIC struct {
	dev *Dev
	mac gnet.MAC
	mtu int

	mu      sync.Mutex // serialises Transmit's use of flat
	flat    []byte
	rxBuf   []byte // the receive buffer; the reader goroutine's alone
	started atomic.Bool
	done    chan struct{}
	down    atomic.Bool // carrier removed by SetCarrier(false)
	hmu     sync.Mutex  // serialises LinkChanged calls
	h       gnet.Handler

	// Counters (Counters gathers them for the status page).
	RxFrames, RxBytes atomic.Uint64 // frames delivered
	RxOversize        atomic.Uint64 // longer than MTU + header + tag
	RxUndersize       atomic.Uint64 // shorter than an Ethernet header
	RxDropped         atomic.Uint64 // read errors, or carrier pulled
	TxFrames, TxBytes atomic.Uint64 // frames written
	TxErrors          atomic.Uint64 // writes that failed
}

var (
	_ gnet.NIC           = (*NIC)(nil)
	_ gnet.CounterReader = (*NIC)(nil)
)

// NewNIC wraps dev; mac is the station address the NIC claims (the Linux
// side of a TAP device has its own).
func NewNIC(dev *Dev, mac gnet.MAC) *NIC {
	return &NIC{dev: dev, mac: mac, mtu: gnet.DefaultMTU,
		flat: make([]byte, gnet.RxBufSize), rxBuf: make([]byte, gnet.RxBufSize), done: make(chan struct{})}
}

func (n *NIC) MACAddress() gnet.MAC            { return n.mac }
func (n *NIC) MTU() int                        { return n.mtu }
func (n *NIC) Capabilities() gnet.Capabilities { return gnet.CapTxCopy }

// Link implements gnet.NIC: up at 1000 Mbit/s full duplex unless the
// cable was pulled with SetCarrier.
func (n *NIC) Link() gnet.LinkState {
	if n.down.Load() {
		return gnet.LinkState{}
	}
	return gnet.LinkState{Up: true, SpeedMbps: 1000, FullDuplex: true}
}
func (n *NIC) String() string { return "tap " + n.dev.name }

// Dev returns the TAP device under the NIC.
func (n *NIC) Dev() *Dev { return n.dev }

// Start implements gnet.NIC: a goroutine reads frames and delivers them.
func (n *NIC) Start(h gnet.Handler) error {
	if !n.started.CompareAndSwap(false, true) {
		return fmt.Errorf("tap %s: already started", n.dev.name)
	}
	n.hmu.Lock()
	n.h = h
	h.LinkChanged(n.Link())
	n.hmu.Unlock()
	go n.rx(h)
	return nil
}

func (n *NIC) rx(h gnet.Handler) {
	defer close(n.done)
	buf := n.rxBuf
	for {
		k, err := n.dev.Read(buf)
		if err != nil {
			if errors.Is(err, os.ErrClosed) {
				return
			}
			n.RxDropped.Add(1)
			continue
		}
		if k < gnet.EthHeaderLen {
			n.RxUndersize.Add(1)
			continue
		}
		if k > gnet.EthHeaderLen+gnet.VLANTagLen+n.mtu {
			// Too long for the port, as a MAC's maximum frame length
			// would find it; a frame longer than the buffer was cut
			// short by the read and lands here too.
			n.RxOversize.Add(1)
			continue
		}
		if n.down.Load() {
			n.RxDropped.Add(1)
			continue
		}
		n.RxFrames.Add(1)
		n.RxBytes.Add(uint64(k))
		h.Receive(buf[:k:k])
	}
}

// SetCarrier plugs (true) or pulls (false) the simulated cable: the Linux
// side sees NO-CARRIER, the NIC reports the change to its handler, and
// while down it neither delivers nor sends frames.
func (n *NIC) SetCarrier(up bool) error {
	if err := n.dev.SetCarrier(up); err != nil {
		return err
	}
	n.down.Store(!up)
	n.hmu.Lock()
	defer n.hmu.Unlock()
	if n.h != nil {
		n.h.LinkChanged(n.Link())
	}
	return nil
}

// Transmit implements gnet.NIC. The write completes before it returns, so
// the buffer is released at once.
func (n *NIC) Transmit(b gnet.TxBuf) error {
	if n.down.Load() {
		return gnet.ErrLinkDown
	}
	segs := b.Segments()
	if b.Len() > gnet.EthHeaderLen+gnet.VLANTagLen+n.mtu {
		return fmt.Errorf("tap %s: frame of %d bytes exceeds MTU %d", n.dev.name, b.Len(), n.mtu)
	}
	var err error
	if len(segs) == 1 {
		_, err = n.dev.Write(segs[0])
	} else {
		n.mu.Lock()
		f := n.flat[:0]
		for _, s := range segs {
			f = append(f, s...)
		}
		_, err = n.dev.Write(f)
		n.mu.Unlock()
	}
	if err != nil {
		n.TxErrors.Add(1)
		return fmt.Errorf("tap %s: write: %w", n.dev.name, err)
	}
	n.TxFrames.Add(1)
	n.TxBytes.Add(uint64(b.Len()))
	b.Release()
	return nil
}

// Counters implements gnet.CounterReader.
func (n *NIC) Counters() gnet.Counters {
	var c gnet.Counters
	c.RxFrames, c.RxBytes = n.RxFrames.Load(), n.RxBytes.Load()
	c.TxFrames, c.TxBytes = n.TxFrames.Load(), n.TxBytes.Load()
	c.Drops[gnet.DropRxOversize] = n.RxOversize.Load()
	c.Drops[gnet.DropRxUndersize] = n.RxUndersize.Load()
	c.Drops[gnet.DropRxErrors] = n.RxDropped.Load()
	c.Drops[gnet.DropTxErrors] = n.TxErrors.Load()
	return c
}

// Stop implements gnet.NIC: it closes the device and waits for the reader.
func (n *NIC) Stop() {
	_ = n.dev.Close()
	if n.started.Load() {
		<-n.done
	}
}
