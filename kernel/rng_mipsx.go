//go:build mips || mipsle

package kernel

// Kernel random numbers for getrandom and AT_RANDOM: the ChaCha20 block
// function (RFC 8439) in counter mode, keyed at boot from the loader's seed
// (QEMU's rngseed, 256 bits), the board's seed material (platformSeed) and
// the CP0 counter. On hardware without a seed source the key is only as
// good as what platformSeed gathers (on AR71xx: boot timing jitter, chip
// revision and boot flash, which is weak; see soc/ar71xx's Seed).

// keyToSeed and seedToKey convert between the ChaCha20 key words and the
// byte buffer platformSeed works on (little-endian words, as RFC 8439
// reads a key); a buffer the platform leaves alone gives the key back.
//
//go:nosplit
func keyToSeed(key *[8]uint32, seed *[32]byte) {
	for i := 0; i < 32; i++ {
		seed[i&31] = byte(key[(i/4)&7] >> (8 * uint(i%4)))
	}
}

//go:nosplit
func seedToKey(seed *[32]byte, key *[8]uint32) {
	for i := 0; i < 8; i++ {
		key[i&7] = uint32(seed[(4*i)&31]) | uint32(seed[(4*i+1)&31])<<8 | uint32(seed[(4*i+2)&31])<<16 | uint32(seed[(4*i+3)&31])<<24
	}
}

//go:nosplit
func rotl(x uint32, n uint) uint32 { return x<<n | x>>(32-n) }

// ChaCha20's constant words, "expand 32-byte k" (RFC 8439, 2.3).
const (
	sigma0 = 0x61707865
	sigma1 = 0x3320646e
	sigma2 = 0x79622d32
	sigma3 = 0x6b206574
)

// refill computes the next keystream block into k.rngBuf: key rngKey,
// block counter rngCtr, nonce zero.
//
//go:nosplit
func (k *kstate) refill() {
	key := &k.rngKey
	x0, x1, x2, x3 := uint32(sigma0), uint32(sigma1), uint32(sigma2), uint32(sigma3)
	x4, x5, x6, x7 := key[0], key[1], key[2], key[3]
	x8, x9, x10, x11 := key[4], key[5], key[6], key[7]
	x12, x13, x14, x15 := k.rngCtr, uint32(0), uint32(0), uint32(0)
	// Ten double rounds of quarter rounds (RFC 8439, 2.1 and 2.3), the
	// quarter rounds written out: a qr function is over the inliner's
	// budget, and calling it passes the state through memory each time
	// (with getrandom's byte loop, 119 instructions per byte against 57
	// now).
	for r := 0; r < 10; r++ {
		// columns
		x0 += x4
		x12 = rotl(x12^x0, 16)
		x8 += x12
		x4 = rotl(x4^x8, 12)
		x0 += x4
		x12 = rotl(x12^x0, 8)
		x8 += x12
		x4 = rotl(x4^x8, 7)
		x1 += x5
		x13 = rotl(x13^x1, 16)
		x9 += x13
		x5 = rotl(x5^x9, 12)
		x1 += x5
		x13 = rotl(x13^x1, 8)
		x9 += x13
		x5 = rotl(x5^x9, 7)
		x2 += x6
		x14 = rotl(x14^x2, 16)
		x10 += x14
		x6 = rotl(x6^x10, 12)
		x2 += x6
		x14 = rotl(x14^x2, 8)
		x10 += x14
		x6 = rotl(x6^x10, 7)
		x3 += x7
		x15 = rotl(x15^x3, 16)
		x11 += x15
		x7 = rotl(x7^x11, 12)
		x3 += x7
		x15 = rotl(x15^x3, 8)
		x11 += x15
		x7 = rotl(x7^x11, 7)
		// diagonals
		x0 += x5
		x15 = rotl(x15^x0, 16)
		x10 += x15
		x5 = rotl(x5^x10, 12)
		x0 += x5
		x15 = rotl(x15^x0, 8)
		x10 += x15
		x5 = rotl(x5^x10, 7)
		x1 += x6
		x12 = rotl(x12^x1, 16)
		x11 += x12
		x6 = rotl(x6^x11, 12)
		x1 += x6
		x12 = rotl(x12^x1, 8)
		x11 += x12
		x6 = rotl(x6^x11, 7)
		x2 += x7
		x13 = rotl(x13^x2, 16)
		x8 += x13
		x7 = rotl(x7^x8, 12)
		x2 += x7
		x13 = rotl(x13^x2, 8)
		x8 += x13
		x7 = rotl(x7^x8, 7)
		x3 += x4
		x14 = rotl(x14^x3, 16)
		x9 += x14
		x4 = rotl(x4^x9, 12)
		x3 += x4
		x14 = rotl(x14^x3, 8)
		x9 += x14
		x4 = rotl(x4^x9, 7)
	}
	s := &k.rngBuf
	s[0], s[1], s[2], s[3] = x0+sigma0, x1+sigma1, x2+sigma2, x3+sigma3
	s[4], s[5], s[6], s[7] = x4+key[0], x5+key[1], x6+key[2], x7+key[3]
	s[8], s[9], s[10], s[11] = x8+key[4], x9+key[5], x10+key[6], x11+key[7]
	s[12], s[13], s[14], s[15] = x12+k.rngCtr, x13, x14, x15
	k.rngCtr++
	k.rngAvail = 64
	if k.rngCtr == 0 { // 2^32 blocks: rekey from the stream itself
		for i := 0; i < 8; i++ {
			k.rngKey[i&7] ^= s[(i+8)&15]
		}
	}
}

// randByte returns the next keystream byte, in the stream's order
// (the block's words serialized little-endian, RFC 8439, 2.3).
//
//go:nosplit
func (k *kstate) randByte() byte {
	if k.rngAvail == 0 {
		k.refill()
	}
	i := 64 - k.rngAvail
	k.rngAvail--
	return byte(k.rngBuf[(i>>2)&15] >> ((i & 3) * 8))
}
