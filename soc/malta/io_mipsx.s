//go:build mips || mipsle

#include "textflag.h"

// Port I/O must be real loads and stores in program order: the Go compiler
// would merge two reads of the same port (e.g. the PIT's low and high byte)
// or drop a repeated store. SYNC orders them against other memory accesses.

// func Inb(p uintptr) uint8
TEXT ·Inb(SB),NOSPLIT|NOFRAME,$0-5
	MOVW	p+0(FP), R1
	MOVW	$0xb8000000, R2
	ADDU	R2, R1
	SYNC
	MOVBU	0(R1), R3
	SYNC
	MOVB	R3, ret+4(FP)
	RET

// func Outb(p uintptr, v uint8)
TEXT ·Outb(SB),NOSPLIT|NOFRAME,$0-5
	MOVW	p+0(FP), R1
	MOVBU	v+4(FP), R3
	MOVW	$0xb8000000, R2
	ADDU	R2, R1
	SYNC
	MOVB	R3, 0(R1)
	SYNC
	RET

// func store32(a uintptr, v uint32)
TEXT ·store32(SB),NOSPLIT|NOFRAME,$0-8
	MOVW	a+0(FP), R1
	MOVW	v+4(FP), R3
	SYNC
	MOVW	R3, 0(R1)
	SYNC
	RET

// func load32(a uintptr) uint32
TEXT ·load32(SB),NOSPLIT|NOFRAME,$0-8
	MOVW	a+0(FP), R1
	SYNC
	MOVW	0(R1), R3
	SYNC
	MOVW	R3, ret+4(FP)
	RET

// func store16(a uintptr, v uint16)
TEXT ·store16(SB),NOSPLIT|NOFRAME,$0-6
	MOVW	a+0(FP), R1
	MOVHU	v+4(FP), R3
	SYNC
	MOVH	R3, 0(R1)
	SYNC
	RET

// func readCount() uint32
TEXT ·readCount(SB),NOSPLIT|NOFRAME,$0-4
	MOVW	M9, R1
	MOVW	R1, ret+0(FP)
	RET
