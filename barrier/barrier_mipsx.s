//go:build mips || mipsle

#include "textflag.h"

// SYNC with stype 0: completion barrier (MIPS32 Architecture Vol. II, SYNC).
TEXT ·full(SB),NOSPLIT|NOFRAME,$0-0
	SYNC
	RET

TEXT ·read(SB),NOSPLIT|NOFRAME,$0-0
	SYNC
	RET

TEXT ·write(SB),NOSPLIT|NOFRAME,$0-0
	SYNC
	RET

// EHB = sll $0,$0,3 (0x000000c0); a NOP on pre-R2 cores.
TEXT ·hazard(SB),NOSPLIT|NOFRAME,$0-0
	WORD	$0x000000c0
	RET
