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

// The loops work on 32-byte blocks in R8-R15, at offset o from R2 (and
// to R1).
#define LOAD8(o) \
	MOVW	o+0(R2), R8 \
	MOVW	o+4(R2), R9 \
	MOVW	o+8(R2), R10 \
	MOVW	o+12(R2), R11 \
	MOVW	o+16(R2), R12 \
	MOVW	o+20(R2), R13 \
	MOVW	o+24(R2), R14 \
	MOVW	o+28(R2), R15

#define LOADU8(o) \
	LOADU(o+0, R8) \
	LOADU(o+4, R9) \
	LOADU(o+8, R10) \
	LOADU(o+12, R11) \
	LOADU(o+16, R12) \
	LOADU(o+20, R13) \
	LOADU(o+24, R14) \
	LOADU(o+28, R15)

#define STORE8(o) \
	MOVW	R8, o+0(R1) \
	MOVW	R9, o+4(R1) \
	MOVW	R10, o+8(R1) \
	MOVW	R11, o+12(R1) \
	MOVW	R12, o+16(R1) \
	MOVW	R13, o+20(R1) \
	MOVW	R14, o+24(R1) \
	MOVW	R15, o+28(R1)

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
// multiplier 1, R5 the end, R4 the end of the whole 32-byte blocks, R6
// the end of the whole 64-byte ones. The loops take 64 bytes an
// iteration, then a 32-byte block if one is left, then words: the loop's
// own instructions (two pointer steps, the branch and its delay slot's
// NOP) cost 4 per 64 bytes rather than per 32 (28 instructions per 32
// bytes copied and summed became 26).
#define BOUNDS \
	MOVW	$1, R24 \
	MOVW	R0, HI \
	MOVW	R0, LO \
	ADDU	R2, R3, R5 \
	AND	$~31, R3, R4 \
	ADDU	R2, R4 \
	AND	$~63, R3, R6 \
	ADDU	R2, R6

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
	BEQ	R2, R6, sum_block
sum_blocks:
	LOAD8(0)
	SUM8
	LOAD8(32)
	SUM8
	ADDU	$64, R2
	BNE	R2, R6, sum_blocks
sum_block:
	BEQ	R2, R4, sum_words
	LOAD8(0)
	SUM8
	ADDU	$32, R2
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
	BEQ	R2, R6, copy_block
copy_blocks:
	LOAD8(0)
	STORE8(0)
	SUM8
	LOAD8(32)
	STORE8(32)
	SUM8
	ADDU	$64, R2
	ADDU	$64, R1
	BNE	R2, R6, copy_blocks
copy_block:
	BEQ	R2, R4, copy_words
	LOAD8(0)
	STORE8(0)
	SUM8
	ADDU	$32, R2
	ADDU	$32, R1
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
	BEQ	R2, R6, ucopy_block
ucopy_blocks:
	LOADU8(0)
	STORE8(0)
	SUM8
	LOADU8(32)
	STORE8(32)
	SUM8
	ADDU	$64, R2
	ADDU	$64, R1
	BNE	R2, R6, ucopy_blocks
ucopy_block:
	BEQ	R2, R4, ucopy_words
	LOADU8(0)
	STORE8(0)
	SUM8
	ADDU	$32, R2
	ADDU	$32, R1
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
