package ht

import (
	"github.com/gowrt/gowrt/wlan"
	"github.com/gowrt/gowrt/wlan/wpa"
)

// MSDUs walks the subframes of a received A-MSDU (802.11-2016 9.3.2.2),
// keeping only those an AP or a station may bridge: subframes that do not
// parse, or that carry EAPOL (never sent inside an A-MSDU: the handshake
// runs before aggregation), are skipped and counted in Bad, and so is a
// truncated last subframe.
type MSDUs struct {
	rd wlan.AMSDUReader
	// Bad counts the subframes skipped so far.
	Bad uint64
}

// OpenAMSDU starts a walk over body. False: its first subframe has the
// LLCMimicDA destination, a plain MSDU turned into an A-MSDU by a
// flipped bit, and the whole frame is to be dropped.
func OpenAMSDU(body []byte) (MSDUs, bool) {
	if len(body) >= 6 && [6]byte(body[:6]) == LLCMimicDA {
		return MSDUs{}, false
	}
	return MSDUs{rd: wlan.NewAMSDUReader(body)}, true
}

// Next returns the next subframe to bridge: its addresses, EtherType and
// payload (which alias the A-MSDU). False: no more.
func (m *MSDUs) Next() (sub wlan.AMSDUSubframe, etherType uint16, payload []byte, ok bool) {
	for {
		sub, ok = m.rd.Next()
		if !ok {
			if m.rd.Err() != nil {
				m.Bad++
			}
			return sub, 0, nil, false
		}
		var err error
		etherType, payload, err = wlan.ParseMSDU(sub.MSDU)
		if err != nil || etherType == wpa.EtherTypeEAPOL {
			m.Bad++
			continue
		}
		return sub, etherType, payload, true
	}
}
