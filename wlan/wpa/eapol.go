package wpa

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
)

// EAPOL (IEEE 802.1X-2004 §7.5) carries the EAPOL-Key frames of the
// handshakes; in 802.11 data frames it follows the LLC/SNAP header
// AA-AA-03-00-00-00 and EtherType 88-8E.
const (
	EtherTypeEAPOL = 0x888e
	// eapolVersion is the protocol version sent: 802.1X-2004 is 2. Any
	// version is accepted on receive.
	eapolVersion   = 2
	eapolTypeKey   = 3
	eapolHeaderLen = 4
	// descTypeRSN is the RSN key descriptor type (802.11-2016 12.7.2).
	descTypeRSN = 2
)

// Offsets of the EAPOL-Key fields in a whole EAPOL frame (802.1X header
// included), IEEE 802.11-2016 Figure 12-32.
const (
	offDescType   = 4
	offKeyInfo    = 5
	offKeyLength  = 7
	offReplay     = 9
	offNonce      = 17
	offIV         = 49
	offRSC        = 65
	offReserved   = 73
	offMIC        = 81
	micLen        = 16 // HMAC-SHA1-128 for AKM 2
	offKeyDataLen = offMIC + micLen
	keyFrameLen   = offKeyDataLen + 2 // fixed part; key data follows
)

// KeyInfo bits (12.7.2, Figure 12-33).
const (
	KeyInfoVersionMask uint16 = 0x0007
	// KeyInfoVersionAES is key descriptor version 2: HMAC-SHA1-128 MIC,
	// AES key wrap of the key data.
	KeyInfoVersionAES uint16 = 2
	KeyInfoPairwise   uint16 = 1 << 3 // Key Type: pairwise (else group)
	KeyInfoInstall    uint16 = 1 << 6
	KeyInfoAck        uint16 = 1 << 7
	KeyInfoMIC        uint16 = 1 << 8
	KeyInfoSecure     uint16 = 1 << 9
	KeyInfoError      uint16 = 1 << 10
	KeyInfoRequest    uint16 = 1 << 11
	KeyInfoEncrypted  uint16 = 1 << 12 // Encrypted Key Data
)

// KeyFrame is a parsed EAPOL-Key frame with an RSN key descriptor.
type KeyFrame struct {
	Version   uint8 // 802.1X protocol version
	KeyInfo   uint16
	KeyLength uint16
	Replay    uint64
	Nonce     [NonceLen]byte
	IV        [16]byte
	RSC       uint64 // Key RSC, little-endian on the wire (PN order)
	Reserved  [8]byte
	MIC       [micLen]byte
	KeyData   []byte // as on the wire: encrypted when KeyInfoEncrypted
}

// Errors of EAPOL-Key parsing.
var (
	ErrEAPOLShort  = errors.New("wpa: EAPOL frame too short")
	ErrNotKey      = errors.New("wpa: EAPOL frame is not an EAPOL-Key frame")
	ErrDescType    = errors.New("wpa: EAPOL-Key descriptor is not RSN")
	ErrBodyLength  = errors.New("wpa: EAPOL body length disagrees with the frame")
	ErrKeyDataLen  = errors.New("wpa: key data length runs past the frame")
	ErrDescVersion = errors.New("wpa: key descriptor version is not 2 (HMAC-SHA1/AES)")
	ErrMICMismatch = errors.New("wpa: EAPOL-Key MIC mismatch")
)

// ParseKeyFrame parses an EAPOL frame (802.1X header first) holding an
// EAPOL-Key frame. Octets after the 802.1X body length (padding of a short
// Ethernet frame) are ignored. KeyData aliases b.
func ParseKeyFrame(b []byte) (*KeyFrame, error) {
	var k KeyFrame
	if err := k.parse(b); err != nil {
		return nil, err
	}
	return &k, nil
}

func (k *KeyFrame) parse(b []byte) error {
	if len(b) < eapolHeaderLen {
		return ErrEAPOLShort
	}
	if b[1] != eapolTypeKey {
		return ErrNotKey
	}
	body := int(binary.BigEndian.Uint16(b[2:4]))
	if eapolHeaderLen+body > len(b) {
		return ErrBodyLength
	}
	b = b[:eapolHeaderLen+body]
	if len(b) < keyFrameLen {
		return ErrEAPOLShort
	}
	if b[offDescType] != descTypeRSN {
		return ErrDescType
	}
	k.Version = b[0]
	k.KeyInfo = binary.BigEndian.Uint16(b[offKeyInfo:])
	if k.KeyInfo&KeyInfoVersionMask != KeyInfoVersionAES {
		return ErrDescVersion
	}
	k.KeyLength = binary.BigEndian.Uint16(b[offKeyLength:])
	k.Replay = binary.BigEndian.Uint64(b[offReplay:])
	copy(k.Nonce[:], b[offNonce:])
	copy(k.IV[:], b[offIV:])
	k.RSC = binary.LittleEndian.Uint64(b[offRSC:])
	copy(k.Reserved[:], b[offReserved:])
	copy(k.MIC[:], b[offMIC:])
	n := int(binary.BigEndian.Uint16(b[offKeyDataLen:]))
	if keyFrameLen+n > len(b) {
		return ErrKeyDataLen
	}
	k.KeyData = b[keyFrameLen : keyFrameLen+n]
	return nil
}

// Marshal returns the EAPOL frame: the 802.1X header and the key
// descriptor, MIC field as set in k.
func (k *KeyFrame) Marshal() []byte {
	b := make([]byte, keyFrameLen+len(k.KeyData))
	b[0] = k.Version
	if b[0] == 0 {
		b[0] = eapolVersion
	}
	b[1] = eapolTypeKey
	binary.BigEndian.PutUint16(b[2:], uint16(len(b)-eapolHeaderLen))
	b[offDescType] = descTypeRSN
	binary.BigEndian.PutUint16(b[offKeyInfo:], k.KeyInfo)
	binary.BigEndian.PutUint16(b[offKeyLength:], k.KeyLength)
	binary.BigEndian.PutUint64(b[offReplay:], k.Replay)
	copy(b[offNonce:], k.Nonce[:])
	copy(b[offIV:], k.IV[:])
	binary.LittleEndian.PutUint64(b[offRSC:], k.RSC)
	copy(b[offReserved:], k.Reserved[:])
	copy(b[offMIC:], k.MIC[:])
	binary.BigEndian.PutUint16(b[offKeyDataLen:], uint16(len(k.KeyData)))
	copy(b[keyFrameLen:], k.KeyData)
	return b
}

// computeMIC returns HMAC-SHA1-128(KCK, frame with the MIC field zeroed)
// (12.7.2: the MIC is computed over the whole EAPOL frame, 802.1X header
// included, with the MIC field 0).
func computeMIC(kck []byte, frame []byte) [micLen]byte {
	mac := hmac.New(sha1.New, kck)
	mac.Write(frame[:offMIC])
	mac.Write(make([]byte, micLen))
	mac.Write(frame[offMIC+micLen:])
	var out [micLen]byte
	copy(out[:], mac.Sum(nil))
	return out
}

// SignKeyFrame writes the MIC into a marshaled EAPOL-Key frame.
func SignKeyFrame(kck []byte, frame []byte) {
	m := computeMIC(kck, frame)
	copy(frame[offMIC:], m[:])
}

// VerifyKeyFrameMIC checks the MIC of a received EAPOL frame (as received,
// padding after the 802.1X body excluded).
func VerifyKeyFrameMIC(kck []byte, frame []byte) error {
	if len(frame) < keyFrameLen {
		return ErrEAPOLShort
	}
	body := int(binary.BigEndian.Uint16(frame[2:4]))
	if eapolHeaderLen+body > len(frame) || eapolHeaderLen+body < keyFrameLen {
		return ErrBodyLength
	}
	frame = frame[:eapolHeaderLen+body]
	want := computeMIC(kck, frame)
	if subtle.ConstantTimeCompare(want[:], frame[offMIC:offMIC+micLen]) != 1 {
		return ErrMICMismatch
	}
	return nil
}

// KDEs and elements in key data (12.7.2, Table 12-6).
const (
	elemRSN      = 48   // RSN element ID
	elemVendor   = 0xdd // vendor-specific element ID, also KDEs
	kdeGTK       = 1    // 00-0F-AC:1 GTK KDE
	gtkKDEHeader = 2    // key ID/Tx octet and a reserved octet
)

// ouiIEEE is the IEEE 802.11 OUI 00-0F-AC of cipher suites, AKMs and KDEs.
var ouiIEEE = [3]byte{0x00, 0x0f, 0xac}

// KeyData is what the handshakes carry in key data.
type KeyData struct {
	RSNE  []byte // the RSN element, ID and length included
	GTK   []byte
	GTKID int
	GTKTx bool
}

// ErrKeyDataFormat is returned for malformed key data.
var ErrKeyDataFormat = errors.New("wpa: malformed key data")

// ParseKeyData walks (decrypted) key data: elements and KDEs until the
// end or until the 0xdd-then-zeros padding (12.7.2). Unknown elements and
// KDEs are skipped. Returned slices alias b.
func ParseKeyData(b []byte) (KeyData, error) {
	var kd KeyData
	for len(b) > 0 {
		if b[0] == elemVendor && allZero(b[1:]) {
			break // padding
		}
		if len(b) < 2 || 2+int(b[1]) > len(b) {
			return kd, ErrKeyDataFormat
		}
		id, body := b[0], b[2:2+int(b[1])]
		whole := b[:2+int(b[1])]
		b = b[2+int(b[1]):]
		switch {
		case id == elemRSN:
			if kd.RSNE != nil {
				return kd, fmt.Errorf("%w: two RSN elements", ErrKeyDataFormat)
			}
			kd.RSNE = whole
		case id == elemVendor && len(body) >= 4 && [3]byte(body[:3]) == ouiIEEE && body[3] == kdeGTK:
			g := body[4:]
			if len(g) < gtkKDEHeader+5 || len(g)-gtkKDEHeader > 32 {
				return kd, fmt.Errorf("%w: GTK KDE length %d", ErrKeyDataFormat, len(body))
			}
			if kd.GTK != nil {
				return kd, fmt.Errorf("%w: two GTK KDEs", ErrKeyDataFormat)
			}
			kd.GTKID = int(g[0] & 0x03)
			kd.GTKTx = g[0]&0x04 != 0
			kd.GTK = g[gtkKDEHeader:]
		}
	}
	return kd, nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// AppendGTKKDE appends a GTK KDE (12.7.2, Figure 12-35): 0xdd, length,
// 00-0F-AC, data type 1, key ID | Tx << 2, reserved, GTK.
func AppendGTKKDE(b []byte, keyID int, tx bool, gtk []byte) []byte {
	flags := byte(keyID & 0x03)
	if tx {
		flags |= 0x04
	}
	b = append(b, elemVendor, byte(4+gtkKDEHeader+len(gtk)))
	b = append(b, ouiIEEE[:]...)
	b = append(b, kdeGTK, flags, 0)
	return append(b, gtk...)
}

// RSN element suite selectors (9.4.2.25): CCMP-128 is 00-0F-AC:4, PSK is
// AKM 00-0F-AC:2.
const (
	suiteCCMP128 = 4
	akmPSK       = 2
)

// RSNElementPSKCCMP returns the RSN element of a WPA2-PSK CCMP-128 network
// (group and pairwise cipher CCMP-128, AKM PSK) with the given RSN
// capabilities, as an AP puts it in beacons and message 3 and a station in
// its association request and message 2.
func RSNElementPSKCCMP(capabilities uint16) []byte {
	return []byte{
		elemRSN, 20,
		1, 0, // version 1
		0x00, 0x0f, 0xac, suiteCCMP128, // group data cipher
		1, 0, 0x00, 0x0f, 0xac, suiteCCMP128, // pairwise
		1, 0, 0x00, 0x0f, 0xac, akmPSK, // AKM
		byte(capabilities), byte(capabilities >> 8),
	}
}
