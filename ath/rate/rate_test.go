package rate

import (
	"errors"
	"strings"
	"testing"

	"github.com/gowrt/gowrt/ath/agg"
	"github.com/gowrt/gowrt/ath/airtime"
)

func TestNewTable(t *testing.T) {
	p := airtime.FiveGHz()
	ours := Caps{Legacy: []uint32{6000, 12000, 24000, 54000}, MCS: 0xffff, HT40: true, SGI: true}
	peer := Caps{Legacy: []uint32{6000, 24000}, MCS: 0x00ff, HT40: true, SGI: false, MaxAMPDU: 16383}
	tb, err := NewTable(p, ours, peer)
	if err != nil {
		t.Fatal(err)
	}
	if !tb.HT || tb.Len() != 8 {
		t.Fatalf("HT %v len %d", tb.HT, tb.Len())
	}
	if r := tb.Rate(7); r != airtime.MCS(7, true, false) {
		t.Errorf("rix 7 = %v", r)
	}
	// HT40 MCS0 LGI: 6686 (agg tests) < peer 16383; MCS7: capped at 16383.
	if tb.Limit(0) != 6686 || tb.Limit(7) != 16383 {
		t.Errorf("limits %d %d", tb.Limit(0), tb.Limit(7))
	}
	// Legacy fallback: no MCS in common; CCK is dropped in 5 GHz.
	ours.MCS = 0
	ours.Legacy = []uint32{54000, 1000, 6000, 24000}
	tb, err = NewTable(p, ours, peer)
	if err != nil || tb.HT || tb.Len() != 2 || tb.Rate(0).Kbps != 6000 || tb.Rate(1).Kbps != 24000 || tb.Limit(0) != 0 {
		t.Fatalf("legacy table: %v %+v", err, tb)
	}
	// No common rates: a clear error naming both sides.
	_, err = NewTable(p, Caps{Legacy: []uint32{54000}}, Caps{Legacy: []uint32{6000}, MCS: 1})
	if !errors.Is(err, ErrNoCommonRates) || !strings.Contains(err.Error(), "peer MCS 0x1") {
		t.Errorf("no common rates: %v", err)
	}
	// CCK-only peer in 5 GHz has nothing usable.
	if _, err := NewTable(p, Caps{Legacy: []uint32{1000, 2000}}, Caps{Legacy: []uint32{1000, 2000}}); !errors.Is(err, ErrNoCommonRates) {
		t.Errorf("CCK in 5 GHz: %v", err)
	}
	if _, err := NewTable(p, ours, Caps{Legacy: []uint32{6000}, Density: 9}); err == nil {
		t.Error("density 9 accepted")
	}
}

func sched() *Decision {
	return &Decision{Series: [4]Series{{Rix: 7, Tries: 2}, {Rix: 5, Tries: 2}, {Rix: 0, Tries: 3}}, ReqBytes: 3000}
}

func TestClamp(t *testing.T) {
	d := sched()
	cases := []struct {
		name string
		in   Completion
		want Anomaly
		out  Completion
	}{
		{"ok", Completion{FinalSeries: 1, FinalRix: 5, LongTries: 3, Frames: 4, Bad: 1, Acked: true},
			0, Completion{FinalSeries: 1, FinalRix: 5, LongTries: 3, Frames: 4, Bad: 1, Acked: true, Bytes: 3000}},
		{"tries beyond schedule", Completion{FinalSeries: 2, FinalRix: -1, LongTries: 40, Frames: 1, Acked: true},
			AnomTries, Completion{FinalSeries: 2, FinalRix: 0, LongTries: 7, Frames: 1, Acked: true, Bytes: 3000}},
		{"tries too few for series", Completion{FinalSeries: 2, FinalRix: 0, LongTries: 1, Frames: 1, Acked: true},
			AnomTries, Completion{FinalSeries: 2, FinalRix: 0, LongTries: 5, Frames: 1, Acked: true, Bytes: 3000}},
		{"more bad than frames", Completion{FinalSeries: 0, FinalRix: 7, LongTries: 1, Frames: 3, Bad: 9, Acked: true},
			AnomBad | AnomAckedNothing, Completion{FinalSeries: 0, FinalRix: 7, LongTries: 1, Frames: 3, Bad: 3, Bytes: 3000}},
		{"unknown rix", Completion{FinalSeries: 0, FinalRix: 63, LongTries: 1, Frames: 1, Acked: true},
			AnomUnknownRix, Completion{FinalSeries: 0, FinalRix: 7, LongTries: 1, Frames: 1, Acked: true, Bytes: 3000}},
		{"rix names another series", Completion{FinalSeries: 0, FinalRix: 5, LongTries: 3, Frames: 1, Acked: true},
			0, Completion{FinalSeries: 1, FinalRix: 5, LongTries: 3, Frames: 1, Acked: true, Bytes: 3000}},
		{"series without tries", Completion{FinalSeries: 3, FinalRix: -1, LongTries: 5, Frames: 0, Bad: -2, ShortTries: -1, Bytes: 70000},
			AnomFinalSeries | AnomFrames | AnomBad | AnomShortTries | AnomBytes,
			Completion{FinalSeries: 2, FinalRix: 0, LongTries: 5, Frames: 1, Bad: 1, Bytes: agg.MaxPSDU}},
		{"not acked", Completion{FinalSeries: 2, FinalRix: -1, LongTries: 7, Frames: 10, Bad: 2},
			0, Completion{FinalSeries: 2, FinalRix: 0, LongTries: 7, Frames: 10, Bad: 10, Bytes: 3000}},
	}
	for _, c := range cases {
		got := c.in
		if a := got.Clamp(d, 8); a != c.want || got != c.out {
			t.Errorf("%s: anomaly %b want %b; got %+v want %+v", c.name, a, c.want, got, c.out)
		}
	}
	bad := &Decision{}
	c := Completion{}
	if c.Clamp(bad, 8) != AnomBadDecision {
		t.Error("empty schedule accepted")
	}
	bad.Series[0] = Series{Rix: 9, Tries: 1}
	if c.Clamp(bad, 8) != AnomBadDecision {
		t.Error("rix beyond table accepted")
	}
	var an Anomalies
	an.Add(AnomBad | AnomTries)
	an.Add(AnomBad)
	if an.Total() != 3 || an[3] != 1 {
		t.Errorf("anomaly counts %v", an)
	}
}

func TestTriesAtAndFit(t *testing.T) {
	d := sched()
	c := Completion{FinalSeries: 2, FinalRix: -1, LongTries: 6, Frames: 1, Acked: true}
	c.Clamp(d, 8)
	if c.TriesAt(d, 0) != 2 || c.TriesAt(d, 1) != 2 || c.TriesAt(d, 2) != 2 || c.TriesAt(d, 3) != 0 {
		t.Errorf("TriesAt: %d %d %d %d", c.TriesAt(d, 0), c.TriesAt(d, 1), c.TriesAt(d, 2), c.TriesAt(d, 3))
	}
	tb, err := NewTable(airtime.FiveGHz(), Caps{MCS: 0xff}, Caps{MCS: 0xff})
	if err != nil {
		t.Fatal(err)
	}
	// HT20 LGI: MCS0 carries 3218 bytes in 4 ms, MCS5 far more.
	d.ReqBytes = 20000
	tb.FitSchedule(d, 20000)
	if d.Series[1].Tries != 2 || d.Series[2].Tries != 0 {
		t.Errorf("FitSchedule: %+v", d.Series)
	}
	if got := tb.MinLimit(sched()); got != 3218 {
		t.Errorf("MinLimit = %d", got)
	}
}

// FuzzClamp feeds arbitrary completion reports against arbitrary
// schedules: Clamp must never panic and must establish its invariants.
func FuzzClamp(f *testing.F) {
	f.Add(uint8(7), uint8(2), uint8(5), uint8(2), 1, 5, 3, 0, 4, 1, true, 0)
	f.Add(uint8(70), uint8(0), uint8(0), uint8(0), -3, 99, -1, -7, 0, 99, false, -5)
	f.Add(uint8(1), uint8(15), uint8(0), uint8(15), 3, -1, 1000, 300, 70, 2, true, 1<<20)
	f.Fuzz(func(t *testing.T, r0, t0, r1, t1 uint8, fs, frix, long, short, frames, bad int, acked bool, bytes int) {
		d := &Decision{Series: [4]Series{{r0, t0}, {r1, t1}}, ReqBytes: 1500}
		c := Completion{FinalSeries: fs, FinalRix: frix, LongTries: long, ShortTries: short,
			Frames: frames, Bad: bad, Acked: acked, Bytes: bytes}
		a := c.Clamp(d, 16)
		if a&AnomBadDecision != 0 {
			return
		}
		if c.FinalSeries < 0 || c.FinalSeries >= MaxSeries || d.Series[c.FinalSeries].Tries == 0 {
			t.Fatalf("final series %d", c.FinalSeries)
		}
		sum := 0
		for i := 0; i < MaxSeries; i++ {
			n := c.TriesAt(d, i)
			if n < 0 || n > int(d.Series[i].Tries) {
				t.Fatalf("TriesAt(%d) = %d", i, n)
			}
			sum += n
		}
		if sum != c.LongTries || c.Frames < 1 || c.Frames > 64 || c.Bad < 0 || c.Bad > c.Frames ||
			(!c.Acked && c.Bad != c.Frames) || c.Bytes < 1 || c.Bytes > agg.MaxPSDU || c.ShortTries < 0 {
			t.Fatalf("invariants broken: %+v", c)
		}
	})
}
