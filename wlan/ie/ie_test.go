package ie

import (
	"bytes"
	"encoding/hex"
	"errors"
	"github.com/gowrt/gowrt/internal/testutil"
	"strings"
	"testing"
)

// WPA2-PSK with CCMP-128 (802.11-2016 9.4.2.25).
const rsnPSKHex = `
30 14        // element ID 48, length 20
01 00        // version 1
00 0f ac 04  // group cipher: CCMP-128
01 00        // pairwise count 1
00 0f ac 04  // CCMP-128
01 00        // AKM count 1
00 0f ac 02  // PSK
0c 00        // RSN capabilities: 16 PTKSA replay counters
`

func TestRSNVector(t *testing.T) {
	raw := testutil.Unhex(t, rsnPSKHex)
	r, err := ParseRSN(raw[2:])
	if err != nil {
		t.Fatal(err)
	}
	if r.Version != 1 || r.Group != CipherCCMP128 || r.NPairwise != 1 || r.Pairwise()[0] != CipherCCMP128 ||
		r.NAKMs != 1 || !r.HasAKM(AKMPSK) || r.HasAKM(AKM8021X) || !r.HasCapabilities || r.Capabilities != 0x000c ||
		r.NPMKIDs != 0 || r.HasGroupMgmt {
		t.Fatalf("%+v", r)
	}
	var b RSN
	b.Group = CipherCCMP128
	b.SetPairwise(CipherCCMP128)
	b.SetAKMs(AKMPSK)
	b.Capabilities = 0x000c
	if out := AppendRSN(nil, &b); !bytes.Equal(out, raw) {
		t.Fatalf("built %x", out)
	}
}

func TestRSNWithPMKIDAndGroupMgmt(t *testing.T) {
	raw := testutil.Unhex(t, `
		30 32        // length 50
		01 00 00 0f ac 04
		02 00 00 0f ac 04 00 0f ac 02  // CCMP-128, TKIP
		02 00 00 0f ac 02 00 0f ac 06  // PSK, PSK-SHA256
		80 00        // capabilities: MFP capable
		01 00        // PMKID count 1
		00 11 22 33 44 55 66 77 88 99 aa bb cc dd ee ff
		00 0f ac 06  // group management cipher: BIP-CMAC-128`)
	r, err := ParseRSN(raw[2:])
	if err != nil {
		t.Fatal(err)
	}
	if r.NPairwise != 2 || !r.HasPairwise(CipherTKIP) || r.NAKMs != 2 || !r.HasAKM(AKMPSKSHA256) ||
		r.Capabilities != RSNCapMFPCapable || r.NPMKIDs != 1 || r.PMKIDs()[0][15] != 0xff ||
		!r.HasGroupMgmt || r.GroupMgmt != CipherBIPCMAC {
		t.Fatalf("%+v", r)
	}
	if out := AppendRSN(nil, &r); !bytes.Equal(out, raw) {
		t.Fatalf("rebuilt %x", out)
	}
}

func TestRSNDefaultsAndErrors(t *testing.T) {
	r, err := ParseRSN([]byte{1, 0})
	if err != nil || r.Group != CipherCCMP128 || !r.HasPairwise(CipherCCMP128) || !r.HasAKM(AKM8021X) {
		t.Fatalf("version only: %+v %v", r, err)
	}
	cases := []struct {
		name string
		body string
		err  error
	}{
		{"empty", "", ErrLength},
		{"version 2", "0200", ErrValue},
		{"group cut", "0100000fac", ErrLength},
		{"pairwise count cut", "0100000fac0401", ErrLength},
		{"pairwise count overruns", "0100000fac040200000fac04", ErrCount},
		{"pairwise count zero", "0100000fac040000", ErrValue},
		{"too many pairwise", "0100000fac040500" + strings.Repeat("000fac04", 5), ErrTooMany},
		{"huge count", "0100000fac04ffff000fac04", ErrCount},
		{"akm overruns", "0100000fac040100000fac040300000fac02", ErrCount},
		{"capabilities cut", "0100000fac040100000fac040100000fac020c", ErrLength},
		{"pmkid count overruns", "0100000fac040100000fac040100000fac020c000100" + strings.Repeat("00", 15), ErrCount},
		{"too many pmkids", "0100000fac040100000fac040100000fac020c000500" + strings.Repeat("00", 80), ErrTooMany},
		{"group mgmt cut", "0100000fac040100000fac040100000fac020c000000000fac", ErrLength},
	}
	for _, c := range cases {
		b, _ := hex.DecodeString(c.body)
		if _, err := ParseRSN(b); err != c.err {
			t.Errorf("%s: %v, want %v", c.name, err, c.err)
		}
	}
}

// TIM partial virtual bitmap encoding (802.11-2016 9.4.2.6).
func TestTIMVectors(t *testing.T) {
	cases := []struct {
		name      string
		aids      []uint16
		multicast bool
		want      string
	}{
		// Nothing buffered: one octet 0 at offset 0.
		{"empty", nil, true, `05 04  00 02  01  00`},
		// AID 1: octet 0, bit 1.
		{"aid 1", []uint16{1}, false, `05 04  00 02  00  02`},
		// AID 24 is octet 3 bit 0: N1 = 2 (the largest even octet before it), N2 = 3.
		{"aid 24", []uint16{24}, false, `05 05  00 02  02  00 01`},
		// AIDs 100 (octet 12 bit 4) and 130 (octet 16 bit 2): N1 = 12,
		// bitmap offset field 6 in bits 1-7 = 0x0c, plus the multicast bit.
		{"aid 100 130", []uint16{100, 130}, true, `05 08  00 02  0d  10 00 00 00 04`},
		// AID 2007, the last: octet 250 bit 7.
		{"aid 2007", []uint16{2007}, false, `05 04  00 02  fa  80`},
	}
	for _, c := range cases {
		var v VirtualBitmap
		for _, a := range c.aids {
			v.Set(a)
		}
		want := testutil.Unhex(t, c.want)
		got := AppendTIM(nil, 0, 2, c.multicast, &v)
		if !bytes.Equal(got, want) {
			t.Errorf("%s: built %x, want %x", c.name, got, want)
			continue
		}
		tim, err := ParseTIM(got[2:])
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if tim.Multicast != c.multicast || tim.DTIMPeriod != 2 {
			t.Errorf("%s: %+v", c.name, tim)
		}
		for aid := uint16(0); aid <= 2010; aid++ {
			if tim.Has(aid) != v.Has(aid) {
				t.Errorf("%s: aid %d: parsed %v, bitmap %v", c.name, aid, tim.Has(aid), v.Has(aid))
			}
		}
	}
	var v VirtualBitmap
	v.Set(0)
	v.Set(2008)
	v.Set(9)
	v.Clear(9)
	if v != (VirtualBitmap{}) {
		t.Error("out-of-range AIDs or Clear changed the bitmap")
	}
	for _, bad := range []string{"000200", "0002fc0000", "000000 00"} {
		b := testutil.Unhex(t, bad)
		if _, err := ParseTIM(b); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// HT Capabilities of a 2x2 HT40 station (802.11-2016 9.4.2.56).
const htCapHex = `
2d 1a        // element ID 45, length 26
ef 01        // info: LDPC, 40 MHz, SM PS disabled, SGI20, SGI40, Tx STBC, Rx STBC 1
17           // A-MPDU: exponent 3 (65535 bytes), spacing 5 (4 µs)
ff ff 00 00 00 00 00 00 00 00  // Rx MCS bitmask: MCS 0-15
00 00        // Rx highest rate: not given
01 00 00 00  // Tx MCS set defined
00 00        // HT extended capabilities
00 00 00 00  // transmit beamforming
00           // ASEL
`

func TestHTVectors(t *testing.T) {
	raw := testutil.Unhex(t, htCapHex)
	c, err := ParseHTCapabilities(raw[2:])
	if err != nil {
		t.Fatal(err)
	}
	if c.Info != HTCapLDPC|HTCapWidth40|HTCapSMPSDisabled|HTCapSGI20|HTCapSGI40|HTCapTxSTBC|1<<HTCapRxSTBCShift ||
		c.MaxAMPDULen() != 65535 || c.MinMPDUSpacing() != 5 || !c.RxMCS(15) || c.RxMCS(16) || c.MCS[12] != 1 {
		t.Fatalf("%+v", c)
	}
	if out := AppendHTCapabilities(nil, &c); !bytes.Equal(out, raw) {
		t.Fatalf("built %x", out)
	}
	op := testutil.Unhex(t, `
		3d 16  // element ID 61, length 22
		24     // primary channel 36
		05     // secondary channel above, any channel width
		04 00  // non-greenfield HT STAs present
		00 00
		00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00  // basic MCS set`)
	o, err := ParseHTOperation(op[2:])
	if err != nil || o.Primary != 36 || o.SecondaryOffset != SecondaryAbove || !o.AnyWidth || !o.NonGreenfield ||
		o.RIFS || o.Protection != HTProtNone || o.CCFS2 != 0 {
		t.Fatalf("%+v %v", o, err)
	}
	if out := AppendHTOperation(nil, &o); !bytes.Equal(out, op) {
		t.Fatalf("built %x", out)
	}
	o.CCFS2 = 50
	o2, _ := ParseHTOperation(AppendHTOperation(nil, &o)[2:])
	if o2.CCFS2 != 50 || !o2.NonGreenfield {
		t.Fatalf("CCFS2 round trip: %+v", o2)
	}
	if _, err := ParseHTCapabilities(raw[2:27]); err != ErrLength {
		t.Error("short HT capabilities accepted")
	}
	bad := append([]byte(nil), op[2:]...)
	bad[1] = 2 // reserved secondary offset
	if _, err := ParseHTOperation(bad); err != ErrValue {
		t.Error("reserved secondary offset accepted")
	}
}

func TestVHTVectors(t *testing.T) {
	capRaw := testutil.Unhex(t, `
		bf 0c        // element ID 191, length 12
		b2 00 80 03  // info: max MPDU 11454, Rx LDPC, SGI80, Tx STBC, max A-MPDU exponent 7
		fa ff        // Rx MCS map: 1 and 2 streams MCS 0-9, others none
		00 00
		fa ff        // Tx MCS map
		00 00`)
	c, err := ParseVHTCapabilities(capRaw[2:])
	if err != nil || c.MaxAMPDULen() != 1<<20-1 || c.RxMaxMCS(1) != 9 || c.RxMaxMCS(2) != 9 || c.RxMaxMCS(3) != -1 ||
		c.Info&VHTCapSGI80 == 0 {
		t.Fatalf("%+v %v", c, err)
	}
	if out := AppendVHTCapabilities(nil, &c); !bytes.Equal(out, capRaw) {
		t.Fatalf("built %x", out)
	}
	opRaw := testutil.Unhex(t, `
		c0 05  // element ID 192, length 5
		01     // channel width 80 MHz (or wider)
		2a     // CCFS0: channel 42
		00     // CCFS1: none
		fc ff  // basic MCS map: 1 stream MCS 0-7`)
	o, err := ParseVHTOperation(opRaw[2:])
	if err != nil || o.ChannelWidth != VHTWidth80 || o.CCFS0 != 42 || o.CCFS1 != 0 || o.BasicMCSMap != 0xfffc {
		t.Fatalf("%+v %v", o, err)
	}
	if out := AppendVHTOperation(nil, &o); !bytes.Equal(out, opRaw) {
		t.Fatalf("built %x", out)
	}
	if _, err := ParseVHTOperation([]byte{4, 42, 0, 0, 0}); err != ErrValue {
		t.Error("reserved width accepted")
	}
	if _, err := ParseVHTCapabilities(capRaw[2:13]); err != ErrLength {
		t.Error("short VHT capabilities accepted")
	}
}

// WMM Parameter element with the default EDCA set (WMM 2.2.2).
const wmmParamHex = `
dd 18                 // vendor specific, length 24
00 50 f2 02 01 01     // OUI 00:50:F2, type 2, subtype 1 (parameter), version 1
01                    // QoS info: parameter set count 1
00                    // reserved
03 a4 00 00           // AC_BE: ACI 0, AIFSN 3, ECWmin 4, ECWmax 10, TXOP 0
27 a4 00 00           // AC_BK: ACI 1, AIFSN 7
42 43 5e 00           // AC_VI: ACI 2, AIFSN 2, ECW 3/4, TXOP 94 (3.008 ms)
62 32 2f 00           // AC_VO: ACI 3, AIFSN 2, ECW 2/3, TXOP 47 (1.504 ms)
`

func TestWMMVectors(t *testing.T) {
	raw := testutil.Unhex(t, wmmParamHex)
	w, err := ParseWMM(raw[2:])
	if err != nil {
		t.Fatal(err)
	}
	def := DefaultWMMParams()
	def.QoSInfo = 1
	if w != def {
		t.Fatalf("parsed %+v\nwant %+v", w, def)
	}
	if out := AppendWMM(nil, &def); !bytes.Equal(out, raw) {
		t.Fatalf("built %x", out)
	}
	info := testutil.Unhex(t, `dd 07 00 50 f2 02 00 01 0f  // WMM information, U-APSD on all ACs`)
	wi, err := ParseWMM(info[2:])
	if err != nil || wi.Param || wi.QoSInfo != 0x0f {
		t.Fatalf("%+v %v", wi, err)
	}
	if out := AppendWMM(nil, &wi); !bytes.Equal(out, info) {
		t.Fatalf("built %x", out)
	}
	dupACI := append([]byte(nil), raw[2:]...)
	dupACI[12] = 0x03 // AC_BK record claims ACI 0 again
	for name, b := range map[string][]byte{
		"dup aci":    dupACI,
		"short":      raw[2:20],
		"info long":  append(append([]byte(nil), info[2:]...), 0),
		"version 2":  {0x00, 0x50, 0xf2, 0x02, 0x00, 0x02, 0x00},
		"not wmm":    {0x00, 0x50, 0xf2, 0x01, 0x01, 0x00},
		"wmm header": {0x00, 0x50, 0xf2, 0x02, 0x01},
	} {
		if _, err := ParseWMM(b); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
}

func TestParseElements(t *testing.T) {
	var b []byte
	b = AppendSSID(b, []byte("gowrt"))
	b = AppendRates(b, []byte{0x82, 0x84, 0x8b, 0x96, 0x0c, 0x12, 0x18, 0x24, 0x30, 0x48, 0x60, 0x6c})
	b = AppendDSParams(b, 6)
	b = append(b, 42, 1, 0)                                  // ERP: skipped
	b = append(b, byte(IDVendor), 4, 0x00, 0x50, 0xf2, 0x01) // WPA: another vendor element, skipped
	b = append(b, testutil.Unhex(t, wmmParamHex)...)
	b = append(b, testutil.Unhex(t, rsnPSKHex)...)
	es, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if string(es.SSID) != "gowrt" || len(es.Rates) != 8 || len(es.ExtRates) != 4 || es.ExtRates[3] != 0x6c ||
		len(es.DSParams) != 1 || len(es.WMM) != 24 || len(es.RSN) != 20 || es.TIM != nil || es.HTCapabilities != nil {
		t.Fatalf("%+v", es)
	}
	if ch, err := ParseDSParams(es.DSParams); err != nil || ch != 6 {
		t.Fatal(ch, err)
	}
	hidden, _ := Parse(AppendSSID(nil, nil))
	if hidden.SSID == nil || len(hidden.SSID) != 0 {
		t.Fatal("empty SSID not told from an absent one")
	}

	dup := append(append([]byte(nil), b...), 0, 1, 'x')
	var de *DuplicateError
	if _, err := Parse(dup); !errors.As(err, &de) || de.ID != IDSSID {
		t.Fatalf("duplicate SSID: %v", err)
	}
	if _, err := Parse(b[:len(b)-1]); err != ErrTruncated {
		t.Fatalf("truncated: %v", err)
	}
	if _, err := Parse([]byte{0}); err != ErrTruncated {
		t.Fatalf("lone ID: %v", err)
	}
	if _, err := ParseSSID(make([]byte, 33)); err != ErrLength {
		t.Error("33-byte SSID accepted")
	}
	if out := AppendSSID(nil, make([]byte, 40)); len(out) != 34 {
		t.Error("long SSID not cut to 32")
	}
	if _, err := ParseRates(make([]byte, 9), false); err != ErrLength {
		t.Error("9 supported rates accepted")
	}
	if _, err := ParseRates(nil, true); err != ErrLength {
		t.Error("empty extended rates accepted")
	}
	if _, err := ParseDSParams([]byte{1, 2}); err != ErrLength {
		t.Error("long DS parameter set accepted")
	}
}

func TestAppendAllocs(t *testing.T) {
	buf := make([]byte, 0, 512)
	var v VirtualBitmap
	v.Set(5)
	rsn := RSN{Group: CipherCCMP128}
	rsn.SetPairwise(CipherCCMP128)
	rsn.SetAKMs(AKMPSK)
	wmm := DefaultWMMParams()
	beaconIEs := AppendTIM(AppendSSID(nil, []byte("gowrt")), 0, 1, false, &v)
	beaconIEs = AppendRSN(beaconIEs, &rsn)
	n := testing.AllocsPerRun(1000, func() {
		b := AppendSSID(buf[:0], []byte("gowrt"))
		b = AppendTIM(b, 0, 1, true, &v)
		b = AppendRSN(b, &rsn)
		b = AppendWMM(b, &wmm)
		es, _ := Parse(beaconIEs)
		tim, _ := ParseTIM(es.TIM)
		_ = tim.Has(5)
		_, _ = ParseRSN(es.RSN)
	})
	if n != 0 {
		t.Fatalf("%v allocations", n)
	}
}

func BenchmarkParseBeaconIEs(b *testing.B) {
	var v VirtualBitmap
	v.Set(5)
	rsn := RSN{Group: CipherCCMP128}
	rsn.SetPairwise(CipherCCMP128)
	rsn.SetAKMs(AKMPSK)
	wmm := DefaultWMMParams()
	ies := AppendSSID(nil, []byte("gowrt"))
	ies = AppendRates(ies, []byte{0x82, 0x84, 0x8b, 0x96, 0x0c, 0x12, 0x18, 0x24, 0x30, 0x48, 0x60, 0x6c})
	ies = AppendTIM(ies, 0, 1, false, &v)
	ies = AppendRSN(ies, &rsn)
	ies = AppendWMM(ies, &wmm)
	b.ReportAllocs()
	for range b.N {
		es, err := Parse(ies)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ParseRSN(es.RSN); err != nil {
			b.Fatal(err)
		}
	}
}
