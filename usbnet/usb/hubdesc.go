package usb

import (
	"errors"
	"fmt"
	"time"
)

// Hub class codes and descriptor (USB 2.0 §9.6.1 Table 9-8 footnote,
// §11.23.1, §11.23.2.1).
const (
	ClassHub = 0x09
	DescHub  = 0x29
	// hubDescMinLen is the hub descriptor with one byte each of
	// DeviceRemovable and PortPwrCtrlMask (ports 1-7).
	hubDescMinLen = 9
	// hubDescMaxLen is the longest hub descriptor (255 ports: 32 bytes
	// of each bitmap, §11.23.2.1); GET_DESCRIPTOR asks for that much.
	hubDescMaxLen = 7 + 2*32
)

// MaxHubPorts is the most downstream ports a hub may have for this core:
// a port's bit must fit the 16-bit change bitmap the hub driver keeps
// (bNbrPorts <= 15, which every real hub satisfies; the descriptor allows
// 255). A hub with more is refused with ErrTooManyPorts.
const MaxHubPorts = 15

// ErrTooManyPorts: a hub descriptor's bNbrPorts exceeds MaxHubPorts.
var ErrTooManyPorts = errors.New("usb: hub has more ports than supported")

// wHubCharacteristics fields (USB 2.0 Table 11-13).
const (
	hubCharPowerMask    = 0x0003 // 00 ganged, 01 per port, 1x no switching
	hubCharCompound     = 0x0004
	hubCharTTThinkShift = 5 // bits 6:5: 8, 16, 24 or 32 FS bit times
	hubCharIndicators   = 0x0080
)

// HubDescriptor is a parsed hub descriptor (USB 2.0 §11.23.2.1).
type HubDescriptor struct {
	// Ports is bNbrPorts, 1..MaxHubPorts.
	Ports           int
	Characteristics uint16
	// PowerOnToGood is bPwrOn2PwrGood: how long after a port is powered
	// its power is good (2 ms units).
	PowerOnToGood time.Duration
	// ControllerCurrent is bHubContrCurrent, mA.
	ControllerCurrent uint8
	// NonRemovable has bit n set when port n's device is built in
	// (DeviceRemovable; bit 0 is reserved).
	NonRemovable uint16
}

// Compound reports a compound device (the hub is part of one product).
func (h HubDescriptor) Compound() bool { return h.Characteristics&hubCharCompound != 0 }

// TTThinkTime is the TT's think time in full-speed bit times (8 to 32).
func (h HubDescriptor) TTThinkTime() int {
	return 8 * (1 + int(h.Characteristics>>hubCharTTThinkShift&3))
}

// ParseHubDescriptor parses an untrusted hub descriptor. bLength must
// cover both port bitmaps for bNbrPorts ports and the bytes given; a hub
// with no ports or more than MaxHubPorts is refused (ErrTooManyPorts).
func ParseHubDescriptor(b []byte) (HubDescriptor, error) {
	if len(b) < 2 {
		return HubDescriptor{}, descErr("hub descriptor of %d bytes", len(b))
	}
	if b[1] != DescHub {
		return HubDescriptor{}, descErr("hub descriptor type %#02x", b[1])
	}
	if len(b) < 3 {
		return HubDescriptor{}, descErr("hub descriptor of %d bytes", len(b))
	}
	n := int(b[2])
	if n == 0 {
		return HubDescriptor{}, descErr("hub with no ports")
	}
	// One bit per port plus the reserved bit 0, in whole bytes, twice.
	bitmap := (n + 1 + 7) / 8
	need := 7 + 2*bitmap
	if int(b[0]) < need || len(b) < need {
		return HubDescriptor{}, descErr("hub descriptor of %d bytes (bLength %d) for %d ports, need %d", len(b), b[0], n, need)
	}
	if n > MaxHubPorts {
		return HubDescriptor{}, fmt.Errorf("%w: %d ports, at most %d", ErrTooManyPorts, n, MaxHubPorts)
	}
	h := HubDescriptor{Ports: n, Characteristics: uint16(b[3]) | uint16(b[4])<<8,
		PowerOnToGood: time.Duration(b[5]) * 2 * time.Millisecond, ControllerCurrent: b[6]}
	for i := 0; i < bitmap && i < 2; i++ {
		h.NonRemovable |= uint16(b[7+i]) << (8 * i)
	}
	h.NonRemovable &^= 1 // reserved
	h.NonRemovable &= 1<<(n+1) - 1
	return h, nil
}
