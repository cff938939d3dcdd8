package usbsim

import (
	"sync"
	"time"

	"github.com/gowrt/gowrt/usbnet/usb"
)

// Standard requests (USB 2.0 Table 9-4) and feature selectors (Table 9-6).
const (
	reqGetStatus        = 0x00
	reqClearFeature     = 0x01
	reqSetFeature       = 0x03
	reqSetAddress       = 0x05
	reqGetDescriptor    = 0x06
	reqGetConfiguration = 0x08
	reqSetConfiguration = 0x09
	reqGetInterface     = 0x0a
	reqSetInterface     = 0x0b

	featureEndpointHalt = 0
)

// Model is what a device model (ecmsim, axgesim) adds to the standard
// behaviour Device gives it: class and vendor requests, and the endpoints
// other than 0. Device calls it with its host's lock held, one call at a
// time; it must not block. Embed BaseModel for the methods a model does
// not need.
type Model interface {
	// ControlIn answers a class or vendor request with a device-to-host
	// data stage, called at the first IN token of the data stage: it
	// writes up to len(buf) (= wLength) bytes and returns how many. NAK
	// means "not ready yet, ask again" (the host retries the token);
	// STALL refuses the request.
	ControlIn(s usb.Setup, buf []byte) (n int, h Handshake)
	// ControlOut runs a class or vendor request with a host-to-device
	// data stage (data, wLength bytes) or none, called at the status
	// stage; NAK and STALL as for ControlIn.
	ControlOut(s usb.Setup, data []byte) Handshake
	// EndpointIn asks endpoint ep (number | usb.EndpointIn) for one
	// packet of at most len(buf) bytes: ACK with n bytes, or NAK when it
	// has nothing to send. Device handles halt and toggles.
	EndpointIn(ep uint8, buf []byte) (n int, h Handshake)
	// EndpointOut delivers one packet to OUT endpoint ep; NAK refuses it
	// for now (the host sends it again).
	EndpointOut(ep uint8, data []byte) Handshake
	// SetConfiguration tells the model the host selected configuration
	// value (0: unconfigured, also after a bus reset).
	SetConfiguration(value uint8)
	// SetInterface tells the model the host selected alternate setting
	// alt of interface iface.
	SetInterface(iface, alt uint8)
}

// BaseModel is a Model that stalls every class or vendor request and has
// no data endpoints. Models embed it.
type BaseModel struct{}

func (BaseModel) ControlIn(usb.Setup, []byte) (int, Handshake) { return 0, STALL }
func (BaseModel) ControlOut(usb.Setup, []byte) Handshake       { return STALL }
func (BaseModel) EndpointIn(uint8, []byte) (int, Handshake)    { return 0, STALL }
func (BaseModel) EndpointOut(uint8, []byte) Handshake          { return STALL }
func (BaseModel) SetConfiguration(uint8)                       {}
func (BaseModel) SetInterface(uint8, uint8)                    {}

// Config describes a Device.
type Config struct {
	Speed   usb.Speed
	Device  DeviceDesc
	Configs []ConfigDesc
	// Strings are the string descriptors by index (index 0, the LANGID
	// list, is generated: English (US) only).
	Strings map[uint8]string
	// Model gets class/vendor requests and data endpoints; nil: BaseModel.
	Model Model
}

// Device is a Function built from descriptors: it answers the standard
// requests of USB 2.0 §9.4 itself, passes the rest to its Model, and keeps
// the address, configuration, data toggles and halt state a real device
// keeps. Its hostile knobs (FailControl, SlowControl, Halt, Vanish) may be
// turned from any goroutine at any time.
type Device struct {
	cfg   Config
	model Model
	dev   []byte   // device descriptor bytes
	confs [][]byte // configuration bytes, by index

	mu      sync.Mutex
	addr    uint8
	pending int // address to take after SET_ADDRESS's status stage, -1: none
	config  uint8
	alts    map[uint8]uint8 // interface -> alternate setting
	eps     map[uint8]*endpointState
	ctl     controlState

	// knobs
	failN      int
	failH      Handshake
	slowN      int
	slowFor    time.Duration
	slowAlways bool
	vanished   bool

	// counters
	toggleMismatches uint64
	requests         uint64
}

type endpointState struct {
	desc   EndpointDesc
	toggle uint8
	halted bool
}

// controlState is endpoint 0's position in a control transfer.
type controlState struct {
	active    bool
	setup     usb.Setup
	stage     int // stageData or stageStatus
	toggle    uint8
	buf       []byte // IN: the reply; OUT: what arrived
	off       int
	prepared  bool // IN reply computed
	stalled   bool
	dead      bool // NoResponse to every token of this request
	naks      int  // NAKs still owed (SlowControl)
	slowUntil time.Time
}

const (
	stageData = iota
	stageStatus
)

// NewDevice builds a device from cfg. It starts detached from any bus, in
// the Default state.
func NewDevice(cfg Config) *Device {
	if cfg.Model == nil {
		cfg.Model = BaseModel{}
	}
	if cfg.Speed == usb.SpeedUnknown {
		cfg.Speed = usb.SpeedFull
	}
	dd := cfg.Device
	if dd.NumConfigs == 0 {
		dd.NumConfigs = uint8(len(cfg.Configs))
	}
	if dd.MaxPacket0 == 0 {
		dd.MaxPacket0 = 64
	}
	if dd.USB == 0 {
		dd.USB = 0x0200
	}
	cfg.Device = dd
	d := &Device{cfg: cfg, model: cfg.Model, dev: dd.Bytes(), pending: -1}
	for _, c := range cfg.Configs {
		d.confs = append(d.confs, c.Bytes())
	}
	d.resetLocked()
	return d
}

// Speed implements Function.
func (d *Device) Speed() usb.Speed { return d.cfg.Speed }

// Descriptor is the device descriptor the device was built with.
func (d *Device) Descriptor() DeviceDesc { return d.cfg.Device }

// Reset implements Function: back to the Default state.
func (d *Device) Reset() {
	d.mu.Lock()
	was := d.config
	d.resetLocked()
	d.mu.Unlock()
	if was != 0 {
		d.model.SetConfiguration(0)
	}
}

func (d *Device) resetLocked() {
	d.addr = 0
	d.pending = -1
	d.config = 0
	d.alts = map[uint8]uint8{}
	d.eps = map[uint8]*endpointState{}
	d.ctl = controlState{}
}

// Address is the device's current address.
func (d *Device) Address() uint8 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.addr
}

// Configuration is the selected configuration value (0: unconfigured).
func (d *Device) Configuration() uint8 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.config
}

// FailControl makes the next n control requests fail: with STALL, the
// request's data or status stage stalls; with NoResponse, the SETUP is
// accepted and every later token of the request goes unanswered, as if
// the device had stopped listening (the host sees a transaction error).
func (d *Device) FailControl(n int, h Handshake) {
	d.mu.Lock()
	d.failN, d.failH = n, h
	d.mu.Unlock()
}

// SlowControl makes control requests slow: each NAKs its data or status
// stage naks times and for at least dur after its SETUP before it
// proceeds. It applies to every later request until SlowControl(0, 0).
func (d *Device) SlowControl(naks int, dur time.Duration) {
	d.mu.Lock()
	d.slowN, d.slowFor = naks, dur
	d.slowAlways = naks > 0 || dur > 0
	d.mu.Unlock()
}

// Halt sets endpoint ep's (number | usb.EndpointIn) halt feature, as the
// device does on an error: its tokens STALL until the host clears it.
func (d *Device) Halt(ep uint8) {
	d.mu.Lock()
	if e := d.eps[ep]; e != nil {
		e.halted = true
	}
	d.mu.Unlock()
}

// Halted reports endpoint ep's halt feature.
func (d *Device) Halted(ep uint8) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	e := d.eps[ep]
	return e != nil && e.halted
}

// Vanish makes the device stop answering anything (true), like a device
// pulled out while its port has not noticed yet, or come back (false).
func (d *Device) Vanish(gone bool) {
	d.mu.Lock()
	d.vanished = gone
	d.mu.Unlock()
}

// ToggleMismatches counts data packets the device dropped because their
// data PID was not the one it expected (USB 2.0 §8.6.4): duplicates, or
// the sign of a host that did not reset its toggle.
func (d *Device) ToggleMismatches() uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.toggleMismatches
}

// Requests counts the SETUP packets the device accepted.
func (d *Device) Requests() uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.requests
}

// Setup implements Function.
func (d *Device) Setup(addr uint8, pkt [8]byte) Handshake {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.vanished || addr != d.addr {
		return NoResponse
	}
	s := usb.ParseSetup(pkt)
	d.requests++
	// A SETUP ends whatever request was in progress and clears a
	// protocol stall of endpoint 0 (USB 2.0 §8.5.3.4).
	d.ctl = controlState{active: true, setup: s, toggle: 1}
	if s.Length == 0 {
		d.ctl.stage = stageStatus
	}
	if d.failN > 0 {
		d.failN--
		switch d.failH {
		case NoResponse:
			d.ctl.dead = true
		default:
			d.ctl.stalled = true
		}
	}
	if d.slowAlways {
		d.ctl.naks = d.slowN
		d.ctl.slowUntil = time.Now().Add(d.slowFor)
	}
	if !s.In() && s.Length > 0 {
		d.ctl.buf = make([]byte, 0, s.Length)
	}
	return ACK
}

// slowLocked reports whether the current control request still NAKs.
func (d *Device) slowLocked() bool {
	if d.ctl.naks > 0 {
		d.ctl.naks--
		return true
	}
	return !d.ctl.slowUntil.IsZero() && time.Now().Before(d.ctl.slowUntil)
}

// In implements Function.
func (d *Device) In(addr, ep uint8, buf []byte) (int, uint8, Handshake) {
	d.mu.Lock()
	if d.vanished || addr != d.addr {
		d.mu.Unlock()
		return 0, 0, NoResponse
	}
	if ep == 0 {
		defer d.mu.Unlock()
		return d.controlIn(buf)
	}
	e := d.eps[ep|usb.EndpointIn]
	if e == nil || e.halted {
		d.mu.Unlock()
		return 0, 0, STALL
	}
	d.mu.Unlock()
	n, h := d.model.EndpointIn(ep|usb.EndpointIn, buf)
	if h != ACK {
		return 0, 0, h
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	// The host always ACKs (Function's contract), so the device advances.
	t := e.toggle
	e.toggle ^= 1
	return n, t, ACK
}

// Out implements Function.
func (d *Device) Out(addr, ep uint8, toggle uint8, data []byte) Handshake {
	d.mu.Lock()
	if d.vanished || addr != d.addr {
		d.mu.Unlock()
		return NoResponse
	}
	if ep == 0 {
		h, run := d.controlOut(toggle, data)
		d.mu.Unlock()
		if run != nil {
			run()
		}
		return h
	}
	e := d.eps[ep]
	if e == nil || e.halted {
		d.mu.Unlock()
		return STALL
	}
	if toggle != e.toggle {
		// A retransmission of a packet already taken: ACK, drop.
		d.toggleMismatches++
		d.mu.Unlock()
		return ACK
	}
	d.mu.Unlock()
	h := d.model.EndpointOut(ep, data)
	if h == ACK {
		d.mu.Lock()
		e.toggle ^= 1
		d.mu.Unlock()
	}
	return h
}

// controlIn handles an IN token on endpoint 0: a data-stage packet of a
// control read, or the status stage of a control write.
func (d *Device) controlIn(buf []byte) (int, uint8, Handshake) {
	c := &d.ctl
	if !c.active {
		return 0, 0, STALL
	}
	if c.dead {
		return 0, 0, NoResponse
	}
	if c.stalled {
		return 0, 0, STALL
	}
	mps := int(d.cfg.Device.MaxPacket0)
	if c.stage == stageData {
		if !c.setup.In() {
			// An IN token in an OUT data stage: the host moved to the
			// status stage early (a short control write is not allowed).
			c.stage = stageStatus
		} else {
			if d.slowLocked() {
				return 0, 0, NAK
			}
			if !c.prepared {
				reply, h := d.controlRead(c.setup)
				if h == NAK {
					return 0, 0, NAK
				}
				if h != ACK {
					c.stalled = true
					return 0, 0, STALL
				}
				if len(reply) > int(c.setup.Length) {
					reply = reply[:c.setup.Length] // wLength truncates (§9.4.3)
				}
				c.buf, c.prepared = reply, true
			}
			n := min(len(c.buf)-c.off, mps, len(buf))
			copy(buf, c.buf[c.off:c.off+n])
			c.off += n
			t := c.toggle
			c.toggle ^= 1
			return n, t, ACK
		}
	}
	// Status stage of a control write (or no-data request): a
	// zero-length DATA1 packet once the request has been carried out.
	if d.slowLocked() {
		return 0, 0, NAK
	}
	h, run := d.controlWrite(c.setup, c.buf)
	if h == NAK {
		return 0, 0, NAK
	}
	if h != ACK {
		c.stalled = true
		return 0, 0, STALL
	}
	c.active = false
	if run != nil {
		// Model hooks run without d.mu; the host serialises calls.
		d.mu.Unlock()
		run()
		d.mu.Lock()
	}
	if d.pending >= 0 {
		// SET_ADDRESS takes effect after its status stage (§9.4.6).
		d.addr = uint8(d.pending)
		d.pending = -1
	}
	return 0, 1, ACK
}

// controlOut handles an OUT token on endpoint 0: a data-stage packet of a
// control write, or the status stage of a control read.
func (d *Device) controlOut(toggle uint8, data []byte) (Handshake, func()) {
	c := &d.ctl
	if !c.active {
		return STALL, nil
	}
	if c.dead {
		return NoResponse, nil
	}
	if c.stalled {
		return STALL, nil
	}
	if c.stage == stageData && !c.setup.In() {
		if d.slowLocked() {
			return NAK, nil
		}
		if toggle != c.toggle {
			d.toggleMismatches++
			return ACK, nil
		}
		if len(c.buf)+len(data) > int(c.setup.Length) {
			c.stalled = true // more than wLength: a protocol error
			return STALL, nil
		}
		c.buf = append(c.buf, data...)
		c.toggle ^= 1
		if len(c.buf) == int(c.setup.Length) {
			c.stage = stageStatus
		}
		return ACK, nil
	}
	// Status stage of a control read: the host's zero-length OUT.
	if c.setup.In() {
		c.active = false
		return ACK, nil
	}
	return STALL, nil
}

// controlRead computes the reply of a device-to-host request.
func (d *Device) controlRead(s usb.Setup) ([]byte, Handshake) {
	if s.RequestType&usb.RequestTypeMask != usb.RequestStandard {
		buf := make([]byte, s.Length)
		d.mu.Unlock()
		n, h := d.model.ControlIn(s, buf)
		d.mu.Lock()
		if n > len(buf) {
			n = len(buf)
		}
		return buf[:n], h
	}
	recip := s.RequestType & usb.RecipientMask
	switch s.Request {
	case reqGetDescriptor:
		if recip != usb.RecipientDevice {
			return nil, STALL
		}
		typ, idx := uint8(s.Value>>8), uint8(s.Value)
		switch typ {
		case descDevice:
			return d.dev, ACK
		case descConfiguration:
			if int(idx) < len(d.confs) {
				return d.confs[idx], ACK
			}
		case descString:
			if idx == 0 {
				return LangIDs(LangEnglishUS), ACK
			}
			if s.Index != LangEnglishUS {
				return nil, STALL
			}
			if str, ok := d.cfg.Strings[idx]; ok {
				return StringDesc(str), ACK
			}
		}
		return nil, STALL
	case reqGetStatus:
		switch recip {
		case usb.RecipientDevice:
			var st byte
			if d.config != 0 && d.confs != nil && d.cfg.Configs[d.configIndex()].SelfPowered {
				st = 1
			}
			return []byte{st, 0}, ACK
		case usb.RecipientIface:
			return []byte{0, 0}, ACK
		case usb.RecipientEndpt:
			ep := uint8(s.Index)
			if ep&0x0f == 0 {
				return []byte{0, 0}, ACK
			}
			e := d.eps[ep]
			if e == nil {
				return nil, STALL
			}
			if e.halted {
				return []byte{1, 0}, ACK
			}
			return []byte{0, 0}, ACK
		}
	case reqGetConfiguration:
		return []byte{d.config}, ACK
	case reqGetInterface:
		if d.config == 0 {
			return nil, STALL
		}
		alt, ok := d.alts[uint8(s.Index)]
		if !ok {
			return nil, STALL
		}
		return []byte{alt}, ACK
	}
	return nil, STALL
}

func (d *Device) configIndex() int {
	for i, c := range d.cfg.Configs {
		if c.Value == d.config {
			return i
		}
	}
	return 0
}

// controlWrite carries out a host-to-device (or no-data) request at its
// status stage. run, if not nil, is a model hook to call without d.mu.
func (d *Device) controlWrite(s usb.Setup, data []byte) (Handshake, func()) {
	if s.RequestType&usb.RequestTypeMask != usb.RequestStandard {
		d.mu.Unlock()
		h := d.model.ControlOut(s, data)
		d.mu.Lock()
		return h, nil
	}
	recip := s.RequestType & usb.RecipientMask
	switch s.Request {
	case reqSetAddress:
		if recip != usb.RecipientDevice || s.Value > 127 || d.config != 0 {
			return STALL, nil
		}
		d.pending = int(s.Value)
		return ACK, nil
	case reqSetConfiguration:
		v := uint8(s.Value)
		if v != 0 && !d.hasConfig(v) {
			return STALL, nil
		}
		d.config = v
		d.alts = map[uint8]uint8{}
		d.eps = map[uint8]*endpointState{}
		if v != 0 {
			for _, it := range d.cfg.Configs[d.configIndex()].Interfaces {
				if it.Alternate == 0 {
					d.alts[it.Number] = 0
					d.addEndpoints(it)
				}
			}
		}
		return ACK, func() { d.model.SetConfiguration(v) }
	case reqSetInterface:
		if d.config == 0 {
			return STALL, nil
		}
		num, alt := uint8(s.Index), uint8(s.Value)
		var found *InterfaceDesc
		for i, it := range d.cfg.Configs[d.configIndex()].Interfaces {
			if it.Number == num && it.Alternate == alt {
				found = &d.cfg.Configs[d.configIndex()].Interfaces[i]
			}
		}
		if found == nil {
			return STALL, nil
		}
		// Drop the old setting's endpoints, add the new ones at DATA0
		// (USB 2.0 §9.1.1.5).
		for _, it := range d.cfg.Configs[d.configIndex()].Interfaces {
			if it.Number == num {
				for _, e := range it.Endpoints {
					delete(d.eps, e.Address)
				}
			}
		}
		d.alts[num] = alt
		d.addEndpoints(*found)
		return ACK, func() { d.model.SetInterface(num, alt) }
	case reqClearFeature, reqSetFeature:
		if recip != usb.RecipientEndpt {
			return ACK, nil // device remote wakeup / test mode: accepted, no effect
		}
		if s.Value != featureEndpointHalt {
			return STALL, nil
		}
		ep := uint8(s.Index)
		if ep&0x0f == 0 {
			return ACK, nil
		}
		e := d.eps[ep]
		if e == nil {
			return STALL, nil
		}
		if s.Request == reqClearFeature {
			// Clearing halt always resets the toggle to DATA0 (§9.4.5).
			e.halted, e.toggle = false, 0
		} else {
			e.halted = true
		}
		return ACK, nil
	}
	return STALL, nil
}

func (d *Device) hasConfig(v uint8) bool {
	for _, c := range d.cfg.Configs {
		if c.Value == v {
			return true
		}
	}
	return false
}

func (d *Device) addEndpoints(it InterfaceDesc) {
	for _, e := range it.Endpoints {
		d.eps[e.Address] = &endpointState{desc: e}
	}
}
