//go:build mips || mipsle

#include "textflag.h"

// MADDU rs, $24: HI:LO += rs * R24 (R24 holds 1). The Go assembler has
// no MADDU, so it is emitted by its encoding: SPECIAL2 (opcode 0x1c),
// function 0x01 (MIPS32 Architecture for Programmers Volume II, MADDU).
#define MADDU24(rs) WORD $(0x70000001 | (rs)<<21 | 24<<16)

// LOADU(off, r) loads the word at off(R2), of any alignment, into r:
// LWL takes the bytes from the address to the end of its aligned word
// into the register's most significant end, LWR the rest into its least
// significant end; which address holds the most significant byte is
// the byte order's choice (MIPS32 Architecture for Programmers Volume
// II, LWL and LWR).
#ifdef GOARCH_mips
#define LOADU(off, r) MOVWL off(R2), r; MOVWR off+3(R2), r
#else
#define LOADU(off, r) MOVWR off(R2), r; MOVWL off+3(R2), r
#endif

// The loops work on 32-byte blocks in R8-R15, from R2 (and to R1).
#define LOAD8 \
	MOVW	0(R2), R8 \
	MOVW	4(R2), R9 \
	MOVW	8(R2), R10 \
	MOVW	12(R2), R11 \
	MOVW	16(R2), R12 \
	MOVW	20(R2), R13 \
	MOVW	24(R2), R14 \
	MOVW	28(R2), R15

#define LOADU8 \
	LOADU(0, R8) \
	LOADU(4, R9) \
	LOADU(8, R10) \
	LOADU(12, R11) \
	LOADU(16, R12) \
	LOADU(20, R13) \
	LOADU(24, R14) \
	LOADU(28, R15)

#define STORE8 \
	MOVW	R8, 0(R1) \
	MOVW	R9, 4(R1) \
	MOVW	R10, 8(R1) \
	MOVW	R11, 12(R1) \
	MOVW	R12, 16(R1) \
	MOVW	R13, 20(R1) \
	MOVW	R14, 24(R1) \
	MOVW	R15, 28(R1)

#define SUM8 \
	MADDU24(8) \
	MADDU24(9) \
	MADDU24(10) \
	MADDU24(11) \
	MADDU24(12) \
	MADDU24(13) \
	MADDU24(14) \
	MADDU24(15)

// BOUNDS sets up a loop over R3 bytes from R2: HI:LO zero, R24 the
// multiplier 1, R5 the end, R4 the end of the whole 32-byte blocks.
#define BOUNDS \
	MOVW	$1, R24 \
	MOVW	R0, HI \
	MOVW	R0, LO \
	ADDU	R2, R3, R5 \
	AND	$~31, R3, R4 \
	ADDU	R2, R4

// FOLD turns HI:LO into the folded 16-bit sum in R10: the high word
// added back into the low one with its own carry, then two 16-bit folds.
#define FOLD \
	MOVW	HI, R8 \
	MOVW	LO, R9 \
	ADDU	R8, R9, R10 \
	SGTU	R8, R10, R11 \
	ADDU	R11, R10 \
	AND	$0xffff, R10, R11 \
	SRL	$16, R10 \
	ADDU	R11, R10 \
	AND	$0xffff, R10, R11 \
	SRL	$16, R10 \
	ADDU	R11, R10

// func wordSum(p unsafe.Pointer, n int) uint16
TEXT ·wordSum(SB),NOSPLIT|NOFRAME,$0-10
	MOVW	p+0(FP), R2
	MOVW	n+4(FP), R3
	BOUNDS
	BEQ	R2, R4, sum_words
sum_blocks:
	LOAD8
	SUM8
	ADDU	$32, R2
	BNE	R2, R4, sum_blocks
sum_words:
	BEQ	R2, R5, sum_done
	MOVW	0(R2), R8
	MADDU24(8)
	ADDU	$4, R2
	JMP	sum_words
sum_done:
	FOLD
	MOVH	R10, ret+8(FP)
	RET

// func copyWordSum(d, s unsafe.Pointer, n int) uint16
TEXT ·copyWordSum(SB),NOSPLIT|NOFRAME,$0-14
	MOVW	d+0(FP), R1
	MOVW	s+4(FP), R2
	MOVW	n+8(FP), R3
	BOUNDS
	BEQ	R2, R4, copy_words
copy_blocks:
	LOAD8
	STORE8
	SUM8
	ADDU	$32, R2
	ADDU	$32, R1
	BNE	R2, R4, copy_blocks
copy_words:
	BEQ	R2, R5, copy_done
	MOVW	0(R2), R8
	MOVW	R8, 0(R1)
	MADDU24(8)
	ADDU	$4, R2
	ADDU	$4, R1
	JMP	copy_words
copy_done:
	FOLD
	MOVH	R10, ret+12(FP)
	RET

// func copyWordSumUnaligned(d, s unsafe.Pointer, n int) uint16
TEXT ·copyWordSumUnaligned(SB),NOSPLIT|NOFRAME,$0-14
	MOVW	d+0(FP), R1
	MOVW	s+4(FP), R2
	MOVW	n+8(FP), R3
	BOUNDS
	BEQ	R2, R4, ucopy_words
ucopy_blocks:
	LOADU8
	STORE8
	SUM8
	ADDU	$32, R2
	ADDU	$32, R1
	BNE	R2, R4, ucopy_blocks
ucopy_words:
	BEQ	R2, R5, ucopy_done
	LOADU(0, R8)
	MOVW	R8, 0(R1)
	MADDU24(8)
	ADDU	$4, R2
	ADDU	$4, R1
	JMP	ucopy_words
ucopy_done:
	FOLD
	MOVH	R10, ret+12(FP)
	RET
