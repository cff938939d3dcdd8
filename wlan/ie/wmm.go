package ie

import "encoding/binary"

// WMM elements are vendor-specific elements with the Microsoft OUI
// 00:50:F2, OUI type 2 (Wi-Fi Alliance WMM specification 2.2): subtype 0
// is the Information element, subtype 1 the Parameter element, both at
// version 1.
const (
	wmmOUIType      = 2
	WMMSubtypeInfo  = 0
	WMMSubtypeParam = 1
	wmmVersion      = 1
	wmmInfoLen      = 7  // OUI, type, subtype, version, QoS Info
	wmmParamLen     = 24 // ... QoS Info, reserved, 4 AC records
	wmmACRecordLen  = 4
)

var wmmOUI = [3]byte{0x00, 0x50, 0xf2}

func isWMM(body []byte) bool {
	return len(body) >= 5 && body[0] == wmmOUI[0] && body[1] == wmmOUI[1] && body[2] == wmmOUI[2] &&
		body[3] == wmmOUIType && (body[4] == WMMSubtypeInfo || body[4] == WMMSubtypeParam)
}

// Access categories by ACI (WMM 2.2.2; 802.11-2016 Table 9-136).
const (
	ACBE = 0
	ACBK = 1
	ACVI = 2
	ACVO = 3
)

// QoS Info bits of an AP (WMM 2.2.1): parameter set count bits 0-3,
// U-APSD bit 7.
const (
	WMMQoSInfoCountMask = 0x0f
	WMMQoSInfoUAPSD     = 0x80
)

// ACParams is one AC Parameter Record.
type ACParams struct {
	AIFSN     uint8 // 2..15
	ACM       bool  // admission control mandatory
	ECWMin    uint8 // CWmin = 2^ECWMin − 1
	ECWMax    uint8
	TXOPLimit uint16 // in units of 32 µs
}

// WMM is a parsed WMM Information (Param false) or Parameter element.
type WMM struct {
	Param   bool
	QoSInfo uint8
	AC      [4]ACParams // indexed by ACI; Parameter element only
}

// DefaultWMMParams returns the EDCA parameters an AP advertises by
// default: 802.11-2016 Table 9-137 with aCWmin 15 and aCWmax 1023 (OFDM).
func DefaultWMMParams() WMM {
	return WMM{Param: true, AC: [4]ACParams{
		ACBE: {AIFSN: 3, ECWMin: 4, ECWMax: 10},
		ACBK: {AIFSN: 7, ECWMin: 4, ECWMax: 10},
		ACVI: {AIFSN: 2, ECWMin: 3, ECWMax: 4, TXOPLimit: 94}, // 3.008 ms
		ACVO: {AIFSN: 2, ECWMin: 2, ECWMax: 3, TXOPLimit: 47}, // 1.504 ms
	}}
}

// ParseWMM parses the body of a vendor-specific element holding WMM.
func ParseWMM(body []byte) (WMM, error) {
	if !isWMM(body) {
		return WMM{}, ErrValue
	}
	if len(body) < 6 || body[5] != wmmVersion {
		return WMM{}, ErrValue
	}
	w := WMM{Param: body[4] == WMMSubtypeParam}
	if !w.Param {
		if len(body) != wmmInfoLen {
			return WMM{}, ErrLength
		}
		w.QoSInfo = body[6]
		return w, nil
	}
	if len(body) != wmmParamLen {
		return WMM{}, ErrLength
	}
	w.QoSInfo = body[6]
	recs := body[8:]
	var seen uint8
	for i := range 4 {
		r := recs[i*wmmACRecordLen:]
		aci := r[0] >> 5 & 3
		if seen&(1<<aci) != 0 {
			return WMM{}, ErrValue // each access category exactly once
		}
		seen |= 1 << aci
		w.AC[aci] = ACParams{
			AIFSN:     r[0] & 0x0f,
			ACM:       r[0]&0x10 != 0,
			ECWMin:    r[1] & 0x0f,
			ECWMax:    r[1] >> 4,
			TXOPLimit: binary.LittleEndian.Uint16(r[2:]),
		}
	}
	return w, nil
}

// AppendWMM appends a WMM Information or Parameter element.
func AppendWMM(dst []byte, w *WMM) []byte {
	n, sub := wmmInfoLen, byte(WMMSubtypeInfo)
	if w.Param {
		n, sub = wmmParamLen, WMMSubtypeParam
	}
	dst = appendHeader(dst, IDVendor, n)
	dst = append(dst, wmmOUI[0], wmmOUI[1], wmmOUI[2], wmmOUIType, sub, wmmVersion, w.QoSInfo)
	if !w.Param {
		return dst
	}
	dst = append(dst, 0) // reserved
	for aci, ac := range w.AC {
		b0 := ac.AIFSN&0x0f | byte(aci)<<5
		if ac.ACM {
			b0 |= 0x10
		}
		dst = append(dst, b0, ac.ECWMin&0x0f|ac.ECWMax<<4)
		dst = binary.LittleEndian.AppendUint16(dst, ac.TXOPLimit)
	}
	return dst
}
