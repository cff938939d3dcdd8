//go:build mips || mipsle

package baremetal

import (
	_ "unsafe" // go:linkname

	"github.com/gowrt/gowrt/soc/ar71xx"
)

// The kernel's platform hooks, bound to its declarations by push
// linknames; the signatures must match kernel/platform_mipsx.go exactly.
// Boot hooks: platformName, platformRAM, platformInit, platformIntrLines,
// platformCountHz, platformWallClock, platformSeed; the rest run in trap
// context.

//go:linkname platformName github.com/gowrt/gowrt/kernel.platformName
//go:nosplit
func platformName() string {
	return ar71xx.ChipName(kseg1{}.Read32(ar71xx.PhysReset + ar71xx.RstRevID))
}

// imageProbe is the physical address of the image's ELF headers and text
// (kernel/layout_mipsx.go, imageBase), which RAMSize compares with their
// aliases.
const imageProbe = 0x0010_0000

// platformRAM ignores a3: U-Boot's bootelf does not set it.
//
//go:linkname platformRAM github.com/gowrt/gowrt/kernel.platformRAM
//go:nosplit
func platformRAM(uint32) uint32 { return ar71xx.RAMSize(kseg1{}, imageProbe) }

//go:linkname platformInit github.com/gowrt/gowrt/kernel.platformInit
//go:nosplit
func platformInit() uint32 {
	ar71xx.IntrInit(kseg1{})
	ar71xx.ConsoleEnableRX(kseg1{})
	return ar71xx.RootPins
}

//go:linkname platformIntrLines github.com/gowrt/gowrt/kernel.platformIntrLines
//go:nosplit
func platformIntrLines() (int, int, uint64) { return ar71xx.IntrLines, ar71xx.MiscUART, 0 }

//go:linkname platformCountHz github.com/gowrt/gowrt/kernel.platformCountHz
//go:nosplit
func platformCountHz() uint32 { return ar71xx.CountHz(kseg1{}) }

//go:linkname platformWallClock github.com/gowrt/gowrt/kernel.platformWallClock
//go:nosplit
func platformWallClock() int64 { return 0 }

// platformSeed: U-Boot passes no seed; ar71xx.Seed gathers boot timing
// jitter, REV_ID, the PLL settings and the first 64 KiB of the boot flash
// (weak: see its comment).
//
//go:linkname platformSeed github.com/gowrt/gowrt/kernel.platformSeed
//go:nosplit
func platformSeed(buf *[32]byte) { ar71xx.Seed(kseg1{}, buf) }

//go:linkname platformPutc github.com/gowrt/gowrt/kernel.platformPutc
//go:nosplit
func platformPutc(c byte) { ar71xx.ConsolePutc(kseg1{}, c) }

//go:linkname platformGetc github.com/gowrt/gowrt/kernel.platformGetc
//go:nosplit
func platformGetc() int { return ar71xx.ConsoleGetc(kseg1{}) }

//go:linkname platformIntrPoll github.com/gowrt/gowrt/kernel.platformIntrPoll
//go:nosplit
func platformIntrPoll(pins uint32) int { return ar71xx.IntrPoll(kseg1{}, pins) }

//go:linkname platformIntrMask github.com/gowrt/gowrt/kernel.platformIntrMask
//go:nosplit
func platformIntrMask(line int) uint32 { return ar71xx.IntrMask(kseg1{}, line) }

//go:linkname platformIntrUnmask github.com/gowrt/gowrt/kernel.platformIntrUnmask
//go:nosplit
func platformIntrUnmask(line int) uint32 { return ar71xx.IntrUnmask(kseg1{}, line) }

//go:linkname platformIntrEOI github.com/gowrt/gowrt/kernel.platformIntrEOI
//go:nosplit
func platformIntrEOI(line int) { ar71xx.IntrEOI(kseg1{}, line) }

//go:linkname platformIntrPending github.com/gowrt/gowrt/kernel.platformIntrPending
//go:nosplit
func platformIntrPending(pins uint32) uint64 { return ar71xx.IntrPending(kseg1{}, pins) }

// platformIntrSetLevel: every line is level-triggered (the MISC sources
// are level outputs of on-chip blocks; the CPU pins are level inputs).
//
//go:linkname platformIntrSetLevel github.com/gowrt/gowrt/kernel.platformIntrSetLevel
//go:nosplit
func platformIntrSetLevel(line int, level bool) bool { return level }

//go:linkname platformReset github.com/gowrt/gowrt/kernel.platformReset
//go:nosplit
func platformReset() { ar71xx.ChipReset(kseg1{}) }

// platformPowerOff: a router cannot switch itself off; the kernel halts.
//
//go:linkname platformPowerOff github.com/gowrt/gowrt/kernel.platformPowerOff
//go:nosplit
func platformPowerOff() {}
