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

//go:nosplit
func qr(s *[16]uint32, a, b, c, d int) {
	s[a&15] += s[b&15]
	s[d&15] = rotl(s[d&15]^s[a&15], 16)
	s[c&15] += s[d&15]
	s[b&15] = rotl(s[b&15]^s[c&15], 12)
	s[a&15] += s[b&15]
	s[d&15] = rotl(s[d&15]^s[a&15], 8)
	s[c&15] += s[d&15]
	s[b&15] = rotl(s[b&15]^s[c&15], 7)
}

// refill computes the next keystream block into k.rngBuf.
//
//go:nosplit
func (k *kstate) refill() {
	s := &k.rngBuf
	s[0], s[1], s[2], s[3] = 0x61707865, 0x3320646e, 0x79622d32, 0x6b206574
	for i := 0; i < 8; i++ {
		s[(4+i)&15] = k.rngKey[i&7]
	}
	s[12] = k.rngCtr
	s[13], s[14], s[15] = 0, 0, 0
	var in [16]uint32
	in = *s
	for r := 0; r < 10; r++ {
		qr(s, 0, 4, 8, 12)
		qr(s, 1, 5, 9, 13)
		qr(s, 2, 6, 10, 14)
		qr(s, 3, 7, 11, 15)
		qr(s, 0, 5, 10, 15)
		qr(s, 1, 6, 11, 12)
		qr(s, 2, 7, 8, 13)
		qr(s, 3, 4, 9, 14)
	}
	for i := 0; i < 16; i++ {
		s[i&15] += in[i&15]
	}
	k.rngCtr++
	k.rngAvail = 64
	if k.rngCtr == 0 { // 2^32 blocks: rekey from the stream itself
		for i := 0; i < 8; i++ {
			k.rngKey[i&7] ^= s[(i+8)&15]
		}
	}
}

//go:nosplit
func (k *kstate) randByte() byte {
	if k.rngAvail == 0 {
		k.refill()
	}
	k.rngAvail--
	w := k.rngBuf[(k.rngAvail>>2)&15]
	return byte(w >> ((k.rngAvail & 3) * 8))
}
