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

// Read32 implements ar71xx.Phys.
func (p Phys) Read32(pa uint32) uint32 {
	r, off := p.region(pa)
	return r.Read32(off)
}

// Write32 implements ar71xx.Phys.
func (p Phys) Write32(pa, v uint32) {
	r, off := p.region(pa)
	r.Write32(off, v)
}

// Barrier implements ar71xx.Phys.
func (p Phys) Barrier() { p.s.sys.Bus.Barrier() }
