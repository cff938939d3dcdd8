// Package ar71xxsim models the AR71xx-family SoC blocks that drivers and
// the kernel's platform hooks depend on, on top of hwsim: the DDR
// controller's per-master write buffers and their flush registers, the
// reset block (REV_ID, RESET_MODULE, watchdog, bootstrap pins) with the
// MISC interrupt controller, the PLL block (and the AR934x's SRIF PLLs) as
// a boot loader leaves it for a given CPU clock, the GMAC configuration
// registers and the console UART. Phys puts the blocks at their physical
// addresses for the platform code in package ar71xx, with the boot flash
// window (Config.Flash) and a stand-in for the CP0 Count register whose
// uncached-access timing jitters with the model's seed (Phys.Count). The
// reset block's watchdog counts down as tests let model time pass
// (Reset.Elapse) and resets the chip at zero (Reset.WatchdogResets).
//
// Hazards reproduced:
//
//   - DDR write buffers: a DMA master's writes (packet data, descriptor
//     write-backs) wait in its channel's buffer and reach memory in any
//     order — a descriptor's completion may land before the data it
//     describes — until the channel's flush register is used or the seeded
//     scheduler drains them. A driver that reads what the device wrote
//     without flushing reads stale memory.
//   - MISC acknowledge semantics per variant: on AR724x and later a status
//     bit latches when its source fires and is cleared only by writing 0
//     to it; a line that is unmasked without that ack fires again at once,
//     forever (the AR934x hang). On AR71xx/AR913x the status follows the
//     source and writes to it are ignored, so an ack is harmless.
//   - The console UART's transmitter is busy for a while after each byte:
//     a byte written without waiting is lost (UART).
package ar71xxsim

import (
	"fmt"
	"sync"

	"github.com/gowrt/gowrt/hwsim"
	"github.com/gowrt/gowrt/soc/ar71xx"
)

const modelBlock = 0x100

// SoC is the model of one chip's SoC blocks.
type SoC struct {
	sys  *hwsim.System
	Info *ar71xx.Info

	DDR   *DDR
	Reset *Reset
	PLL   *Regs
	GMAC  *Regs
	UART  *UART
	SRIF  *Regs // AR934x only

	// Regions as the driver sees them (SRIFRegion is nil but on AR934x).
	DDRRegion, ResetRegion, PLLRegion, GMACRegion, UARTRegion, SRIFRegion *hwsim.Region

	flash []byte // the boot flash as Phys reads it

	countMu sync.Mutex
	count   uint32 // Phys.Count
	jitter  uint64 // its PRNG state, from the system's seed
}

// Config selects the chip and the model's hostility.
type Config struct {
	Rev uint32 // REV_ID value, e.g. 0x2120 for AR9344
	// NoWriteBuffer makes DMA writes reach memory at once (for tests of
	// other hazards, and to model a SoC without the problem).
	NoWriteBuffer bool
	// Clock is how the PLL block is programmed.
	Clock Clock
	// HooksTakeInterrupts: the code under test plays the kernel's trap
	// side (the platform hooks poll, mask and acknowledge the MISC
	// controller themselves), so the model only latches and reports
	// status; it neither masks lines nor wakes intr.Sources.
	HooksTakeInterrupts bool
	// Flash is the boot flash's content from offset 0 (the boot loader,
	// its environment, ART), as Phys reads it at ar71xx.PhysBootFlash;
	// beyond it the flash reads erased.
	Flash []byte
}

// New builds the SoC model on sys and maps its register blocks.
func New(sys *hwsim.System, cfg Config) (*SoC, error) {
	info, err := ar71xx.Identify(cfg.Rev)
	if err != nil {
		return nil, err
	}
	s := &SoC{sys: sys, Info: info, PLL: &Regs{}, GMAC: &Regs{}, flash: cfg.Flash, jitter: sys.Config().Seed}
	s.DDR = newDDR(sys, info, cfg.NoWriteBuffer)
	s.Reset = newReset(sys, info, cfg.Rev)
	s.Reset.hooksTake = cfg.HooksTakeInterrupts
	s.UART = newUART(sys, info, s.Reset)
	// Every register this family's drivers touch in these blocks lies
	// below 0x100; mapping less than the 64 KiB block keeps models cheap.
	s.DDRRegion = sys.Bus.Map("ddr", modelBlock, s.DDR)
	s.ResetRegion = sys.Bus.Map("reset", modelBlock, s.Reset)
	s.PLLRegion = sys.Bus.Map("pll", modelBlock, s.PLL)
	s.GMACRegion = sys.Bus.Map("gmac", modelBlock, s.GMAC)
	s.UARTRegion = sys.Bus.Map("uart", modelBlock, s.UART)
	if info.Family == ar71xx.AR934x {
		s.SRIF = &Regs{}
		s.SRIFRegion = sys.Bus.Map("srif", srifSize, s.SRIF)
	}
	if err := s.programClock(cfg.Clock); err != nil {
		return nil, err
	}
	return s, nil
}

// Regions returns the blocks for ar71xx.New / ar71xx.Probe.
func (s *SoC) Regions() ar71xx.Regions {
	return ar71xx.Regions{DDR: s.DDRRegion, PLL: s.PLLRegion, Reset: s.ResetRegion, GMAC: s.GMACRegion}
}

// Regs is a plain register file: writes are stored, reads return them.
type Regs struct {
	v      map[uint32]uint32
	Writes int
}

func (r *Regs) ReadReg(off uint32, width int) uint32 {
	return r.v[off&^3] >> (8 * (off & 3)) & mask(width)
}

func (r *Regs) WriteReg(off uint32, width int, val uint32) {
	if r.v == nil {
		r.v = make(map[uint32]uint32)
	}
	r.Writes++
	if width == 4 {
		r.v[off] = val
		return
	}
	sh := 8 * (off & 3)
	r.v[off&^3] = r.v[off&^3]&^(mask(width)<<sh) | (val&mask(width))<<sh
}

// Get returns a register's value (lock held or model quiescent).
func (r *Regs) Get(off uint32) uint32 { return r.v[off] }

// set stores a register's value as the hardware (or a boot loader) left
// it, without counting it as a driver write.
func (r *Regs) set(off, v uint32) {
	if r.v == nil {
		r.v = make(map[uint32]uint32)
	}
	r.v[off] = v
}

func mask(width int) uint32 {
	if width == 4 {
		return 0xFFFF_FFFF
	}
	return 1<<(8*uint(width)) - 1
}

// EthSpeedProgrammed reports whether Ethernet unit's clock is set for
// speed mbps, as far as the PLL/GMAC registers say. SoCs whose clock is
// fixed (AR724x, AR933x) always report true.
func (s *SoC) EthSpeedProgrammed(unit, mbps int) bool {
	want, err := s.Info.EthPLLValue(ar71xx.Speed(mbps))
	if err != nil {
		return false
	}
	switch s.Info.PLL {
	case ar71xx.PLLConfigDance:
		clk := uint32(ar71xx.PLLEthInt0Clk71xx)
		if s.Info.Family == ar71xx.AR913x {
			clk = ar71xx.PLLEthInt0Clk913x
		}
		clk += 4 * uint32(unit)
		if s.PLL.Get(clk) != want {
			return false
		}
	case ar71xx.PLLXMII:
		if unit == 0 {
			off := uint32(ar71xx.PLLEthXMII934x)
			if s.Info.Family == ar71xx.QCA955x {
				off = ar71xx.PLLEthXMII955x
			}
			if s.PLL.Get(off) != want {
				return false
			}
		}
	}
	if s.Info.MIICtrl {
		f := map[int]uint32{10: ar71xx.MIICtrlSpeed10, 100: ar71xx.MIICtrlSpeed100, 1000: ar71xx.MIICtrlSpeed1000}[mbps]
		v := s.GMAC.Get(ar71xx.MII0Ctrl + 4*uint32(unit))
		if (v&ar71xx.MIICtrlSpeedMask)>>ar71xx.MIICtrlSpeedShift != f {
			return false
		}
	}
	return true
}

func (s *SoC) String() string { return fmt.Sprintf("ar71xxsim %s", s.Info.Name) }
