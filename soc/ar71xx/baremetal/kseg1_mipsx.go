//go:build mips || mipsle

package baremetal

import "github.com/gowrt/gowrt/soc/ar71xx"

// kseg1 is ar71xx.Phys on the CPU: physical addresses through the
// uncached kseg1 window, each access a real load or store (mmio_mipsx.s),
// SYNC as the barrier.
type kseg1 struct{}

var _ ar71xx.SeedSource = kseg1{}

const kseg1Base = 0xA000_0000

//go:nosplit
func (kseg1) Read32(pa uint32) uint32 { return load32(kseg1Base | uintptr(pa)) }

//go:nosplit
func (kseg1) Write32(pa, v uint32) { store32(kseg1Base|uintptr(pa), v) }

//go:nosplit
func (kseg1) Barrier() { sync() }

// Count is the CP0 Count register (ar71xx.SeedSource).
//
//go:nosplit
func (kseg1) Count() uint32 { return count() }

// Implemented in mmio_mipsx.s: the Go compiler would merge or drop
// repeated plain loads and stores of the same address.
func load32(a uintptr) uint32
func store32(a uintptr, v uint32)
func sync()
func count() uint32
