package ie

import "encoding/binary"

const (
	vhtCapLen = 12
	vhtOpLen  = 5
)

// VHT Capabilities Information fields (802.11-2016 9.4.2.158.2).
const (
	VHTCapMaxMPDUMask      uint32 = 0x00000003
	VHTCapWidthSetMask     uint32 = 0x0000000c // 0: 80, 1: 160, 2: 160 and 80+80
	VHTCapWidthSetShift           = 2
	VHTCapRxLDPC           uint32 = 0x00000010
	VHTCapSGI80            uint32 = 0x00000020
	VHTCapSGI160           uint32 = 0x00000040
	VHTCapTxSTBC           uint32 = 0x00000080
	VHTCapMaxAMPDUExpShift        = 23
	VHTCapMaxAMPDUExpMask  uint32 = 0x03800000
	VHTCapExtNSSBWShift           = 30
)

// VHTCapabilities is a parsed VHT Capabilities element (802.11-2016
// 9.4.2.158): capabilities information and the Supported VHT-MCS and NSS
// Set (2-bit maximum MCS per spatial stream: 0 → MCS 0-7, 1 → 0-8,
// 2 → 0-9, 3 → not supported).
type VHTCapabilities struct {
	Info      uint32
	RxMCSMap  uint16
	RxHighest uint16 // bits 0-12: highest long-GI data rate in Mb/s
	TxMCSMap  uint16
	TxHighest uint16 // bit 13: extended NSS BW capable
}

// ParseVHTCapabilities parses a VHT Capabilities body.
func ParseVHTCapabilities(body []byte) (VHTCapabilities, error) {
	if len(body) != vhtCapLen {
		return VHTCapabilities{}, ErrLength
	}
	return VHTCapabilities{
		Info:      binary.LittleEndian.Uint32(body),
		RxMCSMap:  binary.LittleEndian.Uint16(body[4:]),
		RxHighest: binary.LittleEndian.Uint16(body[6:]),
		TxMCSMap:  binary.LittleEndian.Uint16(body[8:]),
		TxHighest: binary.LittleEndian.Uint16(body[10:]),
	}, nil
}

// AppendVHTCapabilities appends a VHT Capabilities element.
func AppendVHTCapabilities(dst []byte, c *VHTCapabilities) []byte {
	dst = appendHeader(dst, IDVHTCapabilities, vhtCapLen)
	dst = binary.LittleEndian.AppendUint32(dst, c.Info)
	dst = binary.LittleEndian.AppendUint16(dst, c.RxMCSMap)
	dst = binary.LittleEndian.AppendUint16(dst, c.RxHighest)
	dst = binary.LittleEndian.AppendUint16(dst, c.TxMCSMap)
	return binary.LittleEndian.AppendUint16(dst, c.TxHighest)
}

// MaxAMPDULen returns the largest A-MPDU the station can receive:
// 2^(13+exponent) − 1 bytes, exponent 0..7.
func (c *VHTCapabilities) MaxAMPDULen() int {
	return 1<<(13+(c.Info&VHTCapMaxAMPDUExpMask)>>VHTCapMaxAMPDUExpShift) - 1
}

// RxMaxMCS returns the highest receive MCS for nss spatial streams (1..8),
// or -1 when that many streams are not supported.
func (c *VHTCapabilities) RxMaxMCS(nss int) int { return mcsMapMax(c.RxMCSMap, nss) }

func mcsMapMax(m uint16, nss int) int {
	if nss < 1 || nss > 8 {
		return -1
	}
	v := m >> (2 * (nss - 1)) & 3
	if v == 3 {
		return -1
	}
	return 7 + int(v)
}

// VHT Operation channel widths (802.11-2016 Table 9-252).
const (
	VHTWidth2040  = 0 // 20 or 40 MHz, as HT Operation says
	VHTWidth80    = 1 // 80, 160 or 80+80 MHz, by the center frequency segments
	VHTWidth160   = 2 // deprecated encoding of 160 MHz
	VHTWidth80P80 = 3 // deprecated encoding of 80+80 MHz
)

// VHTOperation is a parsed VHT Operation element (802.11-2016 9.4.2.159).
// The fields are as sent; wlan/channel interprets them.
type VHTOperation struct {
	ChannelWidth uint8
	CCFS0        uint8 // channel center frequency segment 0 (a channel number)
	CCFS1        uint8 // channel center frequency segment 1
	BasicMCSMap  uint16
}

// ParseVHTOperation parses a VHT Operation body.
func ParseVHTOperation(body []byte) (VHTOperation, error) {
	if len(body) != vhtOpLen {
		return VHTOperation{}, ErrLength
	}
	o := VHTOperation{
		ChannelWidth: body[0],
		CCFS0:        body[1],
		CCFS1:        body[2],
		BasicMCSMap:  binary.LittleEndian.Uint16(body[3:]),
	}
	if o.ChannelWidth > VHTWidth80P80 {
		return VHTOperation{}, ErrValue
	}
	return o, nil
}

// AppendVHTOperation appends a VHT Operation element.
func AppendVHTOperation(dst []byte, o *VHTOperation) []byte {
	dst = appendHeader(dst, IDVHTOperation, vhtOpLen)
	dst = append(dst, o.ChannelWidth, o.CCFS0, o.CCFS1)
	return binary.LittleEndian.AppendUint16(dst, o.BasicMCSMap)
}
