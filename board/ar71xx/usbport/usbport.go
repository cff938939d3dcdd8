// Package usbport brings up USB Ethernet on an AR71xx-family router from
// its description (board/ar71xx/boardfile USB) and its SoC's USB data
// (soc/ar71xx USBInfo): the USB block taken out of reset, an EHCI driver
// per controller the board wires out, their interrupt on CPU IP3 behind
// the USB DDR flush, a usb.Bus per controller with the axge (AX88179 /
// AX88178A / AX88179A) and CDC-ECM drivers, and every USB Ethernet
// function present at boot as an extra LAN port.
//
// Like board/ar71xx/wire it runs on the hardware (board/ar71xx/router,
// whose Hardware is the kernel's register windows) and on the board's sim
// twin (board/sim, whose Hardware is ar71xxsim and ehcisim), so the twin's
// tests exercise this bring-up.
//
// The router's port list is fixed once it runs: functions plugged in
// after boot are attached and logged but get no router port; one
// unplugged stops, and the router sees its carrier go. Devices behind a
// board's on-board hub (TL-WDR4300's two sockets) come up through the
// USB core's hub driver like those on a root port.
package usbport

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/gowrt/gowrt/barrier"
	"github.com/gowrt/gowrt/board"
	"github.com/gowrt/gowrt/board/ar71xx/boardfile"
	"github.com/gowrt/gowrt/busdma"
	"github.com/gowrt/gowrt/soc/ar71xx"
	"github.com/gowrt/gowrt/usbnet/axge"
	"github.com/gowrt/gowrt/usbnet/cdcecm"
	"github.com/gowrt/gowrt/usbnet/ehci"
	"github.com/gowrt/gowrt/usbnet/usb"
)

// Hardware is what Start needs from the platform.
type Hardware interface {
	// SoC returns the identified SoC with its register blocks mapped.
	SoC() (*ar71xx.SoC, error)
	// DMA is where descriptors and buffers come from.
	DMA() busdma.Platform
	// USBControl returns the USB control block (ar71xx.PhysUSB), which
	// the AR71xx's bring-up writes; asked for on that SoC only.
	USBControl() (barrier.Space, error)
	// EHCI returns unit u's capability registers: physical
	// u.Base+u.CapOffset, in u.RegOrder.
	EHCI(u ar71xx.USBUnit) (barrier.Space, error)
	// USBInterrupt connects handler to CPU interrupt line cpuLine (the
	// USBUnit's IRQ: IP3 is 1). The handler already does the line's DDR
	// flush.
	USBInterrupt(cpuLine int, name string, handler func()) error
}

// DefaultAttachWait bounds how long Start waits for the functions
// connected at boot to enumerate and attach: the Bus debounces 100 ms
// (USB 2.0 TATTDB), the port reset takes 50 ms plus 10 ms recovery,
// enumeration and the chip's bring-up a few dozen control transfers; an
// on-board hub adds its own enumeration, power-good wait, debounce and
// port reset before the devices behind it.
const DefaultAttachWait = 10 * time.Second

// Config tunes Start.
type Config struct {
	// AttachWait: 0 is DefaultAttachWait.
	AttachWait time.Duration
	// Debounce is passed to the buses (0: the USB 2.0 100 ms).
	Debounce time.Duration
	// Log receives one line per notable event (nil: discarded).
	Log func(format string, a ...any)
	// OnAttach and OnDetach, if set, hear every USB Ethernet port
	// attached (at boot or later) and detached, by name.
	OnAttach, OnDetach func(name string)
}

// ErrNoEHCI: the description wires a USB port to an EHCI the SoC lacks.
var ErrNoEHCI = errors.New("usbport: no such EHCI")

// USB is a brought-up USB block.
type USB struct {
	// Ports are the functions attached at boot, as LAN ports in attach
	// order (sorted by name within one wait).
	Ports []board.Port
	// Controllers and Buses are by EHCI unit.
	Controllers map[int]*ehci.Controller
	Buses       map[int]*usb.Bus

	cfg  Config
	mu   sync.Mutex
	boot bool // still collecting boot-time ports
	att  []board.Port
	late int // functions attached after boot
	kick chan struct{}
	once sync.Once
}

func (u *USB) logf(format string, a ...any) {
	if u.cfg.Log != nil {
		u.cfg.Log("usb: "+format, a...)
	}
}

// Start brings up b's USB on hw and returns the functions found at boot.
// A board without USB ports gives an empty USB and no error. On error
// what was started is stopped; the caller logs it and runs without USB.
func Start(b *boardfile.Board, hw Hardware, cfg Config) (*USB, error) {
	if b == nil || hw == nil {
		return nil, errors.New("usbport: nil board or hardware")
	}
	if cfg.AttachWait <= 0 {
		cfg.AttachWait = DefaultAttachWait
	}
	u := &USB{Controllers: map[int]*ehci.Controller{}, Buses: map[int]*usb.Bus{}, cfg: cfg,
		boot: true, kick: make(chan struct{}, 1)}
	if len(b.USB) == 0 {
		u.boot = false
		return u, nil
	}
	s, err := hw.SoC()
	if err != nil {
		return nil, fmt.Errorf("usbport: %s: SoC: %w", b.Name, err)
	}
	info := s.Info.USB()
	units, err := unitsOf(b, info)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			_ = u.Close()
		}
	}()

	var ctrl barrier.Space
	if info.BringUp == ar71xx.USBBringUp71xx {
		if ctrl, err = hw.USBControl(); err != nil {
			return nil, fmt.Errorf("usbport: %s: USB control block: %w", b.Name, err)
		}
	}
	if err := s.StartUSB(ctrl); err != nil {
		return nil, fmt.Errorf("usbport: %s: %w", b.Name, err)
	}

	// Controllers, then their interrupt (one handler per CPU line: the
	// QCA955x's two EHCIs share IP3; each driver's Interrupt reads its
	// own USBSTS and counts a call with nothing pending as spurious).
	lines := map[int][]*ehci.Controller{}
	for _, unit := range units {
		regs, err := hw.EHCI(unit)
		if err != nil {
			return nil, fmt.Errorf("usbport: %s: EHCI %d registers: %w", b.Name, unit.Unit, err)
		}
		hc, err := ehci.New(ControllerConfig(unit, regs, hw.DMA()))
		if err != nil {
			return nil, fmt.Errorf("usbport: %s: EHCI %d: %w", b.Name, unit.Unit, err)
		}
		u.Controllers[unit.Unit] = hc
		lines[unit.IRQ] = append(lines[unit.IRQ], hc)
	}
	for line, hcs := range lines {
		hcs := hcs
		h := func() {
			for _, hc := range hcs {
				hc.Interrupt()
			}
		}
		fh, err := s.FlushingHandler(line, h, func(err error) { u.logf("IP%d flush: %v", line+2, err) })
		if err != nil {
			return nil, fmt.Errorf("usbport: %s: %w", b.Name, err)
		}
		if err := hw.USBInterrupt(line, "ehci", fh); err != nil {
			return nil, fmt.Errorf("usbport: %s: EHCI interrupt: %w", b.Name, err)
		}
	}

	// Drivers shared by the buses, so port names stay unique.
	ax := axge.NewDriver(axge.Config{Promisc: true, // a bridge port hears frames for br-lan's address
		OnAttach: func(p *axge.Port) { u.attached(board.Port{Name: p.Name, Role: board.LAN, NIC: p}) },
		OnDetach: func(p *axge.Port) { u.detached(p.Name) }})
	ecm := &cdcecm.Driver{
		OnAttach: func(p *cdcecm.Port) { u.attached(board.Port{Name: p.Name, Role: board.LAN, NIC: p}) },
		OnDetach: func(p *cdcecm.Port) { u.detached(p.Name) },
		Log:      func(m string) { u.logf("%s", m) },
	}
	connected := 0
	for _, unit := range units {
		hc := u.Controllers[unit.Unit]
		if err := hc.Start(); err != nil {
			return nil, fmt.Errorf("usbport: %s: EHCI %d start: %w", b.Name, unit.Unit, err)
		}
		for p := 1; p <= hc.Ports(); p++ {
			if st, err := hc.PortStatus(p); err == nil && st.Connected {
				connected++
			}
		}
		bus := usb.NewBus(hc, usb.BusConfig{Drivers: []usb.Driver{ax, ecm}, Debounce: cfg.Debounce,
			Log: func(m string) { u.logf("%s", m) }})
		u.Buses[unit.Unit] = bus
		bus.Start()
	}
	u.waitBoot(connected)
	ok = true
	return u, nil
}

// ControllerConfig is the ehci driver's configuration for unit u of the
// SoC, registers regs (u.Base+u.CapOffset), memory dma.
func ControllerConfig(u ar71xx.USBUnit, regs barrier.Space, dma busdma.Platform) ehci.Config {
	return ehci.Config{Name: fmt.Sprintf("ehci%d", u.Unit), Regs: regs, DMA: dma, DescOrder: u.DescOrder,
		IntegratedTT: u.IntegratedTT, BigEndianCore: u.IntegratedTT && u.DescOrder == barrier.BigEndian,
		SynopsysIAABug: u.SynopsysIAABug}
}

// unitsOf returns the SoC units b's USB ports use, in unit order.
func unitsOf(b *boardfile.Board, info ar71xx.USBInfo) ([]ar71xx.USBUnit, error) {
	seen := map[int]bool{}
	var out []ar71xx.USBUnit
	for _, p := range b.USB {
		if seen[p.Unit] {
			continue
		}
		found := false
		for _, unit := range info.Units {
			if unit.Unit == p.Unit {
				out, found = append(out, unit), true
			}
		}
		if !found {
			return nil, fmt.Errorf("%w: %s: USB port %v, the SoC has %d EHCI(s)", ErrNoEHCI, b.Name, p, len(info.Units))
		}
		seen[p.Unit] = true
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Unit < out[j].Unit })
	return out, nil
}

func (u *USB) attached(p board.Port) {
	u.mu.Lock()
	boot := u.boot
	if boot {
		u.att = append(u.att, p)
	} else {
		u.late++
	}
	u.mu.Unlock()
	if boot {
		u.logf("%s attached", p.Name)
	} else {
		u.logf("%s attached after boot: no router port (the port list is fixed once the router runs)", p.Name)
	}
	if u.cfg.OnAttach != nil {
		u.cfg.OnAttach(p.Name)
	}
	select {
	case u.kick <- struct{}{}:
	default:
	}
}

func (u *USB) detached(name string) {
	u.logf("%s detached", name)
	if u.cfg.OnDetach != nil {
		u.cfg.OnDetach(name)
	}
}

// waitBoot waits until every device connected at start has attached or
// failed, or AttachWait passes, and fixes the port list.
func (u *USB) waitBoot(connected int) {
	deadline := time.After(u.cfg.AttachWait)
	for !u.settled(connected) {
		select {
		case <-u.kick:
		case <-time.After(10 * time.Millisecond):
		case <-deadline:
			u.logf("%d connected device(s); not all attached after %v", connected, u.cfg.AttachWait)
			u.settle()
			return
		}
	}
	u.settle()
}

func (u *USB) settled(connected int) bool {
	var st usb.BusStats
	for _, b := range u.Buses {
		s := b.Stats()
		st.Enumerated += s.Enumerated
		st.EnumerationFailed += s.EnumerationFailed
		st.Attached += s.Attached
		st.AttachFailed += s.AttachFailed
		st.Unbound += s.Unbound
	}
	u.mu.Lock()
	n := len(u.att)
	u.mu.Unlock()
	if n >= connected && !u.hubs() {
		return true
	}
	// Every root device came up or failed, every one was bound or left,
	// and no hub is still looking at its ports (a hub is a root device
	// whose functions come after it).
	if int(st.Enumerated+st.EnumerationFailed) < connected || st.Attached+st.AttachFailed+st.Unbound < st.Enumerated {
		return false
	}
	for _, b := range u.Buses {
		if !b.Idle() {
			return false
		}
	}
	return true
}

// hubs reports whether a hub is attached on any bus.
func (u *USB) hubs() bool {
	for _, b := range u.Buses {
		if b.Stats().Hubs > 0 {
			return true
		}
	}
	return false
}

func (u *USB) settle() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.boot = false
	sort.SliceStable(u.att, func(i, j int) bool { return u.att[i].Name < u.att[j].Name })
	u.Ports = u.att
}

// Late returns how many functions attached after boot (no router port).
func (u *USB) Late() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.late
}

// Close stops the buses (each device detached: its NIC stopped, its
// transfers cancelled), then the controllers. Stop the router first.
func (u *USB) Close() error {
	u.once.Do(func() {
		for _, b := range u.Buses {
			b.Stop()
		}
		for _, hc := range u.Controllers {
			hc.Stop()
		}
	})
	return nil
}
