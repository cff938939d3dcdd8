// Package channel derives a BSS's operating channel (primary channel,
// width, center frequencies) from the HT and VHT Operation elements
// wlan/ie parses.
//
// It is kept apart from element parsing on purpose: FreeBSD's 802.11ac
// bring-up mixed "what the element says" with "what channel we are on" and
// had to untangle it. Parsers report fields as sent; this package applies
// the rules of IEEE 802.11-2016 Table 9-252 (VHT Operation Information
// subfields) and 9.4.2.57 (HT Operation) and rejects inconsistent sets.
package channel

import (
	"errors"
	"fmt"

	"github.com/gowrt/gowrt/wlan/ie"
)

// Band is a frequency band.
type Band uint8

const (
	Band2GHz Band = iota // 2.4 GHz, channels 1-14
	Band5GHz             // 5 GHz, channel n at 5000 + 5n MHz
)

// Width is an operating channel width.
type Width uint8

const (
	Width20 Width = iota
	Width40
	Width80
	Width160
	Width80P80
)

// MHz returns the width in MHz (80+80 counts each segment: 80).
func (w Width) MHz() int {
	switch w {
	case Width40:
		return 40
	case Width80, Width80P80:
		return 80
	case Width160:
		return 160
	}
	return 20
}

func (w Width) String() string {
	if w == Width80P80 {
		return "80+80MHz"
	}
	return fmt.Sprintf("%dMHz", w.MHz())
}

// Channel is an operating channel. Center1 is the channel number at the
// center of the whole channel (of the first segment for 80+80), Center2
// that of the second 80+80 segment, else 0.
type Channel struct {
	Band    Band
	Primary uint8
	Width   Width
	Center1 uint8
	Center2 uint8
}

// Freq returns the center frequency in MHz of channel number ch in band
// (802.11-2016 19.3.15.2 for 2.4 GHz, 19.3.15.3 / Annex E for 5 GHz), or 0
// for a channel the band does not have.
func Freq(b Band, ch uint8) int {
	switch b {
	case Band2GHz:
		switch {
		case ch >= 1 && ch <= 13:
			return 2407 + 5*int(ch)
		case ch == 14:
			return 2484
		}
	case Band5GHz:
		if ch >= 1 && ch <= 200 {
			return 5000 + 5*int(ch)
		}
	}
	return 0
}

// PrimaryFreq, CenterFreq1 and CenterFreq2 return frequencies in MHz
// (CenterFreq2 is 0 unless the width is 80+80).
func (c Channel) PrimaryFreq() int { return Freq(c.Band, c.Primary) }
func (c Channel) CenterFreq1() int { return Freq(c.Band, c.Center1) }
func (c Channel) CenterFreq2() int {
	if c.Center2 == 0 {
		return 0
	}
	return Freq(c.Band, c.Center2)
}

// Errors of derivation.
var (
	ErrNoPrimary    = errors.New("channel: no primary channel (no DS Parameter Set or HT Operation)")
	ErrDSMismatch   = errors.New("channel: DS Parameter Set and HT Operation name different primary channels")
	ErrBadChannel   = errors.New("channel: channel number not in the band")
	ErrSecondary    = errors.New("channel: 40 MHz secondary channel falls outside the band")
	ErrVHTWithoutHT = errors.New("channel: VHT Operation without HT Operation")
	ErrSegments     = errors.New("channel: VHT center frequency segments are inconsistent")
	ErrPrimaryPos   = errors.New("channel: primary channel does not lie in the channel the segments describe")
)

// FromOperation derives the operating channel from what a beacon or probe
// response carries: the DS Parameter Set channel (0 if absent) and the HT
// and VHT Operation elements (nil if absent). VHT Operation is only
// interpreted in the 5 GHz band, where 802.11ac defines it.
func FromOperation(b Band, dsChannel uint8, ht *ie.HTOperation, vht *ie.VHTOperation) (Channel, error) {
	c := Channel{Band: b, Primary: dsChannel, Width: Width20}
	if ht != nil {
		if dsChannel != 0 && dsChannel != ht.Primary {
			return Channel{}, ErrDSMismatch
		}
		c.Primary = ht.Primary
	}
	if c.Primary == 0 {
		return Channel{}, ErrNoPrimary
	}
	if Freq(b, c.Primary) == 0 {
		return Channel{}, ErrBadChannel
	}
	c.Center1 = c.Primary
	if ht == nil {
		if vht != nil && b == Band5GHz {
			return Channel{}, ErrVHTWithoutHT
		}
		return c, nil
	}
	// HT: 40 MHz when a secondary channel is named and the AP allows any
	// width in its supported set (9.4.2.57, STA Channel Width).
	if ht.AnyWidth && ht.SecondaryOffset != ie.SecondaryNone {
		c.Width = Width40
		var secondary int
		switch ht.SecondaryOffset {
		case ie.SecondaryAbove:
			secondary = int(c.Primary) + 4
		case ie.SecondaryBelow:
			secondary = int(c.Primary) - 4
		default:
			return Channel{}, ErrSecondary // the reserved value 2
		}
		// The secondary channel must exist and lie 20 MHz from the
		// primary: this also refuses channel 14, whose irregular
		// spacing leaves no 40 MHz pair.
		if secondary < 1 || secondary > 255 || Freq(b, uint8(secondary)) == 0 ||
			absInt(Freq(b, uint8(secondary))-Freq(b, c.Primary)) != 20 {
			return Channel{}, ErrSecondary
		}
		c.Center1 = uint8((int(c.Primary) + secondary) / 2)
	}
	if vht == nil || b != Band5GHz || vht.ChannelWidth == ie.VHTWidth2040 {
		return c, nil
	}
	if c.Width != Width40 {
		// 80 MHz and wider need the HT 40 MHz setup underneath
		// (the secondary 20 MHz channel).
		return Channel{}, ErrSegments
	}
	ht40Center := c.Center1
	switch vht.ChannelWidth {
	case ie.VHTWidth80:
		seg1 := vht.CCFS1
		if seg1 == 0 {
			// 802.11-2016 moved the second segment into HT Operation's
			// CCFS2 for stations using extended NSS bandwidth support.
			seg1 = ht.CCFS2
		}
		d := absDiff(seg1, vht.CCFS0)
		switch {
		case seg1 == 0:
			c.Width, c.Center1 = Width80, vht.CCFS0
		case d == 8:
			c.Width, c.Center1 = Width160, seg1
		case d > 16:
			c.Width, c.Center1, c.Center2 = Width80P80, vht.CCFS0, seg1
		default:
			return Channel{}, ErrSegments
		}
	case ie.VHTWidth160:
		c.Width, c.Center1 = Width160, vht.CCFS0
	case ie.VHTWidth80P80:
		if absDiff(vht.CCFS0, vht.CCFS1) <= 16 {
			return Channel{}, ErrSegments
		}
		c.Width, c.Center1, c.Center2 = Width80P80, vht.CCFS0, vht.CCFS1
	}
	if Freq(b, c.Center1) == 0 || (c.Center2 != 0 && Freq(b, c.Center2) == 0) {
		return Channel{}, ErrBadChannel
	}
	// The primary 20 MHz channel and its 40 MHz pair must sit in the
	// block (the first segment for 80+80): 20 MHz subchannels lie at
	// center − (w/2 − 10)/5 + 4i, and the HT 40 MHz channel containing
	// the primary must be one of the aligned pairs.
	span := c.Width.MHz()
	lowest := int(c.Center1) - (span/2-10)/5
	off := int(c.Primary) - lowest
	if off < 0 || off%4 != 0 || off/4 >= span/20 {
		return Channel{}, ErrPrimaryPos
	}
	pairCenter := lowest + (off/8)*8 + 2
	if int(ht40Center) != pairCenter {
		return Channel{}, ErrPrimaryPos
	}
	return c, nil
}

func absDiff(a, b uint8) int {
	if a > b {
		return int(a - b)
	}
	return int(b - a)
}

func absInt(a int) int {
	if a < 0 {
		return -a
	}
	return a
}
