package ar71xxsim

import (
	"fmt"

	"github.com/gowrt/gowrt/soc/ar71xx"
)

// ClockSource is where the model's boot loader left the CPU clock.
type ClockSource uint8

const (
	FromCPUPLL ClockSource = iota // the CPU PLL (the usual setting)
	FromDDRPLL                    // AR934x/QCA955x: the DDR PLL
	FromSRIF                      // AR934x: the SRIF block's CPU DPLL
	Bypass                        // AR933x/AR934x/QCA955x: the reference clock itself
)

// Clock is how the model's PLL block is programmed at power-on, as a boot
// loader leaves it.
type Clock struct {
	// CPUHz is the CPU clock; 0 picks the chip's usual rate (AR7161 680
	// MHz, AR913x/AR724x/AR933x 400 MHz, AR934x 560 MHz, QCA955x 720 MHz).
	CPUHz uint32
	// RefHz is the reference crystal, 25 or 40 MHz (AR933x, AR934x,
	// QCA955x; the others use 40 MHz); 0 means 40 MHz.
	RefHz  uint32
	Source ClockSource
}

// The model's own facts about the PLL block (Linux
// arch/mips/include/asm/mach-ath79/ar71xx_regs.h, arch/mips/ath79/clock.c;
// FreeBSD sys/mips/atheros/*_chip.c).
const (
	pllCPUConfig = 0x00
	pllDDRConfig = 0x04
	pllClkCtrl   = 0x08 // AR933x CLOCK_CTRL, AR934x CPU_DDR_CLK_CTRL, QCA955x CLK_CTRL

	srifBase     = 0x1811_6000 // AR934x SRIF block
	srifSize     = 0x300
	srifCPUDPLL1 = 0x1C0
	srifCPUDPLL2 = 0x1C4
	srifLocalPLL = 1 << 30

	bootstrap933x = 0xAC // reset block; bit 0: 40 MHz reference
	bootstrap934x = 0xB0 // reset block; bit 4: 40 MHz reference
)

func defaultCPUHz(f ar71xx.Family) uint32 {
	switch f {
	case ar71xx.AR71xx:
		return 680_000_000
	case ar71xx.AR934x:
		return 560_000_000
	case ar71xx.QCA955x:
		return 720_000_000
	}
	return 400_000_000
}

// programClock writes the PLL (and SRIF and bootstrap) registers for c and
// sets the watchdog's rate: the AHB clock, which the model's boot loader
// runs at CPU/2 on AR71xx, AR913x and AR724x (AHB_DIV 0) and at the PLL
// output on AR933x (AHB_DIV 0, and CPU_DIV 0 makes that the CPU clock),
// or the reference clock on AR934x and QCA955x (Linux
// arch/mips/ath79/clock.c, the "wdt" clock).
func (s *SoC) programClock(c Clock) error {
	if err := s.programPLL(c); err != nil {
		return err
	}
	if c.CPUHz == 0 {
		c.CPUHz = defaultCPUHz(s.Info.Family)
	}
	if c.RefHz == 0 {
		c.RefHz = 40_000_000
	}
	switch s.Info.Family {
	case ar71xx.AR71xx, ar71xx.AR913x, ar71xx.AR724x:
		s.Reset.wdtHz = c.CPUHz / 2
	case ar71xx.AR933x:
		s.Reset.wdtHz = c.CPUHz
		if c.Source == Bypass {
			s.Reset.wdtHz = c.RefHz
		}
	default:
		s.Reset.wdtHz = c.RefHz
	}
	return nil
}

func (s *SoC) programPLL(c Clock) error {
	f := s.Info.Family
	if c.CPUHz == 0 {
		c.CPUHz = defaultCPUHz(f)
	}
	if c.RefHz == 0 {
		c.RefHz = 40_000_000
	}
	bad := func(why string) error {
		return fmt.Errorf("ar71xxsim: %s: %d Hz CPU clock from %d Hz: %s", s.Info.Name, c.CPUHz, c.RefHz, why)
	}
	if c.RefHz != 25_000_000 && c.RefHz != 40_000_000 {
		return bad("the reference is 25 or 40 MHz")
	}
	switch f {
	case ar71xx.AR71xx, ar71xx.AR913x, ar71xx.AR724x:
		if c.Source != FromCPUPLL || c.RefHz != 40_000_000 {
			return bad("this chip's CPU clock comes from its PLL on a 40 MHz reference")
		}
	}
	switch f {
	case ar71xx.AR71xx:
		// PLL = (FB+1) x 40 MHz (FB in bits 7:3); CPU = PLL / (CPU_DIV+1)
		// (bits 17:16). DDR and AHB dividers: PLL/2 and CPU/2.
		for div := uint32(1); div <= 4; div++ {
			pll := c.CPUHz * div
			if pll%40_000_000 == 0 && pll/40_000_000 >= 1 && pll/40_000_000 <= 32 {
				fb := pll/40_000_000 - 1
				s.PLL.set(pllCPUConfig, fb<<3|(div-1)<<16|1<<18)
				return nil
			}
		}
		return bad("not (FB+1) x 40 MHz / (1..4)")
	case ar71xx.AR913x, ar71xx.AR724x:
		// CPU = 40 MHz x FB (bits 9:0) / (REF_DIV (bits 13:10) x 2); the
		// model's boot loader uses REF_DIV 2.
		if c.CPUHz%10_000_000 != 0 || c.CPUHz/10_000_000 > 0x3FF {
			return bad("not a multiple of 10 MHz")
		}
		s.PLL.set(pllCPUConfig, c.CPUHz/10_000_000|2<<10)
	case ar71xx.AR933x:
		// CPU = ref / REFDIV (bits 20:16) x NINT (bits 15:10) >> OUTDIV
		// (bits 25:23) / (CPU_DIV (CLOCK_CTRL bits 6:5) + 1); BYPASS is
		// CLOCK_CTRL bit 2. REFDIV 1, OUTDIV 1.
		if c.RefHz == 40_000_000 {
			s.Reset.regs.set(bootstrap933x, 1)
		}
		if c.Source == Bypass {
			s.PLL.set(pllClkCtrl, 1<<2)
			return nil
		}
		if c.Source != FromCPUPLL {
			return bad("AR933x has one CPU PLL")
		}
		nint := 2 * uint64(c.CPUHz) / uint64(c.RefHz)
		if nint*uint64(c.RefHz) != 2*uint64(c.CPUHz) || nint > 0x3F {
			return bad("not ref x NINT / 2")
		}
		s.PLL.set(pllCPUConfig, uint32(nint)<<10|1<<16|1<<23)
	case ar71xx.AR934x, ar71xx.QCA955x:
		// A PLL runs at ref / REFDIV x (NINT + NFRAC / 2^bits) >> OUTDIV;
		// CPU_PLL_CONFIG: NFRAC 5:0, NINT 11:6, REFDIV 16:12, OUTDIV 20:19;
		// DDR_PLL_CONFIG: NFRAC 9:0, NINT 15:10, REFDIV 20:16, OUTDIV
		// 25:23; SRIF DPLL1: NFRAC 17:0, NINT 26:18, REFDIV 31:27, DPLL2:
		// LOCAL_PLL bit 30, OUTDIV 15:13. The clock control register
		// holds the bypass (bit 2), the CPU post divider (9:5, left 0)
		// and the PLL select (bit 20): set for the CPU PLL on AR934x, set
		// for the DDR PLL on QCA955x.
		if c.RefHz == 40_000_000 {
			s.Reset.regs.set(bootstrap934x, 1<<4)
		}
		nint := c.CPUHz / c.RefHz
		rem := uint64(c.CPUHz % c.RefHz)
		qca := f == ar71xx.QCA955x
		var sel uint32
		switch c.Source {
		case Bypass:
			s.PLL.set(pllClkCtrl, 1<<2)
			return nil
		case FromCPUPLL:
			if nint > 0x3F {
				return bad("NINT out of range")
			}
			s.PLL.set(pllCPUConfig, uint32(rem*64/uint64(c.RefHz))|nint<<6|1<<12)
			if !qca {
				sel = 1 << 20
			}
		case FromDDRPLL:
			if nint > 0x3F {
				return bad("NINT out of range")
			}
			s.PLL.set(pllDDRConfig, uint32(rem*1024/uint64(c.RefHz))|nint<<10|1<<16)
			// A CPU PLL at another rate: reading the wrong PLL shows.
			s.PLL.set(pllCPUConfig, (nint/2)<<6|1<<12)
			if qca {
				sel = 1 << 20
			}
		case FromSRIF:
			if qca {
				return bad("QCA955x has no SRIF PLLs")
			}
			s.SRIF.set(srifCPUDPLL1, 1<<27|nint<<18|uint32(rem<<18/uint64(c.RefHz)))
			s.SRIF.set(srifCPUDPLL2, srifLocalPLL)
			// CPU_PLL_CONFIG at another rate: ignoring the SRIF shows.
			s.PLL.set(pllCPUConfig, (nint/2)<<6|1<<12)
			sel = 1 << 20
		}
		s.PLL.set(pllClkCtrl, sel)
	default:
		return bad("no clock model")
	}
	return nil
}
