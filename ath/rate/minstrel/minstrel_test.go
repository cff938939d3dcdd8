package minstrel

import (
	"testing"
	"time"

	"github.com/gowrt/gowrt/ath/airtime"
	"github.com/gowrt/gowrt/ath/rate"
)

func table(t testing.TB) *rate.Table {
	caps := rate.Caps{MCS: 0xffff, HT40: true, SGI: true}
	tb, err := rate.NewTable(airtime.FiveGHz(), caps, caps)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// run feeds n decisions through a synthetic link where deliver(rix) is
// the share of sub-frames delivered (0: the exchange fails).
func run(m *Node, steps int, deliver func(int) float64) {
	var d rate.Decision
	now := time.Duration(0)
	for i := 0; i < steps; i++ {
		m.Pick(now, 100000, 1542, &d)
		frames := 1
		if d.MaxBytes > 0 {
			frames = d.MaxBytes/1544 + 1
		}
		c := rate.Completion{FinalRix: -1, Frames: frames, Bad: frames}
		long := 0
	series:
		for i, s := range d.Series {
			for k := 0; k < int(s.Tries); k++ {
				long++
				c.FinalSeries, c.LongTries = i, long
				if p := deliver(int(s.Rix)); p > 0 {
					c.Acked, c.Bad = true, frames-int(p*float64(frames))
					if c.Bad == frames {
						c.Bad--
					}
					break series
				}
			}
		}
		m.Complete(now, &d, &c)
		now += 2 * time.Millisecond
	}
}

func TestConvergesToBestThroughput(t *testing.T) {
	m, err := New(table(t), 1, false)
	if err != nil {
		t.Fatal(err)
	}
	// Everything up to per-stream MCS 4 works; above, nothing gets through.
	run(m, 5000, func(rix int) float64 {
		if rix%8 <= 4 {
			return 1
		}
		return 0
	})
	if got := m.rs(m.maxTp[0]).rix; got != 12 {
		t.Errorf("max_tp_rate = MCS%d, want MCS12", got)
	}
	if m.rs(m.maxProb).prob < frac(90, 100) {
		t.Errorf("max_prob_rate MCS%d has probability %d/65536", m.rs(m.maxProb).rix, m.rs(m.maxProb).prob)
	}
	if m.Probes == 0 {
		t.Error("never sampled")
	}
}

// Sudden death: when max_tp collapses, it is downgraded to a group with
// fewer streams before the next statistics update.
func TestSuddenDeath(t *testing.T) {
	m, _ := New(table(t), 1, false)
	run(m, 3000, func(int) float64 { return 1 })
	if m.rs(m.maxTp[0]).streams != 2 {
		t.Fatalf("max_tp_rate MCS%d is not a 2-stream rate", m.rs(m.maxTp[0]).rix)
	}
	m.updateStats() // start a fresh statistics interval
	var d rate.Decision
	for i := 0; i < 3; i++ {
		m.Pick(0, 100000, 1542, &d)
		d.Series = [4]rate.Series{{Rix: uint8(m.rs(m.maxTp[0]).rix), Tries: 1}}
		c := rate.Completion{FinalSeries: 0, FinalRix: -1, LongTries: 1, Frames: 20, Bad: 20}
		m.Complete(0, &d, &c)
	}
	if s := m.rs(m.maxTp[0]).streams; s != 1 {
		t.Errorf("after sudden death max_tp_rate has %d streams", s)
	}
}

func TestRetryCountsFitSegment(t *testing.T) {
	m, _ := New(table(t), 1, false)
	run(m, 2000, func(rix int) float64 { return 1 - float64(rix%8)/10 })
	for g := 0; g < m.ng; g++ {
		for i := 0; i < m.groups[g].n; i++ {
			r := &m.groups[g].rates[i]
			if r.supported && r.prob > frac(10, 100) && (r.retry < 2 || r.retry > maxRetry) {
				t.Errorf("MCS%d retry count %d", r.rix, r.retry)
			}
		}
	}
	// Probes are single MPDUs with one try, as ath9k sends them.
	var d rate.Decision
	for i := 0; i < 2000; i++ {
		m.Pick(time.Duration(i)*time.Millisecond, 100000, 1542, &d)
		if d.Probe {
			if d.MaxBytes != 0 || d.Series[0].Tries != 1 {
				t.Fatalf("probe decision %+v", d)
			}
			return
		}
		c := rate.Completion{FinalSeries: 0, FinalRix: -1, LongTries: 1, Frames: 20, Bad: 3, Acked: true}
		m.Complete(time.Duration(i)*time.Millisecond, &d, &c)
	}
	t.Error("no probe in 2000 decisions")
}

func TestLegacyTable(t *testing.T) {
	caps := rate.Caps{Legacy: []uint32{6000, 12000, 24000, 54000}}
	tb, err := rate.NewTable(airtime.FiveGHz(), caps, caps)
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(tb, 3, true)
	if err != nil {
		t.Fatal(err)
	}
	run(m, 3000, func(rix int) float64 {
		if rix <= 2 {
			return 1
		}
		return 0
	})
	if got := m.rs(m.maxTp[0]).rix; got != 2 {
		t.Errorf("legacy max_tp = rix %d, want 2 (24 Mb/s)", got)
	}
	if _, err := New(nil, 1, false); err == nil {
		t.Error("nil table accepted")
	}
}

func FuzzComplete(f *testing.F) {
	f.Add(100000, 0, -1, 1, 0, 10, 2, true, int64(0))
	f.Add(1, 9, 77, 99, -3, 0, 70, false, int64(1e10))
	f.Fuzz(func(t *testing.T, queued, fs, frix, long, short, frames, bad int, acked bool, now int64) {
		m, _ := New(table(t), 7, false)
		var d rate.Decision
		for i := 0; i < 3; i++ {
			m.Pick(time.Duration(now), queued, 1542, &d)
			c := rate.Completion{FinalSeries: fs, FinalRix: frix, LongTries: long, ShortTries: short, Frames: frames, Bad: bad, Acked: acked}
			m.Complete(time.Duration(now)+time.Duration(i)*60*time.Millisecond, &d, &c)
			if d.Series[0].Tries == 0 || int(d.Series[0].Rix) >= m.t.Len() || d.MaxBytes > 65535 {
				t.Fatalf("bad decision %+v", d)
			}
		}
	})
}

func TestZeroAllocs(t *testing.T) {
	m, _ := New(table(t), 1, false)
	var d rate.Decision
	now := time.Duration(0)
	a := testing.AllocsPerRun(2000, func() {
		m.Pick(now, 100000, 1542, &d)
		c := rate.Completion{FinalSeries: 0, FinalRix: -1, LongTries: 1, Frames: 20, Bad: 1, Acked: true}
		m.Complete(now, &d, &c)
		now += time.Millisecond
	})
	if a != 0 {
		t.Errorf("Pick+Complete allocate %.1f times", a)
	}
}

func BenchmarkBaselineAttempts(b *testing.B) {
	tb := table(b)
	p, r := tb.PHY, tb.Rate(7)
	b.ReportAllocs()
	s := 0
	for i := 0; i < b.N; i++ {
		s += p.Attempts(r, 40000+i&1023, airtime.BlockAck, false, 0, 1)
	}
	_ = s
}

func BenchmarkPick(b *testing.B) {
	m, _ := New(table(b), 1, false)
	run(m, 2000, func(rix int) float64 { return 1 - float64(rix%8)/10 })
	var d rate.Decision
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.Pick(0, 100000, 1542, &d)
	}
}

func BenchmarkComplete(b *testing.B) {
	m, _ := New(table(b), 1, false)
	run(m, 2000, func(rix int) float64 { return 1 - float64(rix%8)/10 })
	var d rate.Decision
	m.Pick(0, 100000, 1542, &d)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c := rate.Completion{FinalSeries: 0, FinalRix: -1, LongTries: 1, Frames: 20, Bad: 1, Acked: true}
		m.Complete(0, &d, &c)
	}
}
