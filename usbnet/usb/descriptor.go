package usb

import (
	"errors"
	"fmt"
	"unicode/utf16"
)

// Descriptor types (USB 2.0 Table 9-5) and the standard descriptors'
// lengths (§9.6).
const (
	DescDevice          = 1
	DescConfiguration   = 2
	DescString          = 3
	DescInterface       = 4
	DescEndpoint        = 5
	DescDeviceQualifier = 6
	DescIfaceAssoc      = 11 // interface association (USB 2.0 ECN, IAD)

	DeviceDescLen    = 18
	ConfigDescLen    = 9
	InterfaceDescLen = 9
	EndpointDescLen  = 7
)

// Limits on what a configuration may hold. A descriptor set is at most
// 65535 bytes of which every descriptor takes at least two, so the loops
// end anyway; these keep what a hostile device can make the host keep
// small. maxEndpointsPerAlt: 15 IN + 15 OUT (USB 2.0 §9.6.6).
const (
	maxAltSettings     = 64
	maxEndpointsPerAlt = 30
	maxExtraPerAlt     = 32
	maxConfigs         = 8
)

// ErrDescriptor is wrapped by every descriptor parsing error.
var ErrDescriptor = errors.New("usb: bad descriptor")

func descErr(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrDescriptor, fmt.Sprintf(format, a...))
}

// DeviceDescriptor is a parsed device descriptor (USB 2.0 §9.6.1).
type DeviceDescriptor struct {
	USB                       uint16 // bcdUSB
	Class, SubClass, Protocol uint8
	MaxPacket0                uint8
	Vendor, Product, Release  uint16
	// String indexes (0: none).
	Manufacturer, ProductName, Serial uint8
	NumConfigs                        uint8
}

// ParseDeviceDescriptor parses a device descriptor. Eight bytes (what a
// host reads first to learn bMaxPacketSize0) parse too, leaving the
// fields beyond them zero; anything else shorter than 18 is an error.
func ParseDeviceDescriptor(b []byte) (DeviceDescriptor, error) {
	var d DeviceDescriptor
	if len(b) < 8 {
		return d, descErr("device descriptor of %d bytes", len(b))
	}
	if b[1] != DescDevice {
		return d, descErr("device descriptor of type %d", b[1])
	}
	if b[0] != DeviceDescLen {
		return d, descErr("device descriptor bLength %d", b[0])
	}
	d.USB = le16(b[2:])
	d.Class, d.SubClass, d.Protocol, d.MaxPacket0 = b[4], b[5], b[6], b[7]
	if len(b) == 8 {
		return d, nil
	}
	if len(b) < DeviceDescLen {
		return d, descErr("device descriptor of %d bytes", len(b))
	}
	d.Vendor, d.Product, d.Release = le16(b[8:]), le16(b[10:]), le16(b[12:])
	d.Manufacturer, d.ProductName, d.Serial, d.NumConfigs = b[14], b[15], b[16], b[17]
	return d, nil
}

// ValidMaxPacket0 reports whether bMaxPacketSize0 is allowed at speed s
// (USB 2.0 §5.5.3: low 8; full 8, 16, 32 or 64; high 64).
func ValidMaxPacket0(s Speed, mps uint8) bool {
	switch s {
	case SpeedLow:
		return mps == 8
	case SpeedFull:
		return mps == 8 || mps == 16 || mps == 32 || mps == 64
	case SpeedHigh:
		return mps == 64
	}
	return mps == 8 || mps == 16 || mps == 32 || mps == 64
}

// EndpointDescriptor is a parsed endpoint descriptor (USB 2.0 §9.6.6).
type EndpointDescriptor struct {
	Address    uint8 // bEndpointAddress
	Attributes uint8
	MaxPacket  uint16 // wMaxPacketSize as sent (bits 12:11: extra transactions)
	Interval   uint8
	// Extra are the class-specific descriptors that followed it.
	Extra [][]byte
}

// Type is the endpoint's transfer type.
func (e EndpointDescriptor) Type() TransferType { return TransferType(e.Attributes & 3) }

// In reports an IN endpoint.
func (e EndpointDescriptor) In() bool { return e.Address&EndpointIn != 0 }

// Number is the endpoint number, 1..15.
func (e EndpointDescriptor) Number() uint8 { return e.Address & 0x0f }

// MaxPacketSize is wMaxPacketSize bits 10:0, the packet size.
func (e EndpointDescriptor) MaxPacketSize() int { return int(e.MaxPacket & 0x7ff) }

// InterfaceDescriptor is one alternate setting of an interface (USB 2.0
// §9.6.5) with its endpoints and the class-specific descriptors between
// it and the next interface (CDC functional descriptors, raw: each slice
// is one descriptor, starting with bLength and bDescriptorType).
type InterfaceDescriptor struct {
	Number, Alternate         uint8
	Class, SubClass, Protocol uint8
	StringIndex               uint8
	Endpoints                 []EndpointDescriptor
	Extra                     [][]byte
}

// Endpoint returns the alternate setting's first endpoint of type t and
// direction in, or false.
func (i *InterfaceDescriptor) Endpoint(t TransferType, in bool) (EndpointDescriptor, bool) {
	for _, e := range i.Endpoints {
		if e.Type() == t && e.In() == in {
			return e, true
		}
	}
	return EndpointDescriptor{}, false
}

// ConfigDescriptor is a parsed configuration (USB 2.0 §9.6.3) with every
// interface alternate setting in the order the device listed them.
type ConfigDescriptor struct {
	Value, StringIndex, Attributes, MaxPower uint8
	NumInterfaces                            uint8
	Interfaces                               []InterfaceDescriptor
	// Extra are descriptors before the first interface (e.g. an interface
	// association descriptor).
	Extra [][]byte
}

// Interface returns alternate setting alt of interface num, or nil.
func (c *ConfigDescriptor) Interface(num, alt uint8) *InterfaceDescriptor {
	for i := range c.Interfaces {
		if c.Interfaces[i].Number == num && c.Interfaces[i].Alternate == alt {
			return &c.Interfaces[i]
		}
	}
	return nil
}

// ConfigTotalLength reads wTotalLength from the first 9 bytes of a
// configuration descriptor.
func ConfigTotalLength(b []byte) (int, error) {
	if len(b) < ConfigDescLen {
		return 0, descErr("configuration descriptor of %d bytes", len(b))
	}
	if b[0] < ConfigDescLen || b[1] != DescConfiguration {
		return 0, descErr("configuration descriptor bLength %d type %d", b[0], b[1])
	}
	total := int(le16(b[2:]))
	if total < int(b[0]) {
		return 0, descErr("wTotalLength %d shorter than the descriptor", total)
	}
	return total, nil
}

// ParseConfigDescriptor parses a whole configuration as
// GET_DESCRIPTOR(CONFIGURATION) returns it. b comes from a device and is
// untrusted: wTotalLength must fit in b (bytes past it are ignored), every
// descriptor's bLength must be at least 2 and fit in what is left, the
// standard descriptors must have their full length, endpoints must follow
// an interface and match its bNumEndpoints, and the counts are bounded.
func ParseConfigDescriptor(b []byte) (ConfigDescriptor, error) {
	var c ConfigDescriptor
	total, err := ConfigTotalLength(b)
	if err != nil {
		return c, err
	}
	if total > len(b) {
		return c, descErr("wTotalLength %d but %d bytes arrived", total, len(b))
	}
	b = b[:total]
	c.NumInterfaces, c.Value, c.StringIndex, c.Attributes, c.MaxPower = b[4], b[5], b[6], b[7], b[8]
	var cur *InterfaceDescriptor
	wantEndpoints := 0
	finish := func() error {
		if cur != nil && len(cur.Endpoints) != wantEndpoints {
			return descErr("interface %d alt %d: %d endpoints, bNumEndpoints %d",
				cur.Number, cur.Alternate, len(cur.Endpoints), wantEndpoints)
		}
		return nil
	}
	for off := int(b[0]); off < len(b); {
		rest := len(b) - off
		if rest < 2 {
			return c, descErr("%d stray byte at offset %d", rest, off)
		}
		l, typ := int(b[off]), b[off+1]
		if l < 2 {
			return c, descErr("bLength %d at offset %d", l, off)
		}
		if l > rest {
			return c, descErr("descriptor of %d bytes at offset %d, %d left", l, off, rest)
		}
		d := b[off : off+l : off+l]
		off += l
		switch typ {
		case DescInterface:
			if l < InterfaceDescLen {
				return c, descErr("interface descriptor bLength %d", l)
			}
			if err := finish(); err != nil {
				return c, err
			}
			if len(c.Interfaces) >= maxAltSettings {
				return c, descErr("more than %d interface settings", maxAltSettings)
			}
			c.Interfaces = append(c.Interfaces, InterfaceDescriptor{
				Number: d[2], Alternate: d[3], Class: d[5], SubClass: d[6], Protocol: d[7], StringIndex: d[8]})
			cur = &c.Interfaces[len(c.Interfaces)-1]
			wantEndpoints = int(d[4])
			if wantEndpoints > maxEndpointsPerAlt {
				return c, descErr("interface %d: bNumEndpoints %d", d[2], wantEndpoints)
			}
		case DescEndpoint:
			if l < EndpointDescLen {
				return c, descErr("endpoint descriptor bLength %d", l)
			}
			if cur == nil {
				return c, descErr("endpoint descriptor before any interface")
			}
			if len(cur.Endpoints) >= wantEndpoints {
				return c, descErr("interface %d alt %d: more endpoints than bNumEndpoints %d",
					cur.Number, cur.Alternate, wantEndpoints)
			}
			e := EndpointDescriptor{Address: d[2], Attributes: d[3], MaxPacket: le16(d[4:]), Interval: d[6]}
			if e.Number() == 0 || e.Address&0x70 != 0 {
				return c, descErr("endpoint address %#02x", e.Address)
			}
			if e.MaxPacketSize() == 0 && e.Type() != Isochronous {
				return c, descErr("endpoint %#02x: wMaxPacketSize 0", e.Address)
			}
			cur.Endpoints = append(cur.Endpoints, e)
		case DescDevice, DescConfiguration:
			return c, descErr("descriptor type %d inside a configuration", typ)
		default:
			// Class-specific or other descriptors: kept raw with the
			// endpoint or interface they follow, or the configuration.
			switch {
			case cur == nil:
				if len(c.Extra) >= maxExtraPerAlt {
					return c, descErr("too many descriptors before the first interface")
				}
				c.Extra = append(c.Extra, d)
			case len(cur.Endpoints) > 0:
				e := &cur.Endpoints[len(cur.Endpoints)-1]
				if len(e.Extra) >= maxExtraPerAlt {
					return c, descErr("too many descriptors after endpoint %#02x", e.Address)
				}
				e.Extra = append(e.Extra, d)
			default:
				if len(cur.Extra) >= maxExtraPerAlt {
					return c, descErr("too many descriptors in interface %d", cur.Number)
				}
				cur.Extra = append(cur.Extra, d)
			}
		}
	}
	if err := finish(); err != nil {
		return c, err
	}
	return c, nil
}

// ParseString decodes a string descriptor (USB 2.0 §9.6.7): UTF-16LE
// after the two header bytes. An odd length, a wrong type, a bLength
// beyond what arrived or an unpaired surrogate is an error.
func ParseString(b []byte) (string, error) {
	u, err := stringUnits(b)
	if err != nil {
		return "", err
	}
	for i := 0; i < len(u); i++ {
		switch {
		case utf16.IsSurrogate(rune(u[i])):
			if u[i] >= 0xdc00 || i+1 == len(u) || u[i+1] < 0xdc00 || u[i+1] > 0xdfff {
				return "", descErr("unpaired surrogate %#04x in string", u[i])
			}
			i++
		}
	}
	return string(utf16.Decode(u)), nil
}

// ParseLangIDs decodes string descriptor zero: the LANGIDs (USB 2.0
// Table 9-15).
func ParseLangIDs(b []byte) ([]uint16, error) {
	u, err := stringUnits(b)
	if err != nil {
		return nil, err
	}
	if len(u) == 0 {
		return nil, descErr("no LANGIDs")
	}
	return u, nil
}

func stringUnits(b []byte) ([]uint16, error) {
	if len(b) < 2 {
		return nil, descErr("string descriptor of %d bytes", len(b))
	}
	l := int(b[0])
	if b[1] != DescString {
		return nil, descErr("string descriptor of type %d", b[1])
	}
	if l < 2 || l%2 != 0 || l > len(b) {
		return nil, descErr("string descriptor bLength %d of %d bytes", l, len(b))
	}
	u := make([]uint16, 0, (l-2)/2)
	for i := 2; i < l; i += 2 {
		u = append(u, le16(b[i:]))
	}
	return u, nil
}

func le16(b []byte) uint16 { return uint16(b[0]) | uint16(b[1])<<8 }
