//go:build mips || mipsle

package eth

import (
	"errors"
	"fmt"
	"sync"

	"github.com/gowrt/gowrt/board"
	"github.com/gowrt/gowrt/board/malta"
	"github.com/gowrt/gowrt/busdma/mipsdma"
	"github.com/gowrt/gowrt/intr"
	"github.com/gowrt/gowrt/kernel"
	"github.com/gowrt/gowrt/pcnet"
	"github.com/gowrt/gowrt/soc/malta/pci"
)

// The NICs: AMD PCnet-PCI II, QEMU malta's default NIC model
// (hw/mips/malta.c, hw/net/pcnet-pci.c). The on-board one sits in slot 11
// like the real board's; internal/qemu puts the WAN one in slot 12.
const (
	pcnetVendor = 0x1022
	pcnetDevice = 0x2000
	lanSlot     = 11
)

// ErrNoWAN is WAN's error when the bus has no second pcnet (QEMU started
// without internal/qemu's Machine.WAN).
var ErrNoWAN = errors.New("malta: no second pcnet on PCI for the WAN port")

// port is one brought-up pcnet.
type port struct {
	nic *pcnet.NIC
	dev *pci.Device
}

var (
	upOnce   sync.Once
	lan, wan port
	lanErr   error
	wanErr   error
)

// LAN brings up the board's pcnets, once, and returns the LAN one: the
// on-board NIC in slot 11 (or, without one there, the first pcnet found).
func LAN() (*pcnet.NIC, *pci.Device, error) {
	upOnce.Do(bringUp)
	return lan.nic, lan.dev, lanErr
}

// WAN brings up the board's pcnets, once, and returns the WAN one: the
// first pcnet other than LAN's. Its error is ErrNoWAN if there is none,
// and LAN's error if LAN failed.
func WAN() (*pcnet.NIC, *pci.Device, error) {
	upOnce.Do(bringUp)
	return wan.nic, wan.dev, wanErr
}

// bringUp finds the pcnets, starts the drivers and connects their
// interrupt handlers.
func bringUp() {
	gt, devs, err := malta.PCI()
	if err != nil {
		lanErr, wanErr = err, err
		return
	}
	var lanDev, wanDev *pci.Device
	var nics []*pci.Device
	for _, d := range devs {
		if d.Vendor == pcnetVendor && d.Device == pcnetDevice {
			nics = append(nics, d)
			if d.Dev == lanSlot && lanDev == nil {
				lanDev = d
			}
		}
	}
	if lanDev == nil && len(nics) > 0 {
		lanDev = nics[0]
	}
	for _, d := range nics {
		if d != lanDev {
			wanDev = d
			break
		}
	}
	if lanDev == nil {
		lanErr = errors.New("malta: no pcnet on PCI (QEMU -nic none?)")
		wanErr = lanErr
		return
	}
	plat, err := mipsdma.New(kernel.DMA)
	if err != nil {
		lanErr, wanErr = err, err
		return
	}
	lan.dev = lanDev
	if lan.nic, lanErr = start(gt, plat, lanDev, "pcnet-lan"); lanErr != nil {
		wanErr = lanErr
		return
	}
	started := []port{lan}
	wanErr = ErrNoWAN
	if wanDev != nil {
		wan.dev = wanDev
		if wan.nic, wanErr = start(gt, plat, wanDev, "pcnet-wan"); wanErr == nil {
			started = append(started, wan)
		}
	}
	if err := connectInterrupts(started); err != nil {
		lan.nic, wan.nic = nil, nil
		lanErr, wanErr = err, err
	}
}

// start enables bus mastering for d and starts the driver on its I/O BAR.
// It is promiscuous because the router puts LAN ports in a bridge (and
// counts every frame on the WAN port).
func start(gt pci.Config, plat *mipsdma.Platform, d *pci.Device, name string) (*pcnet.NIC, error) {
	if d.BAR[0].Kind != pci.BARIO || d.IRQ < 0 {
		return nil, fmt.Errorf("malta: pcnet %v has no I/O BAR or no IRQ: %v", d.Addr, d)
	}
	pci.SetMaster(gt, d.Addr)
	regs, err := malta.IOSpace(name, d.BAR[0].Addr, pcnet.RegSize)
	if err != nil {
		return nil, err
	}
	nic, err := pcnet.New(pcnet.Config{Regs: regs, DMA: plat, RxRing: rxRingFor(ramBytes()), TxRing: 64, Promiscuous: true})
	if err != nil {
		return nil, fmt.Errorf("malta: pcnet %v: %w", d.Addr, err)
	}
	return nic, nil
}

// rxRingFor sizes a pcnet's receive ring by the board's RAM. Its buffers
// (1536 bytes each, plus the spare pool of a TX ring's worth) are DMA
// memory taken at boot for good: 256 slots absorb the bursts QEMU's TAP
// backend delivers at once, which boards of 32 MiB and more can afford;
// below that 128, which still outnumbers Linux's pcnet32 default of 32
// (RX_RING_SIZE in drivers/net/ethernet/amd/pcnet32.c) and saves 192 KiB
// a port, 3% of a 16 MiB board for the two.
func rxRingFor(ram uint32) int {
	if ram != 0 && ram < 32<<20 {
		return 128
	}
	return 256
}

// ramBytes is the board's RAM as the kernel found it (0 if unknown).
func ramBytes() uint32 {
	in, err := kernel.ReadInfo()
	if err != nil {
		return 0
	}
	return in.RAM
}

// sharer is a handler another PCI function of the board puts on a line
// (ShareInterrupt).
type sharer struct {
	line int
	name string
	h    func()
}

var (
	sharersMu sync.Mutex
	sharers   []sharer
)

// ShareInterrupt adds h, another PCI function's interrupt handler, to
// i8259 line ln, which the board's pcnets may drive too: the PIIX4's USB
// controller (00:0a.2, PIRQD) is on line 11 at reset, like the WAN pcnet
// in slot 12 (PIRQC), and a line has one handler, which must then service
// every device on it. Call it before the ports come up (Board.Ports); the
// line is connected with the pcnets' even if no pcnet uses it.
func ShareInterrupt(ln int, name string, h func()) {
	sharersMu.Lock()
	sharers = append(sharers, sharer{ln, name, h})
	sharersMu.Unlock()
}

// connectInterrupts registers one handler per i8259 line. PCI INTx is
// level-triggered and may be shared (PCI Local Bus Specification 2.3,
// 2.2.6), so each line is set to level first (PIIX4 ELCR), and the handler
// of a line that several NICs drive (a pcnet in a slot routed like slot
// 11) services each of them: a pcnet with no cause pending returns at
// once, and a NIC still asserting the line after the handler makes it fire
// again when it is unmasked.
func connectInterrupts(ports []port) error {
	disp := malta.NewDispatcher()
	byLine := map[int][]func(){}
	names := map[int]string{}
	var lines []int
	add := func(ln int, name string, h func()) {
		if byLine[ln] == nil {
			lines = append(lines, ln)
			names[ln] = name
		} else if names[ln] != name {
			names[ln] += "+" + name
		}
		byLine[ln] = append(byLine[ln], h)
	}
	for _, p := range ports {
		add(p.dev.IRQ, "pcnet", p.nic.Interrupt)
	}
	sharersMu.Lock()
	for _, s := range sharers {
		add(s.line, s.name, s.h)
	}
	sharersMu.Unlock()
	for _, ln := range lines {
		hs := byLine[ln]
		if err := disp.Controller().SetTrigger(ln, intr.Level); err != nil {
			return fmt.Errorf("malta: %s line %d: %w", names[ln], ln, err)
		}
		h := hs[0]
		if len(hs) > 1 {
			h = func() {
				for _, f := range hs {
					f()
				}
			}
		}
		if err := disp.Register(ln, names[ln], h); err != nil {
			return fmt.Errorf("malta: %s line %d: %w", names[ln], ln, err)
		}
	}
	return nil
}

// Ports implements board.Board: "lan", and "wan" if a second pcnet is on
// the bus.
func (Board) Ports() ([]board.Port, error) {
	nic, _, err := LAN()
	if err != nil {
		return nil, err
	}
	ports := []board.Port{{Name: "lan", Role: board.LAN, NIC: nic}}
	wnic, _, err := WAN()
	switch {
	case err == nil:
		ports = append(ports, board.Port{Name: "wan", Role: board.WAN, NIC: wnic})
	case !errors.Is(err, ErrNoWAN):
		return nil, err
	}
	return ports, nil
}
