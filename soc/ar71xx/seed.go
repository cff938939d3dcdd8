package ar71xx

// Boot-time seed material for the kernel's random numbers (the kernel's
// platformSeed hook on this family). The chips have no hardware random
// number generator and U-Boot passes no seed, so what Seed gathers is
// weak: timing jitter of uncached register and flash reads against the CP0
// Count register — the only part that differs from one boot to the next,
// and little of it on an in-order core whose clocks all come from one
// crystal — plus facts that differ between boards (REV_ID, the PLL
// settings) and the start of the boot flash (the boot loader and what
// follows it in the first 64 KiB, which differs between boards and loader
// versions, not between units of one model). It is mixed, not hashed:
// the kernel keys ChaCha20 with it. Firmware that needs strong keys early
// (SSH host keys) should add entropy it gathers later (network timing) or
// store a seed across boots.

// PhysBootFlash is where the CPU's boot vector (0x1FC0_0000, kseg1
// 0xBFC0_0000) reads the boot flash from offset 0 on every chip of the
// family: the CPU fetched its first instruction there, so reading it
// cannot fault (FreeBSD ar71xxreg.h / Linux ar71xx_regs.h put the SPI
// flash window at 0x1F00_0000; its size and aliasing vary, the boot
// vector's mapping does not).
const PhysBootFlash = 0x1FC0_0000

// Seed parameters: bytes of boot flash read, and timed register reads.
const (
	SeedFlashBytes    = 64 << 10
	seedJitterSamples = 512
)

// SeedSource is what Seed reads: the registers and the boot flash
// through Phys, and the CP0 Count register (on the CPU, mfc0 $9; in
// ar71xxsim, the model's bus-cycle counter).
type SeedSource interface {
	Phys
	Count() uint32
}

// seedMix accumulates words into eight 32-bit lanes.
type seedMix struct {
	s [8]uint32
	n uint32
}

//go:nosplit
func rotl32(x uint32, k uint) uint32 { return x<<(k&31) | x>>((32-k)&31) }

//go:nosplit
func (m *seedMix) add(w uint32) {
	i := m.n & 7
	m.s[i] = rotl32((m.s[i]^w)*0x9E3779B1, 13) + m.s[(i+3)&7]
	m.n++
}

// Seed mixes the board's seed material into buf (which may already hold
// a seed, kept and mixed in). A boot hook: no allocation, registers and
// flash through p only.
//
//go:nosplit
func Seed[P SeedSource](p P, buf *[32]byte) {
	var m seedMix
	for i := 0; i < 8; i++ {
		m.s[i&7] = uint32(buf[(4*i)&31])<<24 | uint32(buf[(4*i+1)&31])<<16 | uint32(buf[(4*i+2)&31])<<8 | uint32(buf[(4*i+3)&31])
	}
	m.add(p.Read32(PhysReset + RstRevID))
	m.add(p.Read32(PhysPLL + PLLCPUConfig))
	m.add(p.Read32(PhysPLL + 0x04)) // SEC_CONFIG, ETH_CONFIG or DDR_CONFIG by family
	// Jitter: Count across pairs of uncached reads.
	last := p.Count()
	for i := 0; i < seedJitterSamples; i++ {
		_ = p.Read32(PhysReset + RstRevID)
		_ = p.Read32(PhysPLL + PLLCPUConfig)
		c := p.Count()
		m.add(c - last)
		last = c
	}
	// The boot flash, timed too (the SPI controller's reads take longest).
	for off := uint32(0); off < SeedFlashBytes; off += 4 {
		m.add(p.Read32(PhysBootFlash + off))
		if off&0xFFF == 0 {
			c := p.Count()
			m.add(c - last)
			last = c
		}
	}
	m.add(p.Count())
	// Spread every input over every lane.
	for r := 0; r < 4*8; r++ {
		m.add(m.s[(r+5)&7])
	}
	for i := 0; i < 8; i++ {
		w := m.s[i&7]
		buf[(4*i)&31], buf[(4*i+1)&31], buf[(4*i+2)&31], buf[(4*i+3)&31] = byte(w>>24), byte(w>>16), byte(w>>8), byte(w)
	}
}
