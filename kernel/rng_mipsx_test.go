//go:build mips || mipsle

package kernel

import (
	"bytes"
	"encoding/hex"
	"testing"

	"golang.org/x/crypto/chacha20"
)

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

// TestKeystream: the kernel's random bytes are ChaCha20's keystream
// (RFC 8439) for its key, a zero nonce and block counters from rngCtr:
// checked against golang.org/x/crypto/chacha20 over three blocks and
// against RFC 8439 Appendix A.1's test vector #1 (all-zero key, counter 0).
func TestKeystream(t *testing.T) {
	for _, key := range [][8]uint32{{}, {0x03020100, 0x07060504, 0xdeadbeef, 1, 2, 3, 0x80000000, 0xffffffff}} {
		k := new(kstate)
		k.rngKey = key
		got := make([]byte, 3*64+5)
		for i := range got {
			got[i] = k.randByte()
		}
		var kb [32]byte
		keyToSeed(&key, &kb)
		c, err := chacha20.NewUnauthenticatedCipher(kb[:], make([]byte, chacha20.NonceSize))
		if err != nil {
			t.Fatal(err)
		}
		want := make([]byte, len(got))
		c.XORKeyStream(want, want)
		if !bytes.Equal(got, want) {
			t.Fatalf("key %x: keystream\n%x, want\n%x", key, got, want)
		}
		if key == ([8]uint32{}) {
			if v1, _ := hex.DecodeString("76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7"); !bytes.Equal(got[:32], v1) {
				t.Errorf("all-zero key: %x, want RFC 8439 A.1 #1 %x", got[:32], v1)
			}
		}
	}
}
