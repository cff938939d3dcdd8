//go:build mips || mipsle

package usb

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gowrt/gowrt/barrier"
	"github.com/gowrt/gowrt/board"
	"github.com/gowrt/gowrt/board/malta"
	"github.com/gowrt/gowrt/board/malta/eth"
	"github.com/gowrt/gowrt/busdma/mipsdma"
	"github.com/gowrt/gowrt/kernel"
	"github.com/gowrt/gowrt/soc/malta/pci"
	"github.com/gowrt/gowrt/usbnet/cdcecm"
	"github.com/gowrt/gowrt/usbnet/uhci"
	usbcore "github.com/gowrt/gowrt/usbnet/usb"
)

// The PIIX4's USB function (Intel 82371AB datasheet §1.3; QEMU
// hw/isa/piix4.c creates it as piix4-usb-uhci at 00:0a.2): UHCI registers
// in the 32-byte I/O BAR 4 (UHCI Design Guide §2: USBBASE), INTD routed
// through PIRQD.
const (
	uhciVendor = 0x8086
	uhciDevice = 0x7112
	uhciBAR    = 4
	// LEGSUP (PCI configuration 0xc0, 16 bits): bit 13 routes the
	// controller's interrupt to PIRQD; the R/WC legacy status bits are
	// cleared by writing them (Intel 82371AB datasheet §2.3.9; Linux
	// uhci-pci.c writes USBLEGSUP_DEFAULT = 0x2000 before starting).
	regLEGSUP     = 0xc0
	legsupPIRQEn  = 0x2000
	legsupRWCBits = 0x8f00

	// attachWait bounds how long Ports waits for the functions connected
	// at boot to enumerate and attach: the Bus debounces 100 ms (USB 2.0
	// TATTDB), the port reset takes 60 ms, enumeration a few control
	// transfers of a few frames each.
	attachWait = 5 * time.Second
)

var (
	prepOnce sync.Once
	prepErr  error
	hc       *uhci.HC
	bus      *usbcore.Bus

	mu       sync.Mutex
	attached []*cdcecm.Port
	changed  = make(chan struct{}, 1)
)

func logf(format string, a ...any) { fmt.Printf("usb: "+format+"\n", a...) }

// FindUHCI finds the PIIX4's UHCI function on the PCI bus, enables its
// bus mastering, routes its interrupt to PIRQD, and returns it with a Space
// over its registers. The UHCI driver is started on that Space; the caller
// connects hc.Interrupt to d.IRQ (level: PCI INTx).
func FindUHCI() (d *pci.Device, regs barrier.Space, err error) {
	gt, devs, err := malta.PCI()
	if err != nil {
		return nil, nil, err
	}
	for _, x := range devs {
		if x.Vendor == uhciVendor && x.Device == uhciDevice {
			d = x
			break
		}
	}
	if d == nil {
		return nil, nil, errors.New("no PIIX4 UHCI (8086:7112) on PCI")
	}
	if d.BAR[uhciBAR].Kind != pci.BARIO || d.IRQ < 0 {
		return nil, nil, fmt.Errorf("UHCI %v has no I/O BAR %d or no IRQ", d, uhciBAR)
	}
	pci.SetMaster(gt, d.Addr)
	v := gt.Read32(d.Addr, regLEGSUP)
	gt.Write32(d.Addr, regLEGSUP, v&^0xffff|legsupRWCBits|legsupPIRQEn)
	regs, err = malta.IOSpace("uhci0", d.BAR[uhciBAR].Addr, uhci.RegSize)
	if err != nil {
		return nil, nil, err
	}
	return d, regs, nil
}

// prepare creates the controller's driver and shares its line with the
// pcnets' before they connect their interrupts.
func prepare() {
	d, regs, err := FindUHCI()
	if err != nil {
		prepErr = err
		return
	}
	plat, err := mipsdma.New(kernel.DMA)
	if err != nil {
		prepErr = err
		return
	}
	if hc, err = uhci.New(uhci.Config{Name: "uhci0", Regs: regs, DMA: plat}); err != nil {
		prepErr = err
		return
	}
	eth.ShareInterrupt(d.IRQ, "uhci", hc.Interrupt)
	logf("UHCI %v", d)
}

// Ports implements board.Board: the pcnet ports of board/malta/eth, then
// one LAN port per CDC-ECM function attached at boot. A USB failure is
// logged and leaves the pcnet ports working.
func (Board) Ports() ([]board.Port, error) {
	prepOnce.Do(prepare)
	ports, err := eth.Board{}.Ports()
	if err != nil {
		return nil, err
	}
	if prepErr != nil {
		logf("%v; no USB ports", prepErr)
		return ports, nil
	}
	if bus == nil {
		if err := start(); err != nil {
			logf("%v; no USB ports", err)
			return ports, nil
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range attached {
		ports = append(ports, board.Port{Name: p.Name, Role: board.LAN, NIC: p})
	}
	return ports, nil
}

// start runs the controller and the bus, and waits for the functions
// connected now to attach.
func start() error {
	if err := hc.Start(); err != nil {
		return fmt.Errorf("UHCI start: %w", err)
	}
	connected := 0
	for p := 1; p <= hc.Ports(); p++ {
		if st, err := hc.PortStatus(p); err == nil && st.Connected {
			connected++
		}
	}
	drv := &cdcecm.Driver{
		OnAttach: func(p *cdcecm.Port) {
			mu.Lock()
			attached = append(attached, p)
			mu.Unlock()
			select {
			case changed <- struct{}{}:
			default:
			}
		},
		OnDetach: func(p *cdcecm.Port) { logf("%s detached", p.Name) },
		Log:      func(s string) { fmt.Println(s) },
	}
	bus = usbcore.NewBus(hc, usbcore.BusConfig{Drivers: []usbcore.Driver{drv},
		Log: func(s string) { fmt.Println("usb:", s) }})
	bus.Start()
	deadline := time.After(attachWait)
	for {
		st := bus.Stats()
		mu.Lock()
		n := len(attached)
		mu.Unlock()
		if n >= connected || int(st.Enumerated+st.EnumerationFailed) >= connected &&
			int(st.Attached+st.AttachFailed+st.Unbound) >= int(st.Enumerated) {
			return nil
		}
		select {
		case <-changed:
		case <-time.After(10 * time.Millisecond):
		case <-deadline:
			logf("%d of %d connected devices attached after %v", n, connected, attachWait)
			return nil
		}
	}
}
