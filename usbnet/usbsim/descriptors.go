package usbsim

import (
	"unicode/utf16"

	"github.com/gowrt/gowrt/usbnet/usb"
)

// Descriptor types and sizes (USB 2.0 Table 9-5, §9.6).
const (
	descDevice        = 1
	descConfiguration = 2
	descString        = 3
	descInterface     = 4
	descEndpoint      = 5

	deviceDescLen    = 18 // §9.6.1
	configDescLen    = 9  // §9.6.3
	interfaceDescLen = 9  // §9.6.5
	endpointDescLen  = 7  // §9.6.6

	// configAttrReserved is bmAttributes bit 7, which must be one
	// (USB 2.0 Table 9-10); configAttrSelfPowered is bit 6.
	configAttrReserved    = 0x80
	configAttrSelfPowered = 0x40
)

// DeviceDesc is a device descriptor (USB 2.0 §9.6.1).
type DeviceDesc struct {
	USB                       uint16 // bcdUSB, e.g. 0x0200
	Class, SubClass, Protocol uint8
	MaxPacket0                uint8 // bMaxPacketSize0: 8, 16, 32 or 64
	Vendor, Product, Release  uint16
	// String indexes (0: none).
	Manufacturer, ProductName, Serial uint8
	// NumConfigs is bNumConfigurations; zero means len(Config.Configs).
	NumConfigs uint8
}

// Bytes is the descriptor's 18-byte wire form.
func (d DeviceDesc) Bytes() []byte {
	return []byte{deviceDescLen, descDevice,
		byte(d.USB), byte(d.USB >> 8),
		d.Class, d.SubClass, d.Protocol, d.MaxPacket0,
		byte(d.Vendor), byte(d.Vendor >> 8),
		byte(d.Product), byte(d.Product >> 8),
		byte(d.Release), byte(d.Release >> 8),
		d.Manufacturer, d.ProductName, d.Serial, d.NumConfigs}
}

// EndpointDesc is an endpoint descriptor (USB 2.0 §9.6.6).
type EndpointDesc struct {
	Address   uint8 // bEndpointAddress: number | usb.EndpointIn
	Type      usb.TransferType
	MaxPacket uint16 // wMaxPacketSize
	Interval  uint8
}

// Bytes is the descriptor's 7-byte wire form.
func (e EndpointDesc) Bytes() []byte {
	return []byte{endpointDescLen, descEndpoint, e.Address, uint8(e.Type),
		byte(e.MaxPacket), byte(e.MaxPacket >> 8), e.Interval}
}

// InterfaceDesc is one alternate setting of an interface (USB 2.0 §9.6.5)
// with its endpoints.
type InterfaceDesc struct {
	Number, Alternate         uint8
	Class, SubClass, Protocol uint8
	StringIndex               uint8
	// Extra are class-specific descriptors (e.g. CDC functional
	// descriptors), written as given between the interface descriptor and
	// its endpoints. Each must carry its own bLength and bDescriptorType.
	Extra     [][]byte
	Endpoints []EndpointDesc
}

// ConfigDesc is a configuration (USB 2.0 §9.6.3) with its interfaces.
type ConfigDesc struct {
	Value       uint8 // bConfigurationValue (>= 1)
	StringIndex uint8
	SelfPowered bool
	MaxPower    uint8 // bMaxPower, in 2 mA units
	// Interfaces lists every alternate setting of every interface, in the
	// order they are written.
	Interfaces []InterfaceDesc
	// Extra are descriptors written right after the configuration
	// descriptor (e.g. an interface association descriptor).
	Extra [][]byte
}

// Bytes is the whole configuration as GET_DESCRIPTOR(CONFIGURATION)
// returns it: the configuration descriptor with wTotalLength and
// bNumInterfaces filled in, then every interface, its class-specific
// descriptors and its endpoints (USB 2.0 §9.4.3).
func (c ConfigDesc) Bytes() []byte {
	attrs := uint8(configAttrReserved)
	if c.SelfPowered {
		attrs |= configAttrSelfPowered
	}
	numbers := map[uint8]bool{}
	for _, it := range c.Interfaces {
		numbers[it.Number] = true
	}
	b := []byte{configDescLen, descConfiguration, 0, 0, uint8(len(numbers)),
		c.Value, c.StringIndex, attrs, c.MaxPower}
	for _, x := range c.Extra {
		b = append(b, x...)
	}
	for _, it := range c.Interfaces {
		b = append(b, interfaceDescLen, descInterface, it.Number, it.Alternate,
			uint8(len(it.Endpoints)), it.Class, it.SubClass, it.Protocol, it.StringIndex)
		for _, x := range it.Extra {
			b = append(b, x...)
		}
		for _, e := range it.Endpoints {
			b = append(b, e.Bytes()...)
		}
	}
	b[2], b[3] = byte(len(b)), byte(len(b)>>8)
	return b
}

// StringDesc is a string descriptor (USB 2.0 §9.6.7): s in UTF-16LE.
// Strings longer than a descriptor can hold (126 code units) are cut.
func StringDesc(s string) []byte {
	u := utf16.Encode([]rune(s))
	if len(u) > 126 {
		u = u[:126]
	}
	b := []byte{byte(2 + 2*len(u)), descString}
	for _, c := range u {
		b = append(b, byte(c), byte(c>>8))
	}
	return b
}

// LangIDs is string descriptor zero: the LANGIDs the device supports
// (USB 2.0 Table 9-15).
func LangIDs(ids ...uint16) []byte {
	b := []byte{byte(2 + 2*len(ids)), descString}
	for _, id := range ids {
		b = append(b, byte(id), byte(id>>8))
	}
	return b
}

// LangEnglishUS is LANGID 0x0409, the one language gowrt's models speak.
const LangEnglishUS = 0x0409
