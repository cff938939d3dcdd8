//go:build mips || mipsle

#include "textflag.h"

// HIT_LOOP(insn) runs `cache op, 0(R8)` for R8 in [start, end) step line,
// then SYNC. insn is the encoded CACHE instruction with base R8:
// 0xbc000000 | 8<<21 | op<<16.
#define HIT_LOOP(insn) \
	MOVW	start+0(FP), R8; \
	MOVW	end+4(FP), R9; \
	MOVW	line+8(FP), R10; \
	BEQ	R8, R9, done; \
loop: \
	WORD	insn; \
	ADDU	R10, R8; \
	SGTU	R9, R8, R11; \
	BNE	R11, loop; \
done: \
	SYNC; \
	RET


// mfc0 $1, $16, 1 (Config1) = 0x40018001: COP0 MF, rt=1, rd=16, sel=1.
TEXT ·readConfig1(SB),NOSPLIT|NOFRAME,$0-4
	WORD	$0x40018001
	NOP
	MOVW	R1, ret+0(FP)
	RET

// Hit_Writeback_D (op 0x19)
TEXT ·hitWriteback(SB),NOSPLIT|NOFRAME,$0-12
	HIT_LOOP($0xbd190000)

// Hit_Invalidate_D (op 0x11)
TEXT ·hitInvalidate(SB),NOSPLIT|NOFRAME,$0-12
	HIT_LOOP($0xbd110000)

// Hit_Writeback_Inv_D (op 0x15)
TEXT ·hitWritebackInv(SB),NOSPLIT|NOFRAME,$0-12
	HIT_LOOP($0xbd150000)
