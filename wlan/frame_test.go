package wlan

import (
	"bytes"
	"encoding/hex"
	"errors"
	"github.com/gowrt/gowrt/internal/testutil"
	"strings"
	"testing"
)

var (
	apMAC  = MAC{0x02, 0x00, 0x00, 0x00, 0x00, 0x01}
	staMAC = MAC{0x02, 0x00, 0x00, 0x00, 0x00, 0x02}
	lanMAC = MAC{0x02, 0x00, 0x00, 0x00, 0x00, 0x03}
	wdsMAC = MAC{0x02, 0x00, 0x00, 0x00, 0x00, 0x04}
)

// Frame control octet 0 is subtype<<4 | type<<2 | version (802.11-2016
// Figure 9-2), octet 1 the flags.
func TestFrameControl(t *testing.T) {
	cases := []struct {
		k     Kind
		flags FrameControl
		want  string // the two octets on the air
	}{
		{KindBeacon, 0, "8000"},
		{KindProbeReq, 0, "4000"},
		{KindAuth, 0, "b000"},
		{KindAction, 0, "d000"},
		{KindBlockAckReq, 0, "8400"},
		{KindBlockAck, 0, "9400"},
		{KindPSPoll, FlagPwrMgt, "a410"},
		{KindAck, 0, "d400"},
		{KindData, FlagToDS, "0801"},
		{KindQoSData, FlagFromDS | FlagMoreData, "8822"},
		{KindQoSData, FlagToDS | FlagFromDS | FlagRetry | FlagProtected, "884b"},
		{KindNull, FlagToDS | FlagPwrMgt, "4811"},
		{KindQoSNull, FlagOrder, "c880"},
	}
	for _, c := range cases {
		fc := NewFrameControl(c.k, c.flags)
		got := hex.EncodeToString([]byte{byte(fc), byte(fc >> 8)})
		if got != c.want {
			t.Errorf("%#02x flags %#04x: %s, want %s", c.k, c.flags, got, c.want)
		}
		if fc.Kind() != c.k || fc.Version() != 0 {
			t.Errorf("%#02x: round trip gave %#02x", c.k, fc.Kind())
		}
	}
	fc := NewFrameControl(KindQoSData, FlagToDS|FlagFromDS|FlagRetry|FlagPwrMgt|FlagMoreData|FlagProtected|FlagOrder|FlagMoreFrag)
	if !(fc.ToDS() && fc.FromDS() && fc.Retry() && fc.PwrMgt() && fc.MoreData() && fc.Protected() && fc.Order() && fc.MoreFrag()) {
		t.Errorf("flags lost: %#04x", fc)
	}
	if !fc.IsQoSData() || !fc.HasBody() || NewFrameControl(KindQoSNull, 0).HasBody() || NewFrameControl(KindData, 0).IsQoSData() {
		t.Error("QoS/body subtype bits misread")
	}
}

// A beacon laid out field by field (802.11-2016 9.3.3.3).
const beaconHex = `
80 00              // frame control: management, subtype 8 (beacon)
00 00              // duration
ff ff ff ff ff ff  // DA: broadcast
02 00 00 00 00 01  // SA
02 00 00 00 00 01  // BSSID
30 01              // sequence control: SN 19 (0x013 << 4), fragment 0
88 77 66 55 44 33 22 11 // timestamp 0x1122334455667788 µs
64 00              // beacon interval 100 TU
11 04              // capability: ESS, Privacy, Short Slot Time
00 04 67 6f 77 72  // SSID element "gowr"
`

func TestBeaconVector(t *testing.T) {
	raw := testutil.Unhex(t, beaconHex)
	f, err := Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	if f.FC.Kind() != KindBeacon || f.Addr1 != Broadcast || f.SA() != apMAC || f.BSSID() != apMAC ||
		f.Seq.Seq() != 19 || f.Seq.Frag() != 0 || f.Len != MgmtHeaderLen || f.TID() != NonQoSTID {
		t.Fatalf("header %+v", f.Header)
	}
	b, err := ParseBeacon(f.Body)
	if err != nil {
		t.Fatal(err)
	}
	if b.Timestamp != 0x1122334455667788 || b.Interval != 100 || b.Capability != CapESS|CapPrivacy|CapShortSlotTime ||
		!bytes.Equal(b.IEs, []byte{0, 4, 'g', 'o', 'w', 'r'}) {
		t.Fatalf("body %+v", b)
	}
	// Rebuild.
	out := AppendMgmtHeader(nil, KindBeacon, 0, Broadcast, apMAC, apMAC, 19)
	out = b.Append(out)
	if !bytes.Equal(out, raw) {
		t.Fatalf("built\n%x\nwant\n%x", out, raw)
	}
}

// A 4-address QoS data frame carrying an A-MSDU (802.11-2016 9.3.2.1).
const wdsHex = `
88 0b              // frame control: data, subtype 8 (QoS data); To DS, From DS, Retry
2c 00              // duration 44 µs
02 00 00 00 00 01  // Addr1 RA
02 00 00 00 00 02  // Addr2 TA
02 00 00 00 00 03  // Addr3 DA
21 0c              // sequence control: SN 0x0c2 = 194, fragment 1
02 00 00 00 00 04  // Addr4 SA
a5 00              // QoS control: TID 5, ack policy 1 (no ack), A-MSDU present
de ad              // body
`

func TestWDSQoSVector(t *testing.T) {
	raw := testutil.Unhex(t, wdsHex)
	f, err := Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	h := f.Header
	if h.Len != 32 || !h.FC.Retry() || h.Duration != 44 || h.Addr1 != apMAC || h.TA() != staMAC ||
		h.DA() != lanMAC || h.SA() != wdsMAC || h.Seq.Seq() != 194 || h.Seq.Frag() != 1 ||
		h.TID() != 5 || h.QoS.AckPolicy() != AckNoAck || !h.QoS.AMSDU() || h.QoS.EOSP() {
		t.Fatalf("header %+v", h)
	}
	if !bytes.Equal(f.Body, []byte{0xde, 0xad}) {
		t.Fatalf("body %x", f.Body)
	}
	build := Header{
		FC: NewFrameControl(KindQoSData, FlagToDS|FlagFromDS|FlagRetry), Duration: 44,
		Addr1: apMAC, Addr2: staMAC, Addr3: lanMAC, Addr4: wdsMAC,
		Seq: NewSeqControl(194, 1), QoS: NewQoSControl(5, AckNoAck, true, false),
	}
	out := append(AppendHeader(nil, &build), 0xde, 0xad)
	if !bytes.Equal(out, raw) {
		t.Fatalf("built\n%x\nwant\n%x", out, raw)
	}
}

// Address roles by To/From DS (802.11-2016 Table 9-26).
func TestAddressRoles(t *testing.T) {
	a1, a2, a3 := MAC{1}, MAC{2}, MAC{3}
	cases := []struct {
		flags         FrameControl
		da, sa, bssid MAC
	}{
		{0, a1, a2, a3},
		{FlagToDS, a3, a2, a1},
		{FlagFromDS, a1, a3, a2},
	}
	for _, c := range cases {
		h := Header{FC: NewFrameControl(KindData, c.flags), Addr1: a1, Addr2: a2, Addr3: a3}
		if h.DA() != c.da || h.SA() != c.sa || h.BSSID() != c.bssid {
			t.Errorf("flags %#x: da %v sa %v bssid %v", c.flags, h.DA(), h.SA(), h.BSSID())
		}
	}
}

func TestHeaderHTC(t *testing.T) {
	h := Header{FC: NewFrameControl(KindQoSData, FlagFromDS|FlagOrder), Addr1: staMAC, Addr2: apMAC, Addr3: apMAC, HTC: 0x01020304, QoS: 3}
	b := AppendHeader(nil, &h)
	if len(b) != 30 {
		t.Fatalf("length %d, want 24 + 2 QoS + 4 HTC", len(b))
	}
	p, err := ParseHeader(b)
	if err != nil || p.HTC != 0x01020304 || p.QoS.TID() != 3 {
		t.Fatalf("%+v %v", p, err)
	}
	m := Header{FC: NewFrameControl(KindAction, FlagOrder), HTC: 7}
	if b := AppendHeader(nil, &m); len(b) != 28 {
		t.Fatalf("management +HTC length %d", len(b))
	}
}

func TestParseHeaderErrors(t *testing.T) {
	cases := []struct {
		in   string
		want error
	}{
		{"", ErrShort},
		{"80", ErrShort},
		{"8100", ErrVersion},
		{"0c00" + strings.Repeat("00", 30), ErrKind}, // type 3 extension
		{"5400" + strings.Repeat("00", 30), ErrKind}, // control subtype 5 reserved
		{"8000" + strings.Repeat("00", 21), ErrShort},
		{"d400" + strings.Repeat("00", 7), ErrShort},
		{"8803" + strings.Repeat("00", 29), ErrShort}, // WDS QoS needs 32
	}
	for _, c := range cases {
		b, _ := hex.DecodeString(c.in)
		if _, err := ParseHeader(b); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.in, err, c.want)
		}
	}
	ack, _ := hex.DecodeString("d400" + "0000" + "020000000002")
	if h, err := ParseHeader(ack); err != nil || h.Len != 10 || h.Addr1 != staMAC {
		t.Errorf("ACK: %+v %v", h, err)
	}
}

// Management bodies (802.11-2016 9.3.3), each vector laid out by field.
func TestManagementVectors(t *testing.T) {
	// Authentication, open system, response.
	auth := testutil.Unhex(t, `
		00 00  // algorithm: open system
		02 00  // transaction sequence 2
		00 00  // status: success`)
	a, err := ParseAuth(auth)
	if err != nil || a.Algorithm != AuthOpenSystem || a.Seq != 2 || a.Status != StatusSuccess || len(a.IEs) != 0 {
		t.Fatalf("auth %+v %v", a, err)
	}
	if out := a.Append(nil); !bytes.Equal(out, auth) {
		t.Fatalf("auth built %x", out)
	}

	// Reassociation request.
	rr := testutil.Unhex(t, `
		31 04              // capability: ESS, Privacy, Short Preamble, Short Slot
		0a 00              // listen interval 10
		02 00 00 00 00 01  // current AP
		00 00              // SSID element, empty`)
	r, err := ParseAssocReq(rr, true)
	if err != nil || r.Capability != 0x0431 || r.ListenInterval != 10 || r.CurrentAP != apMAC || len(r.IEs) != 2 {
		t.Fatalf("reassoc %+v %v", r, err)
	}
	if out := r.Append(nil, true); !bytes.Equal(out, rr) {
		t.Fatalf("reassoc built %x", out)
	}
	if q, err := ParseAssocReq(rr, false); err != nil || q.ListenInterval != 10 || len(q.IEs) != 8 {
		t.Fatalf("assoc %+v %v", q, err)
	}

	// Association response: AID 1 carried with bits 14 and 15 set.
	ar := testutil.Unhex(t, `
		11 04  // capability
		00 00  // status success
		01 c0  // AID 1 | 0xc000`)
	resp, err := ParseAssocResp(ar)
	if err != nil || resp.AID != 1 || resp.Status != 0 || resp.Capability != 0x0411 {
		t.Fatalf("assoc resp %+v %v", resp, err)
	}
	if out := resp.Append(nil); !bytes.Equal(out, ar) {
		t.Fatalf("assoc resp built %x", out)
	}

	// Deauthentication, reason 3 (leaving).
	if r, err := ParseReason([]byte{3, 0}); err != nil || r != ReasonDeauthLeaving {
		t.Fatal(r, err)
	}
	if out := AppendReason(nil, ReasonInactivity); !bytes.Equal(out, []byte{4, 0}) {
		t.Fatalf("reason built %x", out)
	}

	// Too short for the fixed fields: errors, not panics.
	for _, n := range []int{0, 1, 5} {
		if _, err := ParseAuth(make([]byte, n)); err != ErrBody {
			t.Errorf("auth %d bytes: %v", n, err)
		}
		if _, err := ParseAssocResp(make([]byte, n)); err != ErrBody {
			t.Errorf("assoc resp %d bytes: %v", n, err)
		}
		if _, err := ParseBeacon(make([]byte, n)); err != ErrBody {
			t.Errorf("beacon %d bytes: %v", n, err)
		}
	}
	if _, err := ParseAssocReq(make([]byte, 9), true); err != ErrBody {
		t.Error("short reassoc accepted")
	}
	if _, err := ParseReason([]byte{1}); err != ErrBody {
		t.Error("short reason accepted")
	}
}

// Block Ack action frames (802.11-2016 9.6.5).
func TestBlockAckActionVectors(t *testing.T) {
	req := testutil.Unhex(t, `
		03     // category: Block Ack
		00     // action: ADDBA Request
		07     // dialog token
		03 10  // BA parameters: A-MSDU ok, immediate, TID 0, buffer size 64 (64<<6 = 0x1000)
		00 00  // timeout: none
		40 06  // starting sequence control: SN 100, fragment 0`)
	cat, act, rest, err := ParseAction(req)
	if err != nil || cat != CategoryBlockAck || act != ActionADDBAReq {
		t.Fatal(cat, act, err)
	}
	r, err := ParseADDBAReq(rest)
	if err != nil || r.Dialog != 7 || !r.Params.AMSDU() || !r.Params.Immediate() || r.Params.TID() != 0 ||
		r.Params.BufSize() != 64 || r.Timeout != 0 || r.StartSeq.Seq() != 100 {
		t.Fatalf("%+v %v", r, err)
	}
	built := ADDBAReq{Dialog: 7, Params: NewBAParams(0, 64, true), StartSeq: NewSeqControl(100, 0)}
	if out := built.Append(nil); !bytes.Equal(out, req) {
		t.Fatalf("ADDBA request built %x", out)
	}

	resp := testutil.Unhex(t, `
		03 01  // Block Ack, ADDBA Response
		07     // dialog token
		00 00  // status success
		16 08  // BA parameters: immediate, TID 5 (5<<2), buffer size 32 (32<<6 = 0x800)
		88 13  // timeout 5000 TU`)
	_, _, rest, _ = ParseAction(resp)
	p, err := ParseADDBAResp(rest)
	if err != nil || p.Dialog != 7 || p.Status != 0 || p.Params.TID() != 5 || p.Params.BufSize() != 32 ||
		p.Params.AMSDU() || p.Timeout != 5000 {
		t.Fatalf("%+v %v", p, err)
	}
	builtResp := ADDBAResp{Dialog: 7, Params: NewBAParams(5, 32, false), Timeout: 5000}
	if out := builtResp.Append(nil); !bytes.Equal(out, resp) {
		t.Fatalf("ADDBA response built %x", out)
	}

	delba := testutil.Unhex(t, `
		03 02  // Block Ack, DELBA
		00 58  // DELBA parameters: initiator (bit 11), TID 5 (bits 12-15)
		25 00  // reason 37: end of Block Ack`)
	_, _, rest, _ = ParseAction(delba)
	d, err := ParseDELBA(rest)
	if err != nil || !d.Initiator || d.TID != 5 || d.Reason != ReasonEndBA {
		t.Fatalf("%+v %v", d, err)
	}
	if out := d.Append(nil); !bytes.Equal(out, delba) {
		t.Fatalf("DELBA built %x", out)
	}
	for _, n := range []int{0, 3, 6} {
		if _, err := ParseADDBAReq(make([]byte, n)); err != ErrBody {
			t.Errorf("ADDBA req %d: %v", n, err)
		}
		if _, err := ParseADDBAResp(make([]byte, n)); err != ErrBody {
			t.Errorf("ADDBA resp %d: %v", n, err)
		}
	}
	if _, err := ParseDELBA(make([]byte, 3)); err != ErrBody {
		t.Error("short DELBA accepted")
	}
}

// BlockAckReq, BlockAck and PS-Poll control frames (802.11-2016 9.3.1).
func TestControlVectors(t *testing.T) {
	bar := testutil.Unhex(t, `
		84 00              // frame control: control, BlockAckReq
		00 00              // duration
		02 00 00 00 00 02  // RA
		02 00 00 00 00 01  // TA
		04 50              // BAR control: compressed bitmap, TID 5
		40 06              // starting sequence control: SN 100`)
	f, err := Parse(bar)
	if err != nil || f.FC.Kind() != KindBlockAckReq || f.Addr1 != staMAC || f.TA() != apMAC {
		t.Fatalf("%+v %v", f, err)
	}
	r, err := ParseBlockAckReq(f.Body)
	if err != nil || r.TID != 5 || r.StartSeq != 100 || r.NoAck {
		t.Fatalf("%+v %v", r, err)
	}
	if out := AppendBlockAckReq(nil, 0, staMAC, apMAC, &r); !bytes.Equal(out, bar) {
		t.Fatalf("BAR built %x", out)
	}

	ba := testutil.Unhex(t, `
		94 00              // frame control: control, BlockAck
		00 00              // duration
		02 00 00 00 00 01  // RA
		02 00 00 00 00 02  // TA
		05 50              // BA control: no ack, compressed, TID 5
		40 06              // starting sequence control: SN 100
		0b 00 00 00 00 00 00 80 // bitmap: SN 100, 101, 103, 163`)
	f, _ = Parse(ba)
	b, err := ParseBlockAck(f.Body)
	if err != nil || b.TID != 5 || b.StartSeq != 100 || !b.NoAck || b.Bitmap != 0x800000000000000b {
		t.Fatalf("%+v %v", b, err)
	}
	for sn, want := range map[uint16]bool{100: true, 101: true, 102: false, 103: true, 163: true, 164: false, 99: false} {
		if b.Acked(sn) != want {
			t.Errorf("Acked(%d) = %v", sn, !want)
		}
	}
	if out := AppendBlockAck(nil, 0, apMAC, staMAC, &b); !bytes.Equal(out, ba) {
		t.Fatalf("BA built %x", out)
	}
	// Basic (uncompressed) and multi-TID variants are refused, not misread.
	basic := append([]byte(nil), f.Body...)
	basic[0] &^= 0x04
	if _, err := ParseBlockAck(basic); err != ErrBARVariant {
		t.Errorf("basic BA: %v", err)
	}
	if _, err := ParseBlockAck(f.Body[:11]); err != ErrBody {
		t.Errorf("short BA: %v", err)
	}
	if _, err := ParseBlockAckReq(f.Body[:3]); err != ErrBody {
		t.Errorf("short BAR: %v", err)
	}

	pspoll := testutil.Unhex(t, `
		a4 10              // frame control: control, PS-Poll, power management
		05 c0              // AID 5 | 0xc000
		02 00 00 00 00 01  // BSSID (RA)
		02 00 00 00 00 02  // TA`)
	h, err := ParseHeader(pspoll)
	if err != nil || h.FC.Kind() != KindPSPoll || PSPollAID(&h) != 5 || h.Addr1 != apMAC || h.TA() != staMAC {
		t.Fatalf("%+v %v", h, err)
	}
	out := AppendPSPoll(nil, 5, apMAC, staMAC)
	out[1] |= byte(FlagPwrMgt >> 8)
	if !bytes.Equal(out, pspoll) {
		t.Fatalf("PS-Poll built %x", out)
	}
}

func TestSequencer(t *testing.T) {
	var s Sequencer
	if s.Next(0) != 0 || s.Next(0) != 1 || s.Next(5) != 0 || s.Next(NonQoSTID) != 0 || s.Next(200) != 1 {
		t.Fatal("counters are not independent per TID")
	}
	s.next[3] = 4095
	if s.Next(3) != 4095 || s.Peek(3) != 0 || s.Next(3) != 0 {
		t.Fatal("no wrap at 4096")
	}
	if !SeqLess(4095, 0) || SeqLess(0, 4095) || !SeqLess(10, 2057) || SeqLess(10, 2058) || SeqLess(7, 7) {
		t.Fatal("SeqLess")
	}
}

func TestDataPathAllocs(t *testing.T) {
	buf := make([]byte, 0, 2048)
	h := Header{FC: NewFrameControl(KindQoSData, FlagFromDS), Addr1: staMAC, Addr2: apMAC, Addr3: lanMAC, QoS: NewQoSControl(0, AckNormal, true, false)}
	payload := make([]byte, 1500)
	var seq Sequencer
	n := testing.AllocsPerRun(1000, func() {
		h.Seq = NewSeqControl(seq.Next(0), 0)
		b := AppendHeader(buf[:0], &h)
		start := len(b)
		b = AppendAMSDUSubframe(b, start, staMAC, lanMAC, payload[:100])
		b = AppendAMSDUSubframe(b, start, staMAC, lanMAC, payload[:200])
		f, err := Parse(b)
		if err != nil {
			panic(err)
		}
		r := NewAMSDUReader(f.Body)
		for {
			if _, ok := r.Next(); !ok {
				break
			}
		}
	})
	if n != 0 {
		t.Fatalf("%v allocations per frame", n)
	}
}

// TestBeaconBuildAllocs: a beacon is rebuilt every beacon interval (its
// TIM changes), into a buffer the AP keeps.
func TestBeaconBuildAllocs(t *testing.T) {
	buf := make([]byte, 0, 512)
	ies := []byte{0, 5, 'g', 'o', 'w', 'r', 't', 3, 1, 6}
	var seq Sequencer
	n := testing.AllocsPerRun(1000, func() {
		b := AppendMgmtHeader(buf[:0], KindBeacon, 0, Broadcast, apMAC, apMAC, seq.Next(NonQoSTID))
		bc := Beacon{Timestamp: 1, Interval: 100, Capability: CapESS, IEs: ies}
		b = bc.Append(b)
		_ = b
	})
	if n != 0 {
		t.Fatalf("%v allocations per beacon", n)
	}
}

func BenchmarkParseQoSData(b *testing.B) {
	h := Header{FC: NewFrameControl(KindQoSData, FlagToDS), Addr1: apMAC, Addr2: staMAC, Addr3: lanMAC}
	frame := append(AppendHeader(nil, &h), make([]byte, 1500)...)
	b.ReportAllocs()
	b.SetBytes(int64(len(frame)))
	for range b.N {
		if _, err := Parse(frame); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendQoSDataHeader(b *testing.B) {
	h := Header{FC: NewFrameControl(KindQoSData, FlagFromDS), Addr1: staMAC, Addr2: apMAC, Addr3: lanMAC}
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	for range b.N {
		buf = AppendHeader(buf[:0], &h)
	}
}
