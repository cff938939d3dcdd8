package cdcecm

import (
	"fmt"
	"sync/atomic"

	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/usbnet"
	"github.com/gowrt/gowrt/usbnet/usb"
)

// Notifications on the interrupt endpoint (CDC120 §6.3, ECM120 §6.3
// Table 11): an 8-byte header shaped like a SETUP packet,
// bmRequestType 0xA1 (class, interface, device-to-host), then wLength
// bytes of data.
const (
	notifyRequestType     = usb.RequestIn | usb.RequestClass | usb.RecipientIface
	notifyHeaderLen       = 8
	notifyNetworkConn     = 0x00 // wValue 1: connected, 0: disconnected
	notifySpeedChange     = 0x2a // data: DLBitRate, ULBitRate (32-bit LE, bit/s)
	speedChangeDataLen    = 8
	bitsPerMbit           = 1000000
	maxReportedSpeedMbits = 100000 // beyond this a report is nonsense
)

// Framing is CDC-ECM's framing: one raw Ethernet frame per bulk transfer
// both ways, no header, no FCS (ECM120 §3.3.1). It also parses the
// function's notifications (usbnet.StatusParser), remembering the last
// speed and connection state, since each notification carries only one.
type Framing struct {
	maxFrame int // wMaxSegmentSize

	// Written only from ParseStatus, whose calls the usbnet framework
	// serialises; atomics so a status page may read them.
	up    atomic.Bool
	speed atomic.Int32 // Mbit/s, 0: unknown

	// BadNotifications counts interrupt reports that were malformed
	// (short, wrong request type, wLength disagreeing with the data).
	BadNotifications gnet.Counter
}

// NewFraming returns the framing for a function whose wMaxSegmentSize is
// maxSegment.
func NewFraming(maxSegment int) *Framing { return &Framing{maxFrame: maxSegment} }

// TxOverhead implements usbnet.Framing: ECM adds nothing to a frame.
func (f *Framing) TxOverhead() int { return 0 }

// EncodeTx implements usbnet.Framing. A frame whose length is a multiple
// of the endpoint's max packet size ends with a zero-length packet, or the
// function would wait for more of it (ECM120 §3.3.1, USB 2.0 §5.8.3).
func (f *Framing) EncodeTx(dst []byte, segs [][]byte, n, maxPacket int) (int, usb.Flags, error) {
	if n > len(dst) || n > f.maxFrame {
		return 0, 0, fmt.Errorf("%w: %d-byte frame, wMaxSegmentSize %d", usbnet.ErrSize, n, f.maxFrame)
	}
	off := 0
	for _, s := range segs {
		if len(s) > len(dst)-off {
			return 0, 0, fmt.Errorf("%w: segments longer than the frame", usbnet.ErrSize)
		}
		off += copy(dst[off:], s)
	}
	if off != n {
		return 0, 0, fmt.Errorf("%w: segments hold %d bytes, frame %d", usbnet.ErrSize, off, n)
	}
	var flags usb.Flags
	if maxPacket > 0 && n%maxPacket == 0 {
		flags = usb.ZeroLengthPacket
	}
	return n, flags, nil
}

// DecodeRx implements usbnet.Framing: the transfer is the frame.
func (f *Framing) DecodeRx(xfer []byte, deliver func([]byte)) (int, gnet.DropReason) {
	switch {
	case len(xfer) < gnet.EthHeaderLen:
		return 1, gnet.DropRxUndersize
	case len(xfer) > f.maxFrame:
		return 1, gnet.DropRxOversize
	}
	deliver(xfer)
	return 0, 0
}

// ParseStatus implements usbnet.StatusParser for NETWORK_CONNECTION and
// CONNECTION_SPEED_CHANGE; other notifications (RESPONSE_AVAILABLE) say
// nothing about the link.
func (f *Framing) ParseStatus(r []byte) (gnet.LinkState, bool) {
	if len(r) < notifyHeaderLen || r[0] != notifyRequestType {
		f.BadNotifications.Add(1)
		return gnet.LinkState{}, false
	}
	value, length := le16(r[2:]), int(le16(r[6:]))
	data := r[notifyHeaderLen:]
	switch r[1] {
	case notifyNetworkConn:
		if value > 1 {
			f.BadNotifications.Add(1)
			return gnet.LinkState{}, false
		}
		f.up.Store(value == 1)
	case notifySpeedChange:
		if length != speedChangeDataLen || len(data) < speedChangeDataLen {
			f.BadNotifications.Add(1)
			return gnet.LinkState{}, false
		}
		down := uint32(data[0]) | uint32(data[1])<<8 | uint32(data[2])<<16 | uint32(data[3])<<24
		mbit := down / bitsPerMbit
		if mbit > maxReportedSpeedMbits {
			mbit = 0
		}
		f.speed.Store(int32(mbit))
	default:
		return gnet.LinkState{}, false
	}
	return f.link(), true
}

func (f *Framing) link() gnet.LinkState {
	if !f.up.Load() {
		return gnet.LinkState{}
	}
	return gnet.LinkState{Up: true, SpeedMbps: int(f.speed.Load()), FullDuplex: true}
}

var (
	_ usbnet.Framing      = (*Framing)(nil)
	_ usbnet.StatusParser = (*Framing)(nil)
)
