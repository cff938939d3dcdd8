// Package usb is gowrt's USB host core: the contract between host
// controller drivers (usbnet/uhci, usbnet/ehci) and the code above them,
// device enumeration and addressing, descriptor parsing, control transfers
// with timeouts, and devices whose teardown on unplug happens in a fixed
// order.
//
// It imports nothing from gowrt but is imported by every USB driver; the
// Ethernet framework above it is package usbnet.
//
// # Transfers are set up once and submitted many times
//
// A driver asks a Pipe for its Transfers when it attaches (Pipe.NewTransfer,
// like FreeBSD's usbd_transfer_setup): each owns a DMA-capable buffer and
// whatever descriptors the host controller needs, so submitting one and
// completing it allocate nothing. A Transfer is in one of two states: idle
// (its owner may touch Buf and the request fields) or submitted (the host
// controller owns it until it calls Done, exactly once per Submit).
//
// Done runs in the host controller's completion context (the goroutine of
// its interrupt handler), in the order the controller retires transfers,
// and may resubmit the transfer. It must not block: a driver that needs to
// wait (a control transfer) waits in its own goroutine on something Done
// signals.
//
// # Devices
//
// Enumerate brings a device on a root port to the Addressed state and
// reads its descriptors; the Device it returns serialises control
// requests (Control, with a timeout; a failed request hands the caller
// no bytes), opens pipes for a driver, and tears down in a fixed order
// (Detach: mark gone, the driver's Detach, abort and wait for every
// transfer, close the pipes, wait for references, disable the port and
// free the address). A Bus does this for every port of a controller and
// binds the first Driver whose Probe takes the device.
package usb

import (
	"errors"
	"fmt"
)

// Speed is a device's signalling rate on its port.
type Speed uint8

const (
	SpeedUnknown Speed = iota
	SpeedLow           // 1.5 Mb/s
	SpeedFull          // 12 Mb/s
	SpeedHigh          // 480 Mb/s
	SpeedSuper         // 5 Gb/s
)

func (s Speed) String() string {
	switch s {
	case SpeedLow:
		return "low"
	case SpeedFull:
		return "full"
	case SpeedHigh:
		return "high"
	case SpeedSuper:
		return "super"
	}
	return fmt.Sprintf("Speed(%d)", uint8(s))
}

// TransferType is an endpoint's type (USB 2.0 §5.4–5.8; bmAttributes bits
// 1:0 of an endpoint descriptor, §9.6.6).
type TransferType uint8

const (
	Control     TransferType = 0
	Isochronous TransferType = 1
	Bulk        TransferType = 2
	Interrupt   TransferType = 3
)

func (t TransferType) String() string {
	switch t {
	case Control:
		return "control"
	case Isochronous:
		return "isochronous"
	case Bulk:
		return "bulk"
	case Interrupt:
		return "interrupt"
	}
	return fmt.Sprintf("TransferType(%d)", uint8(t))
}

// EndpointIn is the direction bit of bEndpointAddress (USB 2.0 §9.6.6).
const EndpointIn = 0x80

// Setup is a control request's SETUP packet (USB 2.0 §9.3). Bytes gives its
// 8-byte wire form (little-endian fields).
type Setup struct {
	RequestType uint8 // bmRequestType: bit 7 = device-to-host, bits 6:5 type, 4:0 recipient
	Request     uint8
	Value       uint16
	Index       uint16
	Length      uint16
}

// bmRequestType fields (USB 2.0 Table 9-2).
const (
	RequestIn        = 0x80 // data stage device-to-host
	RequestStandard  = 0x00
	RequestClass     = 0x20
	RequestVendor    = 0x40
	RecipientDevice  = 0x00
	RecipientIface   = 0x01
	RecipientEndpt   = 0x02
	RequestTypeMask  = 0x60
	RecipientMask    = 0x1f
	RequestDirection = 0x80
)

// In reports whether the data stage (if any) goes device-to-host.
func (s Setup) In() bool { return s.RequestType&RequestIn != 0 }

// Bytes is the SETUP packet as it goes on the wire.
func (s Setup) Bytes() [8]byte {
	return [8]byte{s.RequestType, s.Request,
		byte(s.Value), byte(s.Value >> 8),
		byte(s.Index), byte(s.Index >> 8),
		byte(s.Length), byte(s.Length >> 8)}
}

// ParseSetup decodes a SETUP packet's wire form.
func ParseSetup(b [8]byte) Setup {
	return Setup{RequestType: b[0], Request: b[1],
		Value:  uint16(b[2]) | uint16(b[3])<<8,
		Index:  uint16(b[4]) | uint16(b[5])<<8,
		Length: uint16(b[6]) | uint16(b[7])<<8}
}

func (s Setup) String() string {
	return fmt.Sprintf("setup{type %#02x req %#02x value %#04x index %#04x len %d}",
		s.RequestType, s.Request, s.Value, s.Index, s.Length)
}

// Transfer completion errors. A host controller completes a transfer with
// one of these (possibly wrapped with detail); nil is success.
var (
	// ErrStall: the endpoint answered STALL (halted, or a control request
	// it does not support).
	ErrStall = errors.New("usb: endpoint stalled")
	// ErrBabble: the device sent more than the transfer or packet allowed.
	ErrBabble = errors.New("usb: babble")
	// ErrTransaction: no valid handshake (CRC, bit stuffing, timeout on the
	// wire) after the controller's retries.
	ErrTransaction = errors.New("usb: transaction error")
	// ErrDataBuffer: the controller over- or under-ran its memory access.
	ErrDataBuffer = errors.New("usb: data buffer error")
	// ErrShort: an IN transfer ended with a short packet and the transfer
	// did not allow it (ShortOK unset).
	ErrShort = errors.New("usb: short transfer")
	// ErrCancelled: the transfer was cancelled (Pipe.Cancel, Abort, Close)
	// before it completed.
	ErrCancelled = errors.New("usb: transfer cancelled")
	// ErrTimeout: a transfer the core waited on did not complete in time;
	// it was cancelled.
	ErrTimeout = errors.New("usb: transfer timed out")
	// ErrGone: the device was unplugged, or the controller stopped.
	ErrGone = errors.New("usb: device gone")
	// ErrBusy: Submit of a transfer that is already submitted.
	ErrBusy = errors.New("usb: transfer already submitted")
	// ErrClosed: the pipe was closed.
	ErrClosed = errors.New("usb: pipe closed")
)

// Flags modify one Transfer.
type Flags uint8

const (
	// ShortOK: an IN transfer that ends with a short packet completes
	// without error (Actual < Len). Bulk-in of variable-length frames sets it.
	ShortOK Flags = 1 << iota
	// ZeroLengthPacket: an OUT transfer whose Len is a non-zero multiple
	// of the endpoint's max packet size ends with a zero-length packet, so
	// the device sees where it ends (FreeBSD's force_short_xfer).
	ZeroLengthPacket
)
