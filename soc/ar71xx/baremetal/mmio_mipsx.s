//go:build mips || mipsle

#include "textflag.h"

// func load32(a uintptr) uint32
TEXT ·load32(SB),NOSPLIT|NOFRAME,$0-8
	MOVW	a+0(FP), R1
	MOVW	0(R1), R2
	MOVW	R2, ret+4(FP)
	RET

// func store32(a uintptr, v uint32)
TEXT ·store32(SB),NOSPLIT|NOFRAME,$0-8
	MOVW	a+0(FP), R1
	MOVW	v+4(FP), R2
	MOVW	R2, 0(R1)
	RET

// func sync()
TEXT ·sync(SB),NOSPLIT|NOFRAME,$0-0
	SYNC
	RET

// func count() uint32: CP0 Count (mfc0 $9).
TEXT ·count(SB),NOSPLIT|NOFRAME,$0-4
	MOVW	M9, R1
	MOVW	R1, ret+0(FP)
	RET
