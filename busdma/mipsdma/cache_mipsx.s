//go:build mips || mipsle

#include "textflag.h"

// OPS128(insn, o) is the eight operations of a 128-byte step over
// 16-byte lines, at offset o from R8.
#define OPS128(insn, o) \
	WORD	insn+o; \
	WORD	insn+o+16; \
	WORD	insn+o+32; \
	WORD	insn+o+48; \
	WORD	insn+o+64; \
	WORD	insn+o+80; \
	WORD	insn+o+96; \
	WORD	insn+o+112

// HIT_LOOP(insn) runs `cache op, 0(R8)` for R8 in [start, end) step line,
// then SYNC. insn is the encoded CACHE instruction with base R8:
// 0xbc000000 | 8<<21 | op<<16, the 16-bit offset in its low bits. For
// 16-byte lines (QEMU's 24Kc and 24Kf) it covers 256 bytes per
// iteration, sixteen operations at immediate offsets, while 256 bytes are
// left, then one 128-byte step if 128 are: about 1.45 instructions a line
// instead of 5 (a 1536-byte buffer is 96 lines). For 32-byte lines (the
// 24K's and 74K's D-cache) it covers 128 bytes per iteration, four
// operations: about 2 a line. The remaining lines, and other line
// sizes, go one at a time. start and end are line-aligned, so a step
// never passes end.
#define HIT_LOOP(insn) \
	MOVW	start+0(FP), R8; \
	MOVW	end+4(FP), R9; \
	MOVW	line+8(FP), R10; \
	BEQ	R8, R9, done; \
	MOVW	$16, R12; \
	BEQ	R10, R12, by16; \
	MOVW	$32, R12; \
	BEQ	R10, R12, by32; \
	JMP	loop; \
by16: \
	ADDU	$256, R8, R12; \
	SGTU	R12, R9, R11; \
	BNE	R11, by16tail; \
	OPS128(insn, 0); \
	OPS128(insn, 128); \
	MOVW	R12, R8; \
	BNE	R8, R9, by16; \
	JMP	done; \
by16tail: \
	ADDU	$128, R8, R12; \
	SGTU	R12, R9, R11; \
	BNE	R11, loop; \
	OPS128(insn, 0); \
	MOVW	R12, R8; \
	BEQ	R8, R9, done; \
	JMP	loop; \
by32: \
	ADDU	$128, R8, R12; \
	SGTU	R12, R9, R11; \
	BNE	R11, loop; \
	WORD	insn; \
	WORD	insn+32; \
	WORD	insn+64; \
	WORD	insn+96; \
	MOVW	R12, R8; \
	BNE	R8, R9, by32; \
	JMP	done; \
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

// hitProbe is HIT_LOOP with `sb $zero, off(R8)` (opcode 0x28, base R8)
// in place of the CACHE instruction, which is privileged: run in user
// mode (qemu-mips), it zeroes the first byte of every line a loop visits,
// so TestHitLoopBounds can check that the loops cover [start, end)
// exactly, for each line size and length.
TEXT ·hitProbe(SB),NOSPLIT|NOFRAME,$0-12
	HIT_LOOP($0xa1000000)
