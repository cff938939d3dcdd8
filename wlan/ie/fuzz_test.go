package ie

import (
	"bytes"
	"testing"
)

// FuzzParse feeds arbitrary element lists to Parse and every element
// parser: no panics, and what parses re-encodes to the same bytes (for the
// elements whose encoding is canonical) and parses again to the same value.
func FuzzParse(f *testing.F) {
	var v VirtualBitmap
	v.Set(100)
	rsn := RSN{Group: CipherCCMP128}
	rsn.SetPairwise(CipherCCMP128, CipherTKIP)
	rsn.SetAKMs(AKMPSK)
	rsn.AddPMKID([PMKIDLen]byte{1})
	rsn.HasGroupMgmt, rsn.GroupMgmt = true, CipherBIPCMAC
	wmm := DefaultWMMParams()
	seed := AppendSSID(nil, []byte("gowrt"))
	seed = AppendRates(seed, []byte{0x82, 0x84, 0x8b, 0x96, 0x0c, 0x12, 0x18, 0x24, 0x30, 0x48})
	seed = AppendDSParams(seed, 11)
	seed = AppendTIM(seed, 1, 3, true, &v)
	seed = AppendRSN(seed, &rsn)
	seed = AppendHTCapabilities(seed, &HTCapabilities{Info: 0x1ef, AMPDUParams: 0x17})
	seed = AppendHTOperation(seed, &HTOperation{Primary: 36, SecondaryOffset: 1, AnyWidth: true})
	seed = AppendVHTCapabilities(seed, &VHTCapabilities{Info: 0x038000b2, RxMCSMap: 0xfffa})
	seed = AppendVHTOperation(seed, &VHTOperation{ChannelWidth: 1, CCFS0: 42})
	seed = AppendWMM(seed, &wmm)
	f.Add(seed)
	f.Add([]byte{48, 6, 1, 0, 0, 0x0f, 0xac, 4})
	f.Add([]byte{5, 4, 0, 1, 0xfa, 0x80})
	f.Add([]byte{0, 40})
	f.Fuzz(func(t *testing.T, b []byte) {
		es, err := Parse(b)
		if err != nil {
			return
		}
		if es.TIM != nil {
			if tim, err := ParseTIM(es.TIM); err == nil {
				for aid := uint16(0); aid < 2010; aid += 7 {
					tim.Has(aid)
				}
			}
		}
		if es.RSN != nil {
			if r, err := ParseRSN(es.RSN); err == nil {
				again, err := ParseRSN(AppendRSN(nil, &r)[2:])
				if err != nil || !sameRSN(&r, &again) {
					t.Fatalf("RSN round trip: %+v -> %+v %v", r, again, err)
				}
			}
		}
		if es.HTCapabilities != nil {
			if c, err := ParseHTCapabilities(es.HTCapabilities); err == nil {
				if out := AppendHTCapabilities(nil, &c); !bytes.Equal(out[2:], es.HTCapabilities) {
					t.Fatalf("HT capabilities re-encoded as %x", out)
				}
			}
		}
		if es.HTOperation != nil {
			if o, err := ParseHTOperation(es.HTOperation); err == nil {
				again, err := ParseHTOperation(AppendHTOperation(nil, &o)[2:])
				if err != nil || again != o {
					t.Fatalf("HT operation round trip %+v -> %+v", o, again)
				}
			}
		}
		if es.VHTCapabilities != nil {
			if c, err := ParseVHTCapabilities(es.VHTCapabilities); err == nil {
				if out := AppendVHTCapabilities(nil, &c); !bytes.Equal(out[2:], es.VHTCapabilities) {
					t.Fatalf("VHT capabilities re-encoded as %x", out)
				}
				c.MaxAMPDULen()
				c.RxMaxMCS(3)
			}
		}
		if es.VHTOperation != nil {
			if o, err := ParseVHTOperation(es.VHTOperation); err == nil {
				if out := AppendVHTOperation(nil, &o); !bytes.Equal(out[2:], es.VHTOperation) {
					t.Fatalf("VHT operation re-encoded as %x", out)
				}
			}
		}
		if es.WMM != nil {
			if w, err := ParseWMM(es.WMM); err == nil {
				again, err := ParseWMM(AppendWMM(nil, &w)[2:])
				if err != nil || again != w {
					t.Fatalf("WMM round trip %+v -> %+v", w, again)
				}
			}
		}
		if es.DSParams != nil {
			ParseDSParams(es.DSParams)
		}
		if es.SSID != nil {
			ParseSSID(es.SSID)
		}
	})
}

func sameRSN(a, b *RSN) bool {
	return a.Version == b.Version && a.Group == b.Group && a.NPairwise == b.NPairwise && a.pairwise == b.pairwise &&
		a.NAKMs == b.NAKMs && a.akms == b.akms && a.Capabilities == b.Capabilities && a.NPMKIDs == b.NPMKIDs &&
		a.pmkids == b.pmkids && a.HasGroupMgmt == b.HasGroupMgmt && a.GroupMgmt == b.GroupMgmt
}
