package wlantest_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/gowrt/gowrt/wlan"
	"github.com/gowrt/gowrt/wlan/ccmp"
	"github.com/gowrt/gowrt/wlan/medium"
	"github.com/gowrt/gowrt/wlan/radio"
	"github.com/gowrt/gowrt/wlan/wlantest"
)

type rxRecorder struct {
	frames [][]byte
	sts    []radio.RxStatus
}

func (r *rxRecorder) Receive(f []byte, st *radio.RxStatus) {
	r.frames = append(r.frames, append([]byte(nil), f...))
	r.sts = append(r.sts, *st)
}

// The key-cache model: a frame sent with a slot goes on the air as CCMP
// that package ccmp decrypts; the receiving radio's slot decrypts it and
// hands it up with the CCMP header kept and the MIC gone, flagged; with
// another key it is flagged as a decryption error and handed up as is.
func TestKeyCacheModel(t *testing.T) {
	m, err := medium.New(medium.Config{Start: time.Unix(1_800_000_000, 0)})
	if err != nil {
		t.Fatal(err)
	}
	a := wlan.MAC{2, 0, 0, 0, 0, 1}
	b := wlan.MAC{2, 0, 0, 0, 0, 2}
	ra := wlantest.NewRadio(m, wlantest.RadioConfig{Addr: a, KeySlots: 8})
	rb := wlantest.NewRadio(m, wlantest.RadioConfig{Addr: b, KeySlots: 8})
	rec := &rxRecorder{}
	if err := ra.Start(&rxRecorder{}); err != nil {
		t.Fatal(err)
	}
	if err := rb.Start(rec); err != nil {
		t.Fatal(err)
	}
	tk := [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	if err := ra.KeyCache().Install(5, b, 0, tk, 1); err != nil {
		t.Fatal(err)
	}
	if err := rb.KeyCache().Install(4, a, 0, tk, 1); err != nil {
		t.Fatal(err)
	}
	if err := ra.KeyCache().Install(9, b, 0, tk, 1); err != radio.ErrNoSlot {
		t.Fatalf("slot 9 of 8: %v", err)
	}
	h := wlan.Header{FC: wlan.NewFrameControl(wlan.KindData, wlan.FlagToDS|wlan.FlagProtected), Addr1: b, Addr2: a, Addr3: b}
	body := []byte{0xaa, 0xaa, 3, 0, 0, 0, 0x08, 0x00, 0x45, 0, 0, 20}
	mpdu := wlan.AppendHeader(nil, &h)
	mpdu = append(mpdu, make([]byte, ccmp.HeaderLen)...)
	mpdu = append(mpdu, body...)
	mpdu = append(mpdu, make([]byte, ccmp.MICLen)...)
	var done int
	req := &radio.TxRequest{MPDUs: [][]byte{mpdu}, Key: 5, Done: func(_ *radio.TxRequest, st *radio.TxStatus) {
		if st.Acked {
			done++
		}
	}}
	for i := 0; i < 2; i++ {
		if err := ra.Transmit(req); err != nil {
			t.Fatal(err)
		}
	}
	m.Deliver()
	if done != 2 || len(rec.frames) != 2 {
		t.Fatalf("done %d, received %d", done, len(rec.frames))
	}
	for i, f := range rec.frames {
		if !rec.sts[i].Decrypted {
			t.Fatalf("frame %d not decrypted: %+v", i, rec.sts[i])
		}
		pn, err := ccmp.ReadPN(f)
		if err != nil || pn != uint64(i+1) {
			t.Errorf("frame %d PN %d, %v; want %d", i, pn, err, i+1)
		}
		if !bytes.Equal(f[24+ccmp.HeaderLen:], body) {
			t.Errorf("frame %d plaintext %x", i, f[24+ccmp.HeaderLen:])
		}
	}
	// The MAC layer's PN check finishes the job; the second copy of a
	// PN would be a replay.
	k, _ := ccmp.NewKey(tk[:], 0)
	for _, f := range rec.frames {
		if _, err := k.AcceptDecrypted(f); err != nil {
			t.Fatal(err)
		}
	}
	// Another key at the receiver: a decryption error, the frame as sent.
	tk[0] ^= 1
	if err := rb.KeyCache().Install(4, a, 0, tk, 1); err != nil {
		t.Fatal(err)
	}
	if err := ra.Transmit(req); err != nil {
		t.Fatal(err)
	}
	m.Deliver()
	if st := rec.sts[2]; st.Decrypted || !st.DecryptErr {
		t.Errorf("wrong key: %+v", st)
	}
	if ra.KeyCache().Slots() != 8 || ra.KeyCache().(*wlantest.KeyCache).Used() != 1 {
		t.Error("slots")
	}
}
