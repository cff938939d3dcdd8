package sysupgrade_test

import (
	"crypto/ed25519"
	"encoding/binary"
	"hash/crc32"
	"math/rand/v2"
)

// uImage header fields (U-Boot include/image.h): OS Linux, arch MIPS,
// type kernel, compression LZMA, as the board images carry.
const (
	ihOSLinux   = 5
	ihArchMIPS  = 5
	ihTypeKern  = 2
	ihCompLZMA  = 3
	loadAddress = 0x80060000
)

// mkUImage wraps payload in a legacy uImage header, written field by field
// here so the test does not trust the code under test.
func mkUImage(payload []byte, name string) []byte {
	img := make([]byte, 64+len(payload))
	h := img[:64]
	binary.BigEndian.PutUint32(h[0:], 0x27051956)
	binary.BigEndian.PutUint32(h[8:], 1700000000) // ih_time
	binary.BigEndian.PutUint32(h[12:], uint32(len(payload)))
	binary.BigEndian.PutUint32(h[16:], loadAddress)
	binary.BigEndian.PutUint32(h[20:], loadAddress)
	binary.BigEndian.PutUint32(h[24:], crc32.ChecksumIEEE(payload))
	h[28], h[29], h[30], h[31] = ihOSLinux, ihArchMIPS, ihTypeKern, ihCompLZMA
	copy(h[32:], name)
	binary.BigEndian.PutUint32(h[4:], crc32.ChecksumIEEE(h)) // with ih_hcrc still zero
	copy(img[64:], payload)
	return img
}

// randBytes returns n seeded pseudo-random bytes.
func randBytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// testKey is a fixed key pair derived from seed.
func testKey(seed byte) (ed25519.PublicKey, ed25519.PrivateKey) {
	s := make([]byte, ed25519.SeedSize)
	for i := range s {
		s[i] = seed + byte(i)
	}
	priv := ed25519.NewKeyFromSeed(s)
	return priv.Public().(ed25519.PublicKey), priv
}
