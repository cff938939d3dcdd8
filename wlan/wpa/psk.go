// Package wpa is the WPA2-PSK key management of IEEE 802.11-2016 12.7: the
// PSK from a passphrase, the PRF and the PTK, EAPOL-Key frames with their
// MIC and AES-key-wrapped key data, and the 4-way and group key handshakes
// as an authenticator (the AP) and a supplicant (a station) that share
// that code. Data frames are protected by package wlan/ccmp with the keys
// the handshakes install.
package wpa

import (
	"crypto/pbkdf2"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
)

const (
	// PMKLen is the PMK (= PSK) length, 256 bits.
	PMKLen = 32
	// pskIterations is the PBKDF2 iteration count of the passphrase
	// mapping (IEEE 802.11-2016 J.4.1).
	pskIterations = 4096
	// Passphrase length limits (J.4.1): 8..63 ASCII characters; 64
	// characters are a PSK in hex.
	minPassphrase = 8
	maxPassphrase = 63
	hexPSKLen     = 2 * PMKLen
	maxSSIDLen    = 32
)

// PSK maps a passphrase and SSID to the 256-bit PSK, which is the PMK
// (J.4.1): PBKDF2-HMAC-SHA1 with the SSID as salt and 4096 iterations. A
// passphrase of exactly 64 hex digits is the PSK itself. A passphrase
// holds 8..63 printable ASCII characters (32..126).
func PSK(passphrase string, ssid []byte) ([PMKLen]byte, error) {
	var pmk [PMKLen]byte
	if len(ssid) == 0 || len(ssid) > maxSSIDLen {
		return pmk, fmt.Errorf("wpa: SSID must be 1..%d octets, got %d", maxSSIDLen, len(ssid))
	}
	if len(passphrase) == hexPSKLen {
		if _, err := hex.Decode(pmk[:], []byte(passphrase)); err != nil {
			return pmk, errors.New("wpa: a 64-character passphrase must be the PSK in hex digits")
		}
		return pmk, nil
	}
	if len(passphrase) < minPassphrase || len(passphrase) > maxPassphrase {
		return pmk, fmt.Errorf("wpa: passphrase must be %d..%d characters (or %d hex digits), got %d",
			minPassphrase, maxPassphrase, hexPSKLen, len(passphrase))
	}
	for i := 0; i < len(passphrase); i++ {
		if c := passphrase[i]; c < 32 || c > 126 {
			return pmk, fmt.Errorf("wpa: passphrase character %d is not printable ASCII", i+1)
		}
	}
	k, err := pbkdf2.Key(sha1.New, passphrase, ssid, pskIterations, PMKLen)
	if err != nil {
		return pmk, err
	}
	copy(pmk[:], k)
	return pmk, nil
}
