package wlan

import (
	"bytes"
	"github.com/gowrt/gowrt/internal/testutil"
	"testing"
)

// FuzzParse feeds arbitrary bytes to the header parser and every body
// parser its kind selects: no panics, and a parsed header re-encodes to
// the bytes it was parsed from.
func FuzzParse(f *testing.F) {
	for _, s := range []string{beaconHex, wdsHex} {
		f.Add(testutil.Unhex(f, s))
	}
	f.Add(AppendBlockAck(nil, 0, apMAC, staMAC, &BlockAck{TID: 3, StartSeq: 7, Bitmap: 5}))
	f.Add(AppendBlockAckReq(nil, 0, apMAC, staMAC, &BlockAckReq{TID: 3, StartSeq: 7}))
	f.Add(AppendPSPoll(nil, 3, apMAC, staMAC))
	req := ADDBAReq{Dialog: 1, Params: NewBAParams(2, 64, true)}
	f.Add(req.Append(AppendMgmtHeader(nil, KindAction, 0, apMAC, staMAC, apMAC, 1)))
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, err := Parse(b)
		if err != nil {
			return
		}
		if out := AppendHeader(nil, &fr.Header); !bytes.Equal(out, b[:fr.Len]) {
			t.Fatalf("header %x re-encoded as %x", b[:fr.Len], out)
		}
		fr.DA()
		fr.SA()
		fr.BSSID()
		body := fr.Body
		switch fr.FC.Kind() {
		case KindBeacon, KindProbeResp:
			ParseBeacon(body)
		case KindAuth:
			ParseAuth(body)
		case KindAssocReq:
			ParseAssocReq(body, false)
		case KindReassocReq:
			ParseAssocReq(body, true)
		case KindAssocResp, KindReassocResp:
			ParseAssocResp(body)
		case KindDeauth, KindDisassoc:
			ParseReason(body)
		case KindAction, KindActionNoAck:
			cat, act, rest, err := ParseAction(body)
			if err != nil || cat != CategoryBlockAck {
				return
			}
			switch act {
			case ActionADDBAReq:
				ParseADDBAReq(rest)
			case ActionADDBAResp:
				ParseADDBAResp(rest)
			case ActionDELBA:
				ParseDELBA(rest)
			}
		case KindBlockAckReq:
			ParseBlockAckReq(body)
		case KindBlockAck:
			if ba, err := ParseBlockAck(body); err == nil {
				ba.Acked(ba.StartSeq + 70)
			}
		case KindPSPoll:
			PSPollAID(&fr.Header)
		}
		if fr.FC.IsQoSData() && fr.QoS.AMSDU() {
			r := NewAMSDUReader(body)
			for {
				if _, ok := r.Next(); !ok {
					break
				}
			}
		}
	})
}

// FuzzAMSDU decapsulates arbitrary bodies: no panics, subframes lie
// inside the input, and a clean walk consumes the input but for trailing
// padding and re-encodes to subframes that decapsulate the same.
func FuzzAMSDU(f *testing.F) {
	f.Add(testutil.Unhex(f, amsduHex))
	f.Add([]byte{})
	f.Add(make([]byte, 14))
	f.Fuzz(func(t *testing.T, b []byte) {
		var subs []AMSDUSubframe
		r := NewAMSDUReader(b)
		var out []byte
		for {
			s, ok := r.Next()
			if !ok {
				break
			}
			if len(s.MSDU) > MaxMSDU {
				t.Fatalf("MSDU of %d bytes", len(s.MSDU))
			}
			subs = append(subs, s)
			out = AppendAMSDUSubframe(out, 0, s.DA, s.SA, s.MSDU)
		}
		if r.Err() != nil {
			return
		}
		// Padding content is not checked by receivers; length is.
		if len(out) > len(b) || len(b)-len(out) >= 4 {
			t.Fatalf("clean walk of %d bytes re-encoded to %d", len(b), len(out))
		}
		r = NewAMSDUReader(out)
		for i := 0; ; i++ {
			s, ok := r.Next()
			if !ok {
				if i != len(subs) || r.Err() != nil {
					t.Fatalf("re-encoding gave %d subframes of %d: %v", i, len(subs), r.Err())
				}
				break
			}
			if i >= len(subs) || s.DA != subs[i].DA || s.SA != subs[i].SA || !bytes.Equal(s.MSDU, subs[i].MSDU) {
				t.Fatalf("subframe %d changed", i)
			}
		}
	})
}
