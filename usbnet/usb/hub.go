package usb

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// Hub class requests, features and port status bits (USB 2.0 §11.24).
const (
	// bmRequestType of hub requests: class, recipient device (the hub)
	// or other (a port), Table 11-15.
	hubReqTypeHub  = RequestClass | RecipientDevice
	hubReqTypePort = RequestClass | 0x03

	// Feature selectors (Table 11-17).
	HubFeatureCHubLocalPower  = 0
	HubFeatureCHubOverCurrent = 1
	PortFeatureEnable         = 1
	PortFeatureSuspend        = 2
	PortFeatureReset          = 4
	PortFeaturePower          = 8
	PortFeatureCConnection    = 16
	PortFeatureCEnable        = 17
	PortFeatureCSuspend       = 18
	PortFeatureCOverCurrent   = 19
	PortFeatureCReset         = 20

	// wPortStatus bits (Table 11-21).
	PortStatConnection  = 1 << 0
	PortStatEnable      = 1 << 1
	PortStatSuspend     = 1 << 2
	PortStatOverCurrent = 1 << 3
	PortStatReset       = 1 << 4
	PortStatPower       = 1 << 8
	PortStatLowSpeed    = 1 << 9
	PortStatHighSpeed   = 1 << 10

	// wPortChange bits (Table 11-22); C_PORT_x clears bit x-16.
	PortChangeConnection  = 1 << 0
	PortChangeEnable      = 1 << 1
	PortChangeSuspend     = 1 << 2
	PortChangeOverCurrent = 1 << 3
	PortChangeReset       = 1 << 4

	// wHubChange bits (Table 11-20).
	hubChangeLocalPower  = 1 << 0
	hubChangeOverCurrent = 1 << 1
)

// Hub limits and timing.
const (
	// MaxHubDepth: at most five hubs between the root hub and a function
	// (USB 2.0 §4.1.1: seven tiers counting the root hub and the
	// function). A sixth hub in a chain is refused.
	MaxHubDepth = 5
	// hubResetTimeout bounds the wait for a port's reset to end (the hub
	// drives TDRST, 10-20 ms, USB 2.0 §7.1.7.5; Linux hub.c waits up to
	// HUB_RESET_TIMEOUT, 800 ms, before giving up a try).
	hubResetTimeout = 800 * time.Millisecond
	// hubResetPoll is how often the port's status is read meanwhile
	// (Linux HUB_SHORT_RESET_TIME, 10 ms).
	hubResetPoll = 10 * time.Millisecond
	// hubResetRecovery is TRSTRCY: the device gets 10 ms after reset
	// before it must answer (USB 2.0 §7.1.7.5).
	hubResetRecovery = 10 * time.Millisecond
	// hubIntrErrors: a status-change endpoint that fails this many times
	// in a row (and cannot be cleared) is given up for polling.
	hubIntrErrors = 3
)

// IsHub reports whether d is a hub (class code in its device or first
// interface descriptor, USB 2.0 §11.23.1).
func IsHub(d *Device) bool {
	if d.Desc.Class == ClassHub {
		return true
	}
	_, it := d.FindInterface(ClassHub, 0xff, 0xff)
	return it != nil
}

// HubStats counts what a hub driver saw.
type HubStats struct {
	StatusChanges   uint64 // status-change bitmaps received
	Polls           uint64 // port scans by polling
	StatusErrors    uint64 // GET_STATUS or CLEAR_FEATURE that failed
	ResetFailures   uint64 // port resets that failed or never ended
	IntrErrors      uint64 // status-change transfers that failed
	OverCurrent     uint64 // over-current changes reported
	Enumerated      uint64 // children that came up
	Detached        uint64 // children torn down
	PollingFallback bool   // the status-change endpoint was given up
}

// Hub is the hub class driver bound to one hub (USB 2.0 chapter 11): it
// powers the hub's ports, watches them through the status-change
// endpoint (or by polling when that endpoint is missing or failing),
// enumerates what connects through its Bus, and when the hub goes, tears
// down everything behind it before the hub itself.
type Hub struct {
	Dev  *Device
	Desc HubDescriptor

	bus     *Bus
	intr    Pipe
	xfer    *Transfer
	changed chan struct{}
	stop    chan struct{}
	done    chan struct{}

	mu       sync.Mutex
	children [MaxHubPorts + 1]*Device
	failed   [MaxHubPorts + 1]bool
	busy     bool
	started  bool // first scan done
	stats    HubStats
}

type hubDriver struct{ b *Bus }

func (hubDriver) Name() string                           { return "hub" }
func (hubDriver) Probe(d *Device) bool                   { return IsHub(d) }
func (h hubDriver) Attach(d *Device) (Attachment, error) { return h.b.attachHub(d) }

func (b *Bus) attachHub(d *Device) (*Hub, error) {
	if d.Depth >= MaxHubDepth {
		return nil, fmt.Errorf("hub behind %d hubs: USB allows %d in a chain (USB 2.0 §4.1.1)", d.Depth, MaxHubDepth)
	}
	if len(d.Configs) == 0 {
		return nil, errors.New("hub without a configuration")
	}
	cfg := &d.Configs[0]
	if err := d.SetConfiguration(cfg.Value); err != nil {
		return nil, fmt.Errorf("set configuration %d: %w", cfg.Value, err)
	}
	var raw [hubDescMaxLen]byte
	n, err := d.Control(Setup{RequestType: RequestIn | hubReqTypeHub, Request: ReqGetDescriptor,
		Value: DescHub << 8, Length: hubDescMaxLen}, raw[:], ControlTimeout)
	if err != nil {
		return nil, fmt.Errorf("hub descriptor: %w", err)
	}
	desc, err := ParseHubDescriptor(raw[:n])
	if err != nil {
		return nil, fmt.Errorf("hub descriptor: %w", err)
	}
	h := &Hub{Dev: d, Desc: desc, bus: b, changed: make(chan struct{}, 1),
		stop: make(chan struct{}), done: make(chan struct{}), busy: true}
	// The status-change endpoint: the hub interface's interrupt IN
	// endpoint (USB 2.0 §11.12.3). Without one, or if it cannot be
	// opened, the ports are polled.
	for _, it := range cfg.Interfaces {
		if it.Class != ClassHub && d.Desc.Class != ClassHub {
			continue
		}
		for _, e := range it.Endpoints {
			if e.Type() != Interrupt || e.Address&EndpointIn == 0 || h.intr != nil {
				continue
			}
			p, err := d.OpenPipe(e)
			if err != nil {
				b.logf("%v: hub status-change endpoint: %v; polling", d, err)
				continue
			}
			t, err := p.NewTransfer(max((desc.Ports+1+7)/8, e.MaxPacketSize()))
			if err != nil {
				p.Close()
				b.logf("%v: hub status-change endpoint: %v; polling", d, err)
				continue
			}
			t.Flags = ShortOK
			t.Done = h.intrDone
			h.intr, h.xfer = p, t
		}
	}
	if h.intr == nil {
		h.stats.PollingFallback = true
	}
	// Power every port (ganged hubs power all with any one request;
	// hubs without power switching ignore it, §11.11), then wait for
	// power to be good before looking at connections.
	for port := 1; port <= desc.Ports; port++ {
		if err := h.setPortFeature(port, PortFeaturePower); err != nil {
			if h.intr != nil {
				h.intr.Close()
			}
			return nil, fmt.Errorf("port %d power: %w", port, err)
		}
	}
	b.mu.Lock()
	b.hubs[h] = true
	b.stats.Hubs++
	b.mu.Unlock()
	go h.run()
	return h, nil
}

// Stats returns the hub's counters.
func (h *Hub) Stats() HubStats {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.stats
}

// Child returns the device on downstream port, or nil.
func (h *Hub) Child(port int) *Device {
	if port < 1 || port > h.Desc.Ports {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.children[port]
}

func (h *Hub) idle() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.started && !h.busy
}

func (h *Hub) setBusy(v bool) {
	h.mu.Lock()
	h.busy = v
	if !v {
		h.started = true
	}
	h.mu.Unlock()
}

func (h *Hub) count(f func(s *HubStats)) {
	h.mu.Lock()
	f(&h.stats)
	h.mu.Unlock()
}

func (h *Hub) intrDone(*Transfer) {
	select {
	case h.changed <- struct{}{}:
	default:
	}
}

// Detach (the hub's Attachment) runs when the hub goes: the watcher
// stops, then every device behind the hub is torn down, each completely
// (a hub behind it first tears down its own), before the core goes on
// with the hub's own pipes and address.
func (h *Hub) Detach() {
	close(h.stop)
	// The hub is marked gone: a request to it in progress (the watcher's)
	// ends now rather than at its timeout, and later ones fail at once.
	if h.intr != nil {
		h.intr.Abort()
	}
	if h.Dev.ep0 != nil {
		h.Dev.ep0.Abort()
	}
	<-h.done
	b := h.bus
	for port := 1; port <= h.Desc.Ports; port++ {
		h.detachChild(port)
	}
	b.mu.Lock()
	delete(b.hubs, h)
	b.mu.Unlock()
}

func (h *Hub) detachChild(port int) {
	h.mu.Lock()
	c := h.children[port]
	h.children[port] = nil
	h.mu.Unlock()
	if c != nil {
		h.bus.unbind(c)
		h.count(func(s *HubStats) { s.Detached++ })
	}
}

func (h *Hub) stopped() bool {
	select {
	case <-h.stop:
		return true
	default:
		return false
	}
}

// run watches the ports until the hub goes.
func (h *Hub) run() {
	defer close(h.done)
	// Power good (bPwrOn2PwrGood, §11.23.2.1) before the first look.
	if !h.sleep(h.Desc.PowerOnToGood) {
		return
	}
	h.scanAll()
	h.setBusy(false)
	intrErrs := 0
	polling := h.intr == nil
	if !polling {
		polling = !h.submit()
	}
	tick := time.NewTicker(h.bus.cfg.HubPoll)
	defer tick.Stop()
	for {
		var tc <-chan time.Time
		if polling {
			tc = tick.C
		}
		select {
		case <-h.stop:
			return
		case <-tc:
			h.setBusy(true)
			h.count(func(s *HubStats) { s.Polls++ })
			h.scanAll()
			h.setBusy(false)
		case <-h.changed:
			t := h.xfer
			if t.Err != nil {
				if h.stopped() || errors.Is(t.Err, ErrGone) {
					<-h.stop
					return
				}
				h.count(func(s *HubStats) { s.IntrErrors++ })
				intrErrs++
				clearErr := error(nil)
				if errors.Is(t.Err, ErrStall) {
					clearErr = h.Dev.ClearHalt(h.intr)
				}
				if intrErrs >= hubIntrErrors || clearErr != nil {
					h.bus.logf("%v: hub status-change endpoint: %v; polling the ports every %v", h.Dev, t.Err, h.bus.cfg.HubPoll)
					h.count(func(s *HubStats) { s.PollingFallback = true })
					polling = true
					continue
				}
				// A failed bitmap says nothing: look at every port.
				h.setBusy(true)
				h.scanAll()
				h.setBusy(false)
				polling = !h.submit()
				continue
			}
			intrErrs = 0
			h.count(func(s *HubStats) { s.StatusChanges++ })
			var bits uint16
			for i := 0; i < t.Actual && i < 2; i++ {
				bits |= uint16(t.Buf[i]) << (8 * i)
			}
			h.setBusy(true)
			if bits&1 != 0 {
				h.hubChange()
			}
			for port := 1; port <= h.Desc.Ports; port++ {
				if bits&(1<<port) != 0 {
					h.scan(port)
				}
			}
			h.setBusy(false)
			polling = !h.submit()
		}
	}
}

// submit queues the status-change transfer; false: poll instead.
func (h *Hub) submit() bool {
	if err := h.intr.Submit(h.xfer); err != nil {
		if !h.stopped() {
			h.bus.logf("%v: hub status-change endpoint: %v; polling", h.Dev, err)
			h.count(func(s *HubStats) { s.PollingFallback = true })
		}
		return false
	}
	return true
}

// sleep waits d unless the hub goes first (false).
func (h *Hub) sleep(d time.Duration) bool {
	if d <= 0 {
		return !h.stopped()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-h.stop:
		return false
	case <-t.C:
		return true
	}
}

func (h *Hub) scanAll() {
	for port := 1; port <= h.Desc.Ports && !h.stopped(); port++ {
		h.scan(port)
	}
}

// hubChange acknowledges the hub's own changes (local power, over-current).
func (h *Hub) hubChange() {
	var st [4]byte
	if _, err := h.Dev.Control(Setup{RequestType: RequestIn | hubReqTypeHub, Request: ReqGetStatus, Length: 4},
		st[:], ControlTimeout); err != nil {
		h.count(func(s *HubStats) { s.StatusErrors++ })
		return
	}
	change := uint16(st[2]) | uint16(st[3])<<8
	if change&hubChangeLocalPower != 0 {
		h.clearHubFeature(HubFeatureCHubLocalPower)
	}
	if change&hubChangeOverCurrent != 0 {
		h.count(func(s *HubStats) { s.OverCurrent++ })
		h.bus.logf("%v: hub over-current", h.Dev)
		h.clearHubFeature(HubFeatureCHubOverCurrent)
	}
}

// scan reads one port, acknowledges its changes, tears down a device
// that went and enumerates one that came (after the debounce).
func (h *Hub) scan(port int) {
	status, change, err := h.portStatus(port)
	if err != nil {
		if !h.stopped() {
			h.count(func(s *HubStats) { s.StatusErrors++ })
			h.bus.logf("%v: port %d status: %v", h.Dev, port, err)
		}
		return
	}
	h.ackChanges(port, change)
	if change&PortChangeOverCurrent != 0 {
		h.count(func(s *HubStats) { s.OverCurrent++ })
		h.bus.logf("%v: port %d over-current", h.Dev, port)
	}
	h.mu.Lock()
	child := h.children[port]
	if change&PortChangeConnection != 0 {
		h.failed[port] = false
	}
	failed := h.failed[port]
	h.mu.Unlock()
	connected := status&PortStatConnection != 0
	if child != nil && (!connected || change&PortChangeConnection != 0) {
		h.detachChild(port)
		child = nil
	}
	if !connected || child != nil || failed {
		return
	}
	if !h.sleep(h.bus.cfg.Debounce) {
		return
	}
	status, change, err = h.portStatus(port)
	if err != nil || status&PortStatConnection == 0 || change&PortChangeConnection != 0 {
		// Bounced: the change bit brings us back here.
		return
	}
	d, err := h.bus.bring(&hubPort{h: h, n: port}, h.Dev, func(d *Device) {
		h.mu.Lock()
		h.children[port] = d
		h.stats.Enumerated++
		h.mu.Unlock()
	})
	if err != nil {
		h.mu.Lock()
		h.failed[port] = true
		h.mu.Unlock()
	}
	if d != nil && h.stopped() {
		// The hub went while its child came up: Detach may already have
		// passed this port.
		h.detachChild(port)
	}
}

func (h *Hub) ackChanges(port int, change uint16) {
	for bit, feat := range [...]uint16{PortFeatureCConnection, PortFeatureCEnable, PortFeatureCSuspend,
		PortFeatureCOverCurrent, PortFeatureCReset} {
		if change&(1<<bit) != 0 {
			if err := h.clearPortFeature(port, feat); err != nil {
				h.count(func(s *HubStats) { s.StatusErrors++ })
			}
		}
	}
}

// portStatus is GET_STATUS of a port (§11.24.2.7): wPortStatus and
// wPortChange.
func (h *Hub) portStatus(port int) (status, change uint16, err error) {
	var st [4]byte
	n, err := h.Dev.Control(Setup{RequestType: RequestIn | hubReqTypePort, Request: ReqGetStatus,
		Index: uint16(port), Length: 4}, st[:], ControlTimeout)
	if err != nil {
		return 0, 0, err
	}
	if n != 4 {
		return 0, 0, fmt.Errorf("port %d status of %d bytes, want 4: %w", port, n, ErrShort)
	}
	return uint16(st[0]) | uint16(st[1])<<8, uint16(st[2]) | uint16(st[3])<<8, nil
}

func (h *Hub) setPortFeature(port int, feat uint16) error {
	_, err := h.Dev.Control(Setup{RequestType: hubReqTypePort, Request: ReqSetFeature, Value: feat,
		Index: uint16(port)}, nil, ControlTimeout)
	return err
}

func (h *Hub) clearPortFeature(port int, feat uint16) error {
	_, err := h.Dev.Control(Setup{RequestType: hubReqTypePort, Request: ReqClearFeature, Value: feat,
		Index: uint16(port)}, nil, ControlTimeout)
	return err
}

func (h *Hub) clearHubFeature(feat uint16) {
	if _, err := h.Dev.Control(Setup{RequestType: hubReqTypeHub, Request: ReqClearFeature, Value: feat},
		nil, ControlTimeout); err != nil {
		h.count(func(s *HubStats) { s.StatusErrors++ })
	}
}

// hubPort is a downstream port of a hub as a Port.
type hubPort struct {
	h *Hub
	n int
}

func (p *hubPort) Number() int    { return p.n }
func (p *hubPort) String() string { return fmt.Sprintf("%v.%d", p.h.Dev.At, p.n) }

func (p *hubPort) Status() (PortStatus, error) {
	status, change, err := p.h.portStatus(p.n)
	if err != nil {
		return PortStatus{}, err
	}
	if change&PortChangeConnection != 0 {
		if err := p.h.clearPortFeature(p.n, PortFeatureCConnection); err != nil {
			return PortStatus{}, err
		}
	}
	st := PortStatus{Connected: status&PortStatConnection != 0, Enabled: status&PortStatEnable != 0,
		ConnectChanged: change&PortChangeConnection != 0, Overcurrent: status&PortStatOverCurrent != 0,
		Suspended: status&PortStatSuspend != 0}
	if st.Connected {
		st.Speed = portSpeed(status)
	}
	return st, nil
}

// portSpeed is the attached device's speed from wPortStatus (§11.24.2.7.1:
// PORT_LOW_SPEED, PORT_HIGH_SPEED; neither is full speed).
func portSpeed(status uint16) Speed {
	switch {
	case status&PortStatLowSpeed != 0:
		return SpeedLow
	case status&PortStatHighSpeed != 0:
		return SpeedHigh
	}
	return SpeedFull
}

// ErrResetTimeout: a hub port's reset did not end in time.
var ErrResetTimeout = errors.New("usb: hub port reset did not complete")

// Reset drives PORT_RESET and waits for C_PORT_RESET (§11.24.2.13, the
// hub ends the reset and enables the port), then TRSTRCY.
func (p *hubPort) Reset() (Speed, error) {
	h := p.h
	if err := h.setPortFeature(p.n, PortFeatureReset); err != nil {
		h.count(func(s *HubStats) { s.ResetFailures++ })
		return SpeedUnknown, fmt.Errorf("set PORT_RESET: %w", err)
	}
	deadline := time.Now().Add(hubResetTimeout)
	for {
		if !h.sleep(hubResetPoll) {
			return SpeedUnknown, ErrGone
		}
		status, change, err := h.portStatus(p.n)
		if err != nil {
			h.count(func(s *HubStats) { s.ResetFailures++ })
			return SpeedUnknown, err
		}
		if status&PortStatConnection == 0 {
			h.count(func(s *HubStats) { s.ResetFailures++ })
			return SpeedUnknown, errors.New("device disconnected during reset")
		}
		if change&PortChangeReset != 0 || status&PortStatReset == 0 {
			if change&PortChangeReset != 0 {
				if err := h.clearPortFeature(p.n, PortFeatureCReset); err != nil {
					h.count(func(s *HubStats) { s.ResetFailures++ })
					return SpeedUnknown, fmt.Errorf("clear C_PORT_RESET: %w", err)
				}
			}
			if status&PortStatEnable == 0 {
				h.count(func(s *HubStats) { s.ResetFailures++ })
				return SpeedUnknown, errors.New("port not enabled after reset")
			}
			if !h.sleep(hubResetRecovery) {
				return SpeedUnknown, ErrGone
			}
			return portSpeed(status), nil
		}
		if time.Now().After(deadline) {
			h.count(func(s *HubStats) { s.ResetFailures++ })
			return SpeedUnknown, fmt.Errorf("%w after %v (wPortStatus %#04x)", ErrResetTimeout, hubResetTimeout, status)
		}
	}
}

// Disable is CLEAR_FEATURE(PORT_ENABLE) (§11.24.2.2). On a hub that is
// gone it fails, which changes nothing.
func (p *hubPort) Disable() error { return p.h.clearPortFeature(p.n, PortFeatureEnable) }
