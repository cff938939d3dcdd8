// Package ccmp is CCMP-128, the AES-CCM data confidentiality protocol of
// IEEE 802.11-2016 12.5.3, on raw MPDU bytes: encapsulation in place into a
// caller buffer with tailroom, decapsulation in place, and PN replay
// protection per TID. Neither allocates per frame.
//
// The package parses only the MAC header fields CCMP needs (frame control,
// addresses, sequence control, QoS control, the fourth address and the
// header length); the frame layer proper is package wlan's.
//
// AES-CCM is not in the standard library; ccm.go builds it on crypto/aes
// and crypto/cipher (CBC-MAC plus CTR, RFC 3610).
package ccmp

import (
	"crypto/aes"
	"encoding/binary"
	"errors"
	"sync/atomic"
)

const (
	// TKLen is the CCMP-128 temporal key length.
	TKLen = 16
	// HeaderLen is the CCMP header inserted after the MAC header.
	HeaderLen = 8
	// MICLen is the CCMP MIC appended to the frame body.
	MICLen = ccmMICLen
	// Overhead is what Encap adds to a frame: the tailroom it needs.
	Overhead = HeaderLen + MICLen
	// MaxPN is the largest 48-bit packet number; a key must be replaced
	// before its PN wraps (12.5.3.3.1).
	MaxPN = 1<<48 - 1
)

// Frame control bits (IEEE 802.11-2016 9.2.4.1). The first octet holds
// protocol version, type and subtype; the second the flags.
const (
	fcTypeMask    = 0x0c
	fcTypeMgmt    = 0x00
	fcTypeCtrl    = 0x04
	fcTypeData    = 0x08
	fcSubtypeQoS  = 0x80 // subtype bit 3 in data frames: QoS Control present
	fcSubtypeMask = 0x70 // subtype bits 4..6 of a data frame, masked in the AAD
	fcToDS        = 0x01
	fcFromDS      = 0x02
	fcRetry       = 0x08
	fcPwrMgt      = 0x10
	fcMoreData    = 0x20
	fcProtected   = 0x40
	fcOrder       = 0x80 // +HTC in QoS data and management frames
)

const (
	hdrLen3Addr = 24
	addrLen     = 6
	qosCtlLen   = 2
	htcLen      = 4
	// CCMP header key ID octet (12.5.3.2): Ext IV bit and the key ID in
	// bits 6..7.
	extIV = 0x20
	// Nonce flags (12.5.3.3.4): priority in bits 0..3, the management bit.
	nonceMgmt = 0x10
	// ReplayCounters is the number of receive PN counters a key keeps:
	// one per TID for QoS data, plus one for non-QoS data and management
	// frames (a separate counter, so that a station mixing QoS and
	// non-QoS frames is not dropped as replaying).
	ReplayCounters = 17
	nonQoSCounter  = 16
	// maxAADLen is FC + A1..A3 + SC + A4 + QC.
	maxAADLen = 2 + 3*addrLen + 2 + addrLen + qosCtlLen
)

// Errors. Every dropped frame returns one of these and bumps a counter in
// Stats; none allocates.
var (
	ErrShort        = errors.New("ccmp: frame too short")
	ErrFrameType    = errors.New("ccmp: control frames carry no CCMP")
	ErrTailroom     = errors.New("ccmp: no tailroom for the CCMP header and MIC")
	ErrTooLong      = errors.New("ccmp: frame body too long for CCM")
	ErrNotProtected = errors.New("ccmp: Protected Frame bit clear")
	ErrNoExtIV      = errors.New("ccmp: Ext IV bit clear")
	ErrKeyID        = errors.New("ccmp: frame's key ID is not this key's")
	ErrReplay       = errors.New("ccmp: replayed or old PN")
	ErrMIC          = errors.New("ccmp: MIC mismatch")
	ErrPNExhausted  = errors.New("ccmp: packet number space exhausted, rekey")
)

// Stats counts what a key did. Read them at any time.
type Stats struct {
	Encrypted atomic.Uint64
	Decrypted atomic.Uint64
	Replays   atomic.Uint64 // dropped: PN not above the last accepted one
	MICErrors atomic.Uint64 // dropped: CCM tag mismatch
	Malformed atomic.Uint64 // dropped: short, wrong type, no Ext IV, wrong key ID
}

// Key is one CCMP-128 temporal key (a pairwise TK or a GTK) with its
// transmit PN and receive replay counters. Encap may run concurrently with
// Decap (each has its own working state), but each from one goroutine at a
// time.
type Key struct {
	id byte // key ID 0..3

	tx    ccm
	txPN  uint64 // last PN used
	txAAD [maxAADLen]byte
	txNon [ccmNonceLen]byte

	rx    ccm
	rxPN  [ReplayCounters]uint64 // last PN accepted per counter
	rxAAD [maxAADLen]byte
	rxNon [ccmNonceLen]byte

	Stats Stats
}

// NewKey makes a key from a 16-octet TK and its key ID (0 for a pairwise
// key, 1..3 for group keys). Both PN spaces start at zero: the first frame
// sent carries PN 1 and any PN above zero is accepted first.
func NewKey(tk []byte, keyID int) (*Key, error) {
	if len(tk) != TKLen {
		return nil, errors.New("ccmp: TK must be 16 octets")
	}
	if keyID < 0 || keyID > 3 {
		return nil, errors.New("ccmp: key ID must be 0..3")
	}
	b, err := aes.NewCipher(tk)
	if err != nil {
		return nil, err
	}
	k := &Key{id: byte(keyID)}
	k.tx.block = b
	k.rx.block = b
	return k, nil
}

// KeyID returns the key's ID.
func (k *Key) KeyID() int { return int(k.id) }

// SetTxPN sets the last PN used; the next frame carries pn+1.
func (k *Key) SetTxPN(pn uint64) { k.txPN = pn }

// TxPN returns the last PN used, what an authenticator reports as the
// group key's RSC.
func (k *Key) TxPN() uint64 { return k.txPN }

// SetRxPN sets every receive counter to pn, as installing a GTK with the
// Key RSC of message 3 or group message 1 does: frames must carry PNs
// above it.
func (k *Key) SetRxPN(pn uint64) {
	for i := range k.rxPN {
		k.rxPN[i] = pn
	}
}

// header is what CCMP needs of a MAC header.
type header struct {
	len     int  // MAC header length including QoS Control and HT Control
	a4      bool // four addresses (ToDS and FromDS in a data frame)
	qos     bool // QoS Control present
	mgmt    bool
	tid     byte
	counter int // receive replay counter index
}

// parseHeader reads the frame control and derives the header layout
// (9.2.4.1, 9.3.2.1): 24 octets, A4 in data frames with both DS bits set,
// QoS Control in QoS data frames, HT Control when Order is set in a QoS
// data or management frame.
func parseHeader(f []byte) (header, error) {
	var h header
	if len(f) < hdrLen3Addr {
		return h, ErrShort
	}
	h.len = hdrLen3Addr
	h.counter = nonQoSCounter
	switch f[0] & fcTypeMask {
	case fcTypeCtrl:
		return h, ErrFrameType
	case fcTypeMgmt:
		h.mgmt = true
		if f[1]&fcOrder != 0 {
			h.len += htcLen
		}
	case fcTypeData:
		if f[1]&(fcToDS|fcFromDS) == fcToDS|fcFromDS {
			h.a4 = true
			h.len += addrLen
		}
		if f[0]&fcSubtypeQoS != 0 {
			h.qos = true
			if len(f) < h.len+qosCtlLen {
				return h, ErrShort
			}
			h.tid = f[h.len] & 0x0f
			h.counter = int(h.tid)
			h.len += qosCtlLen
			if f[1]&fcOrder != 0 {
				h.len += htcLen
			}
		}
	default: // extension frames carry no CCMP
		return h, ErrFrameType
	}
	if len(f) < h.len {
		return h, ErrShort
	}
	return h, nil
}

// buildAAD writes the CCM AAD for frame f into aad and returns its length
// (12.5.3.3.3): FC with subtype bits 4..6 (data frames), Retry, PwrMgt and
// MoreData masked to 0, Protected set, Order masked in QoS data frames;
// A1, A2, A3; SC with the sequence number masked (fragment number kept);
// A4 when present; QC with only the TID kept. HT Control is not included.
func buildAAD(aad *[maxAADLen]byte, f []byte, h *header) int {
	fc0 := f[0]
	if !h.mgmt {
		fc0 &^= fcSubtypeMask
	}
	fc1 := f[1]&^(fcRetry|fcPwrMgt|fcMoreData) | fcProtected
	if h.qos {
		fc1 &^= fcOrder
	}
	aad[0], aad[1] = fc0, fc1
	copy(aad[2:2+3*addrLen], f[4:4+3*addrLen])
	aad[20] = f[22] & 0x0f
	aad[21] = 0
	n := 22
	off := hdrLen3Addr
	if h.a4 {
		copy(aad[n:n+addrLen], f[off:off+addrLen])
		n += addrLen
		off += addrLen
	}
	if h.qos {
		aad[n] = f[off] & 0x0f
		aad[n+1] = 0
		n += qosCtlLen
	}
	return n
}

// buildNonce writes the 13-octet CCM nonce (12.5.3.3.4): flags (priority =
// TID, management bit), A2, PN5..PN0.
func buildNonce(nonce *[ccmNonceLen]byte, f []byte, h *header, pn uint64) {
	flags := h.tid
	if h.mgmt {
		flags |= nonceMgmt
	}
	nonce[0] = flags
	copy(nonce[1:1+addrLen], f[10:10+addrLen])
	for i := 0; i < 6; i++ {
		nonce[7+i] = byte(pn >> (8 * (5 - i)))
	}
}

// putHeader writes the CCMP header (12.5.3.2): PN0, PN1, reserved,
// Ext IV | key ID << 6, PN2..PN5.
func putHeader(b []byte, pn uint64, keyID byte) {
	b[0] = byte(pn)
	b[1] = byte(pn >> 8)
	b[2] = 0
	b[3] = extIV | keyID<<6
	binary.LittleEndian.PutUint32(b[4:8], uint32(pn>>16))
}

// readPN returns the PN of a CCMP header.
func readPN(b []byte) uint64 {
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(binary.LittleEndian.Uint32(b[4:8]))<<16
}

// Encap protects the plaintext MPDU frame (MAC header and body, no FCS)
// with the next PN: it sets the Protected bit, inserts the CCMP header
// after the MAC header, encrypts the body in place and appends the MIC.
// frame must have Overhead octets of capacity beyond its length; the
// result is frame[:len(frame)+Overhead].
func (k *Key) Encap(frame []byte) ([]byte, error) {
	if k.txPN >= MaxPN {
		return nil, ErrPNExhausted
	}
	return k.encap(frame, k.txPN+1)
}

// EncapPN is Encap with an explicit PN, for a caller (or a test vector)
// that manages the PN space itself; it does not touch the key's TX PN.
func (k *Key) EncapPN(frame []byte, pn uint64) ([]byte, error) {
	if pn > MaxPN {
		return nil, ErrPNExhausted
	}
	return k.encap(frame, pn)
}

func (k *Key) encap(frame []byte, pn uint64) ([]byte, error) {
	h, err := parseHeader(frame)
	if err != nil {
		return nil, err
	}
	n := len(frame)
	if cap(frame)-n < Overhead {
		return nil, ErrTailroom
	}
	if n-h.len > ccmMaxMsg {
		return nil, ErrTooLong
	}
	if pn > k.txPN {
		k.txPN = pn
	}
	out := frame[:n+Overhead]
	copy(out[h.len+HeaderLen:], frame[h.len:n])
	out[1] |= fcProtected
	putHeader(out[h.len:], pn, k.id)
	aadLen := buildAAD(&k.txAAD, out, &h)
	buildNonce(&k.txNon, out, &h, pn)
	body := out[h.len+HeaderLen : n+HeaderLen]
	k.tx.seal(&k.txNon, k.txAAD[:aadLen], body, out[n+HeaderLen:])
	k.Stats.Encrypted.Add(1)
	return out, nil
}

// Decap checks and decrypts the protected MPDU frame (no FCS) in place:
// the key ID must be this key's, the PN must be above the last accepted
// PN of the frame's TID (or of the non-QoS counter), and the MIC must
// verify. It then removes the CCMP header and MIC, clears the Protected
// bit and returns the plaintext MPDU, a prefix of frame. On error frame's
// contents are undefined and the frame must be dropped.
//
// Call Decap in sequence-number order per TID, after Block Ack reordering,
// or reordered frames are dropped as replays.
func (k *Key) Decap(frame []byte) ([]byte, error) {
	h, pn, err := k.checkRx(frame, MICLen, ccmMaxMsg)
	if err != nil {
		return nil, err
	}
	n := len(frame)
	aadLen := buildAAD(&k.rxAAD, frame, &h)
	buildNonce(&k.rxNon, frame, &h, pn)
	body := frame[h.len+HeaderLen : n-MICLen]
	if !k.rx.open(&k.rxNon, k.rxAAD[:aadLen], body, frame[n-MICLen:]) {
		k.Stats.MICErrors.Add(1)
		return nil, ErrMIC
	}
	// Only an authentic frame advances the counter (12.5.3.4.4).
	k.rxPN[h.counter] = pn
	copy(frame[h.len:], body)
	frame[1] &^= fcProtected
	k.Stats.Decrypted.Add(1)
	return frame[:n-Overhead], nil
}

// checkRx checks what Decap and AcceptDecrypted both check of a received
// frame before its PN is accepted: a MAC header, room for the CCMP header,
// tail octets after it (the MIC; none once hardware removed it) and at
// most maxBody octets between them, the Protected bit, the ExtIV bit, this
// key's ID, and a PN above the last accepted one of the frame's counter
// (12.5.3.4.4). It returns the MAC header and the PN; failures are counted
// in Stats (Malformed, or Replays).
func (k *Key) checkRx(frame []byte, tail, maxBody int) (header, uint64, error) {
	h, err := parseHeader(frame)
	if err != nil {
		k.Stats.Malformed.Add(1)
		return h, 0, err
	}
	n := len(frame)
	if n < h.len+HeaderLen+tail {
		k.Stats.Malformed.Add(1)
		return h, 0, ErrShort
	}
	if frame[1]&fcProtected == 0 {
		k.Stats.Malformed.Add(1)
		return h, 0, ErrNotProtected
	}
	ch := frame[h.len : h.len+HeaderLen]
	if ch[3]&extIV == 0 {
		k.Stats.Malformed.Add(1)
		return h, 0, ErrNoExtIV
	}
	if ch[3]>>6 != k.id {
		k.Stats.Malformed.Add(1)
		return h, 0, ErrKeyID
	}
	if n-h.len-HeaderLen-tail > maxBody {
		k.Stats.Malformed.Add(1)
		return h, 0, ErrTooLong
	}
	pn := readPN(ch)
	if pn <= k.rxPN[h.counter] {
		k.Stats.Replays.Add(1)
		return h, 0, ErrReplay
	}
	return h, pn, nil
}

// PeekKeyID returns the key ID of a protected frame without checking
// it, for a receiver that keeps several keys (pairwise and group) and must
// pick one.
func PeekKeyID(frame []byte) (keyID int, err error) {
	h, err := parseHeader(frame)
	if err != nil {
		return 0, err
	}
	if len(frame) < h.len+HeaderLen {
		return 0, ErrShort
	}
	if frame[h.len+3]&extIV == 0 {
		return 0, ErrNoExtIV
	}
	return int(frame[h.len+3] >> 6), nil
}
