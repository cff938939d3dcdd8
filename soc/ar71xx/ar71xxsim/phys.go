package ar71xxsim

import (
	"fmt"

	"github.com/gowrt/gowrt/hwsim"
	"github.com/gowrt/gowrt/soc/ar71xx"
)

// Phys is the model's register blocks at their physical addresses, as
// the CPU reaches them through kseg1: it implements ar71xx.Phys, so the
// platform code (the kernel's hooks) runs against the model. An access
// outside the mapped blocks is a bug in the code under test and panics.
type Phys struct {
	s *SoC
}

var _ ar71xx.Phys = Phys{}

// Phys returns the model's physical register space.
func (s *SoC) Phys() Phys { return Phys{s} }

func (p Phys) region(pa uint32) (*hwsim.Region, uint32) {
	s := p.s
	var r *hwsim.Region
	var base uint32
	switch {
	case pa>>16 == ar71xx.PhysDDR>>16:
		r, base = s.DDRRegion, ar71xx.PhysDDR
	case pa>>16 == ar71xx.PhysUART>>16:
		r, base = s.UARTRegion, ar71xx.PhysUART
	case pa>>16 == ar71xx.PhysPLL>>16:
		r, base = s.PLLRegion, ar71xx.PhysPLL
	case pa>>16 == ar71xx.PhysReset>>16:
		r, base = s.ResetRegion, ar71xx.PhysReset
	case pa>>16 == ar71xx.PhysGMAC>>16:
		r, base = s.GMACRegion, ar71xx.PhysGMAC
	case pa>>12 == srifBase>>12 && s.SRIFRegion != nil:
		r, base = s.SRIFRegion, srifBase
	}
	if r == nil {
		panic(fmt.Sprintf("ar71xxsim: %s: physical address %#x is not a modelled register", s.Info.Name, pa))
	}
	return r, pa - base
}

// Read32 implements ar71xx.Phys. The boot flash window at
// ar71xx.PhysBootFlash reads Config.Flash (erased, all ones, past its end).
func (p Phys) Read32(pa uint32) uint32 {
	p.tick()
	if pa>>22 == ar71xx.PhysBootFlash>>22 {
		off := int(pa & (1<<22 - 1))
		if f := p.s.flash; off+4 <= len(f) {
			return uint32(f[off])<<24 | uint32(f[off+1])<<16 | uint32(f[off+2])<<8 | uint32(f[off+3])
		}
		return 0xFFFF_FFFF
	}
	r, off := p.region(pa)
	return r.Read32(off)
}

// Write32 implements ar71xx.Phys.
func (p Phys) Write32(pa, v uint32) {
	p.tick()
	r, off := p.region(pa)
	r.Write32(off, v)
}

// Count implements ar71xx.SeedSource: the CP0 Count register as the code
// under test sees it between its accesses through Phys. The model has no
// CPU, so Count advances only with those accesses, each by an uncached
// access's latency with seeded jitter (busLatency plus up to busJitter
// ticks): the stand-in for what DDR refresh, the SPI controller and clock
// domain crossings do on the chip. Two models with different seeds see
// different timings; the same seed, the same.
func (p Phys) Count() uint32 {
	s := p.s
	s.countMu.Lock()
	defer s.countMu.Unlock()
	return s.count
}

const (
	busLatency = 20
	busJitter  = 16
)

func (p Phys) tick() {
	s := p.s
	s.countMu.Lock()
	defer s.countMu.Unlock()
	// splitmix64 (Steele, Lea, Flood: "Fast splittable pseudorandom
	// number generators", OOPSLA 2014).
	s.jitter += 0x9E3779B97F4A7C15
	z := s.jitter
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	z ^= z >> 31
	s.count += busLatency + uint32(z%busJitter)
}

// Barrier implements ar71xx.Phys.
func (p Phys) Barrier() { p.s.sys.Bus.Barrier() }
