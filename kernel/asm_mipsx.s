//go:build mips || mipsle

#include "textflag.h"
#include "go_asm.h"

// Word offsets of the halves of a 64-bit kstate field.
#ifdef GOARCH_mips
#define W64LO 4
#define W64HI 0
#else
#define W64LO 0
#define W64HI 4
#endif

// Instructions the Go assembler does not spell.
#define EHB	WORD $0x000000c0
// ERET is always EHB; ERET; NOP. The MIPS 24K has an erratum around ERET
// that wants a NOP after it (noted, with an EHB before it "from
// experience", by the ERET macro of Plan 9's MIPS 24K port, rb);
// the NOP never executes otherwise (ERET has no delay slot). The EHB
// clears the execution hazards of the CP0 writes (EPC, Status, EntryLo,
// TLBWR) that every return path makes just before, which MIPS32 Release 2
// requires before ERET uses them. ERET also clears LLbit (MIPS32 Vol. II,
// ERET; Linux only clears it by hand on MIPSr6, where it returns with
// ERETNC, asm/switch_to.h), so an LL/SC pair spanning a trap or a context
// switch always fails its SC: nothing more is needed for that on 24K/74K.
// kernel/boottest's TestEretSequence checks every ERET in a linked image.
#define ERET	EHB; WORD $0x42000018; SLLNOP
// JR.HB ra: return, clearing instruction hazards (MIPS32 Release 2), with
// its delay slot.
#define JRHB_RA	WORD $0x03e00408; SLLNOP
// SLLNOP is a real NOP (sll zero, zero, 0): the assembler's NOP is a
// pseudo-instruction that emits nothing after a WORD.
#define SLLNOP	WORD $0x00000000
#define WAIT	WORD $0x42000020
// cache op,0(R8): Hit_Writeback_Inv_D (0x15) and Hit_Invalidate_I (0x10).
#define CACHE_WBINV_D_R8	WORD $0xbd150000
#define CACHE_INV_I_R8	WORD $0xbd100000

// Fixed kseg0 words (layout_mipsx.go).
#define KBASE	0x80000000
#define CURFRAME	0x400
#define INTRAP	0x404
#define WAITWIN	0x408
#define WAITHITS	0x40c
#define NAIVEWIN	0x410
#define NAIVEHITS	0x414
#define NESTFRAME	0x80000500
#define KSTATE	0x80005000
#define KSTACKTOP	0x80080000
#define NESTSTACKTOP	0x80048000

// Entry is the ELF entry point. QEMU's malta loader (and U-Boot's go) call it
// in kernel mode with interrupts off and BEV set; a0-a3 carry the board's
// arguments. It runs boot on the kernel stack with R30 pointing at the fake
// kernel g, then enters the Go runtime's own entry with a Linux-style stack.
TEXT ·Entry(SB),NOSPLIT|NOFRAME,$0
	MOVW	$0x00400000, R1	// Status: BEV only; IE, EXL, ERL clear
	MOVW	R1, M12
	EHB
	// Caches: kseg0 write-back, whatever the loader left (setCacheK0).
	MOVW	$·setCacheK0(SB), R1
	OR	$0x20000000, R1	// its kseg1 (uncached) alias
	JAL	(R1)
	MOVW	$KSTACKTOP, R29
	ADDU	$-32, R29
	MOVW	$KSTATE, g
	MOVW	R4, 4(R29)
	MOVW	R5, 8(R29)
	MOVW	R6, 12(R29)
	MOVW	R7, 16(R29)
	MOVW	R2, 20(R29)	// the loader's Config
	JAL	·boot(SB)
	MOVW	24(R29), R8	// initial stack
	MOVW	28(R29), R9	// Status to run the program with
	MOVW	R8, R29
	MOVW	R0, g
	MOVW	R9, M12
	EHB
#ifdef GOARCH_mips
	JMP	_rt0_mips_linux(SB)
#else
	JMP	_rt0_mipsle_linux(SB)
#endif

// setCacheK0 sets CP0 Config.K0, the cache coherency attribute of kseg0,
// to 3 (cacheable, noncoherent, write-back: MIPS32 Vol. III, Config and
// Table "Cache Coherency Attributes") and returns the loader's Config in
// R2. Boot loaders differ, and a kernel that trusts what it finds runs
// as the loader left it (QEMU resets K0 to 2, uncached, and its malta
// loader leaves it so: the selftest's cache check sees it), so the kernel
// sets it itself. Entry calls it through its kseg1 alias: the CPU then
// fetches uncached while kseg0's attribute changes, so no fetch from kseg0
// is in flight across the change (the architecture leaves that case to
// the implementation), and JR.HB back to kseg0 clears the instruction
// hazard of the CP0 write (MIPS32 Release 2: EHB for the execution hazard,
// JR.HB for instruction fetch). Uncached -> write-back needs no cache
// maintenance: nothing was cached through kseg0; write-back from
// write-through or write-back leaves memory and caches consistent. Only
// R1-R3 are used (R4-R7 hold the loader's arguments).
TEXT ·setCacheK0(SB),NOSPLIT|NOFRAME,$0
	MOVW	M16, R2	// Config (select 0)
	MOVW	$-8, R3
	AND	R2, R3
	OR	$3, R3	// K0 = 3
	MOVW	R3, M16
	EHB
	JRHB_RA

// tlbRefill is reached from the refill vector. It uses only k0/k1: two loads
// through the page directory (every slot points at a page-table page, the
// shared all-invalid one when nothing is mapped there), then writes the
// even/odd pair. Invalid entries make the retried access raise TLBL/TLBS,
// which the general handler resolves (demand-zero) or turns into SIGSEGV.
TEXT ·tlbRefill(SB),NOSPLIT|NOFRAME,$0
	MOVW	M8, R26	// BadVAddr
	SRL	$22, R26
	SLL	$2, R26
	MOVW	$KBASE, R27
	ADDU	R26, R27
	MOVW	0x1000(R27), R27	// page-table page (kseg0)
	MOVW	M8, R26
	SRL	$10, R26
	AND	$0xff8, R26	// even/odd pair offset
	ADDU	R26, R27
	MOVW	0(R27), R26
	MOVW	4(R27), R27
	SLL	$2, R26	// drop the software bits 31:30
	SRL	$2, R26
	SLL	$2, R27
	SRL	$2, R27
	MOVW	R26, M2	// EntryLo0
	MOVW	R27, M3	// EntryLo1
	EHB
	TLBWR
	ERET

// trapEntry is reached from the general exception vector. It saves the
// interrupted context into the current frame, switches to the kernel stack
// and calls trap; trap may change the current frame (a context switch).
TEXT ·trapEntry(SB),NOSPLIT|NOFRAME,$0
	// Idle window: an interrupt taken between the idle loop's "interrupts
	// on" and its WAIT resumes after the WAIT, so it cannot sleep through
	// the work the interrupt just made runnable.
	MOVW	M14, R26
	OR	$15, R26
	XOR	$15, R26
	MOVW	$KBASE, R27
	MOVW	WAITWIN(R27), R27
	BNE	R26, R27, notwin
	ADDU	$16, R26
	MOVW	R26, M14
	MOVW	$KBASE, R27
	MOVW	WAITHITS(R27), R26
	ADDU	$1, R26
	MOVW	R26, WAITHITS(R27)
	JMP	save
notwin:
	MOVW	$KBASE, R27
	MOVW	NAIVEWIN(R27), R27
	BNE	R26, R27, save
	// Naive window (tests): count only interrupts that can lose a
	// wake-up, those taken after the loop found no work (its R7 is the
	// flag it read); with work seen its branch leaves before the WAIT.
	BNE	R7, R0, save
	MOVW	$KBASE, R27
	MOVW	NAIVEHITS(R27), R26
	ADDU	$1, R26
	MOVW	R26, NAIVEHITS(R27)
save:
	MOVW	$KBASE, R26
	MOVW	INTRAP(R26), R27
	BNE	R27, nested

	// Fast path: clock_gettime(CLOCK_REALTIME or CLOCK_MONOTONIC, ts), the
	// runtime's hottest system call (no vDSO on mips32), answered without
	// saving the frame or running Go. It computes what mono()/wall() in
	// clock_mipsx.go do and falls back to the full path whenever anything
	// is unusual (tracing, a timespec not yet paged in or crossing a page,
	// a clock base more than a quarter second old).
	MOVW	M13, R27
	AND	$0x7c, R27
	XOR	$0x20, R27	// ExcCode 8: system call
	BNE	R27, slow
	MOVW	$4263, R27
	BNE	R2, R27, slow
	SRL	$1, R4, R27	// clock 0 or 1
	BNE	R27, slow
	AND	$3, R5, R27	// word-aligned timespec
	BNE	R27, slow
	MOVW	R8, 0x480(R26)
	MOVW	R9, 0x484(R26)
	MOVW	R10, 0x488(R26)
	MOVW	R11, 0x48c(R26)
	MOVW	R12, 0x490(R26)
	MOVW	R13, 0x494(R26)
	MOVW	HI, R8
	MOVW	R8, 0x498(R26)
	MOVW	LO, R8
	MOVW	R8, 0x49c(R26)
	MOVW	$KSTATE, R8
	MOVW	kstate_flags(R8), R9
	AND	$1, R9	// kfTrace: show it on the slow path
	BNE	R9, fastout
	// Translate the timespec address: kseg0/kseg1 as is, else through the
	// page table (present and writable only).
	SRL	$30, R5, R9
	MOVW	$2, R10
	MOVW	R5, R11
	BEQ	R9, R10, xlated
	SRL	$30, R5, R9
	MOVW	$3, R10
	BEQ	R9, R10, fastout	// kseg2/3 never hold a timespec the runtime passes; be safe
	SRL	$22, R5, R9
	SLL	$2, R9
	ADDU	R26, R9
	MOVW	0x1000(R9), R9	// page-table page
	SRL	$10, R5, R10
	AND	$0xffc, R10
	ADDU	R10, R9
	MOVW	0(R9), R9	// PTE
	AND	$6, R9, R10
	MOVW	$6, R11
	BNE	R10, R11, fastout	// need V and D
	AND	$0xfff, R5, R10
	ADDU	$8, R10, R11
	SRL	$12, R11
	BNE	R11, fastout	// crosses the page end
	SRL	$6, R9
	SLL	$12, R9
	OR	R10, R9
	OR	R26, R9, R11	// kseg0 address of the timespec
xlated:
	// Extend Count to 64 bits (ticks() in clock_mipsx.go).
	MOVW	M9, R9
	MOVW	kstate_lastCount(R8), R10
	SGTU	R10, R9, R12	// wrapped: lastCount > Count
	MOVW	kstate_countHi(R8), R13
	ADDU	R12, R13
	MOVW	R13, kstate_countHi(R8)
	MOVW	R9, kstate_lastCount(R8)
	// d = ticks - baseTicks; only a small d is handled here.
	MOVW	kstate_baseTicks+W64LO(R8), R10
	SGTU	R10, R9, R12	// borrow
	SUBU	R10, R9	// R9 = d low
	MOVW	kstate_baseTicks+W64HI(R8), R10
	SUBU	R10, R13
	SUBU	R12, R13	// R13 = d high
	BNE	R13, fastout
	MOVW	kstate_countHz(R8), R10
	SRL	$2, R10
	SGTU	R9, R10, R12	// d > countHz/4: let mono() move the base
	BNE	R12, fastout
	// nsec = baseNsec + d*mult24>>24, sec = baseSec
	MOVW	kstate_mult24(R8), R10
	MULU	R9, R10
	MOVW	HI, R12
	MOVW	LO, R13
	SLL	$8, R12
	SRL	$24, R13
	OR	R12, R13
	MOVW	kstate_baseNsec(R8), R12
	ADDU	R12, R13	// nsec
	MOVW	kstate_baseSec+W64LO(R8), R12	// sec
	MOVW	$1000000000, R10
norm1:
	SGTU	R10, R13, R9	// 1e9 > nsec: done
	BNE	R9, norm1done
	SUBU	R10, R13
	ADDU	$1, R12
	JMP	norm1
norm1done:
	BNE	R4, stored	// CLOCK_MONOTONIC
	MOVW	kstate_wallNsec(R8), R9
	ADDU	R9, R13
	MOVW	kstate_wallSec+W64LO(R8), R9
	ADDU	R9, R12
	SGTU	R10, R13, R9
	BNE	R9, stored
	SUBU	R10, R13
	ADDU	$1, R12
stored:
	MOVW	R12, 0(R11)
	MOVW	R13, 4(R11)
	MOVW	(kstate_stats+kstats_syscalls)(R8), R9
	ADDU	$1, R9
	MOVW	R9, (kstate_stats+kstats_syscalls)(R8)
	MOVW	R0, R2
	MOVW	R0, R7
	MOVW	M14, R9
	ADDU	$4, R9
	MOVW	R9, M14
	MOVW	0x498(R26), R8
	MOVW	R8, HI
	MOVW	0x49c(R26), R8
	MOVW	R8, LO
	MOVW	0x480(R26), R8
	MOVW	0x484(R26), R9
	MOVW	0x488(R26), R10
	MOVW	0x48c(R26), R11
	MOVW	0x490(R26), R12
	MOVW	0x494(R26), R13
	ERET
fastout:
	MOVW	0x498(R26), R8
	MOVW	R8, HI
	MOVW	0x49c(R26), R8
	MOVW	R8, LO
	MOVW	0x480(R26), R8
	MOVW	0x484(R26), R9
	MOVW	0x488(R26), R10
	MOVW	0x48c(R26), R11
	MOVW	0x490(R26), R12
	MOVW	0x494(R26), R13
slow:
	MOVW	CURFRAME(R26), R26
	MOVW	R1, 4(R26)
	MOVW	R2, 8(R26)
	MOVW	R3, 12(R26)
	MOVW	R4, 16(R26)
	MOVW	R5, 20(R26)
	MOVW	R6, 24(R26)
	MOVW	R7, 28(R26)
	MOVW	R8, 32(R26)
	MOVW	R9, 36(R26)
	MOVW	R10, 40(R26)
	MOVW	R11, 44(R26)
	MOVW	R12, 48(R26)
	MOVW	R13, 52(R26)
	MOVW	R14, 56(R26)
	MOVW	R15, 60(R26)
	MOVW	R16, 64(R26)
	MOVW	R17, 68(R26)
	MOVW	R18, 72(R26)
	MOVW	R19, 76(R26)
	MOVW	R20, 80(R26)
	MOVW	R21, 84(R26)
	MOVW	R22, 88(R26)
	MOVW	R23, 92(R26)
	MOVW	R24, 96(R26)
	MOVW	R25, 100(R26)
	MOVW	R28, 112(R26)
	MOVW	R29, 116(R26)
	MOVW	g, 120(R26)
	MOVW	R31, 124(R26)
	MOVW	HI, R1
	MOVW	R1, 128(R26)
	MOVW	LO, R1
	MOVW	R1, 132(R26)
	MOVW	M14, R1
	MOVW	R1, 136(R26)
	MOVW	M12, R1
	MOVW	R1, 140(R26)
	MOVW	M13, R1
	MOVW	R1, 144(R26)
	MOVW	M8, R1
	MOVW	R1, 148(R26)
	MOVW	$KBASE, R27
	MOVW	$1, R1
	MOVW	R1, INTRAP(R27)
	MOVW	$KSTACKTOP, R29
	ADDU	$-16, R29
	MOVW	$KSTATE, g
	JAL	·trap(SB)
	MOVW	$KBASE, R26
	MOVW	CURFRAME(R26), R26
	MOVW	128(R26), R1
	MOVW	R1, HI
	MOVW	132(R26), R1
	MOVW	R1, LO
	MOVW	136(R26), R1
	MOVW	R1, M14
	MOVW	140(R26), R1
	MOVW	R1, M12
	MOVW	4(R26), R1
	MOVW	8(R26), R2
	MOVW	12(R26), R3
	MOVW	16(R26), R4
	MOVW	20(R26), R5
	MOVW	24(R26), R6
	MOVW	28(R26), R7
	MOVW	32(R26), R8
	MOVW	36(R26), R9
	MOVW	40(R26), R10
	MOVW	44(R26), R11
	MOVW	48(R26), R12
	MOVW	52(R26), R13
	MOVW	56(R26), R14
	MOVW	60(R26), R15
	MOVW	64(R26), R16
	MOVW	68(R26), R17
	MOVW	72(R26), R18
	MOVW	76(R26), R19
	MOVW	80(R26), R20
	MOVW	84(R26), R21
	MOVW	88(R26), R22
	MOVW	92(R26), R23
	MOVW	96(R26), R24
	MOVW	100(R26), R25
	MOVW	112(R26), R28
	MOVW	116(R26), R29
	MOVW	120(R26), g
	MOVW	124(R26), R31
	MOVW	$KBASE, R27
	MOVW	R0, INTRAP(R27)
	ERET

nested:
	// An exception while the kernel itself was running (EXL was set, so
	// EPC still describes the outer trap). Save what we can and stop.
	MOVW	$NESTFRAME, R26
	MOVW	R1, 4(R26)
	MOVW	R2, 8(R26)
	MOVW	R3, 12(R26)
	MOVW	R4, 16(R26)
	MOVW	R5, 20(R26)
	MOVW	R6, 24(R26)
	MOVW	R7, 28(R26)
	MOVW	R29, 116(R26)
	MOVW	R31, 124(R26)
	MOVW	M14, R1
	MOVW	R1, 136(R26)
	MOVW	M12, R1
	MOVW	R1, 140(R26)
	MOVW	M13, R1
	MOVW	R1, 144(R26)
	MOVW	M8, R1
	MOVW	R1, 148(R26)
	MOVW	$NESTSTACKTOP, R29
	ADDU	$-16, R29
	MOVW	$KSTATE, g
	JAL	·nestedFault(SB)
	JMP	0(PC)

// sigreturnTramp is the return address of every delivered signal handler
// (Go on mips sets no SA_RESTORER).
TEXT ·sigreturnTramp(SB),NOSPLIT|NOFRAME,$0
	MOVW	$4193, R2
	SYSCALL
	JMP	0(PC)

// func addrs() (refill, general, sigret uintptr)
TEXT ·addrs(SB),NOSPLIT|NOFRAME,$0-12
	MOVW	$·tlbRefill(SB), R1
	MOVW	R1, refill+0(FP)
	MOVW	$·trapEntry(SB), R1
	MOVW	R1, general+4(FP)
	MOVW	$·sigreturnTramp(SB), R1
	MOVW	R1, sigret+8(FP)
	RET

TEXT ·readCount(SB),NOSPLIT|NOFRAME,$0-4
	MOVW	M9, R1
	MOVW	R1, ret+0(FP)
	RET

TEXT ·writeCompare(SB),NOSPLIT|NOFRAME,$0-4
	MOVW	v+0(FP), R1
	MOVW	R1, M11
	EHB
	RET

TEXT ·readStatus(SB),NOSPLIT|NOFRAME,$0-4
	MOVW	M12, R1
	MOVW	R1, ret+0(FP)
	RET

TEXT ·writeStatus(SB),NOSPLIT|NOFRAME,$0-4
	MOVW	v+0(FP), R1
	MOVW	R1, M12
	EHB
	RET

TEXT ·readCause(SB),NOSPLIT|NOFRAME,$0-4
	MOVW	M13, R1
	MOVW	R1, ret+0(FP)
	RET

TEXT ·writeCause(SB),NOSPLIT|NOFRAME,$0-4
	MOVW	v+0(FP), R1
	MOVW	R1, M13
	EHB
	RET

// func tlbInit(entries uint32): Wired=0, PageMask=4K, every entry invalid
// with a distinct kseg0 EntryHi that can never match.
TEXT ·tlbInit(SB),NOSPLIT|NOFRAME,$0-4
	MOVW	R0, M6	// Wired
	MOVW	R0, M5	// PageMask
	MOVW	R0, M2
	MOVW	R0, M3
	MOVW	n+0(FP), R2
	MOVW	R0, R3
	MOVW	$KBASE, R4
loop:
	MOVW	R3, M0	// Index
	SLL	$13, R3, R5
	ADDU	R4, R5
	MOVW	R5, M10	// EntryHi
	EHB
	TLBWI
	ADDU	$1, R3
	BNE	R3, R2, loop
	MOVW	R0, M10	// ASID 0
	EHB
	RET

// func tlbInvalidate(va uintptr): drop the entry pair mapping va, if any.
TEXT ·tlbInvalidate(SB),NOSPLIT|NOFRAME,$0-4
	MOVW	va+0(FP), R1
	MOVW	$-8192, R2
	AND	R2, R1	// VPN2, ASID 0
	MOVW	R1, M10
	EHB
	TLBP
	EHB
	MOVW	M0, R3
	BLTZ	R3, done
	SLL	$13, R3, R4
	MOVW	$KBASE, R5
	ADDU	R5, R4
	MOVW	R4, M10
	MOVW	R0, M2
	MOVW	R0, M3
	EHB
	TLBWI
	EHB
done:
	MOVW	R0, M10
	EHB
	RET

// func syncICache(addr, n uintptr): write back the D-cache and invalidate
// the I-cache over [addr, addr+n) (16-byte steps, at most the smallest line).
TEXT ·syncICache(SB),NOSPLIT|NOFRAME,$0-8
	MOVW	addr+0(FP), R8
	MOVW	n+4(FP), R9
	ADDU	R8, R9
	MOVW	$-16, R1
	AND	R1, R8
loop:
	CACHE_WBINV_D_R8
	CACHE_INV_I_R8
	ADDU	$16, R8
	SGTU	R9, R8, R1
	BNE	R1, loop
	SYNC
	RET

// func waitForever(): interrupts off, WAIT forever.
TEXT ·waitForever(SB),NOSPLIT|NOFRAME,$0
	MOVW	M12, R1
	MOVW	$-2, R2
	AND	R2, R1
	MOVW	R1, M12
	EHB
loop:
	WAIT
	JMP	loop

// func readConfig() uint32: CP0 Config, select 0.
TEXT ·readConfig(SB),NOSPLIT|NOFRAME,$0-4
	MOVW	M16, R1
	MOVW	R1, ret+0(FP)
	RET

// func dcacheWbInv(addr, n uintptr): write back and invalidate the D-cache
// over [addr, addr+n) (16-byte steps, at most the smallest line).
TEXT ·dcacheWbInv(SB),NOSPLIT|NOFRAME,$0-8
	MOVW	addr+0(FP), R8
	MOVW	n+4(FP), R9
	ADDU	R8, R9
	MOVW	$-16, R1
	AND	R1, R8
wbloop:
	CACHE_WBINV_D_R8
	ADDU	$16, R8
	SGTU	R9, R8, R1
	BNE	R1, wbloop
	SYNC
	RET

// func readConfig1() uint32 (mfc0 at, $16, 1)
TEXT ·readConfig1(SB),NOSPLIT|NOFRAME,$0-4
	WORD	$0x40018001
	MOVW	R1, ret+0(FP)
	RET

// func imageEnd() uintptr: end of the program's BSS (runtime.end).
TEXT ·bssEnd(SB),NOSPLIT|NOFRAME,$0-4
	MOVW	$runtime·end(SB), R1
	MOVW	R1, ret+0(FP)
	RET

// func fastMono() (sec, nsec uint32, ok bool)
//
// CLOCK_MONOTONIC without a system call, for code running on the kernel
// (every thread runs in kernel mode): the clock_gettime fast path above,
// with interrupts off instead of inside a trap. It touches only registers
// and kseg0 (no TLB miss, no exception can enter the kernel meanwhile) and
// reports !ok where the fast path would take the slow one.
TEXT ·fastMono(SB),NOSPLIT|NOFRAME,$0-9
	MOVW	M12, R10	// Status
	MOVW	$-2, R11
	AND	R10, R11
	MOVW	R11, M12	// interrupts off
	EHB
	MOVW	$KSTATE, R8
	MOVW	M9, R9	// Count
	MOVW	kstate_lastCount(R8), R12
	SGTU	R12, R9, R13	// wrapped: lastCount > Count
	MOVW	kstate_countHi(R8), R14
	ADDU	R13, R14
	MOVW	R14, kstate_countHi(R8)
	MOVW	R9, kstate_lastCount(R8)
	MOVW	kstate_baseTicks+W64LO(R8), R12
	SGTU	R12, R9, R13	// borrow
	SUBU	R12, R9	// R9 = d low
	MOVW	kstate_baseTicks+W64HI(R8), R12
	SUBU	R12, R14
	SUBU	R13, R14	// R14 = d high
	BNE	R14, monoslow
	MOVW	kstate_countHz(R8), R12
	SRL	$2, R12
	SGTU	R9, R12, R13	// d > countHz/4: the base must move (slow path)
	BNE	R13, monoslow
	MOVW	kstate_mult24(R8), R12
	MULU	R9, R12
	MOVW	HI, R13
	MOVW	LO, R15
	SLL	$8, R13
	SRL	$24, R15
	OR	R13, R15
	MOVW	kstate_baseNsec(R8), R13
	ADDU	R13, R15	// nsec
	MOVW	kstate_baseSec+W64LO(R8), R16	// sec
	MOVW	$1000000000, R12
mononorm:
	SGTU	R12, R15, R13	// 1e9 > nsec: done
	BNE	R13, monodone
	SUBU	R12, R15
	ADDU	$1, R16
	JMP	mononorm
monodone:
	MOVW	R10, M12	// interrupts as they were
	EHB
	MOVW	R16, sec+0(FP)
	MOVW	R15, nsec+4(FP)
	MOVW	$1, R13
	MOVB	R13, ok+8(FP)
	RET
monoslow:
	MOVW	R10, M12
	EHB
	MOVB	R0, ok+8(FP)
	RET

// func atomicXadd64PC() uintptr
TEXT ·atomicXadd64PC(SB),NOSPLIT|NOFRAME,$0-4
	MOVW	$internal∕runtime∕atomic·Xadd64(SB), R1
	MOVW	R1, ret+0(FP)
	RET
