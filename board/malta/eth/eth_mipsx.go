//go:build mips || mipsle

package eth

import (
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

// The on-board NIC: QEMU malta's default pcnet in slot 11, an AMD PCnet-PCI
// II (hw/mips/malta.c, hw/net/pcnet-pci.c).
const (
	pcnetVendor = 0x1022
	pcnetDevice = 0x2000
)

var (
	lanOnce sync.Once
	lanNIC  *pcnet.NIC
	lanDev  *pci.Device
	lanErr  error
)

// LAN brings up the on-board pcnet, once: PCI enumeration, bus mastering,
// DMA memory from the kernel, its interrupt handler on its i8259 line. It is promiscuous because the
// router puts it in a bridge.
func LAN() (*pcnet.NIC, *pci.Device, error) {
	lanOnce.Do(func() {
		gt, devs, err := malta.PCI()
		if err != nil {
			lanErr = err
			return
		}
		for _, d := range devs {
			if d.Vendor == pcnetVendor && d.Device == pcnetDevice {
				lanDev = d
			}
		}
		if lanDev == nil || lanDev.BAR[0].Kind != pci.BARIO || lanDev.IRQ < 0 {
			lanErr = fmt.Errorf("malta: no pcnet with an I/O BAR and an IRQ on PCI (QEMU -nic none?)")
			return
		}
		pci.SetMaster(gt, lanDev.Addr)
		regs, err := malta.IOSpace("pcnet", lanDev.BAR[0].Addr, pcnet.RegSize)
		if err != nil {
			lanErr = err
			return
		}
		plat, err := mipsdma.New(kernel.DMA)
		if err != nil {
			lanErr = err
			return
		}
		nic, err := pcnet.New(pcnet.Config{Regs: regs, DMA: plat, RxRing: 256, TxRing: 64, Promiscuous: true})
		if err != nil {
			lanErr = err
			return
		}
		// The board connects the driver's interrupt handler: PCI INTx is
		// level-triggered (PCI Local Bus Specification 2.3, 2.2.6), so
		// the i8259 line is set to level first (PIIX4 ELCR).
		disp := malta.NewDispatcher()
		if err := disp.Controller().SetTrigger(lanDev.IRQ, intr.Level); err != nil {
			lanErr = fmt.Errorf("malta: pcnet line %d: %w", lanDev.IRQ, err)
			return
		}
		if err := disp.Register(lanDev.IRQ, "pcnet", nic.Interrupt); err != nil {
			lanErr = fmt.Errorf("malta: pcnet line %d: %w", lanDev.IRQ, err)
			return
		}
		lanNIC = nic
	})
	return lanNIC, lanDev, lanErr
}

// Ports implements board.Board.
func (Board) Ports() ([]board.Port, error) {
	nic, _, err := LAN()
	if err != nil {
		return nil, err
	}
	return []board.Port{{Name: "lan", Role: board.LAN, NIC: nic}}, nil
}
