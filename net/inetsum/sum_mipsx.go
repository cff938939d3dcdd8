//go:build mips || mipsle

package inetsum

import "unsafe"

// On mips32 the word loops are in assembly (sum_mipsx.s) for one
// instruction the Go compiler does not emit: MADDU, which adds the
// product of two registers into the 64-bit HI:LO accumulator. Multiplying
// each word by 1 adds it whole into a 64-bit sum, the carries out of the
// low word collecting in the high one (RFC 1071 1.2.C): one instruction
// per word, where the compiled loop took three (add, set-on-carry, add
// the carry). MADDU is in every MIPS32 release (MIPS32 Architecture for
// Programmers Volume II, "MADDU"); the kernel keeps HI and LO across
// interrupts and signals, as compiled code's multiplies need.

// wordSum sums n bytes (a multiple of 4) from the 4-byte aligned p as
// native 16-bit words and returns the folded sum: a load and a MADDU per
// word.
//
//go:noescape
func wordSum(p unsafe.Pointer, n int) uint16

// copyWordSum copies n bytes (a multiple of 4) from the 4-byte aligned s
// to the 4-byte aligned d and returns their sum as native 16-bit words,
// folded: a load, a store and a MADDU per word.
//
//go:noescape
func copyWordSum(d, s unsafe.Pointer, n int) uint16

// copyWordSumUnaligned is copyWordSum for an s of any alignment (d is
// 4-byte aligned): each word is loaded in two halves (LWL and LWR, the
// unaligned load pair), stored whole and added as stored: a copy that
// went through memmove's unaligned loop, then a second pass to sum,
// read every byte twice.
//
//go:noescape
func copyWordSumUnaligned(d, s unsafe.Pointer, n int) uint16
