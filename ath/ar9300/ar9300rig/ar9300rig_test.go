package ar9300rig_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/gowrt/gowrt/ath/airtime"
	"github.com/gowrt/gowrt/ath/ar9300/ar9300rig"
	"github.com/gowrt/gowrt/wlan/medium"
	"github.com/gowrt/gowrt/wlan/radio"
)

type collect struct{ frames [][]byte }

func (c *collect) Receive(f []byte, _ *radio.RxStatus) {
	c.frames = append(c.frames, append([]byte(nil), f...))
}

// TestRigsOnMedium: two rigs on the medium; a unicast frame from one
// arrives at the other, byte for byte, and its Done reports the ACK.
func TestRigsOnMedium(t *testing.T) {
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m, err := medium.New(medium.Config{Start: epoch})
	if err != nil {
		t.Fatal(err)
	}
	a, err := ar9300rig.New(ar9300rig.Config{MAC: [6]byte{2, 0, 0, 0, 0, 1}, Epoch: epoch})
	if err != nil {
		t.Fatal(err)
	}
	b, err := ar9300rig.New(ar9300rig.Config{Name: "ath1", MAC: [6]byte{2, 0, 0, 0, 0, 2}, Epoch: epoch, Seed: 2, Hostile: true})
	if err != nil {
		t.Fatal(err)
	}
	a.SetAir(m.Attach(a))
	b.SetAir(m.Attach(b))
	var ra, rb collect
	if err := a.Driver.Start(&ra); err != nil {
		t.Fatal(err)
	}
	if err := b.Driver.Start(&rb); err != nil {
		t.Fatal(err)
	}
	f := []byte{0x08, 0x02, 0, 0, 2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 1, 0x10, 0, 0xaa, 0xaa, 3, 0, 0, 0, 8, 0, 1, 2, 3}
	acked := false
	req := &radio.TxRequest{MPDUs: [][]byte{f}, Key: radio.NoKey,
		Series: [radio.MaxSeries]radio.Series{{Rate: airtime.Legacy(24000), Tries: 4}},
		Done:   func(_ *radio.TxRequest, st *radio.TxStatus) { acked = st.Acked }}
	if err := a.Driver.Transmit(req); err != nil {
		t.Fatal(err)
	}
	m.Run(5 * time.Millisecond)
	if !acked || len(rb.frames) != 1 || !bytes.Equal(rb.frames[0], f) {
		t.Fatalf("acked %v, b got %d frames", acked, len(rb.frames))
	}
}
