// Package usbnet adapts USB Ethernet chips to gowrt's NIC contract
// (package net): a chip driver (usbnet/cdcecm, usbnet/axge) opens its bulk
// and interrupt pipes through the USB core (usbnet/usb), says how frames
// are packed into bulk transfers (a Framing), and gets a net.NIC that keeps
// several bulk-in transfers in flight, queues transmissions, follows the
// link, and counts every frame it drops.
package usbnet

import (
	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/usbnet/usb"
)

// Framing is how one chip packs Ethernet frames into bulk transfers. Its
// methods run on the per-frame path and must not allocate.
type Framing interface {
	// TxOverhead is the most bytes EncodeTx adds to one frame (headers and
	// padding): the framework sizes TX buffers as frame + TxOverhead.
	TxOverhead() int
	// EncodeTx writes one frame, given as the gather list segs of n bytes
	// in total, into dst (a bulk-out transfer buffer) with whatever header
	// and padding the chip needs, and returns the transfer's length and
	// flags. maxPacket is the bulk-out endpoint's wMaxPacketSize: a chip
	// that must not see a transfer of a multiple of it pads or sets
	// usb.ZeroLengthPacket. An error means the frame cannot be sent (too
	// long); the framework counts it and refuses the frame.
	EncodeTx(dst []byte, segs [][]byte, n, maxPacket int) (length int, flags usb.Flags, err error)
	// DecodeRx splits one completed bulk-in transfer into frames and calls
	// deliver for each, in order; frames are slices of xfer. It returns
	// how many frames it discarded and why (bad lengths, chip-reported
	// errors, a malformed trailer): xfer comes from a device and is
	// untrusted, so DecodeRx checks every length and offset against
	// len(xfer) before using it and never panics.
	DecodeRx(xfer []byte, deliver func(frame []byte)) (dropped int, reason gnet.DropReason)
}

// StatusParser is implemented by a Framing whose chip reports link state
// on an interrupt-IN endpoint (CDC NETWORK_CONNECTION and
// CONNECTION_SPEED_CHANGE notifications; AX88179's 8-byte status). ok is
// false for a report that says nothing about the link.
type StatusParser interface {
	ParseStatus(report []byte) (link gnet.LinkState, ok bool)
}
