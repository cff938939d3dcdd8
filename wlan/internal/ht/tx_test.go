package ht

import (
	"bytes"
	"encoding/hex"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/gowrt/gowrt/wlan"
	"github.com/gowrt/gowrt/wlan/ba"
	"github.com/gowrt/gowrt/wlan/ccmp"
	"github.com/gowrt/gowrt/wlan/ie"
	"github.com/gowrt/gowrt/wlan/radio"
)

// The scheduler's clock counts from Start and never goes back.
func TestClock(t *testing.T) {
	var c Clock
	t0 := time.Unix(1000, 0)
	c.Start(t0)
	c.Advance(t0.Add(3 * time.Millisecond))
	c.Advance(t0.Add(time.Millisecond))
	if got := c.Elapsed(); got != 3*time.Millisecond {
		t.Errorf("elapsed %v, want 3ms", got)
	}
}

// A BlockAckReq for a TID without an agreement is answered with a DELBA
// (reason 38, unknown BA: 802.11-2016 Table 9-45); a short body is an
// error, not a panic.
func TestReceiveBAR(t *testing.T) {
	r := NewRx(RxFrameLen, RxEntries, func([]byte, *radio.RxStatus) {})
	frame := wlan.AppendBlockAckReq(nil, 0, wlan.MAC{1}, wlan.MAC{2}, &wlan.BlockAckReq{TID: 5, StartSeq: 100})
	reply, err := r.ReceiveBAR(nil, frame[16:], time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	want := wlan.DELBA{TID: 5, Reason: ba.ReasonUnknownBA}
	if !bytes.Equal(reply, want.Append(nil)) {
		t.Errorf("reply %x, want DELBA %x", reply, want.Append(nil))
	}
	if hex.EncodeToString(reply[len(reply)-2:]) != "2600" {
		t.Errorf("reason %x, want 38", reply[len(reply)-2:])
	}
	if _, err := r.ReceiveBAR(nil, frame[16:18], time.Unix(0, 0)); err == nil {
		t.Error("short BlockAckReq accepted")
	}
}

// Seal moves the body back over the CCMP room and protects it in place:
// the result opens with the same key; a frame without room is refused.
func TestSeal(t *testing.T) {
	tk := bytes.Repeat([]byte{0x42}, 16)
	key, err := ccmp.NewKey(tk, 0)
	if err != nil {
		t.Fatal(err)
	}
	rx, _ := ccmp.NewKey(tk, 0)
	h := wlan.Header{FC: wlan.NewFrameControl(wlan.KindData, wlan.FlagToDS|wlan.FlagProtected), Addr1: wlan.MAC{1}, Addr2: wlan.MAC{2}, Addr3: wlan.MAC{3}}
	hdr := wlan.AppendHeader(nil, &h)
	body := []byte("payload of the MSDU")
	mpdu := append(append(append(append([]byte{}, hdr...), make([]byte, ccmp.HeaderLen)...), body...), make([]byte, ccmp.MICLen)...)
	var mu sync.Mutex
	if err := Seal(&mu, key, mpdu); err != nil {
		t.Fatal(err)
	}
	plain, err := rx.Decap(mpdu)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(plain, body) {
		t.Errorf("decapsulated %x, want the body %x at the end", plain, body)
	}
	for _, short := range [][]byte{nil, {0x08}, hdr} {
		if err := Seal(&mu, key, append([]byte{}, short...)); !errors.Is(err, ccmp.ErrTooLong) {
			t.Errorf("%d octets: %v", len(short), err)
		}
	}
}

// A peer runs HT only with both HT Capabilities and WMM, each parsing.
func TestPeerHT(t *testing.T) {
	c := Config{Streams: 1}
	cp := c.Capabilities()
	w := ie.WMM{}
	both := ie.AppendWMM(ie.AppendHTCapabilities(nil, &cp), &w)
	for _, tc := range []struct {
		name string
		ies  []byte
		want bool
	}{
		{"HT and WMM", both, true},
		{"HT only", ie.AppendHTCapabilities(nil, &cp), false},
		{"WMM only", ie.AppendWMM(nil, &w), false},
		{"short HT Capabilities", append([]byte{45, 2, 0, 0}, both[28:]...), false},
	} {
		es, err := ie.Parse(tc.ies)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got, ok := PeerHT(&es)
		if ok != tc.want || (ok && got != cp) {
			t.Errorf("%s: %+v %v, want %v", tc.name, got, ok, tc.want)
		}
	}
}
