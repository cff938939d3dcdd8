// Package argeport wires an arge MAC to an Ethernet unit of an
// AR71xx-family SoC: the per-SoC instance data (soc/ar71xx's EthUnit
// table and the chip's Info) turned into the driver's Config, so that a
// board file names the units it uses (ar71xx.GE0, ar71xx.GE1) instead of
// assembling the configuration by hand. It links no kernel: the sim board
// uses it as much as a bare-metal router's board would.
package argeport

import (
	"github.com/gowrt/gowrt/arge"
	"github.com/gowrt/gowrt/barrier"
	"github.com/gowrt/gowrt/busdma"
	"github.com/gowrt/gowrt/soc/ar71xx"
)

// Chip returns the MAC parameters of the SoC variant i.
func Chip(i *ar71xx.Info) arge.Chip {
	return arge.Chip{DescLenMask: i.DescLenMask, TXAlign4: i.TXAlign4, RXAlign4: i.RXAlign4,
		FIFOCfg1: i.FIFOCfg1, FIFOCfg2: i.FIFOCfg2, FIFOCfg3: i.FIFOCfg3}
}

// Config returns the driver configuration of unit u of s, whose registers
// are regs (mapped from u.Base by the board) and whose rings and buffers
// come from dma: the unit's reset line, clock and DDR flush channel (none
// on SoCs without one), the chip's MAC parameters and the SoC's default
// MDIO clock. The board adds the station address, the MII (AR71xx: GE0's
// for every PHY) and ring sizes; it connects the NIC's Interrupt to
// u.IRQ.
func Config(s *ar71xx.SoC, u ar71xx.EthUnit, regs barrier.Space, dma busdma.Platform) (arge.Config, error) {
	e, err := s.Eth(u)
	if err != nil {
		return arge.Config{}, err
	}
	cfg := arge.Config{Unit: u.Unit, Regs: regs, Chip: Chip(s.Info), DMA: dma, SoC: e,
		MDIOClock: uint32(s.Info.MDIODefaultIndex)}
	if e.HasFlush() {
		cfg.Flush = e
	}
	return cfg, nil
}
