// Package inetsum computes the Internet checksum (RFC 1071), written for
// 32-bit CPUs: alone (Sum, Checksummer) or while copying (CopySum), for
// the stack's own checksums and for drivers that complete a checksum as
// they copy a frame (net.CapTxChecksumCopy).
package inetsum

import (
	"encoding/binary"
	"math/bits"
	"unsafe"
)

// gVisor's checksum package sums eight bytes at a time with
// math/bits.Add64, which on mips32 is emulated with 32-bit instructions:
// 129 instructions per 64 bytes in its main loop. On mips32 the word
// loops here are assembly that adds each word into the CPU's 64-bit
// multiply accumulator (sum_mipsx.go): 18 instructions per 32 bytes
// summed, 26 per 32 bytes copied and summed (the compiled Go loops, kept
// for other CPUs in sum_other.go, took 38 and 47 on mips32, go1.26). On
// 64-bit hosts the compiled loops and gVisor's are about as fast. The
// byte order independence of the sum (RFC 1071 1.2.B) lets the words be
// loaded in the CPU's order and the result swapped once, and a region
// that starts at an odd offset be summed as if it were even and swapped.

// LittleEndian is the CPU's byte order.
var LittleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// Sum returns the one's complement sum of b, as 16-bit big-endian words
// starting at b[0] (a last odd byte is the high half of a word), folded to
// 16 bits. It is not complemented.
func Sum(b []byte) uint16 {
	var acc uint32 // big-endian words and byte halves, folded at the end
	i := 0
	for i < len(b) && uintptr(unsafe.Pointer(&b[i]))&3 != 0 {
		acc += byteInWord(b[i], i)
		i++
	}
	if n := (len(b) - i) &^ 3; n > 0 {
		w := wordSum(unsafe.Pointer(&b[i]), n)
		if LittleEndian != (i&1 == 1) { // one swap undoes the other
			w = bits.ReverseBytes16(w)
		}
		acc += uint32(w)
		i += n
	}
	for ; i < len(b); i++ {
		acc += byteInWord(b[i], i)
	}
	return Fold(acc)
}

// byteInWord is byte x at offset i as part of its big-endian 16-bit word.
func byteInWord(x byte, i int) uint32 {
	if i&1 == 0 {
		return uint32(x) << 8
	}
	return uint32(x)
}

// Fold reduces a 32-bit one's complement accumulator to 16 bits.
func Fold(x uint32) uint16 {
	x = x>>16 + x&0xffff
	x = x>>16 + x&0xffff
	return uint16(x)
}

// A Checksummer sums a byte stream handed over in pieces of any length.
type Checksummer struct {
	acc uint32
	odd bool // an odd number of bytes so far: the next piece starts mid-word
}

func (c *Checksummer) Add(b []byte) {
	s := Sum(b)
	if c.odd {
		s = bits.ReverseBytes16(s)
	}
	c.acc = uint32(Fold(c.acc + uint32(s)))
	c.odd = c.odd != (len(b)&1 == 1)
}

// Sum returns the folded, uncomplemented sum so far.
func (c *Checksummer) Sum() uint16 { return Fold(c.acc) }

// CopySum copies src into dst, which must be as long, and returns what
// Sum(src) would: the copy and the sum read each word once. Whole words
// are stored to dst once it is word-aligned; when src is aligned
// differently, each is loaded in two halves (copyWordSumUnaligned).
func CopySum(dst, src []byte) uint16 {
	n := len(src)
	if n == 0 {
		return 0
	}
	dst = dst[:n]
	sp, dp := unsafe.Pointer(&src[0]), unsafe.Pointer(&dst[0])
	var acc uint32
	i := 0
	for i < n && (uintptr(dp)+uintptr(i))&3 != 0 {
		dst[i] = src[i]
		acc += byteInWord(src[i], i)
		i++
	}
	if k := (n - i) &^ 3; k > 0 {
		var w uint16
		if (uintptr(sp)^uintptr(dp))&3 == 0 {
			w = copyWordSum(unsafe.Add(dp, i), unsafe.Add(sp, i), k)
		} else {
			w = copyWordSumUnaligned(unsafe.Add(dp, i), unsafe.Add(sp, i), k)
		}
		if LittleEndian != (i&1 == 1) { // one swap undoes the other
			w = bits.ReverseBytes16(w)
		}
		acc += uint32(w)
		i += k
	}
	for ; i < n; i++ {
		dst[i] = src[i]
		acc += byteInWord(src[i], i)
	}
	return Fold(acc)
}

// CopyGather copies the segments, in order, into dst, which must hold
// them, and returns the bytes copied and the sum of those from offset
// start of the frame on (Sum(dst[start:n])): each byte past start is
// read once, by CopySum. The bytes before start are copied plainly.
func CopyGather(dst []byte, segs [][]byte, start int) (int, uint16) {
	n := 0
	var acc uint32 // one folded sum per segment: no overflow below 64 Ki of them
	for _, s := range segs {
		if n+len(s) <= start {
			n += copy(dst[n:], s)
			continue
		}
		if n < start {
			k := copy(dst[n:], s[:start-n])
			n += k
			s = s[k:]
		}
		p := CopySum(dst[n:n+len(s)], s)
		if (n-start)&1 == 1 { // the segment starts mid-word
			p = bits.ReverseBytes16(p)
		}
		acc += uint32(p)
		n += len(s)
	}
	return n, Fold(acc)
}

// SumGather returns the sum of the segments' bytes from offset start of
// the frame they make on.
func SumGather(segs [][]byte, start int) uint16 {
	n := 0
	var acc uint32
	for _, s := range segs {
		if n+len(s) <= start {
			n += len(s)
			continue
		}
		if n < start {
			s = s[start-n:]
			n = start
		}
		p := Sum(s)
		if (n-start)&1 == 1 {
			p = bits.ReverseBytes16(p)
		}
		acc += uint32(p)
		n += len(s)
	}
	return Fold(acc)
}

// Checksum returns the checksum field's value for a sum over everything
// it covers, the field's seed included: the sum's complement, with 0 sent
// as 0xffff (the same in one's complement; UDP reserves 0 for "none",
// RFC 768).
func Checksum(sum uint16) uint16 {
	if c := ^sum; c != 0 {
		return c
	}
	return 0xffff
}
