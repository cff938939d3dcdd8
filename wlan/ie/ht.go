package ie

import "encoding/binary"

// HT Capabilities Information bits (802.11-2016 9.4.2.56.2, Figure 9-331).
const (
	HTCapLDPC         uint16 = 0x0001
	HTCapWidth40      uint16 = 0x0002 // supported channel width set: 20/40
	HTCapSMPSMask     uint16 = 0x000c
	HTCapSMPSDisabled uint16 = 0x000c
	HTCapGreenfield   uint16 = 0x0010
	HTCapSGI20        uint16 = 0x0020
	HTCapSGI40        uint16 = 0x0040
	HTCapTxSTBC       uint16 = 0x0080
	HTCapRxSTBCMask   uint16 = 0x0300
	HTCapRxSTBCShift         = 8
	HTCapDelayedBA    uint16 = 0x0400
	HTCapMaxAMSDU7935 uint16 = 0x0800
	HTCapDSSSCCK40    uint16 = 0x1000
	HTCap40Intolerant uint16 = 0x4000
	HTCapLSIGTXOP     uint16 = 0x8000
)

const (
	htCapLen  = 26
	htOpLen   = 22
	mcsSetLen = 16
)

// HTCapabilities is a parsed HT Capabilities element (802.11-2016
// 9.4.2.56).
type HTCapabilities struct {
	Info        uint16
	AMPDUParams uint8 // maximum A-MPDU length exponent bits 0-1, minimum MPDU start spacing bits 2-4
	MCS         [mcsSetLen]byte
	ExtCap      uint16
	TxBF        uint32
	ASEL        uint8
}

// ParseHTCapabilities parses an HT Capabilities body.
func ParseHTCapabilities(body []byte) (HTCapabilities, error) {
	if len(body) != htCapLen {
		return HTCapabilities{}, ErrLength
	}
	var c HTCapabilities
	c.Info = binary.LittleEndian.Uint16(body)
	c.AMPDUParams = body[2]
	copy(c.MCS[:], body[3:19])
	c.ExtCap = binary.LittleEndian.Uint16(body[19:])
	c.TxBF = binary.LittleEndian.Uint32(body[21:])
	c.ASEL = body[25]
	return c, nil
}

// AppendHTCapabilities appends an HT Capabilities element.
func AppendHTCapabilities(dst []byte, c *HTCapabilities) []byte {
	dst = appendHeader(dst, IDHTCapabilities, htCapLen)
	dst = binary.LittleEndian.AppendUint16(dst, c.Info)
	dst = append(dst, c.AMPDUParams)
	dst = append(dst, c.MCS[:]...)
	dst = binary.LittleEndian.AppendUint16(dst, c.ExtCap)
	dst = binary.LittleEndian.AppendUint32(dst, c.TxBF)
	return append(dst, c.ASEL)
}

// MaxAMPDULen returns the largest A-MPDU the station can receive:
// 2^(13+exponent) − 1 bytes (802.11-2016 9.4.2.56.3).
func (c *HTCapabilities) MaxAMPDULen() int { return 1<<(13+c.AMPDUParams&3) - 1 }

// MinMPDUSpacing returns the minimum MPDU start spacing code (0 = no
// restriction, 1..7 = 1/4, 1/2, 1, 2, 4, 8, 16 µs).
func (c *HTCapabilities) MinMPDUSpacing() uint8 { return c.AMPDUParams >> 2 & 7 }

// RxMCS reports whether the Rx MCS bitmask (bits 0-76 of the Supported
// MCS Set) includes MCS i.
func (c *HTCapabilities) RxMCS(i int) bool {
	return i >= 0 && i <= 76 && c.MCS[i/8]&(1<<(i%8)) != 0
}

// SetRxMCS adds MCS i to the Rx MCS bitmask.
func (c *HTCapabilities) SetRxMCS(i int) {
	if i >= 0 && i <= 76 {
		c.MCS[i/8] |= 1 << (i % 8)
	}
}

// Secondary channel offsets of HT Operation (802.11-2016 9.4.2.57).
const (
	SecondaryNone  = 0 // SCN
	SecondaryAbove = 1 // SCA
	SecondaryBelow = 3 // SCB
)

// HT protection modes (802.11-2016 9.4.2.57).
const (
	HTProtNone       = 0
	HTProtNonmember  = 1
	HTProt20MHz      = 2
	HTProtNonHTMixed = 3
)

// HTOperation is a parsed HT Operation element (802.11-2016 9.4.2.57).
type HTOperation struct {
	Primary         uint8
	SecondaryOffset uint8 // SecondaryNone, SecondaryAbove or SecondaryBelow
	AnyWidth        bool  // STA Channel Width: 1 = any channel width in the supported set
	RIFS            bool
	Protection      uint8
	NonGreenfield   bool
	OBSSNonHT       bool
	CCFS2           uint8  // channel center frequency segment 2 (802.11-2016 addition)
	Info45          uint16 // octets 4-5 of HT Operation Information, as sent
	BasicMCS        [mcsSetLen]byte
}

const (
	htOpSecondaryMask = 0x03
	htOpWidth         = 0x04
	htOpRIFS          = 0x08
	htOpProtMask      = 0x0003
	htOpNonGF         = 0x0004
	htOpOBSS          = 0x0010
	htOpCCFS2Shift    = 5
)

// ParseHTOperation parses an HT Operation body.
func ParseHTOperation(body []byte) (HTOperation, error) {
	if len(body) != htOpLen {
		return HTOperation{}, ErrLength
	}
	o := HTOperation{Primary: body[0]}
	o.SecondaryOffset = body[1] & htOpSecondaryMask
	if o.SecondaryOffset == 2 {
		return HTOperation{}, ErrValue // reserved
	}
	o.AnyWidth = body[1]&htOpWidth != 0
	o.RIFS = body[1]&htOpRIFS != 0
	w := binary.LittleEndian.Uint16(body[2:])
	o.Protection = uint8(w & htOpProtMask)
	o.NonGreenfield = w&htOpNonGF != 0
	o.OBSSNonHT = w&htOpOBSS != 0
	o.CCFS2 = uint8(w >> htOpCCFS2Shift)
	o.Info45 = binary.LittleEndian.Uint16(body[4:])
	copy(o.BasicMCS[:], body[6:])
	return o, nil
}

// AppendHTOperation appends an HT Operation element.
func AppendHTOperation(dst []byte, o *HTOperation) []byte {
	dst = appendHeader(dst, IDHTOperation, htOpLen)
	b1 := o.SecondaryOffset & htOpSecondaryMask
	if o.AnyWidth {
		b1 |= htOpWidth
	}
	if o.RIFS {
		b1 |= htOpRIFS
	}
	w := uint16(o.Protection)&htOpProtMask | uint16(o.CCFS2)<<htOpCCFS2Shift
	if o.NonGreenfield {
		w |= htOpNonGF
	}
	if o.OBSSNonHT {
		w |= htOpOBSS
	}
	dst = append(dst, o.Primary, b1)
	dst = binary.LittleEndian.AppendUint16(dst, w)
	dst = binary.LittleEndian.AppendUint16(dst, o.Info45)
	return append(dst, o.BasicMCS[:]...)
}
