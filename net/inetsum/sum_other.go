//go:build !(mips || mipsle)

package inetsum

import "unsafe"

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
		acc += uint32(Fold(s))
		n -= k
		if n > 0 {
			p = unsafe.Add(p, k)
		}
	}
	return Fold(acc)
}

// copyWordSum copies n bytes (a multiple of 4) from the 4-byte aligned s
// to the 4-byte aligned d and returns their sum as native 16-bit words,
// folded. The words are added whole into a 64-bit sum (RFC 1071 1.2.C:
// the carries out of the low word are the high word, added back at the
// fold): on mips32 a load, a store and three instructions per word.
func copyWordSum(d, s unsafe.Pointer, n int) uint16 {
	var acc uint64
	j := 0
	for ; j+32 <= n; j += 32 {
		q, r := unsafe.Add(s, j), unsafe.Add(d, j) // constant offsets from q and r
		w0, w1, w2, w3 := *(*uint32)(q), *(*uint32)(unsafe.Add(q, 4)), *(*uint32)(unsafe.Add(q, 8)), *(*uint32)(unsafe.Add(q, 12))
		w4, w5, w6, w7 := *(*uint32)(unsafe.Add(q, 16)), *(*uint32)(unsafe.Add(q, 20)), *(*uint32)(unsafe.Add(q, 24)), *(*uint32)(unsafe.Add(q, 28))
		*(*uint32)(r), *(*uint32)(unsafe.Add(r, 4)), *(*uint32)(unsafe.Add(r, 8)), *(*uint32)(unsafe.Add(r, 12)) = w0, w1, w2, w3
		*(*uint32)(unsafe.Add(r, 16)), *(*uint32)(unsafe.Add(r, 20)), *(*uint32)(unsafe.Add(r, 24)), *(*uint32)(unsafe.Add(r, 28)) = w4, w5, w6, w7
		acc += uint64(w0)
		acc += uint64(w1)
		acc += uint64(w2)
		acc += uint64(w3)
		acc += uint64(w4)
		acc += uint64(w5)
		acc += uint64(w6)
		acc += uint64(w7)
	}
	for ; j < n; j += 4 {
		w := *(*uint32)(unsafe.Add(s, j))
		*(*uint32)(unsafe.Add(d, j)) = w
		acc += uint64(w)
	}
	// Fold 64 bits to 16: each step's carry comes back in the next.
	x := uint32(acc) + uint32(acc>>32)
	if x < uint32(acc>>32) {
		x++
	}
	return fold32(x)
}

// fold32 reduces a 32-bit one's complement sum with no carry pending
// (every bit counts) to 16 bits.
func fold32(x uint32) uint16 {
	y := x&0xffff + x>>16
	y = y&0xffff + y>>16
	return uint16(y)
}

// copyWordSumUnaligned is copyWordSum for an s of any alignment (d is
// 4-byte aligned): a plain copy, then the sum of d's words.
func copyWordSumUnaligned(d, s unsafe.Pointer, n int) uint16 {
	copy(unsafe.Slice((*byte)(d), n), unsafe.Slice((*byte)(s), n))
	return wordSum(d, n)
}
