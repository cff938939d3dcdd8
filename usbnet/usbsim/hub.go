package usbsim

import (
	"sync"
	"time"

	"github.com/gowrt/gowrt/usbnet/usb"
)

// Hub class constants the model answers (USB 2.0 §11.23, §11.24). They
// are written out here rather than taken from package usb so the model
// states the wire format on its own.
const (
	hubClass          = 0x09
	hubDescType       = 0x29
	hubReqHub         = 0x20 // class, recipient device
	hubReqPort        = 0x23 // class, recipient other (a port)
	hubStatusEndpoint = 0x81

	portFeatEnable       = 1
	portFeatSuspend      = 2
	portFeatReset        = 4
	portFeatPower        = 8
	portFeatCConnection  = 16
	portFeatCEnable      = 17
	portFeatCSuspend     = 18
	portFeatCOverCurrent = 19
	portFeatCReset       = 20

	portStConnection = 1 << 0
	portStEnable     = 1 << 1
	portStSuspend    = 1 << 2
	portStReset      = 1 << 4
	portStPower      = 1 << 8
	portStLowSpeed   = 1 << 9
	portStHighSpeed  = 1 << 10

	portChConnection = 1 << 0
	portChEnable     = 1 << 1
	portChReset      = 1 << 4
)

// DefaultHubResetTime is how long the model drives a port reset: TDRST's
// 10 ms minimum for a hub's downstream port (USB 2.0 §7.1.7.5).
const DefaultHubResetTime = 10 * time.Millisecond

// HubConfig describes a Hub.
type HubConfig struct {
	// Ports is bNbrPorts (1..15 for a usable hub; 0 means 4).
	Ports int
	// Speed is the hub's upstream speed (0: high; a full-speed hub
	// reports high-speed devices as full speed).
	Speed usb.Speed
	// Interval is the status-change endpoint's bInterval (0: 12, a
	// 256 ms period at high speed, what real hubs give; 255 ms at full
	// speed).
	Interval uint8
	// ResetTime is how long a port reset lasts (0: DefaultHubResetTime).
	ResetTime time.Duration
	// PowerOnToGood is bPwrOn2PwrGood in 2 ms units (0: 1).
	PowerOnToGood   uint8
	Vendor, Product uint16
	// NoStatusEndpoint leaves the status-change endpoint out of the
	// configuration (a hub the host must poll).
	NoStatusEndpoint bool
}

// Hub is a USB 2.0 hub model (chapter 11) as a Function: a Device that
// answers the hub class requests, with a status-change interrupt
// endpoint, downstream ports that devices are plugged into and pulled out
// of, port power, port reset that takes time and reports C_PORT_RESET,
// and token routing: a token for the hub's own address is the hub's, any
// other goes down to the enabled ports, where the function with that
// address answers. A host model hosts it like any other Function.
//
// Hostile knobs: SetDescriptor (a malformed hub descriptor), StickReset
// (a port whose reset never ends), StallStatus (GET_STATUS of a port
// stalls), Vanish (the hub and everything behind it stop answering).
type Hub struct {
	cfg HubConfig
	dev *Device

	mu          sync.Mutex
	ports       []hubPortState // index 1..Ports
	desc        []byte
	stuck       map[int]bool
	stallStatus bool
	vanished    bool
	resets      uint64
}

type hubPortState struct {
	f         Function
	power     bool
	enabled   bool
	suspended bool
	resetting bool
	resetEnd  time.Time
	change    uint16
}

// NewHub builds a hub with nothing plugged in.
func NewHub(cfg HubConfig) *Hub {
	if cfg.Ports == 0 {
		cfg.Ports = 4
	}
	if cfg.Speed == usb.SpeedUnknown {
		cfg.Speed = usb.SpeedHigh
	}
	if cfg.Interval == 0 {
		cfg.Interval = 12
		if cfg.Speed != usb.SpeedHigh {
			cfg.Interval = 255
		}
	}
	if cfg.ResetTime == 0 {
		cfg.ResetTime = DefaultHubResetTime
	}
	if cfg.PowerOnToGood == 0 {
		cfg.PowerOnToGood = 1
	}
	h := &Hub{cfg: cfg, ports: make([]hubPortState, cfg.Ports+1), stuck: map[int]bool{}}
	h.desc = hubDescriptor(cfg)
	proto := uint8(0) // full-speed hub
	if cfg.Speed == usb.SpeedHigh {
		proto = 1 // high-speed hub with a single TT (USB 2.0 §11.23.1)
	}
	mps := uint16((cfg.Ports + 1 + 7) / 8)
	var eps []EndpointDesc
	if !cfg.NoStatusEndpoint {
		eps = []EndpointDesc{{Address: hubStatusEndpoint, Type: usb.Interrupt, MaxPacket: mps, Interval: cfg.Interval}}
	}
	h.dev = NewDevice(Config{Speed: cfg.Speed,
		Device: DeviceDesc{Class: hubClass, Protocol: proto, MaxPacket0: 64, Vendor: cfg.Vendor,
			Product: cfg.Product, ProductName: 1},
		Configs: []ConfigDesc{{Value: 1, SelfPowered: true, Interfaces: []InterfaceDesc{{
			Class: hubClass, Endpoints: eps}}}},
		Strings: map[uint8]string{1: "usbsim hub"},
		Model:   hubModel{h}})
	return h
}

// hubDescriptor is the hub descriptor for cfg (USB 2.0 §11.23.2.1):
// per-port power switching, every port removable, PortPwrCtrlMask all
// ones (as USB 1.1 hosts expect).
func hubDescriptor(cfg HubConfig) []byte {
	n := cfg.Ports
	bitmap := (n + 1 + 7) / 8
	b := []byte{byte(7 + 2*bitmap), hubDescType, byte(n), 0x01, 0x00, cfg.PowerOnToGood, 100}
	for range bitmap {
		b = append(b, 0)
	}
	for range bitmap {
		b = append(b, 0xff)
	}
	return b
}

// Device is the hub's own device (for its standard-request knobs:
// FailControl, SlowControl, Halt of the status-change endpoint 0x81).
func (h *Hub) Device() *Device { return h.dev }

// Plug attaches f to downstream port (1-based). A powered port reports
// the connection (PORT_CONNECTION, C_PORT_CONNECTION).
func (h *Hub) Plug(port int, f Function) {
	h.mu.Lock()
	defer h.mu.Unlock()
	p := &h.ports[port]
	if p.f != nil && p.power {
		p.enabled = false
	}
	p.f = f
	if p.power {
		p.change |= portChConnection
	}
}

// Unplug pulls the function out of port: the port disconnects and
// disables (C_PORT_CONNECTION), and the function no longer hears tokens.
func (h *Hub) Unplug(port int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	p := &h.ports[port]
	if p.f == nil {
		return
	}
	p.f, p.enabled, p.resetting, p.suspended = nil, false, false, false
	if p.power {
		p.change |= portChConnection
	}
}

// SetDescriptor replaces the hub descriptor GET_DESCRIPTOR returns (a
// hostile hub: short, wrong type, bNbrPorts beyond its bitmaps).
func (h *Hub) SetDescriptor(b []byte) {
	h.mu.Lock()
	h.desc = append([]byte(nil), b...)
	h.mu.Unlock()
}

// StickReset makes port's reset never end (PORT_RESET stays set).
func (h *Hub) StickReset(port int, stuck bool) {
	h.mu.Lock()
	h.stuck[port] = stuck
	h.mu.Unlock()
}

// StallStatus makes GET_STATUS of every port stall.
func (h *Hub) StallStatus(stall bool) {
	h.mu.Lock()
	h.stallStatus = stall
	h.mu.Unlock()
}

// Vanish makes the hub and everything behind it stop answering (true),
// or come back (false).
func (h *Hub) Vanish(gone bool) {
	h.mu.Lock()
	h.vanished = gone
	h.mu.Unlock()
	h.dev.Vanish(gone)
}

// Resets counts the port resets the hub drove.
func (h *Hub) Resets() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.resets
}

// PortEnabled reports whether port is enabled.
func (h *Hub) PortEnabled(port int) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.settleLocked()
	return h.ports[port].enabled
}

// settleLocked ends the resets whose time has come.
func (h *Hub) settleLocked() {
	now := time.Now()
	for i := 1; i < len(h.ports); i++ {
		p := &h.ports[i]
		if p.resetting && !h.stuck[i] && !now.Before(p.resetEnd) {
			p.resetting = false
			p.enabled = p.f != nil
			p.change |= portChReset
		}
	}
}

func (h *Hub) portStatusLocked(i int) (status, change uint16) {
	p := &h.ports[i]
	if p.power {
		status |= portStPower
		if p.f != nil {
			status |= portStConnection
			switch sp := p.f.Speed(); {
			case sp == usb.SpeedLow:
				status |= portStLowSpeed
			case sp == usb.SpeedHigh && h.cfg.Speed == usb.SpeedHigh:
				status |= portStHighSpeed
			}
		}
	}
	if p.enabled {
		status |= portStEnable
	}
	if p.suspended {
		status |= portStSuspend
	}
	if p.resetting {
		status |= portStReset
	}
	return status, p.change
}

// Speed implements Function.
func (h *Hub) Speed() usb.Speed { return h.cfg.Speed }

// Reset implements Function: the hub returns to its Default state and
// its ports to powered off (USB 2.0 §11.11), which disconnects and
// disables them.
func (h *Hub) Reset() {
	h.dev.Reset()
	h.mu.Lock()
	for i := 1; i < len(h.ports); i++ {
		p := &h.ports[i]
		p.power, p.enabled, p.suspended, p.resetting, p.change = false, false, false, false, 0
	}
	h.mu.Unlock()
}

// downstream is the functions on enabled ports, for routing a token.
func (h *Hub) downstream(buf *[16]Function) []Function {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.vanished {
		return nil
	}
	h.settleLocked()
	out := buf[:0]
	for i := 1; i < len(h.ports); i++ {
		if p := &h.ports[i]; p.enabled && !p.suspended && p.f != nil && len(out) < len(buf) {
			out = append(out, p.f)
		}
	}
	return out
}

// mine reports whether a token for addr is the hub's own: its address,
// or address 0 while the hub itself is unaddressed (no port can be
// enabled then).
func (h *Hub) mine(addr uint8) bool {
	own := h.dev.Address()
	return addr == own || own == 0
}

// Setup implements Function.
func (h *Hub) Setup(addr uint8, pkt [8]byte) Handshake {
	if h.mine(addr) {
		return h.dev.Setup(addr, pkt)
	}
	var buf [16]Function
	for _, f := range h.downstream(&buf) {
		if hs := f.Setup(addr, pkt); hs != NoResponse {
			return hs
		}
	}
	return NoResponse
}

// In implements Function.
func (h *Hub) In(addr, ep uint8, data []byte) (int, uint8, Handshake) {
	if h.mine(addr) {
		return h.dev.In(addr, ep, data)
	}
	var buf [16]Function
	for _, f := range h.downstream(&buf) {
		if n, t, hs := f.In(addr, ep, data); hs != NoResponse {
			return n, t, hs
		}
	}
	return 0, 0, NoResponse
}

// Out implements Function.
func (h *Hub) Out(addr, ep uint8, toggle uint8, data []byte) Handshake {
	if h.mine(addr) {
		return h.dev.Out(addr, ep, toggle, data)
	}
	var buf [16]Function
	for _, f := range h.downstream(&buf) {
		if hs := f.Out(addr, ep, toggle, data); hs != NoResponse {
			return hs
		}
	}
	return NoResponse
}

// hubModel answers the hub class requests and the status-change endpoint.
type hubModel struct{ h *Hub }

func (m hubModel) SetConfiguration(uint8)              {}
func (m hubModel) SetInterface(uint8, uint8)           {}
func (m hubModel) EndpointOut(uint8, []byte) Handshake { return STALL }

// EndpointIn is the status-change bitmap (USB 2.0 §11.12.4): bit 0 the
// hub, bit n port n; NAK while nothing changed.
func (m hubModel) EndpointIn(ep uint8, buf []byte) (int, Handshake) {
	h := m.h
	if ep != hubStatusEndpoint {
		return 0, STALL
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.settleLocked()
	var bits uint32
	for i := 1; i < len(h.ports); i++ {
		if h.ports[i].change != 0 {
			bits |= 1 << i
		}
	}
	if bits == 0 {
		return 0, NAK
	}
	n := min((len(h.ports)+7)/8, len(buf))
	for i := range n {
		buf[i] = byte(bits >> (8 * i))
	}
	return n, ACK
}

// ControlIn answers GET_DESCRIPTOR(HUB) and GET_STATUS of the hub and its
// ports (§11.24.2.5, .6, .7).
func (m hubModel) ControlIn(s usb.Setup, buf []byte) (int, Handshake) {
	h := m.h
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case s.RequestType == 0x80|hubReqHub && s.Request == reqGetDescriptor && s.Value>>8 == hubDescType:
		return copy(buf, h.desc), ACK
	case s.RequestType == 0x80|hubReqHub && s.Request == reqGetStatus:
		return copy(buf, []byte{1, 0, 0, 0}), ACK // local power good, no changes
	case s.RequestType == 0x80|hubReqPort && s.Request == reqGetStatus:
		i := int(s.Index)
		if i < 1 || i >= len(h.ports) || h.stallStatus {
			return 0, STALL
		}
		h.settleLocked()
		st, ch := h.portStatusLocked(i)
		return copy(buf, []byte{byte(st), byte(st >> 8), byte(ch), byte(ch >> 8)}), ACK
	}
	return 0, STALL
}

// ControlOut runs SET_FEATURE and CLEAR_FEATURE of the hub and its ports
// (§11.24.2.1, .2, .13).
func (m hubModel) ControlOut(s usb.Setup, _ []byte) Handshake {
	h := m.h
	if s.RequestType == hubReqHub && (s.Request == reqSetFeature || s.Request == reqClearFeature) {
		return ACK // C_HUB_LOCAL_POWER, C_HUB_OVER_CURRENT: nothing to clear
	}
	if s.RequestType != hubReqPort {
		return STALL
	}
	i := int(s.Index & 0xff)
	h.mu.Lock()
	if i < 1 || i >= len(h.ports) {
		h.mu.Unlock()
		return STALL
	}
	h.settleLocked()
	p := &h.ports[i]
	var reset Function
	switch s.Request {
	case reqSetFeature:
		switch s.Value {
		case portFeatPower:
			if !p.power && p.f != nil {
				p.change |= portChConnection
			}
			p.power = true
		case portFeatReset:
			if p.power && p.f != nil {
				p.resetting, p.enabled, p.suspended = true, false, false
				p.resetEnd = time.Now().Add(h.cfg.ResetTime)
				h.resets++
				reset = p.f
			}
		case portFeatSuspend:
			if p.enabled {
				p.suspended = true
			}
		default:
			// PORT_TEST, PORT_INDICATOR and the rest: accepted.
		}
	case reqClearFeature:
		switch s.Value {
		case portFeatEnable:
			p.enabled = false
		case portFeatSuspend:
			p.suspended = false
		case portFeatPower:
			p.power, p.enabled, p.suspended, p.resetting = false, false, false, false
		case portFeatCConnection:
			p.change &^= portChConnection
		case portFeatCEnable:
			p.change &^= portChEnable
		case portFeatCReset:
			p.change &^= portChReset
		case portFeatCSuspend, portFeatCOverCurrent:
			p.change &^= 1 << (s.Value - portFeatCConnection)
		}
	default:
		h.mu.Unlock()
		return STALL
	}
	h.mu.Unlock()
	if reset != nil {
		// The reset signalling puts the device in its Default state.
		reset.Reset()
	}
	return ACK
}
