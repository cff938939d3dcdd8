package axge

import (
	"errors"
	"fmt"
	"sync"
	"time"

	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/usbnet"
	"github.com/gowrt/gowrt/usbnet/usb"
)

// Driver defaults.
const (
	// DefaultTick is the MII polling period (FreeBSD's uether tick, once
	// a second; the chip's interrupt endpoint is not used, as in FreeBSD).
	DefaultTick = time.Second
	// RxTransfers is how many bulk-in transfers the driver keeps in
	// flight: FreeBSD's axge had one, and the bus idled through every
	// completion (one of its four fixes).
	RxTransfers = 4
	// RxSize is one bulk-in transfer: the largest aggregation the table
	// asks for, 1024 × (size + 2) for size 0x18 (Linux's rx_urb_size rule).
	RxSize = 1024 * (0x18 + 2)
)

// Config configures the driver the board registers with the USB bus.
type Config struct {
	// OnAttach is called with each port once its chip is initialised
	// and its NIC ready to Start; a board adds the NIC to the router
	// there. It runs on the Bus's goroutine (as cdcecm.Driver's).
	OnAttach func(p *Port)
	// OnDetach is called when a port's device went away or the driver
	// was unbound, after its NIC stopped.
	OnDetach func(p *Port)
	// Tick is the MII polling period (default DefaultTick).
	Tick time.Duration
	// RxTransfers in flight (default RxTransfers); TxQueue depth
	// (default the framework's).
	RxTransfers, TxQueue int
	// Promisc puts the RX filter in promiscuous mode (a bridge port).
	Promisc bool
}

// Driver matches AX88179, AX88179A and AX88178A devices (usb.Driver).
type Driver struct {
	cfg Config
	mu  sync.Mutex
	n   int
}

// NewDriver returns the driver for a usb.Bus.
func NewDriver(cfg Config) *Driver {
	if cfg.Tick <= 0 {
		cfg.Tick = DefaultTick
	}
	if cfg.RxTransfers <= 0 {
		cfg.RxTransfers = RxTransfers
	}
	return &Driver{cfg: cfg}
}

// Name implements usb.Driver.
func (*Driver) Name() string { return "axge" }

// Probe implements usb.Driver: ASIX IDs with a vendor-class interface
// (the AX88179A's other configurations are CDC; Linux binds this driver
// to the vendor one only).
func (*Driver) Probe(d *usb.Device) bool {
	if _, ok := Identify(d.Desc.Vendor, d.Desc.Product, d.Desc.Release); !ok {
		return false
	}
	cfg, _ := d.FindInterface(0xFF, 0xFF, 0)
	return cfg != nil
}

// Port is one attached chip: its register layer and its NIC.
type Port struct {
	*usbnet.NIC
	Name    string
	Device  *usb.Device
	Chip    *Chip
	Framing *Framing

	drv  *Driver
	quit chan struct{}
	done chan struct{}
	once sync.Once
}

// Attach implements usb.Driver: select the vendor configuration, bring
// the chip up, open bulk-in and bulk-out, build the NIC with several
// bulk-in transfers in flight, and start polling the PHY.
func (drv *Driver) Attach(d *usb.Device) (usb.Attachment, error) {
	variant, ok := Identify(d.Desc.Vendor, d.Desc.Product, d.Desc.Release)
	if !ok {
		return nil, errors.New("axge: not an ASIX device")
	}
	cfg, iface := d.FindInterface(0xFF, 0xFF, 0)
	if cfg == nil {
		return nil, errors.New("axge: no vendor-class interface")
	}
	in, okIn := iface.Endpoint(usb.Bulk, true)
	out, okOut := iface.Endpoint(usb.Bulk, false)
	if !okIn || !okOut {
		return nil, fmt.Errorf("axge: %v: interface without bulk endpoints", d)
	}
	if err := d.SetConfiguration(cfg.Value); err != nil {
		return nil, err
	}
	drv.mu.Lock()
	name := fmt.Sprintf("axge%d", drv.n)
	drv.n++
	drv.mu.Unlock()
	p := &Port{Name: name, Device: d, Framing: &Framing{}, drv: drv, quit: make(chan struct{}), done: make(chan struct{})}
	chip, err := NewChip(ChipConfig{Dev: d, Variant: variant, LinkChanged: func(l gnet.LinkState) {
		if p.NIC != nil {
			p.NIC.SetLink(l)
		}
	}})
	if err != nil {
		return nil, err
	}
	p.Chip = chip
	// Init runs a first MII pass; the NIC does not exist yet, so the
	// link it finds is handed over below.
	if err := chip.Init(drv.cfg.Promisc); err != nil {
		return nil, err
	}
	inPipe, err := d.OpenPipe(in)
	if err != nil {
		return nil, err
	}
	outPipe, err := d.OpenPipe(out)
	if err != nil {
		inPipe.Close()
		return nil, err
	}
	m := chip.Media()
	nic, err := usbnet.New(usbnet.Config{
		Name: name, In: inPipe, Out: outPipe,
		Framing: p.Framing,
		Hooks: usbnet.Hooks{
			StopMAC:   func() { _ = chip.Stop() },
			ClearHalt: d.ClearHalt,
			Gone:      d.Gone,
		},
		MAC:         chip.MAC(),
		RxTransfers: drv.cfg.RxTransfers, RxSize: RxSize,
		TxQueue: drv.cfg.TxQueue,
		Link:    gnet.LinkState{Up: m.Up, SpeedMbps: m.SpeedMbps, FullDuplex: m.FullDuplex},
	})
	if err != nil {
		inPipe.Close()
		outPipe.Close()
		return nil, err
	}
	p.NIC = nic
	go p.tick(drv.cfg.Tick)
	if drv.cfg.OnAttach != nil {
		drv.cfg.OnAttach(p)
	}
	return p, nil
}

// tick polls the PHY until Detach. A failed pass changes nothing and is
// retried at the next tick.
func (p *Port) tick(every time.Duration) {
	defer close(p.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-p.quit:
			return
		case <-t.C:
			if p.Device.Gone() {
				return
			}
			_ = p.Chip.Tick()
		}
	}
}

// Detach implements usb.Attachment: stop polling (a pass in progress
// finishes or fails: the device is gone), stop the NIC (the MAC, then
// its transfers), and tell the board.
func (p *Port) Detach() {
	p.once.Do(func() {
		close(p.quit)
		<-p.done
		p.NIC.Stop()
		if p.drv.cfg.OnDetach != nil {
			p.drv.cfg.OnDetach(p)
		}
	})
}
