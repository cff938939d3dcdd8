// Package ht is what the AP and the station share of 802.11n: the HT
// Capabilities and Operation elements they advertise for a channel
// configuration, a peer's capabilities turned into rate.Caps for the
// rate tables of ath/rate, the user priority (TID) of an outgoing frame,
// and the receive side of Block Ack agreements (Rx: wlan/ba recipients
// with their reorder buffers holding frame copies, released in order).
package ht

import (
	"encoding/binary"

	"github.com/gowrt/gowrt/ath/agg"
	"github.com/gowrt/gowrt/ath/rate"
	"github.com/gowrt/gowrt/wlan/ie"
)

// Config is an interface's HT setup.
type Config struct {
	// Width40: 20/40 MHz operation with the secondary channel above
	// (Above) or below the primary.
	Width40, Above bool
	// SGI: short guard interval in the widths in use.
	SGI bool
	// Streams is the number of spatial streams (1..4; 0 means 2).
	Streams int
}

const (
	// ampduExp64K is the Maximum A-MPDU Length Exponent for 65535
	// octets (802.11-2016 9.4.2.56.3).
	ampduExp64K = 3
	// density8us is the Minimum MPDU Start Spacing code for 8 µs, what
	// ath9k advertises for its chips (init.c, IEEE80211_HT_MPDU_DENSITY_8).
	density8us = 6
	// txMCSSetDefined is bit 96 of the Supported MCS Set: the Tx MCS set
	// is the Rx one (802.11-2016 9.4.2.56.4).
	txMCSSetDefined = 0x01
)

// streams returns the stream count, defaulted and bounded.
func (c *Config) streams() int {
	switch {
	case c.Streams <= 0:
		return 2
	case c.Streams > 4:
		return 4
	}
	return c.Streams
}

// Capabilities is the HT Capabilities element of this configuration:
// MCS 0..8·streams−1, SM power save disabled, 3839-octet A-MSDUs,
// 64 KiB A-MPDUs.
func (c *Config) Capabilities() ie.HTCapabilities {
	cp := ie.HTCapabilities{Info: ie.HTCapSMPSDisabled, AMPDUParams: ampduExp64K | density8us<<2}
	if c.Width40 {
		cp.Info |= ie.HTCapWidth40
	}
	if c.SGI {
		cp.Info |= ie.HTCapSGI20
		if c.Width40 {
			cp.Info |= ie.HTCapSGI40
		}
	}
	for i := 0; i < 8*c.streams(); i++ {
		cp.SetRxMCS(i)
	}
	cp.MCS[12] = txMCSSetDefined
	return cp
}

// Operation is the HT Operation element of an AP on primary channel ch.
func (c *Config) Operation(ch uint8) ie.HTOperation {
	op := ie.HTOperation{Primary: ch, SecondaryOffset: ie.SecondaryNone, Protection: ie.HTProtNone}
	if c.Width40 {
		op.AnyWidth = true
		op.SecondaryOffset = ie.SecondaryBelow
		if c.Above {
			op.SecondaryOffset = ie.SecondaryAbove
		}
	}
	return op
}

// ofdmRates are the OFDM rates in kb/s (802.11-2016 17.3.5.7), the
// legacy rates an HT interface on either band shares with its peers.
var ofdmRates = []uint32{6000, 9000, 12000, 18000, 24000, 36000, 48000, 54000}

// RateCaps is this configuration's own rate.Caps.
func (c *Config) RateCaps() rate.Caps {
	cp := c.Capabilities()
	return rate.Caps{Legacy: ofdmRates, MCS: mcsMask(&cp), HT40: c.Width40, SGI: c.SGI}
}

// LegacyCaps are the rate capabilities of a peer without HT.
func LegacyCaps() rate.Caps { return rate.Caps{Legacy: ofdmRates} }

func mcsMask(cp *ie.HTCapabilities) uint32 { return binary.LittleEndian.Uint32(cp.MCS[:4]) }

// PeerCaps turns a peer's HT Capabilities into the rate.Caps of the link
// with us: 40 MHz only when both use it, short GI when the peer supports
// it at the width in use and we use it, its A-MPDU limits.
func (c *Config) PeerCaps(p *ie.HTCapabilities) rate.Caps {
	w40 := c.Width40 && p.Info&ie.HTCapWidth40 != 0
	sgi := p.Info&ie.HTCapSGI20 != 0
	if w40 {
		sgi = p.Info&ie.HTCapSGI40 != 0
	}
	max := p.MaxAMPDULen()
	if max > agg.MaxPSDU {
		max = agg.MaxPSDU
	}
	return rate.Caps{Legacy: ofdmRates, MCS: mcsMask(p), HT40: w40, SGI: sgi && c.SGI,
		MaxAMPDU: max, Density: p.MinMPDUSpacing()}
}

// EtherTypes whose priority comes from the IP header.
const (
	etherTypeIPv4  = 0x0800
	etherTypeIPv6  = 0x86dd
	etherTypeEAPOL = 0x888e
	// tidVoice is user priority 7 (AC_VO), where mac80211 sends EAPOL
	// frames so that a busy link does not stall a handshake.
	tidVoice = 7
)

// TID returns the user priority (802.1D) of an MSDU from its IP header:
// the three precedence bits of the DSCP (the default mapping of
// cfg80211_classify8021d, RFC 2474's class selectors), 0 (best effort)
// for anything else.
func TID(etherType uint16, payload []byte) uint8 {
	switch etherType {
	case etherTypeIPv4:
		if len(payload) >= 2 && payload[0]>>4 == 4 {
			return payload[1] >> 5
		}
	case etherTypeIPv6:
		if len(payload) >= 2 && payload[0]>>4 == 6 {
			tc := payload[0]<<4 | payload[1]>>4
			return tc >> 5
		}
	case etherTypeEAPOL:
		return tidVoice
	}
	return 0
}

// PeerHT takes a peer's HT Capabilities from its elements when it runs
// HT with WMM (QoS data needs both, 802.11-2016 10.2.4.2): False when
// either element is missing or does not parse, and the peer gets legacy
// data.
func PeerHT(es *ie.Elements) (ie.HTCapabilities, bool) {
	if es.HTCapabilities == nil || es.WMM == nil {
		return ie.HTCapabilities{}, false
	}
	caps, err := ie.ParseHTCapabilities(es.HTCapabilities)
	if err != nil {
		return ie.HTCapabilities{}, false
	}
	if _, err := ie.ParseWMM(es.WMM); err != nil {
		return ie.HTCapabilities{}, false
	}
	return caps, true
}
