//go:build mips || mipsle

package malta

import _ "unsafe" // go:linkname

// The kernel's platform hooks (kernel/platform_mipsx.go has the contract:
// which run at boot and which in trap context, and what each may touch).
// Each is bound to the kernel's declaration by a push linkname; the
// signatures must match it exactly. Everything here reaches the hardware
// through constant kseg1 port addresses (Inb, Outb) and keeps no state in
// Go variables: the chips hold it.

//go:linkname platformName github.com/gowrt/gowrt/kernel.platformName
//go:nosplit
func platformName() string { return "malta" }

// platformRAM: QEMU's malta loader passes the RAM size in a3 (the YAMON
// convention; hw/mips/malta.c, load_kernel). Without it, assume what kseg0
// can reach.
//
//go:linkname platformRAM github.com/gowrt/gowrt/kernel.platformRAM
//go:nosplit
func platformRAM(a3 uint32) uint32 {
	if a3 == 0 || a3 > kseg0Reach {
		return kseg0Reach
	}
	return a3
}

// kseg0Reach is the RAM kseg0 reaches: QEMU aliases the first 256 MiB at
// physical 0 (hw/mips/malta.c).
const kseg0Reach = 256 << 20

// platformInit programs the i8259 pair with every line masked but the
// cascade (which the slave's lines need), and turns on COM1's receive
// interrupt. The pair signals on CPU pin IP2.
//
//go:linkname platformInit github.com/gowrt/gowrt/kernel.platformInit
//go:nosplit
func platformInit() uint32 {
	PICInit()
	PICSetMask(0xffff &^ (1 << IRQCascade))
	UARTEnableRX()
	return 1 << CPUIPPIC
}

//go:linkname platformIntrLines github.com/gowrt/gowrt/kernel.platformIntrLines
//go:nosplit
func platformIntrLines() (int, int, uint64) {
	return NumIRQ, IRQCOM1, 1 << IRQCascade
}

//go:linkname platformCountHz github.com/gowrt/gowrt/kernel.platformCountHz
//go:nosplit
func platformCountHz() uint32 { return CountHz() }

//go:linkname platformWallClock github.com/gowrt/gowrt/kernel.platformWallClock
//go:nosplit
func platformWallClock() int64 { return RTCUnix() }

// platformSeed adds nothing: QEMU's loader passes a seed from the host
// (rngseed in the environment), which the kernel has already put in buf.
//
//go:linkname platformSeed github.com/gowrt/gowrt/kernel.platformSeed
//go:nosplit
func platformSeed(buf *[32]byte) {}

//go:linkname platformPutc github.com/gowrt/gowrt/kernel.platformPutc
//go:nosplit
func platformPutc(c byte) { UARTPutc(c) }

//go:linkname platformGetc github.com/gowrt/gowrt/kernel.platformGetc
//go:nosplit
func platformGetc() int {
	c, ok := UARTGetc()
	if !ok {
		return -1
	}
	return int(c)
}

//go:linkname platformIntrPoll github.com/gowrt/gowrt/kernel.platformIntrPoll
//go:nosplit
func platformIntrPoll(pins uint32) int {
	if pins&(1<<CPUIPPIC) == 0 {
		return -1
	}
	return PICPoll()
}

//go:linkname platformIntrMask github.com/gowrt/gowrt/kernel.platformIntrMask
//go:nosplit
func platformIntrMask(line int) uint32 {
	PICSetMask(PICMask() | 1<<uint(line&15))
	return 0
}

//go:linkname platformIntrUnmask github.com/gowrt/gowrt/kernel.platformIntrUnmask
//go:nosplit
func platformIntrUnmask(line int) uint32 {
	PICSetMask(PICMask() &^ (1 << uint(line&15)))
	return 0
}

//go:linkname platformIntrEOI github.com/gowrt/gowrt/kernel.platformIntrEOI
//go:nosplit
func platformIntrEOI(line int) { PICEOI(line & 15) }

//go:linkname platformIntrPending github.com/gowrt/gowrt/kernel.platformIntrPending
//go:nosplit
func platformIntrPending(uint32) uint64 { return uint64(PICRequests()) }

//go:linkname platformIntrSetLevel github.com/gowrt/gowrt/kernel.platformIntrSetLevel
//go:nosplit
func platformIntrSetLevel(line int, level bool) bool {
	bit := uint16(1) << uint(line&15)
	if ELCRWritable&bit == 0 {
		return !level // edge-only line
	}
	if level {
		SetELCR(ELCR() | bit)
	} else {
		SetELCR(ELCR() &^ bit)
	}
	return true
}

//go:linkname platformReset github.com/gowrt/gowrt/kernel.platformReset
//go:nosplit
func platformReset() { Reset() }

//go:linkname platformPowerOff github.com/gowrt/gowrt/kernel.platformPowerOff
//go:nosplit
func platformPowerOff() { PowerOff() }
