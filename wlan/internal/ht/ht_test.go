package ht

import (
	"encoding/hex"
	"testing"
	"time"

	"github.com/gowrt/gowrt/wlan"
	"github.com/gowrt/gowrt/wlan/ba"
	"github.com/gowrt/gowrt/wlan/ie"
	"github.com/gowrt/gowrt/wlan/radio"
)

// The HT Capabilities element of a 2x2 HT40 SGI interface, octet by
// octet (802.11-2016 9.4.2.56): ID 45, length 26; Capabilities
// Information 0x006e (20/40, SM power save disabled, SGI 20 and 40);
// A-MPDU parameters 0x1b (exponent 3: 65535 octets, spacing 6: 8 µs);
// MCS 0-15 and the Tx MCS Set Defined bit; the rest zero.
func TestCapabilitiesBytes(t *testing.T) {
	c := Config{Width40: true, Above: true, SGI: true, Streams: 2}
	cp := c.Capabilities()
	got := hex.EncodeToString(ie.AppendHTCapabilities(nil, &cp))
	want := "2d1a" + "6e00" + "1b" + "ffff0000000000000000000001000000" + "0000" + "00000000" + "00"
	if got != want {
		t.Errorf("HT Capabilities\n got %s\nwant %s", got, want)
	}
	op := c.Operation(36)
	if got := hex.EncodeToString(ie.AppendHTOperation(nil, &op)); got[:8] != "3d162405" {
		// Primary 36, secondary above (1) with any width (0x04).
		t.Errorf("HT Operation %s", got)
	}
	if op := (&Config{}).Operation(6); op.SecondaryOffset != ie.SecondaryNone || op.AnyWidth {
		t.Errorf("HT20 operation %+v", op)
	}
	if cp := (&Config{Streams: 9}).Capabilities(); !cp.RxMCS(31) || cp.RxMCS(32) || cp.Info&ie.HTCapWidth40 != 0 {
		t.Errorf("4 streams at most, 20 MHz: %+v", cp)
	}
}

// A peer's caps: 40 MHz and short GI only when both sides use them, its
// A-MPDU limits kept.
func TestPeerCaps(t *testing.T) {
	ours := Config{Width40: true, SGI: true, Streams: 2}
	one := Config{Streams: 1, SGI: true}
	peer := one.Capabilities()
	pc := ours.PeerCaps(&peer)
	if pc.HT40 || !pc.SGI || pc.MCS != 0xff || pc.MaxAMPDU != 65535 || pc.Density != 6 {
		t.Errorf("1x1 HT20 peer: %+v", pc)
	}
	w := Config{Width40: true, Streams: 2}
	peer = w.Capabilities()
	if pc := ours.PeerCaps(&peer); !pc.HT40 || pc.SGI || pc.MCS != 0xffff {
		t.Errorf("2x2 HT40 peer without SGI: %+v", pc)
	}
	narrow := Config{SGI: true}
	peer = (&Config{Width40: true, SGI: true}).Capabilities()
	if pc := narrow.PeerCaps(&peer); pc.HT40 {
		t.Errorf("HT40 with a 20 MHz AP: %+v", pc)
	}
}

// User priority from the IP header's precedence bits.
func TestTID(t *testing.T) {
	for _, c := range []struct {
		etherType uint16
		payload   []byte
		want      uint8
	}{
		{0x0800, []byte{0x45, 0x00}, 0},
		{0x0800, []byte{0x45, 0xb8}, 5}, // EF (46)
		{0x0800, []byte{0x45, 0xe0}, 7}, // CS7
		{0x0800, []byte{0x45, 0x20}, 1}, // CS1, background
		{0x0800, []byte{0x65, 0xe0}, 0}, // not version 4
		{0x0800, []byte{0x45}, 0},       // short
		{0x86dd, []byte{0x6b, 0x80}, 5}, // traffic class 0xb8
		{0x888e, nil, 7},                // EAPOL at voice
		{0x0806, []byte{0, 1}, 0},       // ARP
	} {
		if got := TID(c.etherType, c.payload); got != c.want {
			t.Errorf("TID(%#04x, % x) = %d, want %d", c.etherType, c.payload, got, c.want)
		}
	}
}

// qosFrame is a QoS data MPDU for tid with sequence number sn.
func qosFrame(tid uint8, sn uint16) []byte {
	h := wlan.Header{FC: wlan.NewFrameControl(wlan.KindQoSData, wlan.FlagFromDS), Addr1: wlan.MAC{2, 0, 0, 0, 0, 2},
		Addr2: wlan.MAC{2, 0, 0, 0, 0, 1}, Addr3: wlan.MAC{2, 0, 0, 0, 0, 3}, Seq: wlan.NewSeqControl(sn, 0),
		QoS: wlan.NewQoSControl(tid, wlan.AckNormal, false, false)}
	return wlan.AppendMSDU(wlan.AppendHeader(nil, &h), 0x0800, []byte{0x45, 0, byte(sn)})
}

// Rx: no agreement, no reordering; with one, frames come out in order
// once the hole is filled, duplicates are dropped, a BAR skips a hole,
// a DELBA releases what is buffered; the steady state allocates nothing.
func TestRx(t *testing.T) {
	var got []uint16
	r := NewRx(256, 2*wlan.MaxBAWindow, func(f []byte, st *radio.RxStatus) {
		h, err := wlan.ParseHeader(f)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, h.Seq.Seq())
	})
	now := time.Unix(1_800_000_000, 0)
	if r.Offer(0, 1, qosFrame(0, 1), nil, now) {
		t.Fatal("reordered without an agreement")
	}
	req := wlan.ADDBAReq{Dialog: 1, Params: wlan.NewBAParams(0, 64, true), StartSeq: wlan.NewSeqControl(10, 0)}
	resp, err := r.HandleAction(nil, req.Append(nil), now)
	if err != nil || len(resp) == 0 || !r.Established(0) || r.Established(1) {
		t.Fatalf("ADDBA: %v, response % x", err, resp)
	}
	for _, sn := range []uint16{11, 12, 11, 10, 14} {
		if !r.Offer(0, sn, qosFrame(0, sn), nil, now) {
			t.Fatalf("sn %d not taken", sn)
		}
	}
	if want := []uint16{10, 11, 12}; !equal(got, want) {
		t.Fatalf("delivered %v, want %v", got, want)
	}
	if !r.BAR(0, 14, now) || !equal(got, []uint16{10, 11, 12, 14}) {
		t.Fatalf("after BAR: %v", got)
	}
	if r.BAR(3, 0, now) {
		t.Fatal("BAR for a TID without an agreement")
	}
	r.Offer(0, 17, qosFrame(0, 17), nil, now)
	d := wlan.DELBA{Initiator: true, TID: 0, Reason: ba.ReasonEndBA}
	if _, err := r.HandleAction(nil, d.Append(nil), now); err != nil || r.Established(0) {
		t.Fatalf("DELBA: %v", err)
	}
	if !equal(got, []uint16{10, 11, 12, 14, 17}) {
		t.Fatalf("after DELBA: %v", got)
	}
	if r.Stats.Dropped != 1 {
		t.Errorf("dropped %d, want the duplicate", r.Stats.Dropped)
	}
	// Again, counted for allocations.
	if _, err := r.HandleAction(nil, req.Append(nil), now); err != nil {
		t.Fatal(err)
	}
	got = make([]uint16, 0, 1024)
	frames := make([][]byte, 64)
	for i := range frames {
		frames[i] = qosFrame(0, uint16(10+i))
	}
	i := 0
	if a := testing.AllocsPerRun(200, func() {
		// Out of order in pairs: the second of each pair first.
		sn := uint16(10 + i)
		if i%2 == 0 {
			sn++
		} else {
			sn--
		}
		r.Offer(0, sn%wlan.SeqModulo, qosFrame0(frames, sn), nil, now)
		i++
		if len(got) > 900 {
			got = got[:0]
		}
	}); a != 0 {
		t.Errorf("%v allocations per frame", a)
	}
	if r.Stats.TooLarge != 0 || r.Stats.Reordered < 200 {
		t.Errorf("stats %+v", r.Stats)
	}
}

// qosFrame0 is one of frames (any: only the sequence number passed to
// Offer counts for reordering).
func qosFrame0(frames [][]byte, sn uint16) []byte { return frames[int(sn)%len(frames)] }

func equal(a, b []uint16) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
