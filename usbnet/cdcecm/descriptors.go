package cdcecm

import (
	"errors"
	"fmt"

	gnet "github.com/gowrt/gowrt/net"
)

// Class codes (USB CDC 1.2, CDC120 §4.2, §4.3, §4.5).
const (
	// ClassCommunications is a Communications Class interface's
	// bInterfaceClass (also the device class of composite CDC devices).
	ClassCommunications = 0x02
	// SubclassECM is the Ethernet Networking Control Model's
	// bInterfaceSubClass (CDC120 Table 4).
	SubclassECM = 0x06
	// ClassData is the Data Class interface's bInterfaceClass
	// (CDC120 Table 6).
	ClassData = 0x0a
)

// Functional descriptors (CDC120 §5.2.3, Tables 12 and 13; ECM120 §5.4).
const (
	typeCSInterface = 0x24 // bDescriptorType CS_INTERFACE

	subtypeHeader   = 0x00
	subtypeUnion    = 0x06
	subtypeEthernet = 0x0f

	headerLen   = 5  // CDC120 Table 15: bLength, type, subtype, bcdCDC
	unionMinLen = 5  // CDC120 Table 16: + control and at least one subordinate
	ethernetLen = 13 // ECM120 Table 3

	// maxSegmentMin is the smallest wMaxSegmentSize worth driving: an
	// Ethernet header and a minimal IPv4 payload (RFC 791: 68 bytes).
	maxSegmentMin = gnet.EthHeaderLen + 68
)

// Functional is what an ECM control interface's functional descriptors
// say: which interfaces belong together and what the Ethernet function is.
type Functional struct {
	// CDC is bcdCDC from the header functional descriptor (0x0110, 0x0120).
	CDC uint16
	// ControlInterface and DataInterfaces are the union functional
	// descriptor's master and subordinate interfaces.
	ControlInterface uint8
	DataInterfaces   []uint8
	// MACString is iMACAddress: the index of the string descriptor that
	// holds the MAC address as 12 hex digits.
	MACString uint8
	// Statistics is bmEthernetStatistics, the counters the function keeps.
	Statistics uint32
	// MaxSegmentSize is wMaxSegmentSize: the largest Ethernet frame (FCS
	// excluded) the function sends or accepts, typically 1514.
	MaxSegmentSize uint16
	// MulticastFilters is wNumberMCFilters (bit 15: imperfect filtering).
	MulticastFilters uint16
	// PowerFilters is bNumberPowerFilters.
	PowerFilters uint8
}

// Errors of descriptor parsing. Descriptors come from the device and are
// untrusted: anything malformed is one of these, never a panic.
var (
	ErrDescriptor = errors.New("cdcecm: malformed functional descriptor")
	ErrMissing    = errors.New("cdcecm: required functional descriptor missing")
	ErrMAC        = errors.New("cdcecm: bad MAC address string")
)

// ParseFunctional parses the class-specific descriptors that follow an
// ECM control interface (a run of descriptors, each starting with bLength
// and bDescriptorType). Descriptors of other types, and functional
// descriptors of other subtypes (call management, ...), are skipped; the
// header, union and Ethernet networking descriptors are required, once
// each (CDC120 §5.2.3: the header comes first).
func ParseFunctional(b []byte) (Functional, error) {
	var f Functional
	var seenHeader, seenUnion, seenEthernet bool
	for off := 0; off < len(b); {
		if len(b)-off < 2 {
			return f, fmt.Errorf("%w: %d stray bytes at offset %d", ErrDescriptor, len(b)-off, off)
		}
		l := int(b[off])
		if l < 2 || l > len(b)-off {
			return f, fmt.Errorf("%w: bLength %d at offset %d with %d bytes left", ErrDescriptor, l, off, len(b)-off)
		}
		d := b[off : off+l]
		off += l
		if d[1] != typeCSInterface {
			continue
		}
		if l < 3 {
			return f, fmt.Errorf("%w: CS_INTERFACE descriptor of %d bytes", ErrDescriptor, l)
		}
		switch d[2] {
		case subtypeHeader:
			if seenHeader || l < headerLen {
				return f, fmt.Errorf("%w: header (length %d, repeated %v)", ErrDescriptor, l, seenHeader)
			}
			seenHeader = true
			f.CDC = le16(d[3:])
		case subtypeUnion:
			if seenUnion || l < unionMinLen {
				return f, fmt.Errorf("%w: union (length %d, repeated %v)", ErrDescriptor, l, seenUnion)
			}
			seenUnion = true
			f.ControlInterface = d[3]
			f.DataInterfaces = append([]uint8(nil), d[4:]...)
		case subtypeEthernet:
			if seenEthernet || l < ethernetLen {
				return f, fmt.Errorf("%w: Ethernet networking (length %d, repeated %v)", ErrDescriptor, l, seenEthernet)
			}
			seenEthernet = true
			f.MACString = d[3]
			f.Statistics = uint32(d[4]) | uint32(d[5])<<8 | uint32(d[6])<<16 | uint32(d[7])<<24
			f.MaxSegmentSize = le16(d[8:])
			f.MulticastFilters = le16(d[10:])
			f.PowerFilters = d[12]
		}
		if (seenUnion || seenEthernet) && !seenHeader {
			return f, fmt.Errorf("%w: functional descriptor before the header", ErrDescriptor)
		}
	}
	switch {
	case !seenHeader:
		return f, fmt.Errorf("%w: header", ErrMissing)
	case !seenUnion:
		return f, fmt.Errorf("%w: union", ErrMissing)
	case !seenEthernet:
		return f, fmt.Errorf("%w: Ethernet networking", ErrMissing)
	case f.MACString == 0:
		return f, fmt.Errorf("%w: iMACAddress is 0 (no address string)", ErrDescriptor)
	case f.MaxSegmentSize < maxSegmentMin:
		return f, fmt.Errorf("%w: wMaxSegmentSize %d", ErrDescriptor, f.MaxSegmentSize)
	}
	return f, nil
}

func le16(b []byte) uint16 { return uint16(b[0]) | uint16(b[1])<<8 }

// ParseMAC decodes the iMACAddress string: exactly 12 hexadecimal digits,
// most significant first (ECM120 §5.4, Table 3: "the 48-bit Ethernet MAC
// address ... in hexadecimal format"). The address must be a unicast one
// and not zero.
func ParseMAC(s string) (gnet.MAC, error) {
	var m gnet.MAC
	if len(s) != 12 {
		return m, fmt.Errorf("%w: %q is not 12 hex digits", ErrMAC, s)
	}
	for i := 0; i < 12; i++ {
		v, ok := hexDigit(s[i])
		if !ok {
			return m, fmt.Errorf("%w: %q is not 12 hex digits", ErrMAC, s)
		}
		m[i/2] = m[i/2]<<4 | v
	}
	if m.IsZero() || m.IsMulticast() {
		return m, fmt.Errorf("%w: %v is not a station address", ErrMAC, m)
	}
	return m, nil
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
