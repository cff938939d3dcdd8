// Package ecmsim models QEMU's usb-net device (hw/usb/dev-network.c) as a
// CDC Ethernet (ECM) function, on the usbsim device framework: the same
// identity (NetChip 0525:a4a2), both of its configurations (RNDIS first,
// as value 2; CDC Ethernet as value 1), 64-byte full-speed bulk
// endpoints on the data interface's alternate setting 1, a 16-byte
// interrupt endpoint that answers every poll with NETWORK_CONNECTION
// (QEMU since 7.2), and the MAC string. Behind it is a wire a test sends
// frames into (Send, towards the host) and reads the host's frames from
// (Frames).
//
// The model keeps its own facts (descriptor bytes, request codes); it
// does not import the driver. The hostile knobs of usbsim.Device
// (FailControl, SlowControl, Halt, Vanish) are on Model.Device.
package ecmsim

import (
	"fmt"
	"sync"

	"github.com/gowrt/gowrt/usbnet/usb"
	"github.com/gowrt/gowrt/usbnet/usbsim"
)

// Identity and layout of QEMU's usb-net (hw/usb/dev-network.c).
const (
	VendorID  = 0x0525 // NetChip
	ProductID = 0xa4a2 // Ethernet/RNDIS Gadget

	ConfigECM   = 1 // DEV_CONFIG_VALUE: CDC Ethernet
	ConfigRNDIS = 2 // DEV_RNDIS_CONFIG_VALUE, listed first

	// String indexes (enum usbstring_idx).
	strManufacturer = 1
	strProduct      = 2
	strEthAddr      = 3
	strData         = 4
	strControl      = 5
	strRNDISControl = 6
	strCDC          = 7
	strRNDIS        = 9
	strSerial       = 10

	EndpointStatus  = 0x81
	EndpointBulkIn  = 0x82
	EndpointBulkOut = 0x02

	bulkMaxPacket   = 64
	statusMaxPacket = 16 // STATUS_BYTECOUNT: 8-byte header + 8 data
	statusInterval  = 32 // 1 << LOG2_STATUS_INTERVAL_MSEC, ms

	// maxSegment is wMaxSegmentSize, ETH_FRAME_LEN (QEMU's buffers are
	// 2048 bytes).
	maxSegment = 1514
	// outBufSize is QEMU's out_buf: a frame that grows beyond it is
	// dropped.
	outBufSize = 2048

	// rxQueueLen bounds the frames waiting for the host (QEMU holds one;
	// the model queues a few so tests can burst).
	rxQueueLen = 64
)

// CDC class codes and requests the model answers (CDC120 Tables 4, 6,
// 13; ECM120 Tables 3, 6, 11). Kept here, not taken from the driver.
const (
	classComm       = 0x02
	subclassACM     = 0x02
	subclassECM     = 0x06
	classData       = 0x0a
	protoVendor     = 0xff
	csInterface     = 0x24
	reqSetEthFilter = 0x43
	notifyConn      = 0x00
	notifySpeed     = 0x2a
	classIfaceOut   = usb.RequestClass | usb.RecipientIface
	classIfaceIn    = usb.RequestIn | usb.RequestClass | usb.RecipientIface
)

// Stats count what crossed the model's wire and what it refused.
type Stats struct {
	// ToHost: frames the host read from the bulk-in endpoint; FromHost:
	// frames the host wrote to bulk-out and the model put on the wire.
	ToHost, FromHost uint64
	// RxQueueDrops: Send found the queue full. FromHostOversize: a frame
	// from the host grew past the out buffer and was dropped. FromHostLost:
	// frames the wire reader did not take in time (Frames is full).
	RxQueueDrops, FromHostOversize, FromHostLost uint64
	// FilterSets: SET_ETHERNET_PACKET_FILTER requests; StatusPolls:
	// interrupt IN packets sent.
	FilterSets, StatusPolls uint64
}

// Model is the usb-net function; Device is what a host model is plugged
// with.
type Model struct {
	usbsim.BaseModel
	Device *usbsim.Device
	MAC    [6]byte

	mu      sync.Mutex
	config  uint8
	dataAlt uint8
	rxq     [][]byte // frames waiting for the host
	rxOff   int      // bytes of rxq[0] already sent
	rxZLP   bool     // rxq[0] fully sent as full packets; a ZLP is owed
	outBuf  []byte
	linkUp  bool
	filter  uint16
	pending [][]byte // notifications queued before the steady state
	wire    chan []byte
	stats   Stats
}

// Config varies the model for tests of a driver's error paths.
type Config struct {
	// MAC is the emulated NIC's address (QEMU's mac= property).
	MAC [6]byte
	// MACString replaces the iMACAddress string ("" : QEMU's).
	MACString string
	// Functional replaces the ECM control interface's functional
	// descriptors (nil: QEMU's).
	Functional [][]byte
}

// New builds the function with the MAC address QEMU puts in its string:
// QEMU writes 0x40 for the first octet whatever the NIC's (the host side
// gets a different address from the emulated peer).
func New(mac [6]byte) *Model { return NewConfig(Config{MAC: mac}) }

// NewConfig builds a function varied by cfg.
func NewConfig(cfg Config) *Model {
	mac := cfg.MAC
	m := &Model{MAC: mac, linkUp: true, wire: make(chan []byte, 256)}
	macStr := fmt.Sprintf("%02x%02x%02x%02x%02x%02x", 0x40, mac[1], mac[2], mac[3], mac[4], mac[5])
	if cfg.MACString != "" {
		macStr = cfg.MACString
	}
	ecm := ecmConfig()
	if cfg.Functional != nil {
		ecm.Interfaces[0].Extra = cfg.Functional
	}
	m.Device = usbsim.NewDevice(usbsim.Config{
		Speed: usb.SpeedFull,
		Device: usbsim.DeviceDesc{
			USB: 0x0200, Class: classComm, MaxPacket0: 64,
			Vendor: VendorID, Product: ProductID, Release: 0x0000,
			Manufacturer: strManufacturer, ProductName: strProduct, Serial: strSerial,
		},
		Configs: []usbsim.ConfigDesc{rndisConfig(), ecm},
		Strings: map[uint8]string{
			strManufacturer: "QEMU",
			strProduct:      "RNDIS/QEMU USB Network Device",
			strEthAddr:      macStr,
			strData:         "QEMU USB Net Data Interface",
			strControl:      "QEMU USB Net Control Interface",
			strRNDISControl: "QEMU USB Net RNDIS Control Interface",
			strCDC:          "QEMU USB Net CDC",
			strRNDIS:        "QEMU USB Net RNDIS",
			strSerial:       "1",
		},
		Model: m,
	})
	return m
}

// HostMAC is the address the function's MAC string gives the host.
func (m *Model) HostMAC() [6]byte {
	return [6]byte{0x40, m.MAC[1], m.MAC[2], m.MAC[3], m.MAC[4], m.MAC[5]}
}

func statusEP() usbsim.EndpointDesc {
	return usbsim.EndpointDesc{Address: EndpointStatus, Type: usb.Interrupt, MaxPacket: statusMaxPacket, Interval: statusInterval}
}

func bulkEPs() []usbsim.EndpointDesc {
	return []usbsim.EndpointDesc{
		{Address: EndpointBulkIn, Type: usb.Bulk, MaxPacket: bulkMaxPacket},
		{Address: EndpointBulkOut, Type: usb.Bulk, MaxPacket: bulkMaxPacket},
	}
}

// rndisConfig is configuration value 2: RNDIS, a control interface with
// the ACM vendor protocol and an always-on data interface.
func rndisConfig() usbsim.ConfigDesc {
	return usbsim.ConfigDesc{Value: ConfigRNDIS, StringIndex: strRNDIS, SelfPowered: true, MaxPower: 0x32,
		Interfaces: []usbsim.InterfaceDesc{
			{Number: 0, Class: classComm, SubClass: subclassACM, Protocol: protoVendor, StringIndex: strRNDISControl,
				Extra: [][]byte{
					{0x05, csInterface, 0x00, 0x10, 0x01}, // header, CDC 1.10
					{0x05, csInterface, 0x01, 0x00, 0x01}, // call management
					{0x04, csInterface, 0x02, 0x00},       // ACM
					{0x05, csInterface, 0x06, 0x00, 0x01}, // union 0 -> 1
				},
				Endpoints: []usbsim.EndpointDesc{statusEP()}},
			{Number: 1, Class: classData, StringIndex: strData, Endpoints: bulkEPs()},
		}}
}

// ecmConfig is configuration value 1: CDC Ethernet.
func ecmConfig() usbsim.ConfigDesc {
	return usbsim.ConfigDesc{Value: ConfigECM, StringIndex: strCDC, SelfPowered: true, MaxPower: 0x32,
		Interfaces: []usbsim.InterfaceDesc{
			{Number: 0, Class: classComm, SubClass: subclassECM, StringIndex: strControl,
				Extra: [][]byte{
					{0x05, csInterface, 0x00, 0x10, 0x01}, // header, CDC 1.10
					{0x05, csInterface, 0x06, 0x00, 0x01}, // union 0 -> 1
					{0x0d, csInterface, 0x0f, strEthAddr, 0, 0, 0, 0, // Ethernet: MAC string, no statistics,
						byte(maxSegment & 0xff), byte(maxSegment >> 8), 0, 0, 0}, // wMaxSegmentSize, no filters
				},
				Endpoints: []usbsim.EndpointDesc{statusEP()}},
			{Number: 1, Alternate: 0, Class: classData, StringIndex: strData},
			{Number: 1, Alternate: 1, Class: classData, StringIndex: strData, Endpoints: bulkEPs()},
		}}
}

// SetConfiguration implements usbsim.Model.
func (m *Model) SetConfiguration(v uint8) {
	m.mu.Lock()
	m.config, m.dataAlt = v, 0
	m.resetDataLocked()
	m.mu.Unlock()
}

// SetInterface implements usbsim.Model. Selecting alternate setting 0 of
// the data interface resets the data path (ECM120 §3.3.1: frames in
// flight are lost).
func (m *Model) SetInterface(iface, alt uint8) {
	m.mu.Lock()
	if iface == 1 {
		m.dataAlt = alt
		m.resetDataLocked()
	}
	m.mu.Unlock()
}

func (m *Model) resetDataLocked() {
	m.rxOff, m.rxZLP = 0, false
	m.outBuf = m.outBuf[:0]
}

// ControlOut implements usbsim.Model: SET_ETHERNET_PACKET_FILTER in the
// ECM configuration; everything else stalls.
func (m *Model) ControlOut(s usb.Setup, data []byte) usbsim.Handshake {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s.RequestType == classIfaceOut && s.Request == reqSetEthFilter && m.config == ConfigECM && s.Length == 0 {
		m.filter = s.Value
		m.stats.FilterSets++
		return usbsim.ACK
	}
	return usbsim.STALL
}

// Filter is the last packet filter the host set.
func (m *Model) Filter() uint16 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.filter
}

// EndpointIn implements usbsim.Model.
func (m *Model) EndpointIn(ep uint8, buf []byte) (int, usbsim.Handshake) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch ep {
	case EndpointStatus:
		return m.statusLocked(buf)
	case EndpointBulkIn:
		return m.bulkInLocked(buf)
	}
	return 0, usbsim.STALL
}

// statusLocked answers an interrupt poll: a queued notification, else the
// connection state (QEMU 7.2 answers every poll; it never NAKs in ECM
// mode).
func (m *Model) statusLocked(buf []byte) (int, usbsim.Handshake) {
	if m.config != ConfigECM {
		return 0, usbsim.NAK
	}
	var n []byte
	if len(m.pending) > 0 {
		n = m.pending[0]
		if len(n) > len(buf) || len(n) > statusMaxPacket {
			return 0, usbsim.STALL
		}
		m.pending = m.pending[1:]
	} else {
		var v byte
		if m.linkUp {
			v = 1
		}
		n = []byte{classIfaceIn, notifyConn, v, 0, 1, 0, 0, 0}
	}
	m.stats.StatusPolls++
	if len(buf) > statusMaxPacket {
		buf = buf[:statusMaxPacket]
	}
	return copy(buf, n), usbsim.ACK
}

func (m *Model) bulkInLocked(buf []byte) (int, usbsim.Handshake) {
	if len(m.rxq) == 0 {
		return 0, usbsim.NAK
	}
	f := m.rxq[0]
	if m.rxZLP {
		m.popLocked()
		return 0, usbsim.ACK
	}
	// A packet is at most the endpoint's wMaxPacketSize, whatever room
	// the host offers (a host model may offer more and call the rest
	// babble).
	if len(buf) > bulkMaxPacket {
		buf = buf[:bulkMaxPacket]
	}
	n := copy(buf, f[m.rxOff:])
	m.rxOff += n
	if m.rxOff == len(f) {
		if n == bulkMaxPacket {
			m.rxZLP = true // ended on a full packet: a ZLP ends the frame
		} else {
			m.popLocked()
		}
	}
	return n, usbsim.ACK
}

func (m *Model) popLocked() {
	m.rxq = m.rxq[1:]
	m.rxOff, m.rxZLP = 0, false
	m.stats.ToHost++
}

// EndpointOut implements usbsim.Model: packets accumulate until a short
// one (or a ZLP) ends the frame, which goes on the wire.
func (m *Model) EndpointOut(ep uint8, data []byte) usbsim.Handshake {
	if ep != EndpointBulkOut&0x0f {
		return usbsim.STALL
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.outBuf)+len(data) > outBufSize {
		m.stats.FromHostOversize++
		m.outBuf = m.outBuf[:0]
		return usbsim.ACK
	}
	m.outBuf = append(m.outBuf, data...)
	if len(data) == bulkMaxPacket {
		return usbsim.ACK
	}
	f := append([]byte(nil), m.outBuf...)
	m.outBuf = m.outBuf[:0]
	if len(f) == 0 {
		return usbsim.ACK // a ZLP with nothing before it
	}
	select {
	case m.wire <- f:
		m.stats.FromHost++
	default:
		m.stats.FromHostLost++
	}
	return usbsim.ACK
}

// Send puts a frame on the wire towards the host; it reports false if the
// model's queue was full (the frame is dropped, as a real device drops
// what it has no room for).
func (m *Model) Send(frame []byte) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.rxq) >= rxQueueLen {
		m.stats.RxQueueDrops++
		return false
	}
	m.rxq = append(m.rxq, append([]byte(nil), frame...))
	return true
}

// Queued is how many frames wait for the host.
func (m *Model) Queued() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.rxq)
}

// Frames delivers the frames the host sent.
func (m *Model) Frames() <-chan []byte { return m.wire }

// SetLink sets the connection state the interrupt endpoint reports.
func (m *Model) SetLink(up bool) {
	m.mu.Lock()
	m.linkUp = up
	m.mu.Unlock()
}

// NotifySpeed queues a CONNECTION_SPEED_CHANGE notification (ECM120
// §6.3.3): down- and upstream bit rates.
func (m *Model) NotifySpeed(downBits, upBits uint32) {
	m.mu.Lock()
	m.pending = append(m.pending, []byte{classIfaceIn, notifySpeed, 0, 0, 0, 0, 8, 0,
		byte(downBits), byte(downBits >> 8), byte(downBits >> 16), byte(downBits >> 24),
		byte(upBits), byte(upBits >> 8), byte(upBits >> 16), byte(upBits >> 24)})
	m.mu.Unlock()
}

// Stats returns the model's counters.
func (m *Model) Stats() Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.stats
}
