//go:build mips || mipsle

package kernel

// Platform hooks: what the kernel needs from the board it runs on. The
// kernel declares them without bodies; the SoC package of the board being
// built defines them, binding each with a push linkname, e.g.
//
//	//go:linkname putc github.com/gowrt/gowrt/kernel.platformPutc
//	//go:nosplit
//	func putc(c byte) { ... }
//
// (TamaGo binds its runtime's board hooks the same way.) A function table
// would be data, and the kernel keeps its state out of the program's data
// segment. The linker resolves the names; it does not check signatures,
// so a provider must copy each signature exactly (TestPlatformHookSignatures
// in this package compares every provider in the module with this file).
// An image that links no provider fails to link, naming each missing hook:
//
//	relocation target github.com/gowrt/gowrt/kernel.platformPutc not defined
//
// Two contexts, two sets of rules:
//
//   - Boot hooks run once, from boot, before the program's data segment is
//     mapped and before any trap can be taken (interrupts off, BEV set, on
//     the kernel stack, no Go runtime yet). They may loop and divide, but
//     may touch only constants (kseg1 register addresses), their arguments
//     and their stack: a Go global would fault, and nothing can handle the
//     fault yet. They must not allocate or panic.
//   - Trap hooks run in trap context (EXL set, interrupts off, kernel
//     stack) and also at boot. On top of the boot rules: nosplit, no
//     write barriers, no unbounded loops; kernel/boottest's discipline test
//     walks them in the linked image like the kernel's own trap code.
//     Every poll loop must be bounded, so a dead device cannot hang the
//     kernel.
//
// Interrupt lines: the root interrupt controller has N lines (N <= 64),
// numbered as the platform chooses; the kernel hands them to goroutines
// (intr.Source) by number. Lines the controller masks itself are masked
// by the platform; lines that are CPU interrupt pins can only be masked in
// CP0 Status, which the kernel owns: Mask and Unmask return the pins the
// kernel must (un)mask for such a line. Pin sets are bit n = CPU interrupt
// pin IPn (Cause/Status bit 8+n). IP7 is the CP0 timer, the kernel's own.
//
// Not hooks: cache geometry (the CPU's Config1 register), the TLB size
// (Config1) and the Count/Compare timer itself (CP0), which are the same on
// every MIPS32 board; and the boot arguments, which follow the MIPS
// firmware convention (argc, argv, envp in a0-a2; YAMON and QEMU's malta
// loader, U-Boot's MIPS bootm).

// platformName returns the board's name, as kernel.Info reports it
// (at most 16 bytes are kept). Boot.
func platformName() string

// platformRAM returns the bytes of RAM reachable through kseg0 (at most
// 256 MiB), given the loader's fourth argument (a3), which QEMU's malta
// loader sets to the RAM size. Boot.
func platformRAM(a3 uint32) uint32

// platformInit brings the interrupt controllers to a known state (every
// line masked, latched requests cleared), turns on the console's receive
// interrupt, and returns the CPU pins the root controller signals on.
// Boot.
func platformInit() (pins uint32)

// platformIntrLines describes the root controller: its number of lines,
// the console's receive line (-1: none; the kernel never hands it out and
// drains the console when it fires), and lines the kernel must leave
// alone (a cascade). Boot.
func platformIntrLines() (lines int, console int, reserved uint64)

// platformCountHz returns the CP0 Count frequency in Hz, computed from the
// clock configuration or measured against a reference; 0 stops the boot.
// Boot.
func platformCountHz() uint32

// platformWallClock returns the time of day in seconds since 1970-01-01
// UTC from a battery-backed clock, or 0 if the board has none (the clock
// then starts at the epoch). Boot.
func platformWallClock() int64

// platformSeed mixes the board's seed material for the kernel's random
// numbers into buf, which holds the loader's seed (QEMU's rngseed) if it
// passed one: what the board can read at boot that differs between boards
// and between boots (timing jitter, chip revision, flash contents). A
// board whose loader passes a good seed may leave buf alone. Boot.
//
//go:noescape
func platformSeed(buf *[32]byte)

// platformPutc transmits one byte on the console, polling (bounded) for
// room. It must work before platformInit. Trap.
func platformPutc(c byte)

// platformGetc returns a byte the console received, or -1. Trap.
func platformGetc() int

// platformIntrPoll returns a pending, unmasked line of the root controller
// and claims it (what an interrupt-acknowledge cycle does), or -1. pins
// are the root controller's CPU pins that are pending and enabled. Trap.
func platformIntrPoll(pins uint32) int

// platformIntrMask masks line and returns the CPU pins the kernel must
// mask for it (0 if the controller masked it). Trap.
func platformIntrMask(line int) (pins uint32)

// platformIntrUnmask unmasks line and returns the CPU pins the kernel must
// unmask for it. Trap.
func platformIntrUnmask(line int) (pins uint32)

// platformIntrEOI ends the controller's service of line and clears a
// latched request for it. The kernel calls it when it has taken the line
// (after masking it) and again when the line's handler acknowledges it
// (intr.Controller.Ack, for controllers whose requests latch), so it must
// be harmless for a line that is not in service. Trap.
func platformIntrEOI(line int)

// platformIntrPending returns the controller's raw request bits, one per
// line, given the CPU pins pending in Cause. Trap.
func platformIntrPending(pins uint32) uint64

// platformIntrSetLevel selects level (true) or edge triggering for line
// and reports whether the controller can do it. Trap.
func platformIntrSetLevel(line int, level bool) bool

// platformReset resets the board; under QEMU with -no-reboot it ends the
// emulator. The kernel halts if it returns. Trap.
func platformReset()

// platformPowerOff turns the board off where it can; the kernel halts if
// it returns (a router that cannot switch itself off). Trap.
func platformPowerOff()
