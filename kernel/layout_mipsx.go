//go:build mips || mipsle

package kernel

import "unsafe"

// Fixed kseg0 layout below the image (physical 0x00000000-0x000fffff). All
// kernel state lives here so that trap-context code never touches a
// TLB-mapped address by accident. The offsets marked "asm" are also used by
// asm_mipsx.s; TestLayoutMatchesAsm keeps them in step.
const (
	kseg0     = 0x80000000
	kseg1     = 0xa0000000
	kseg2     = 0xc0000000 // TLB-mapped kernel segment: the program's data+BSS (-D)
	pageSize  = 4096
	pageShift = 12

	vecRefill  = kseg0 + 0x000 // TLB refill vector (EXL=0, BEV=0)
	vecGeneral = kseg0 + 0x180 // general exception vector
	vecIntr    = kseg0 + 0x200 // interrupt vector when Cause.IV=1

	curFrameAddr  = kseg0 + 0x400  // asm: pointer to the running context's frame
	inTrapAddr    = kseg0 + 0x404  // asm: nonzero while the trap handler runs
	waitWinAddr   = kseg0 + 0x408  // asm: 16-byte idle window whose interrupts skip the WAIT
	waitHitsAddr  = kseg0 + 0x40c  // asm: interrupts taken inside that window
	naiveWinAddr  = kseg0 + 0x410  // asm: window that is only counted (naive idle, for tests)
	naiveHitsAddr = kseg0 + 0x414  // asm: interrupts taken inside the naive window after the loop found no work
	nestFrameAddr = kseg0 + 0x500  // asm: registers of a nested (kernel) fault, 40 words
	pgdAddr       = kseg0 + 0x1000 // asm: page directory, 1024 entries x 4 MiB
	// 0x2000-0x303f holds QEMU's argv/env blob; read once at boot.
	zeroPTEAddr = kseg0 + 0x4000   // an all-invalid page-table page
	kstateAddr  = kseg0 + 0x5000   // struct kstate (fits below kstackBase)
	kstackBase  = kseg0 + 0x40000  // kernel trap stack, 256 KiB
	kstackTop   = kseg0 + 0x80000  // asm
	ustackTop   = kseg0 + 0x100000 // initial Linux stack for m0 (runtime takes 64 KiB below it)
	ustackBase  = kseg0 + 0x80000
	imageBase   = kseg0 + 0x100000 // ELF headers, then text (-T 0x80101000)
	// m0StackSize is the part of the initial stack kept below ustackTop:
	// the runtime makes m0's g0 stack the 64 KiB below the initial stack
	// pointer (runtime/asm_mipsx.s, rt0_go), which sits under the
	// argument strings buildStack copies there (under 4 KiB); the rest
	// of [ustackBase, ustackTop) goes to the frame pool.
	m0StackSize = 96 << 10
)

// kernelAreaFree reports whether the frame at physical address pa, in the
// kernel's first megabyte, is free for the frame pool: the space between
// the kernel state and the page holding the idle loop's stack (just below
// kstackBase), and the initial stack's space below m0StackSize.
//
//go:nosplit
func kernelAreaFree(pa uintptr) bool {
	kstateEnd := (kstateAddr - kseg0 + unsafe.Sizeof(kstate{}) + pageSize - 1) &^ (pageSize - 1)
	return pa >= kstateEnd && pa < kstackBase-kseg0-pageSize ||
		pa >= ustackBase-kseg0 && pa < ustackTop-kseg0-m0StackSize
}

// Saved register frame, 40 words: R0..R31, then these.
const (
	fHI = 32 + iota
	fLO
	fEPC
	fStatus
	fCause
	fBadVAddr
	frameWords = 40
)

type frame [frameWords]uint32

// fakeG is what R30 points at while kernel Go code runs: the first four words
// of a runtime g (stack.lo, stack.hi, stackguard0, stackguard1). Kernel code
// is nosplit, so the guard is only a backstop.
type fakeG [16]uint32

func mem32(addr uintptr) *uint32 { return (*uint32)(unsafe.Add(nil, addr)) }

// ks returns the kernel state. It is a fixed kseg0 address, not a Go
// variable, so trap code never touches the TLB-mapped data segment.
//
//go:nosplit
func ks() *kstate { return (*kstate)(unsafePointer(kstateAddr)) }

// Compile-time check that kstate fits below the kernel stack.
var _ [kstackBase - kstateAddr - unsafe.Sizeof(kstate{})]byte

//go:nosplit
func uintptrOf(f *frame) uintptr { return uintptr(unsafe.Pointer(f)) }

//go:nosplit
func uintptrOfInfo(i *Info) uintptr { return uintptr(unsafe.Pointer(i)) }

//go:nosplit
func unsafePointer(addr uintptr) unsafe.Pointer { return unsafe.Add(nil, addr) }
