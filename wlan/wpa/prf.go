package wpa

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha1"
)

// PRF is the 802.11 pseudo-random function (IEEE 802.11-2016 12.7.1.2):
// the concatenation of HMAC-SHA1(K, A || 0 || B || i) for i = 0, 1, ...
// truncated to len(out) octets (PRF-384 for a CCMP PTK: 48 octets).
func PRF(key []byte, label string, data []byte, out []byte) {
	mac := hmac.New(sha1.New, key)
	var sum [sha1.Size]byte
	for i, off := 0, 0; off < len(out); i++ {
		mac.Reset()
		mac.Write([]byte(label))
		mac.Write([]byte{0})
		mac.Write(data)
		mac.Write([]byte{byte(i)})
		off += copy(out[off:], mac.Sum(sum[:0]))
	}
}

// Key lengths of a CCMP-128 PTK with AKM 00-0F-AC:2 (PSK), Table 12-8.
const (
	KCKLen   = 16
	KEKLen   = 16
	TKLen    = 16
	NonceLen = 32
	ptkLen   = KCKLen + KEKLen + TKLen // PRF-384
)

// PTK is the pairwise transient key split into its parts (12.7.1.3):
// KCK (EAPOL-Key MIC), KEK (key data encryption) and TK (CCMP).
type PTK struct {
	KCK [KCKLen]byte
	KEK [KEKLen]byte
	TK  [TKLen]byte
}

// ptkLabel is the PRF label of the pairwise key hierarchy (12.7.1.3).
const ptkLabel = "Pairwise key expansion"

// DerivePTK computes PRF-384(PMK, "Pairwise key expansion", Min(AA,SPA) ||
// Max(AA,SPA) || Min(ANonce,SNonce) || Max(ANonce,SNonce)), so both sides
// get the same key whatever their roles.
func DerivePTK(pmk *[PMKLen]byte, aa, spa [6]byte, anonce, snonce *[NonceLen]byte) PTK {
	data := make([]byte, 0, 2*6+2*NonceLen)
	lo, hi := aa[:], spa[:]
	if bytes.Compare(lo, hi) > 0 {
		lo, hi = hi, lo
	}
	data = append(append(data, lo...), hi...)
	nlo, nhi := anonce[:], snonce[:]
	if bytes.Compare(nlo, nhi) > 0 {
		nlo, nhi = nhi, nlo
	}
	data = append(append(data, nlo...), nhi...)
	var out [ptkLen]byte
	PRF(pmk[:], ptkLabel, data, out[:])
	var p PTK
	copy(p.KCK[:], out[:KCKLen])
	copy(p.KEK[:], out[KCKLen:KCKLen+KEKLen])
	copy(p.TK[:], out[KCKLen+KEKLen:])
	return p
}
