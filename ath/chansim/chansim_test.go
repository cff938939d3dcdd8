package chansim

import (
	"math"
	"testing"
	"time"

	"github.com/gowrt/gowrt/ath/rate"
)

// naiveSchedule sizes the aggregate for series 0 only and keeps a slow
// fallback series: the hardware then retries a 64 KiB aggregate at MCS0.
type naiveSchedule struct {
	t   *rate.Table
	fit bool
}

func (n *naiveSchedule) Name() string { return "naive" }
func (n *naiveSchedule) Pick(now time.Duration, queued, head int, d *rate.Decision) {
	*d = rate.Decision{Series: [4]rate.Series{{Rix: 15, Tries: 1}, {Rix: 0, Tries: 2}}}
	d.MaxBytes = n.t.Limit(15)
	if queued < d.MaxBytes {
		d.MaxBytes = queued
	}
	d.ReqBytes = d.MaxBytes
	if n.fit {
		n.t.FitSchedule(d, d.MaxBytes)
	}
}
func (n *naiveSchedule) Complete(time.Duration, *rate.Decision, *rate.Completion) {}

// TestHazardRetryTooLongAggregate: letting the hardware retry an aggregate
// formed for a fast rate at a slow one sends PPDUs far beyond 4 ms; the
// re-forming rule (rate.FitSchedule) never does.
func TestHazardRetryTooLongAggregate(t *testing.T) {
	tb := scoreTable(t)
	sc := Scenario{Name: "fringe", Duration: 300 * time.Millisecond, Profile: []Point{{0, 14}}, KdB: 6, Doppler: 0.5, Bulk: 1500, Seed: 9}
	l, err := NewLink(sc, DefaultParams(), tb)
	if err != nil {
		t.Fatal(err)
	}
	if r := l.Run(&naiveSchedule{t: tb}); r.Overlong == 0 {
		t.Error("the simulator did not notice a 64 KiB aggregate retried at MCS0")
	}
	if r := l.Run(&naiveSchedule{t: tb, fit: true}); r.Overlong != 0 {
		t.Errorf("FitSchedule still sent %d over-long aggregates", r.Overlong)
	}
}

func TestDeterministic(t *testing.T) {
	tb := scoreTable(t)
	sc := Scenarios(0.05, 7)[1] // fringe: losses depend on the draws
	run := func() Result {
		l, err := NewLink(sc, DefaultParams(), tb)
		if err != nil {
			t.Fatal(err)
		}
		return l.Run(&Fixed{T: tb, Rix: 4})
	}
	a, b := run(), run()
	if a.Bytes != b.Bytes || a.Exchanges != b.Exchanges || a.Bytes == 0 {
		t.Errorf("two runs differ: %+v / %+v", a, b)
	}
	sc.Seed++
	l, _ := NewLink(sc, DefaultParams(), tb)
	if c := l.Run(&Fixed{T: tb, Rix: 4}); c.Bytes == a.Bytes {
		t.Error("a different seed gave the same run")
	}
}

// TestRayleighStatistics checks the fading generator: mean power gain 1
// per branch and, for Rayleigh, P(gain < −10 dB) = 1 − e^−0.1 ≈ 9.5 %.
func TestRayleighStatistics(t *testing.T) {
	p := DefaultParams()
	p.GridUs = 1000
	below, n := 0, 0
	var sum float64
	for seed := uint64(0); seed < 4; seed++ {
		sc := &Scenario{Duration: 10 * time.Second, Profile: []Point{{0, 0}}, KdB: -100, Doppler: 20, Seed: seed}
		g := singleBranch(sc, p)
		for _, v := range g {
			sum += v
			n++
			if v < 0.1 {
				below++
			}
		}
	}
	mean := sum / float64(n)
	frac := float64(below) / float64(n)
	if math.Abs(mean-1) > 0.1 {
		t.Errorf("mean power gain %.3f, want 1", mean)
	}
	if want := 1 - math.Exp(-0.1); math.Abs(frac-want) > 0.03 {
		t.Errorf("P(gain < -10 dB) = %.3f, want %.3f", frac, want)
	}
}

// singleBranch recovers branch 0's linear gains of a 0 dB scenario from
// the precomputed tables: db1 = 10·log10(g1+g2), db2 = 5·log10(g1·g2), so
// g1 and g2 are the roots of x² − S·x + P.
func singleBranch(sc *Scenario, p Params) []float64 {
	c := newChannel(sc, p)
	out := make([]float64, 0, len(c.db1))
	for j := range c.db1 {
		s := math.Pow(10, float64(c.db1[j])/10)
		pr := math.Pow(10, float64(c.db2[j])/5)
		d := s*s - 4*pr
		if d < 0 {
			d = 0
		}
		out = append(out, (s+math.Sqrt(d))/2, (s-math.Sqrt(d))/2)
	}
	return out
}

func TestInterferenceAndErrors(t *testing.T) {
	sc := &Scenario{Duration: time.Second, Profile: []Point{{0, 20}}, Period: 10 * time.Millisecond, Burst: 2 * time.Millisecond, INRdB: 25}
	c := newChannel(sc, DefaultParams())
	for _, x := range []struct {
		from, to int64
		want     bool
	}{{0, 10, true}, {1999, 2000, true}, {2000, 9000, false}, {9000, 10001, true}, {12500, 13000, false}} {
		if got := c.interfered(x.from, x.to); got != x.want {
			t.Errorf("interfered(%d, %d) = %v", x.from, x.to, got)
		}
	}
	tb := scoreTable(t)
	l, err := NewLink(Scenario{Name: "x", Duration: time.Second, Profile: []Point{{0, 20}}, Bulk: 1500}, DefaultParams(), tb)
	if err != nil {
		t.Fatal(err)
	}
	// Error probability falls with SNR and rises with length and MCS.
	prev := -1.0
	for db := 0.0; db < 40; db += 0.5 {
		s := math.Exp(float64(l.lnS[5][int((db-perMinDB)/perStep)]))
		if s < prev {
			t.Fatalf("success falls with SNR at %.1f dB", db)
		}
		prev = s
	}
	if l.lnS[7][1500] > l.lnS[2][1500] {
		t.Error("MCS7 more robust than MCS2")
	}
	// The log-domain uniform is accurate.
	for _, h := range []uint64{1 << 63, 1 << 40, 12345 << 20, ^uint64(0)} {
		u := float64(h>>11|1) / (1 << 53)
		if d := lnUniform(h) - math.Log(u); math.Abs(d) > 2e-3 {
			t.Errorf("lnUniform(%#x) off by %g", h, d)
		}
	}
	if _, err := NewLink(Scenario{Name: "bad"}, DefaultParams(), tb); err == nil {
		t.Error("empty scenario accepted")
	}
	if _, err := NewLink(Scenario{Name: "bad", Duration: time.Second, Profile: []Point{{0, 1}}, Bulk: 1, Period: 1, Burst: 2}, DefaultParams(), tb); err == nil {
		t.Error("burst longer than period accepted")
	}
}
