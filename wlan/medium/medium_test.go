package medium

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	"github.com/gowrt/gowrt/internal/pcap"
)

type recorder struct {
	got   [][]byte
	ticks int
}

func (r *recorder) Receive(f []byte) { r.got = append(r.got, append([]byte(nil), f...)) }
func (r *recorder) Tick(time.Time)   { r.ticks++ }

func TestDeliversToEveryOtherRadio(t *testing.T) {
	var capture bytes.Buffer
	start := time.Unix(1_800_000_000, 0)
	m, err := New(Config{Start: start, Capture: &capture})
	if err != nil {
		t.Fatal(err)
	}
	var devs [3]recorder
	var radios [3]*Radio
	for i := range devs {
		radios[i] = m.Attach(&devs[i])
	}
	radios[0].Transmit([]byte("from 0"))
	radios[2].Transmit([]byte("from 2"))
	m.Run(5 * time.Millisecond)
	want := [3][]string{{"from 2"}, {"from 0", "from 2"}, {"from 0"}}
	for i, d := range devs {
		if len(d.got) != len(want[i]) {
			t.Fatalf("radio %d got %q", i, d.got)
		}
		for j, w := range want[i] {
			if string(d.got[j]) != w {
				t.Errorf("radio %d frame %d %q, want %q", i, j, d.got[j], w)
			}
		}
		if d.ticks != 5 {
			t.Errorf("radio %d ticked %d times, want 5", i, d.ticks)
		}
	}
	if !m.Now().Equal(start.Add(5 * time.Millisecond)) {
		t.Errorf("clock %v", m.Now())
	}
	// The capture: file header with link type 127, then each frame
	// after the 8-byte radiotap header.
	b := capture.Bytes()
	if binary.LittleEndian.Uint32(b[20:24]) != pcap.LinkTypeIEEE80211Radio {
		t.Fatalf("link type %d", binary.LittleEndian.Uint32(b[20:24]))
	}
	rec := b[24:]
	if n := binary.LittleEndian.Uint32(rec[8:12]); n != 8+6 {
		t.Fatalf("record length %d", n)
	}
	if !bytes.Equal(rec[16:30], append([]byte{0, 0, 8, 0, 0, 0, 0, 0}, "from 0"...)) {
		t.Errorf("record %x", rec[16:30])
	}
}

// Loss follows the seed: the same seed loses the same frames.
func TestLossIsSeeded(t *testing.T) {
	run := func(seed uint64) (string, Stats) {
		m, _ := New(Config{Seed: seed})
		var a, b recorder
		ra, rb := m.Attach(&a), m.Attach(&b)
		m.SetLoss(ra, rb, 0.5)
		for i := 0; i < 200; i++ {
			ra.Transmit([]byte{byte(i)})
			rb.Transmit([]byte{byte(i)})
		}
		m.Deliver()
		var got []byte
		for _, f := range b.got {
			got = append(got, f...)
		}
		if len(a.got) != 200 {
			t.Errorf("lossless direction lost frames: %d", len(a.got))
		}
		return string(got), m.Stats()
	}
	g1, s1 := run(7)
	g2, _ := run(7)
	g3, _ := run(8)
	if g1 != g2 {
		t.Error("same seed, different losses")
	}
	if g1 == g3 {
		t.Error("different seeds, same losses")
	}
	if s1.Lost < 60 || s1.Lost > 140 || s1.Delivered+s1.Lost != 400 {
		t.Errorf("stats %+v", s1)
	}
}

func TestTooLong(t *testing.T) {
	m, _ := New(Config{})
	r := m.Attach(&recorder{})
	if err := r.Transmit(make([]byte, MaxFrame+1)); err != ErrTooLong {
		t.Fatal(err)
	}
}
