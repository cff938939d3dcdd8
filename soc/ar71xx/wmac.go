package ar71xx

import (
	"errors"
	"fmt"
)

// The built-in 802.11 MAC (WMAC) of the AR934x and QCA955x: an AR9300-
// family MAC (package ath/ar9300) on the AHB at PhysWMAC (FreeBSD
// ar934xreg.h AR934X_WMAC_BASE, qca955xreg.h QCA955X_WMAC_BASE; Linux
// ath79 ar71xx_regs.h AR934X_WMAC_BASE/SIZE).
const (
	PhysWMAC = 0x1810_0000
	WMACSize = 0x2_0000
)

// WMAC interrupt demultiplexing on IP2 (CPU line CPUIRQPCI): the reset
// block's RstExtIntStatus tells the WMAC's sources from PCIe's. AR934x
// PCIE_WMAC_INT_STATUS: WMAC_MISC 0, WMAC_TX 1, WMAC_RXLP 2, WMAC_RXHP 3
// (FreeBSD ar934xreg.h, Linux irq.c ar934x_ip2_irq_dispatch); QCA955x
// EXT_INT_STATUS: the WMAC's four sources in bits 0-3 (FreeBSD
// qca955xreg.h).
const WMACIntSources = 0xF

// ErrNoWMAC: the SoC has no AR9300-family WMAC (AR71xx and AR724x have
// none; AR913x's and AR933x's are older AR9100/AR9285-class MACs that
// package ath/ar9300 does not drive).
var ErrNoWMAC = errors.New("ar71xx: no AR9300-family WMAC on this SoC")

// WMACUnit is the data a board needs to wire the WMAC.
type WMACUnit struct {
	Base, Size uint32
	// IRQ is the CPU interrupt line (IP2, shared with PCIe and told apart
	// by IntStatus).
	IRQ int
	// IntStatus is the reset-block offset of the IP2 demultiplexing
	// status, IntSources the WMAC's bits in it.
	IntStatus, IntSources uint32
	// Flush is the DDR write-buffer channel of the WMAC's DMA; FlushOnIRQ
	// says whether the channel is flushed before the WMAC's handler
	// runs (AR934x: yes, Linux irq.c ar934x_ip2_irq_dispatch flushes
	// the WMAC channel; QCA955x: Linux and OpenWrt do not, "TODO: flush
	// DDR?", and neither does gowrt until that is known).
	Flush      FlushChannel
	FlushOnIRQ bool
	// Bootstrap is the reset-block offset of BOOTSTRAP, RefClk40M its
	// bit for a 40 MHz reference clock (else 25 MHz), which the radio's
	// synthesizer programming needs (FreeBSD ar934xreg.h
	// AR934X_BOOTSTRAP_REF_CLK_40; Linux ath79 wmac.c).
	Bootstrap, RefClk40M uint32
	// There is no RESET_MODULE bit for the WMAC on these chips in the
	// sources this package follows (the AR934x/QCA955x maps list none;
	// Linux wmac.c resets only the AR913x's, bit 22, and AR933x's, 11):
	// the MAC is reset through its own RTC registers (ath/ar9300).
}

// RstBootstrap is the AR934x/QCA955x BOOTSTRAP register (FreeBSD
// ar934xreg.h, qca955xreg.h); bit 4 is the 40 MHz reference clock.
const (
	RstBootstrap      = 0xB0
	BootstrapRef40MHz = 1 << 4
)

// WMACOf returns the WMAC of a family.
func WMACOf(f Family) (WMACUnit, error) {
	u := WMACUnit{Base: PhysWMAC, Size: WMACSize, IRQ: CPUIRQPCI, IntStatus: RstExtIntStatus, IntSources: WMACIntSources,
		Flush: FlushWMAC, Bootstrap: RstBootstrap, RefClk40M: BootstrapRef40MHz}
	switch f {
	case AR934x:
		u.FlushOnIRQ = true
		return u, nil
	case QCA955x:
		return u, nil
	}
	return WMACUnit{}, fmt.Errorf("%w: %v", ErrNoWMAC, f)
}

// WMACHandler returns the handler for the IP2 line of s that runs
// handler when one of the WMAC's sources is pending (after the DDR flush
// where the chip needs one) and reports other sources (PCIe, which gowrt
// does not drive) to report.
func (s *SoC) WMACHandler(u WMACUnit, handler func(), report func(error)) (func(), error) {
	var flush func() error
	if u.FlushOnIRQ {
		f, err := s.Flusher(u.Flush)
		if err != nil {
			return nil, err
		}
		flush = f.Flush
	}
	return func() {
		st := s.r.Reset.Read32(u.IntStatus)
		if st&u.IntSources == 0 {
			if report != nil {
				report(fmt.Errorf("ar71xx: IP2 with no WMAC source pending (status %#x)", st))
			}
			return
		}
		if flush != nil {
			if err := flush(); err != nil && report != nil {
				report(err)
			}
		}
		handler()
	}, nil
}

// RefClock40MHz reports whether the SoC runs from a 40 MHz reference
// clock (BOOTSTRAP), which the WMAC's radio programming depends on.
func (s *SoC) RefClock40MHz(u WMACUnit) bool {
	return s.r.Reset.Read32(u.Bootstrap)&u.RefClk40M != 0
}
