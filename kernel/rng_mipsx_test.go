//go:build mips || mipsle

package kernel

import "testing"

// TestSeedRoundTrip: the boot hands the key to platformSeed as bytes and
// takes the bytes back as the key: a platform that adds nothing (malta,
// whose loader seed is already in the key) must leave the key as it was,
// and a platform that changes one byte changes exactly its key word.
func TestSeedRoundTrip(t *testing.T) {
	key := [8]uint32{0x03020100, 0x07060504, 0xdeadbeef, 1, 2, 3, 0x80000000, 0xffffffff}
	var seed [32]byte
	keyToSeed(&key, &seed)
	if seed[0] != 0 || seed[1] != 1 || seed[7] != 7 {
		t.Fatalf("key words not little-endian in the seed: %x", seed)
	}
	var back [8]uint32
	seedToKey(&seed, &back)
	if back != key {
		t.Fatalf("round trip changed the key: %x -> %x", key, back)
	}
	seed[9] ^= 0x40
	seedToKey(&seed, &back)
	for i := range back {
		if changed := back[i] != key[i]; changed != (i == 2) {
			t.Errorf("flipping seed byte 9 changed key word %d: %#x -> %#x", i, key[i], back[i])
		}
	}
}
