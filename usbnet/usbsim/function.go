// Package usbsim is the device side of gowrt's USB models: the wire-level
// contract between host controller models (usbnet/uhci/uhcisim,
// usbnet/ehci/ehcisim) and the USB devices plugged into them, and a
// framework device models (ecmsim, axgesim) are built on, which answers
// the standard requests of USB 2.0 chapter 9 from descriptors.
//
// A Function sees what a device sees on the bus: transactions addressed to
// it, one packet at a time, with data toggles. It keeps its own address
// and toggles, so a host that forgets to reset a toggle after
// CLEAR_FEATURE(ENDPOINT_HALT), or talks to a device it never addressed,
// gets what real hardware would give it: lost or duplicated packets, or
// no answer at all.
package usbsim

import "github.com/gowrt/gowrt/usbnet/usb"

// Handshake is a function's answer to a transaction (USB 2.0 §8.4.5), or
// the lack of one.
type Handshake uint8

const (
	// ACK: data accepted (OUT, SETUP) or data sent (IN; the host ACKs).
	ACK Handshake = iota
	// NAK: not ready; the host retries later. Bulk-in with nothing to send.
	NAK
	// STALL: the endpoint is halted or the request is not supported.
	STALL
	// NoResponse: the function did not answer (not addressed to it, gone,
	// or a corrupted packet). Host controllers count it as a transaction
	// error and retry (UHCI: up to three times).
	NoResponse
)

func (h Handshake) String() string {
	switch h {
	case ACK:
		return "ACK"
	case NAK:
		return "NAK"
	case STALL:
		return "STALL"
	case NoResponse:
		return "no response"
	}
	return "Handshake(?)"
}

// Function is a USB device as a host controller model drives it: the bus
// reset and the three token types. addr is the address the token carries;
// a function answers only tokens for its current address (0 after
// Reset), and NoResponse to others. ep is the endpoint number (0–15, no
// direction bit). toggle is the data PID: 0 for DATA0, 1 for DATA1.
//
// Calls come from the host controller model with its lock held and must
// not block for long; a function that is "slow" NAKs until it is ready.
type Function interface {
	// Speed is the speed the function signals on attach.
	Speed() usb.Speed
	// Reset is a bus reset: the function returns to the Default state
	// (address 0, unconfigured, every toggle DATA0).
	Reset()
	// Setup delivers a SETUP transaction (always DATA0) to endpoint 0.
	// A function ACKs every SETUP addressed to it (USB 2.0 §8.5.3); a
	// request it refuses STALLs in the data or status stage.
	Setup(addr uint8, pkt [8]byte) Handshake
	// In asks endpoint ep for one packet of at most len(buf) bytes. On
	// ACK, n bytes were written to buf, toggle is the packet's data PID,
	// and the function has advanced its toggle: the host model always
	// ACKs a packet it received, and one whose toggle is not the one it
	// expected is a retransmission it discards (USB 2.0 §8.6.4), as real
	// controllers do.
	In(addr, ep uint8, buf []byte) (n int, toggle uint8, h Handshake)
	// Out delivers one packet of data with the given data PID to endpoint
	// ep. A packet whose toggle is not the expected one is ACKed and
	// dropped (a retransmission, USB 2.0 §8.6.4).
	Out(addr, ep uint8, toggle uint8, data []byte) Handshake
}
