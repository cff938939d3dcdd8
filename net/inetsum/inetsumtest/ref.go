// Package inetsumtest is the reference Internet checksum for tests: RFC
// 1071's sum, byte by byte, independent of the package it checks.
package inetsumtest

// Sum returns the one's complement sum of the parts, taken as one run of
// bytes: 16-bit big-endian words, a last odd byte as a word's high half,
// folded, not complemented.
func Sum(parts ...[]byte) uint16 {
	var s uint32
	odd := false // the next byte is a word's low half
	for _, p := range parts {
		for _, c := range p {
			if odd {
				s += uint32(c)
			} else {
				s += uint32(c) << 8
			}
			odd = !odd
		}
	}
	return Fold(s)
}

// Fold reduces a 32-bit one's complement sum to 16 bits.
func Fold(s uint32) uint16 {
	for s > 0xffff {
		s = s>>16 + s&0xffff
	}
	return uint16(s)
}
