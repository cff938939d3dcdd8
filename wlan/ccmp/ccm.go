package ccmp

import (
	"crypto/cipher"
	"crypto/subtle"
)

// CCM parameters CCMP-128 fixes (IEEE 802.11-2016 12.5.3.1): an 8-octet
// MIC (RFC 3610 M=8) and a 2-octet length field (L=2), which leaves a
// 13-octet nonce.
const (
	ccmMICLen   = 8
	ccmL        = 2
	ccmNonceLen = 15 - ccmL
	// ccmMaxMsg is the longest message a 2-octet length field can carry.
	ccmMaxMsg = 1<<(8*ccmL) - 1
	// ccmMaxAAD keeps the AAD in RFC 3610's short (2-octet) length
	// encoding, 0 < l(a) < 2^16-2^8 (§2.2).
	ccmMaxAAD = 0xff00 - 1
	blockLen  = 16
)

// ccm is AES-CCM (RFC 3610) with M=8, L=2: CBC-MAC over B0, the AAD and the
// message, and CTR mode for the message and the tag. It keeps its working
// blocks in the struct so that sealing or opening a frame allocates
// nothing: a ccm is therefore used by one goroutine at a time.
type ccm struct {
	block cipher.Block
	mac   [blockLen]byte // the running CBC-MAC value X_i
	ctr   [blockLen]byte // counter block A_i
	ks    [blockLen]byte // keystream block S_i, also a scratch block
	tag   [ccmMICLen]byte
}

// start computes X_1 = E(B0) and folds the AAD into the CBC-MAC, and sets
// the counter block to A_0 (RFC 3610 §2.2, §2.3).
func (c *ccm) start(nonce *[ccmNonceLen]byte, aad []byte, msgLen int) {
	flags := byte((ccmMICLen-2)/2)<<3 | byte(ccmL-1)
	if len(aad) > 0 {
		flags |= 0x40 // Adata
	}
	c.mac[0] = flags
	copy(c.mac[1:1+ccmNonceLen], nonce[:])
	c.mac[14] = byte(msgLen >> 8)
	c.mac[15] = byte(msgLen)
	c.block.Encrypt(c.mac[:], c.mac[:])

	if len(aad) > 0 {
		// The AAD is prefixed by its 2-octet length and the whole is
		// zero-padded to a block boundary.
		c.ks = [blockLen]byte{}
		c.ks[0] = byte(len(aad) >> 8)
		c.ks[1] = byte(len(aad))
		n := copy(c.ks[2:], aad)
		aad = aad[n:]
		subtle.XORBytes(c.mac[:], c.mac[:], c.ks[:])
		c.block.Encrypt(c.mac[:], c.mac[:])
		for len(aad) > 0 {
			n := min(len(aad), blockLen)
			subtle.XORBytes(c.mac[:n], c.mac[:n], aad[:n])
			c.block.Encrypt(c.mac[:], c.mac[:])
			aad = aad[n:]
		}
	}

	c.ctr[0] = byte(ccmL - 1)
	copy(c.ctr[1:1+ccmNonceLen], nonce[:])
	c.ctr[14], c.ctr[15] = 0, 0
}

// nextKeystream advances the counter block and encrypts it into ks.
func (c *ccm) nextKeystream() {
	if c.ctr[15]++; c.ctr[15] == 0 {
		c.ctr[14]++
	}
	c.block.Encrypt(c.ks[:], c.ctr[:])
}

// finish writes the tag U = T xor first-M-octets(S_0) into tag.
func (c *ccm) finish(tag []byte) {
	c.ctr[14], c.ctr[15] = 0, 0
	c.block.Encrypt(c.ks[:], c.ctr[:])
	subtle.XORBytes(tag[:ccmMICLen], c.mac[:ccmMICLen], c.ks[:ccmMICLen])
}

// seal encrypts data in place and writes the 8-octet tag to tag. The
// caller keeps len(data) <= ccmMaxMsg and len(aad) <= ccmMaxAAD.
func (c *ccm) seal(nonce *[ccmNonceLen]byte, aad, data, tag []byte) {
	c.start(nonce, aad, len(data))
	for off := 0; off < len(data); off += blockLen {
		blk := data[off:min(off+blockLen, len(data))]
		subtle.XORBytes(c.mac[:len(blk)], c.mac[:len(blk)], blk)
		c.block.Encrypt(c.mac[:], c.mac[:])
		c.nextKeystream()
		subtle.XORBytes(blk, blk, c.ks[:len(blk)])
	}
	c.finish(tag)
}

// open decrypts data in place and reports whether tag authenticates it.
// On a false return data holds garbage the caller must drop.
func (c *ccm) open(nonce *[ccmNonceLen]byte, aad, data, tag []byte) bool {
	c.start(nonce, aad, len(data))
	for off := 0; off < len(data); off += blockLen {
		blk := data[off:min(off+blockLen, len(data))]
		c.nextKeystream()
		subtle.XORBytes(blk, blk, c.ks[:len(blk)])
		subtle.XORBytes(c.mac[:len(blk)], c.mac[:len(blk)], blk)
		c.block.Encrypt(c.mac[:], c.mac[:])
	}
	c.finish(c.tag[:])
	return subtle.ConstantTimeCompare(c.tag[:], tag[:ccmMICLen]) == 1
}
