package wpa

import (
	"crypto/aes"
	"crypto/subtle"
	"encoding/binary"
	"errors"
)

// keyWrapIV is RFC 3394's default initial value A6A6A6A6A6A6A6A6 (§2.2.3.1).
const keyWrapIV = 0xA6A6A6A6A6A6A6A6

var (
	ErrKeyWrapLength    = errors.New("wpa: key wrap input must be a multiple of 8 octets, at least 16")
	ErrKeyWrapIntegrity = errors.New("wpa: key unwrap integrity check failed")
)

// WrapKey is the AES key wrap of RFC 3394 §2.2.1 (the index-based form):
// plaintext of n 64-bit blocks, n >= 2, becomes n+1 blocks.
func WrapKey(kek, plaintext []byte) ([]byte, error) {
	if len(plaintext) < 16 || len(plaintext)%8 != 0 {
		return nil, ErrKeyWrapLength
	}
	b, err := aes.NewCipher(kek)
	if err != nil {
		return nil, err
	}
	n := len(plaintext) / 8
	out := make([]byte, 8+len(plaintext))
	copy(out[8:], plaintext)
	a := uint64(keyWrapIV)
	var blk [16]byte
	for j := 0; j < 6; j++ {
		for i := 1; i <= n; i++ {
			binary.BigEndian.PutUint64(blk[:8], a)
			copy(blk[8:], out[8*i:8*i+8])
			b.Encrypt(blk[:], blk[:])
			a = binary.BigEndian.Uint64(blk[:8]) ^ uint64(n*j+i)
			copy(out[8*i:], blk[8:])
		}
	}
	binary.BigEndian.PutUint64(out[:8], a)
	return out, nil
}

// UnwrapKey reverses WrapKey (RFC 3394 §2.2.2) and checks the integrity
// value (§2.2.3).
func UnwrapKey(kek, ciphertext []byte) ([]byte, error) {
	if len(ciphertext) < 24 || len(ciphertext)%8 != 0 {
		return nil, ErrKeyWrapLength
	}
	b, err := aes.NewCipher(kek)
	if err != nil {
		return nil, err
	}
	n := len(ciphertext)/8 - 1
	out := make([]byte, 8*n)
	copy(out, ciphertext[8:])
	a := binary.BigEndian.Uint64(ciphertext[:8])
	var blk [16]byte
	for j := 5; j >= 0; j-- {
		for i := n; i >= 1; i-- {
			binary.BigEndian.PutUint64(blk[:8], a^uint64(n*j+i))
			copy(blk[8:], out[8*(i-1):8*i])
			b.Decrypt(blk[:], blk[:])
			a = binary.BigEndian.Uint64(blk[:8])
			copy(out[8*(i-1):], blk[8:])
		}
	}
	var got, want [8]byte
	binary.BigEndian.PutUint64(got[:], a)
	binary.BigEndian.PutUint64(want[:], keyWrapIV)
	if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
		return nil, ErrKeyWrapIntegrity
	}
	return out, nil
}

// keyDataPad is the first padding octet of wrapped key data (IEEE
// 802.11-2016 12.7.2, Key Data field): 0xdd, then zeros.
const keyDataPad = 0xdd

// PadKeyData pads key data for the key wrap (12.7.2): when shorter than 16
// octets or not a multiple of 8, append 0xdd and then zeros up to the next
// multiple of 8, at least 16.
func PadKeyData(b []byte) []byte {
	if len(b) >= 16 && len(b)%8 == 0 {
		return b
	}
	n := max(16, (len(b)+1+7)/8*8)
	out := make([]byte, n)
	copy(out, b)
	out[len(b)] = keyDataPad
	return out
}
