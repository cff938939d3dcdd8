package medium

import (
	"encoding/binary"

	"github.com/gowrt/gowrt/ath/airtime"
	"github.com/gowrt/gowrt/wlan/radio"
)

// Radiotap fields (radiotap.org, "Defined fields"): present-bitmap bit,
// then the field's alignment and size.
const (
	rtFlags    = 1  // u8
	rtRate     = 2  // u8, 500 kb/s units
	rtChannel  = 3  // u16 MHz, u16 flags; align 2
	rtSignal   = 5  // s8 dBm
	rtNoise    = 6  // s8 dBm
	rtMCS      = 19 // u8 known, u8 flags, u8 mcs
	rtAMPDU    = 20 // u32 reference, u16 flags, u8 delim CRC, u8 reserved; align 4
	rtChan2GHz = 0x0080
	rtChan5GHz = 0x0100
	rtChanOFDM = 0x0040
	rtChanCCK  = 0x0020
	// rtMCSKnown: bandwidth, MCS index, guard interval, HT format, FEC
	// type, STBC and Ness are known (all zero in the flags but the
	// bandwidth and GI: HT-mixed, BCC, no STBC, no extension streams).
	rtMCSKnown  = 0x01 | 0x02 | 0x04 | 0x08 | 0x10 | 0x20 | 0x40
	rtMCSBW40   = 0x01
	rtMCSSGI    = 0x04
	rtAMPDULast = 0x0004 | 0x0008 // last-subframe flag known, this is the last
	// noiseFloorDBm is the noise floor the signal field is relative to
	// (thermal noise in 20 MHz plus a typical noise figure).
	noiseFloorDBm = -95
)

// rtInfo is what a radiotap header describes about one frame on the air.
type rtInfo struct {
	rate    airtime.Rate
	ch      radio.Channel
	snr     int
	inAMPDU bool
	last    bool
	ref     uint32
}

// chanFreq returns the centre frequency of a primary channel in MHz
// (802.11-2016 17.3.8.4.2 / 19.3.15.2).
func chanFreq(c radio.Channel) uint16 {
	switch {
	case c.Band5G:
		return 5000 + 5*uint16(c.Number)
	case c.Number == 14:
		return 2484
	default:
		return 2407 + 5*uint16(c.Number)
	}
}

// appendRadiotap appends a radiotap header for one frame to dst.
func appendRadiotap(dst []byte, in *rtInfo) []byte {
	start := len(dst)
	present := uint32(1<<rtFlags | 1<<rtChannel | 1<<rtSignal | 1<<rtNoise)
	ht := in.rate.Mod == airtime.HT
	if ht {
		present |= 1 << rtMCS
		if in.inAMPDU {
			present |= 1 << rtAMPDU
		}
	} else {
		present |= 1 << rtRate
	}
	dst = append(dst, 0, 0, 0, 0)
	dst = binary.LittleEndian.AppendUint32(dst, present)
	dst = append(dst, 0) // flags: no FCS in the frame
	if ht {
		dst = append(dst, 0) // pad the channel to 2
	} else {
		dst = append(dst, byte(in.rate.Kbps/500))
	}
	flags := uint16(rtChanOFDM)
	if in.rate.Mod == airtime.CCK {
		flags = rtChanCCK
	}
	if in.ch.Band5G {
		flags |= rtChan5GHz
	} else {
		flags |= rtChan2GHz
	}
	dst = binary.LittleEndian.AppendUint16(dst, chanFreq(in.ch))
	dst = binary.LittleEndian.AppendUint16(dst, flags)
	sig := noiseFloorDBm + in.snr
	if sig > 0 {
		sig = 0
	}
	noise := int8(noiseFloorDBm)
	dst = append(dst, byte(int8(sig)), byte(noise))
	if ht {
		var f byte
		if in.rate.HT40 {
			f |= rtMCSBW40
		}
		if in.rate.SGI {
			f |= rtMCSSGI
		}
		dst = append(dst, rtMCSKnown, f, in.rate.MCS)
		if in.inAMPDU {
			dst = append(dst, 0) // align to 4
			dst = binary.LittleEndian.AppendUint32(dst, in.ref)
			var af uint16
			if in.last {
				af = rtAMPDULast
			} else {
				af = 0x0004
			}
			dst = binary.LittleEndian.AppendUint16(dst, af)
			dst = append(dst, 0, 0)
		}
	}
	binary.LittleEndian.PutUint16(dst[start+2:], uint16(len(dst)-start))
	return dst
}
