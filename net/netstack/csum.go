package netstack

import (
	"encoding/binary"
	"math/bits"
	"unsafe"
)

// The Internet checksum (RFC 1071), written for 32-bit CPUs.
//
// gVisor's checksum package sums eight bytes at a time with
// math/bits.Add64, which on mips32 is emulated with 32-bit instructions:
// 129 instructions per 64 bytes in its main loop. Here halfwords are added
// into a 32-bit sum, so no carry has to be tracked until the fold: 38
// instructions per 32 bytes (mips32, go1.26). On 64-bit hosts the
// two are about as fast. The byte order independence of the sum (RFC 1071
// 1.2.B) lets the words be loaded in the CPU's order and the result
// swapped once, and a region that starts at an odd offset be summed as if
// it were even and swapped.

// littleEndian is the CPU's byte order.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// sum16 returns the one's complement sum of b, as 16-bit big-endian words
// starting at b[0] (a last odd byte is the high half of a word), folded to
// 16 bits. It is not complemented.
func sum16(b []byte) uint16 {
	var acc uint32 // big-endian words and byte halves, folded at the end
	i := 0
	for i < len(b) && uintptr(unsafe.Pointer(&b[i]))&3 != 0 {
		acc += byteInWord(b[i], i)
		i++
	}
	if n := (len(b) - i) &^ 3; n > 0 {
		w := wordSum(unsafe.Pointer(&b[i]), n)
		if littleEndian != (i&1 == 1) { // one swap undoes the other
			w = bits.ReverseBytes16(w)
		}
		acc += uint32(w)
		i += n
	}
	for ; i < len(b); i++ {
		acc += byteInWord(b[i], i)
	}
	return fold(acc)
}

// byteInWord is byte x at offset i as part of its big-endian 16-bit word.
func byteInWord(x byte, i int) uint32 {
	if i&1 == 0 {
		return uint32(x) << 8
	}
	return uint32(x)
}

// wordSum sums n bytes (a multiple of 4) from the 4-byte aligned p as
// native 16-bit words and returns the folded sum. Loading halfwords and
// adding them to a 32-bit sum is two instructions per two bytes on mips32,
// with no carries to track until the fold.
func wordSum(p unsafe.Pointer, n int) uint16 {
	var acc uint32
	for n > 0 {
		// Up to 64 KiB per block: 32 k halfwords of at most 0xffff
		// fit a uint32.
		k := min(n, 64<<10)
		var s uint32
		j := 0
		for ; j+32 <= k; j += 32 {
			q := unsafe.Add(p, j) // loads at constant offsets from q
			s += uint32(*(*uint16)(q)) + uint32(*(*uint16)(unsafe.Add(q, 2))) +
				uint32(*(*uint16)(unsafe.Add(q, 4))) + uint32(*(*uint16)(unsafe.Add(q, 6))) +
				uint32(*(*uint16)(unsafe.Add(q, 8))) + uint32(*(*uint16)(unsafe.Add(q, 10))) +
				uint32(*(*uint16)(unsafe.Add(q, 12))) + uint32(*(*uint16)(unsafe.Add(q, 14))) +
				uint32(*(*uint16)(unsafe.Add(q, 16))) + uint32(*(*uint16)(unsafe.Add(q, 18))) +
				uint32(*(*uint16)(unsafe.Add(q, 20))) + uint32(*(*uint16)(unsafe.Add(q, 22))) +
				uint32(*(*uint16)(unsafe.Add(q, 24))) + uint32(*(*uint16)(unsafe.Add(q, 26))) +
				uint32(*(*uint16)(unsafe.Add(q, 28))) + uint32(*(*uint16)(unsafe.Add(q, 30)))
		}
		for ; j < k; j += 2 {
			s += uint32(*(*uint16)(unsafe.Add(p, j)))
		}
		acc += uint32(fold(s))
		n -= k
		if n > 0 {
			p = unsafe.Add(p, k)
		}
	}
	return fold(acc)
}

// fold reduces a 32-bit one's complement accumulator to 16 bits.
func fold(x uint32) uint16 {
	x = x>>16 + x&0xffff
	x = x>>16 + x&0xffff
	return uint16(x)
}

// checksummer sums a byte stream handed over in pieces of any length.
type checksummer struct {
	acc uint32
	odd bool // an odd number of bytes so far: the next piece starts mid-word
}

func (c *checksummer) add(b []byte) {
	s := sum16(b)
	if c.odd {
		s = bits.ReverseBytes16(s)
	}
	c.acc = uint32(fold(c.acc + uint32(s)))
	c.odd = c.odd != (len(b)&1 == 1)
}

// sum returns the folded, uncomplemented sum so far.
func (c *checksummer) sum() uint16 { return fold(c.acc) }
