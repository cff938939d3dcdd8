package wlan

import (
	"encoding/binary"
	"errors"
)

// Capability Information bits (802.11-2016 9.4.1.4, Figure 9-68).
const (
	CapESS               uint16 = 0x0001
	CapIBSS              uint16 = 0x0002
	CapPrivacy           uint16 = 0x0010
	CapShortPreamble     uint16 = 0x0020
	CapSpectrumMgmt      uint16 = 0x0100
	CapQoS               uint16 = 0x0200
	CapShortSlotTime     uint16 = 0x0400
	CapAPSD              uint16 = 0x0800
	CapRadioMeasure      uint16 = 0x1000
	CapDelayedBlockAck   uint16 = 0x4000
	CapImmediateBlockAck uint16 = 0x8000
)

// Authentication algorithms (802.11-2016 9.4.1.1).
const (
	AuthOpenSystem uint16 = 0
	AuthSharedKey  uint16 = 1
	AuthFT         uint16 = 2
	AuthSAE        uint16 = 3
)

// Status codes (802.11-2016 9.4.1.9, Table 9-46), those an AP sends.
const (
	StatusSuccess                uint16 = 0
	StatusUnspecified            uint16 = 1
	StatusCapsUnsupported        uint16 = 10
	StatusReassocNoAssoc         uint16 = 11
	StatusAssocDeniedUnspec      uint16 = 12
	StatusAuthAlgUnsupported     uint16 = 13
	StatusAuthSeqUnexpected      uint16 = 14
	StatusAPFull                 uint16 = 17 // too many associated STAs
	StatusRatesUnsupported       uint16 = 18
	StatusRequestDeclined        uint16 = 37
	StatusInvalidParameters      uint16 = 38
	StatusInvalidIE              uint16 = 40
	StatusInvalidGroupCipher     uint16 = 41
	StatusInvalidPairwiseCipher  uint16 = 42
	StatusInvalidAKMP            uint16 = 43
	StatusUnsupportedRSNVersion  uint16 = 44
	StatusInvalidRSNCapabilities uint16 = 45
	StatusCipherRejectedPolicy   uint16 = 46
)

// Reason codes (802.11-2016 9.4.1.7, Table 9-45).
const (
	ReasonUnspecified            uint16 = 1
	ReasonPrevAuthInvalid        uint16 = 2
	ReasonDeauthLeaving          uint16 = 3
	ReasonInactivity             uint16 = 4
	ReasonAPFull                 uint16 = 5
	ReasonClass2FromNonAuth      uint16 = 6
	ReasonClass3FromNonAssoc     uint16 = 7
	ReasonDisassocLeaving        uint16 = 8
	ReasonNotAuthenticated       uint16 = 9
	ReasonInvalidIE              uint16 = 13
	ReasonMICFailure             uint16 = 14
	Reason4WayTimeout            uint16 = 15
	ReasonGroupKeyTimeout        uint16 = 16
	ReasonIEMismatch             uint16 = 17 // IE in 4-way handshake differs from (re)assoc
	ReasonInvalidGroupCipher     uint16 = 18
	ReasonInvalidPairwiseCipher  uint16 = 19
	ReasonInvalidAKMP            uint16 = 20
	ReasonUnsupportedRSNVersion  uint16 = 21
	ReasonInvalidRSNCapabilities uint16 = 22
	Reason8021XFailed            uint16 = 23
	ReasonCipherRejected         uint16 = 24
	ReasonEndBA                  uint16 = 37 // DELBA: the peer no longer uses the agreement
	ReasonUnknownBA              uint16 = 38
	ReasonTimeout                uint16 = 39 // DELBA: BA timeout
)

// AID bits: an AID field carries the association ID in bits 0-13 with bits
// 14 and 15 set (802.11-2016 9.4.1.8; PS-Poll 9.3.1.5).
const (
	aidFlags = 0xc000
	// MaxAID is the largest association ID (802.11-2016 9.4.1.8).
	MaxAID = 2007
)

// ErrBody is returned for a management or control body too short for its
// fixed fields.
var ErrBody = errors.New("wlan: frame body shorter than its fixed fields")

// Beacon is the body of a beacon or probe response (802.11-2016 9.3.3.3,
// 9.3.3.11): fixed fields, then elements.
type Beacon struct {
	Timestamp  uint64 // TSF in microseconds
	Interval   uint16 // beacon interval in TU (1024 µs)
	Capability uint16
	IEs        []byte
}

const beaconFixedLen = 12

// ParseBeacon parses a beacon or probe response body.
func ParseBeacon(body []byte) (Beacon, error) {
	if len(body) < beaconFixedLen {
		return Beacon{}, ErrBody
	}
	return Beacon{
		Timestamp:  binary.LittleEndian.Uint64(body),
		Interval:   binary.LittleEndian.Uint16(body[8:]),
		Capability: binary.LittleEndian.Uint16(body[10:]),
		IEs:        body[beaconFixedLen:],
	}, nil
}

// Append appends the body.
func (b *Beacon) Append(dst []byte) []byte {
	dst = binary.LittleEndian.AppendUint64(dst, b.Timestamp)
	dst = binary.LittleEndian.AppendUint16(dst, b.Interval)
	dst = binary.LittleEndian.AppendUint16(dst, b.Capability)
	return append(dst, b.IEs...)
}

// TimestampOffset is where the timestamp sits in a beacon frame with a
// 24-byte header: hardware that stamps the TSF at transmission writes there.
const TimestampOffset = MgmtHeaderLen

// Auth is an authentication frame body (802.11-2016 9.3.3.12).
type Auth struct {
	Algorithm uint16
	Seq       uint16 // transaction sequence number: 1 request, 2 response for open system
	Status    uint16
	IEs       []byte // challenge text, SAE fields, ...
}

const authFixedLen = 6

// ParseAuth parses an authentication body.
func ParseAuth(body []byte) (Auth, error) {
	if len(body) < authFixedLen {
		return Auth{}, ErrBody
	}
	return Auth{
		Algorithm: binary.LittleEndian.Uint16(body),
		Seq:       binary.LittleEndian.Uint16(body[2:]),
		Status:    binary.LittleEndian.Uint16(body[4:]),
		IEs:       body[authFixedLen:],
	}, nil
}

// Append appends the body.
func (a *Auth) Append(dst []byte) []byte {
	dst = binary.LittleEndian.AppendUint16(dst, a.Algorithm)
	dst = binary.LittleEndian.AppendUint16(dst, a.Seq)
	dst = binary.LittleEndian.AppendUint16(dst, a.Status)
	return append(dst, a.IEs...)
}

// AssocReq is an association or reassociation request body (802.11-2016
// 9.3.3.6, 9.3.3.8); CurrentAP is present in reassociation only.
type AssocReq struct {
	Capability     uint16
	ListenInterval uint16 // in beacon intervals
	CurrentAP      MAC
	IEs            []byte
}

// ParseAssocReq parses an (re)association request body; reassoc selects
// the reassociation layout.
func ParseAssocReq(body []byte, reassoc bool) (AssocReq, error) {
	n := 4
	if reassoc {
		n += 6
	}
	if len(body) < n {
		return AssocReq{}, ErrBody
	}
	r := AssocReq{
		Capability:     binary.LittleEndian.Uint16(body),
		ListenInterval: binary.LittleEndian.Uint16(body[2:]),
		IEs:            body[n:],
	}
	if reassoc {
		copy(r.CurrentAP[:], body[4:10])
	}
	return r, nil
}

// Append appends the body; reassoc includes the current AP address.
func (r *AssocReq) Append(dst []byte, reassoc bool) []byte {
	dst = binary.LittleEndian.AppendUint16(dst, r.Capability)
	dst = binary.LittleEndian.AppendUint16(dst, r.ListenInterval)
	if reassoc {
		dst = append(dst, r.CurrentAP[:]...)
	}
	return append(dst, r.IEs...)
}

// AssocResp is an (re)association response body (802.11-2016 9.3.3.7,
// 9.3.3.9).
type AssocResp struct {
	Capability uint16
	Status     uint16
	AID        uint16 // 1..MaxAID, without the two high bits the field carries
	IEs        []byte
}

const assocRespFixedLen = 6

// ParseAssocResp parses an (re)association response body.
func ParseAssocResp(body []byte) (AssocResp, error) {
	if len(body) < assocRespFixedLen {
		return AssocResp{}, ErrBody
	}
	return AssocResp{
		Capability: binary.LittleEndian.Uint16(body),
		Status:     binary.LittleEndian.Uint16(body[2:]),
		AID:        binary.LittleEndian.Uint16(body[4:]) &^ aidFlags,
		IEs:        body[assocRespFixedLen:],
	}, nil
}

// Append appends the body, setting the AID field's two high bits.
func (r *AssocResp) Append(dst []byte) []byte {
	dst = binary.LittleEndian.AppendUint16(dst, r.Capability)
	dst = binary.LittleEndian.AppendUint16(dst, r.Status)
	dst = binary.LittleEndian.AppendUint16(dst, r.AID|aidFlags)
	return append(dst, r.IEs...)
}

// ParseReason returns the reason code of a deauthentication or
// disassociation body (802.11-2016 9.3.3.5, 9.3.3.13).
func ParseReason(body []byte) (uint16, error) {
	if len(body) < 2 {
		return 0, ErrBody
	}
	return binary.LittleEndian.Uint16(body), nil
}

// AppendReason appends a deauthentication or disassociation body.
func AppendReason(dst []byte, reason uint16) []byte {
	return binary.LittleEndian.AppendUint16(dst, reason)
}

// AppendMgmtHeader appends a management frame header: to da from sa in
// bssid's BSS, sequence number seq, fragment 0. FlagOrder is cleared:
// the header written has no HT Control field.
func AppendMgmtHeader(dst []byte, k Kind, flags FrameControl, da, sa, bssid MAC, seq uint16) []byte {
	h := Header{FC: NewFrameControl(k, flags&^FlagOrder), Addr1: da, Addr2: sa, Addr3: bssid, Seq: NewSeqControl(seq, 0)}
	return AppendHeader(dst, &h)
}
