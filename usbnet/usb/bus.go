package usb

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// Driver is a USB device driver the Bus matches devices against.
type Driver interface {
	// Name identifies the driver in logs ("axge", "cdce").
	Name() string
	// Probe reports whether the driver takes the enumerated, still
	// unconfigured device, from its descriptors (MatchID,
	// (*Device).FindInterface). It must not do I/O.
	Probe(d *Device) bool
	// Attach configures the device, opens its pipes through d.OpenPipe
	// and starts it. The Attachment's Detach runs at teardown.
	Attach(d *Device) (Attachment, error)
}

// MatchID reports whether d is vendor:product.
func MatchID(d *Device, vendor, product uint16) bool {
	return d.Desc.Vendor == vendor && d.Desc.Product == product
}

// FindInterface returns the first configuration and alternate setting
// with an interface of class, subclass and protocol (0xff as subclass or
// protocol matches any), or nil.
func (d *Device) FindInterface(class, subclass, protocol uint8) (*ConfigDescriptor, *InterfaceDescriptor) {
	for ci := range d.Configs {
		c := &d.Configs[ci]
		for ii := range c.Interfaces {
			it := &c.Interfaces[ii]
			if it.Class == class && (subclass == 0xff || it.SubClass == subclass) &&
				(protocol == 0xff || it.Protocol == protocol) {
				return c, it
			}
		}
	}
	return nil, nil
}

// BusConfig configures a Bus.
type BusConfig struct {
	Drivers []Driver
	// Debounce is how long a connection must be stable before the port is
	// reset (USB 2.0 §7.1.7.3, TATTDB: 100 ms, the default).
	Debounce time.Duration
	// Log receives one line per attach, detach and failure (nil: none).
	Log func(msg string)
	// HubPoll is how often a hub whose status-change endpoint cannot be
	// used (none, or it keeps failing) has its ports read instead (0:
	// DefaultHubPoll).
	HubPoll time.Duration
}

// defaultDebounce is TATTDB (USB 2.0 §7.1.7.3).
const defaultDebounce = 100 * time.Millisecond

// DefaultHubPoll is BusConfig.HubPoll's default: a hub's status-change
// endpoint is typically polled every 256 ms (bInterval 12 at high
// speed), and polling its ports should not be slower than that.
const DefaultHubPoll = 250 * time.Millisecond

// BusStats counts what a Bus did.
type BusStats struct {
	Enumerated, EnumerationFailed uint64
	Attached, AttachFailed        uint64
	Unbound                       uint64 // enumerated devices no driver took
	Detached                      uint64
	// Hubs attached (counted in Attached too; the hub driver is built in).
	Hubs uint64
}

// Bus watches one host controller's root ports: it enumerates devices that
// connect, attaches the first driver that probes them, and tears devices
// down when they disconnect. Hubs are attached to its built-in hub driver
// (hub.go), which watches their ports the same way, so devices behind
// hubs (up to the USB 2.0 limit of five in a chain) get the same drivers.
type Bus struct {
	hc    HostController
	cfg   BusConfig
	addrs Addresses

	mu       sync.Mutex
	devices  map[int]*Device
	all      map[*Device]bool // every enumerated device, behind hubs too
	hubs     map[*Hub]bool
	scanning bool
	failed   map[int]bool // enumeration failed; wait for a new connection
	pending  map[int]bool
	stats    BusStats
	wake     chan struct{}
	stop     chan struct{}
	running  bool
	wg       sync.WaitGroup
	scanMu   sync.Mutex // one scan at a time (Poll vs the goroutine)
	// addr0 is held while a device is enumerated: only one device on
	// the bus may be in the Default state, answering address 0, at a
	// time (USB 2.0 §9.1.2; hubs' ports are scanned concurrently with
	// the root ports and with each other).
	addr0 sync.Mutex
}

// NewBus makes a bus for hc; Start runs it.
func NewBus(hc HostController, cfg BusConfig) *Bus {
	if cfg.Debounce == 0 {
		cfg.Debounce = defaultDebounce
	}
	if cfg.HubPoll <= 0 {
		cfg.HubPoll = DefaultHubPoll
	}
	return &Bus{hc: hc, cfg: cfg, devices: map[int]*Device{}, failed: map[int]bool{},
		all: map[*Device]bool{}, hubs: map[*Hub]bool{},
		pending: map[int]bool{}, wake: make(chan struct{}, 1), stop: make(chan struct{})}
}

// Start installs the port-change callback and starts the goroutine that
// handles changes; devices already connected are enumerated.
func (b *Bus) Start() {
	b.mu.Lock()
	if b.running {
		b.mu.Unlock()
		return
	}
	b.running = true
	for p := 1; p <= b.hc.Ports(); p++ {
		b.pending[p] = true
	}
	b.mu.Unlock()
	b.hc.SetPortChange(b.portChanged)
	b.wg.Add(1)
	go b.loop()
	b.signal()
}

// Stop stops watching and tears every device down.
func (b *Bus) Stop() {
	b.mu.Lock()
	if !b.running {
		b.mu.Unlock()
		return
	}
	b.running = false
	b.mu.Unlock()
	b.hc.SetPortChange(nil)
	close(b.stop)
	b.wg.Wait()
	b.scanMu.Lock()
	defer b.scanMu.Unlock()
	for p := 1; p <= b.hc.Ports(); p++ {
		b.detach(p)
	}
}

func (b *Bus) portChanged(port int) {
	b.mu.Lock()
	b.pending[port] = true
	b.mu.Unlock()
	b.signal()
}

func (b *Bus) signal() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

func (b *Bus) loop() {
	defer b.wg.Done()
	for {
		select {
		case <-b.stop:
			return
		case <-b.wake:
		}
		b.mu.Lock()
		var ports []int
		for p := range b.pending {
			ports = append(ports, p)
		}
		clear(b.pending)
		b.scanning = true
		b.mu.Unlock()
		for _, p := range ports {
			select {
			case <-b.stop:
				b.setScanning(false)
				return
			default:
			}
			b.scanPort(p)
		}
		b.setScanning(false)
	}
}

func (b *Bus) setScanning(v bool) {
	b.mu.Lock()
	b.scanning = v
	b.mu.Unlock()
}

// Idle reports whether the bus has no port change left to handle: no
// root port pending or being scanned, and every hub done with its ports
// (its first scan after attach included). A board waiting for the
// devices present at boot waits for Idle after their roots enumerate.
func (b *Bus) Idle() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.pending) > 0 || b.scanning {
		return false
	}
	for h := range b.hubs {
		if !h.idle() {
			return false
		}
	}
	return true
}

// Devices returns every enumerated device on the bus, behind hubs too,
// ordered by port path ("ehci0 port 1" before "ehci0 port 1.2").
func (b *Bus) Devices() []*Device {
	b.mu.Lock()
	out := make([]*Device, 0, len(b.all))
	for d := range b.all {
		out = append(out, d)
	}
	b.mu.Unlock()
	slices.SortFunc(out, func(x, y *Device) int { return strings.Compare(x.At.String(), y.At.String()) })
	return out
}

// Hubs returns the hubs attached on the bus.
func (b *Bus) Hubs() []*Hub {
	b.mu.Lock()
	out := make([]*Hub, 0, len(b.hubs))
	for h := range b.hubs {
		out = append(out, h)
	}
	b.mu.Unlock()
	slices.SortFunc(out, func(x, y *Hub) int { return strings.Compare(x.Dev.At.String(), y.Dev.At.String()) })
	return out
}

// Poll examines every port now, for controllers whose port changes are
// not signalled (and for tests).
func (b *Bus) Poll() {
	for p := 1; p <= b.hc.Ports(); p++ {
		b.scanPort(p)
	}
}

// Device returns the device on port, or nil.
func (b *Bus) Device(port int) *Device {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.devices[port]
}

// Stats returns the bus counters.
func (b *Bus) Stats() BusStats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.stats
}

func (b *Bus) logf(format string, a ...any) {
	if b.cfg.Log != nil {
		b.cfg.Log(fmt.Sprintf(format, a...))
	}
}

func (b *Bus) scanPort(port int) {
	b.scanMu.Lock()
	defer b.scanMu.Unlock()
	st, err := b.hc.PortStatus(port)
	if err != nil {
		b.logf("%s port %d: status: %v", b.hc.Name(), port, err)
		return
	}
	b.mu.Lock()
	dev := b.devices[port]
	if st.ConnectChanged {
		delete(b.failed, port)
	}
	failed := b.failed[port]
	b.mu.Unlock()
	if dev != nil && (!st.Connected || st.ConnectChanged) {
		b.detach(port)
		dev = nil
	}
	if !st.Connected || dev != nil || failed {
		return
	}
	time.Sleep(b.cfg.Debounce)
	if st, err = b.hc.PortStatus(port); err != nil || !st.Connected || st.ConnectChanged {
		// Bounced: the next change (or this one, again) decides.
		if err == nil && st.ConnectChanged {
			b.portChanged(port)
		}
		return
	}
	_, err = b.bring(RootPort(b.hc, port), nil, func(d *Device) {
		b.mu.Lock()
		b.devices[port] = d
		b.mu.Unlock()
	})
	if err != nil {
		b.mu.Lock()
		b.failed[port] = true
		b.mu.Unlock()
	}
}

// bring enumerates the device on p (behind hub parent, nil for a root
// port) and binds it: a hub to the built-in hub driver, anything else to
// the first configured Driver that probes it. A device no driver takes
// stays enumerated (Unbound). Only an enumeration failure is returned.
// enumerated hears the device before any driver is bound.
func (b *Bus) bring(p Port, parent *Device, enumerated func(*Device)) (*Device, error) {
	b.addr0.Lock()
	d, err := EnumerateAt(b.hc, p, parent, &b.addrs)
	b.addr0.Unlock()
	b.mu.Lock()
	if err != nil {
		b.stats.EnumerationFailed++
		b.mu.Unlock()
		b.logf("%v", err)
		return nil, err
	}
	b.stats.Enumerated++
	b.all[d] = true
	b.mu.Unlock()
	enumerated(d)
	b.logf("%v: %q %q enumerated", d, d.Manufacturer, d.Product)
	drivers := b.cfg.Drivers
	if IsHub(d) {
		drivers = append([]Driver{hubDriver{b}}, drivers...)
	}
	for _, drv := range drivers {
		if !drv.Probe(d) {
			continue
		}
		if err := d.Attach(drv); err != nil {
			b.mu.Lock()
			b.stats.AttachFailed++
			b.mu.Unlock()
			b.logf("%v: %s: attach: %v", d, drv.Name(), err)
			continue
		}
		b.mu.Lock()
		b.stats.Attached++
		b.mu.Unlock()
		b.logf("%v: %s attached", d, drv.Name())
		return d, nil
	}
	b.mu.Lock()
	b.stats.Unbound++
	b.mu.Unlock()
	return d, nil
}

// unbind tears d down (for a hub, everything behind it first) and
// forgets it.
func (b *Bus) unbind(d *Device) {
	d.Detach()
	b.mu.Lock()
	delete(b.all, d)
	b.stats.Detached++
	b.mu.Unlock()
	b.logf("%v: detached", d)
}

func (b *Bus) detach(port int) {
	b.mu.Lock()
	d := b.devices[port]
	delete(b.devices, port)
	b.mu.Unlock()
	if d == nil {
		return
	}
	b.unbind(d)
}
