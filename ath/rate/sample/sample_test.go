package sample

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

func node(t testing.TB) *Node {
	n, err := New(table(t), Config{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// channel answers a decision like hardware would: deliver(rix) is the
// fraction of sub-frames the rate delivers (0: the exchange fails).
func complete(d *rate.Decision, deliver func(rix int) float64) rate.Completion {
	frames := 1
	if d.MaxBytes > 0 {
		frames = d.MaxBytes / 1544
		if frames < 1 {
			frames = 1
		}
	}
	long := 0
	for i, s := range d.Series {
		if s.Tries == 0 {
			continue
		}
		for k := 0; k < int(s.Tries); k++ {
			long++
			if p := deliver(int(s.Rix)); p > 0 {
				bad := frames - int(p*float64(frames)+0.5)
				if bad >= frames {
					bad = frames - 1
				}
				return rate.Completion{FinalSeries: i, FinalRix: int(s.Rix), LongTries: long, Frames: frames, Bad: bad, Acked: true}
			}
		}
	}
	last := 0
	for i, s := range d.Series {
		if s.Tries > 0 {
			last = i
		}
	}
	return rate.Completion{FinalSeries: last, FinalRix: -1, LongTries: long, Frames: frames, Bad: frames}
}

func drive(n *Node, steps int, step time.Duration, deliver func(rix int) float64) (now time.Duration, air map[int]int) {
	air = map[int]int{}
	var d rate.Decision
	for i := 0; i < steps; i++ {
		n.Pick(now, 100000, 1542, &d)
		c := complete(&d, deliver)
		if !d.Probe {
			air[int(d.Series[0].Rix)]++
		}
		n.Complete(now, &d, &c)
		now += step
	}
	return now, air
}

// A rate whose aggregates are acknowledged while most sub-frames are lost
// must lose to a slower rate that delivers them.
func TestAggregateLossLosesToSlowerRate(t *testing.T) {
	n := node(t)
	// Per-stream MCS ≥ 5 (MCS 5-7, 13-15): BlockAck arrives, 80 % of the
	// sub-frames are lost. Everything slower delivers everything.
	deliver := func(rix int) float64 {
		if rix%8 >= 5 {
			return 0.2
		}
		return 1
	}
	_, air := drive(n, 3000, 2*time.Millisecond, deliver)
	b, r := n.Current(100000)
	if r%8 >= 5 {
		t.Fatalf("current arm %d/%d is a rate that loses 80%% of its sub-frames", b, r)
	}
	// MCS12 (2 streams, 16-QAM 3/4, 270 Mb/s) is the fastest rate that delivers.
	if r != 12 {
		t.Errorf("current rate %d, want MCS12", r)
	}
	bad := 0
	total := 0
	for rix, k := range air {
		total += k
		if rix%8 >= 5 {
			bad += k
		}
	}
	if bad*10 > total {
		t.Errorf("%d of %d non-probe decisions used a lossy rate", bad, total)
	}
	if a := n.Anomalies(); a.Total() != 0 {
		t.Errorf("anomalies %v", a)
	}
}

// Only the rate that failed is charged its own airtime: series 0 fails
// its two tries, series 1 delivers on its first.
func TestPerRateFailureAccounting(t *testing.T) {
	n := node(t)
	tb := table(t)
	d := rate.Decision{Series: [4]rate.Series{{Rix: 7, Tries: 2}, {Rix: 4, Tries: 2}}, MaxBytes: 30000, ReqBytes: 30000, Cookie: 6}
	c := rate.Completion{FinalSeries: 1, FinalRix: 4, LongTries: 3, Frames: 19, Bad: 0, Acked: true, Bytes: 30000}
	n.Complete(time.Second, &d, &c)
	b := BinOf(30000)
	p := tb.PHY
	f, s := n.Arm(b, 7), n.Arm(b, 4)
	if f.Failures != 1 || f.Delivery != 0 || f.Reports != 1 {
		t.Errorf("failed rate: %+v", f)
	}
	// MCS7 was charged attempts 0 and 1 (with their backoffs) only.
	want7 := float64(p.Attempts(tb.Rate(7), 30000, airtime.BlockAck, false, 0, 2)) / 30000
	if d := f.CostUsPerB - want7; d > 1e-3 || d < -1e-3 {
		t.Errorf("MCS7 cost %.5f µs/B, want %.5f", f.CostUsPerB, want7)
	}
	// MCS4 was charged one attempt, the third of the exchange (CW 63).
	want4 := float64(p.Attempts(tb.Rate(4), 30000, airtime.BlockAck, false, 2, 1)) / 30000
	if d := s.CostUsPerB - want4; s.Failures != 0 || s.Delivery != 1 || d > 1e-3 || d < -1e-3 {
		t.Errorf("MCS4: %+v, want cost %.5f", s, want4)
	}
}

// RTS attempts that drew no CTS cost the RTS exchange, not a data frame.
func TestShortRetriesChargedAsRTS(t *testing.T) {
	tb := table(t)
	cost := func(short int) float64 {
		n := node(t)
		d := rate.Decision{Series: [4]rate.Series{{Rix: 3, Tries: 2}}, MaxBytes: 20000, ReqBytes: 20000, RTS: true, Cookie: 6}
		c := rate.Completion{FinalSeries: 0, FinalRix: 3, LongTries: 1, ShortTries: short, Frames: 12, Acked: true, Bytes: 20000}
		n.Complete(0, &d, &c)
		return n.Arm(BinOf(20000), 3).CostUsPerB * 20000
	}
	extra := cost(3) - cost(0)
	data := float64(tb.PHY.TxTime(tb.Rate(3), 20000))
	if extra <= 0 || extra >= data {
		t.Errorf("3 short retries cost %.0f µs; one data PPDU is %.0f µs", extra, data)
	}
}

func TestNeighbours(t *testing.T) {
	n := node(t)
	for _, c := range []struct {
		cur, r int
		ok     bool
	}{
		// HT40 SGI nominal rates: MCS0-7 15..150 Mb/s, MCS8-15 30..300.
		{5, 13, true},  // 120 → 2 streams centred on MCS11 (120): 13 is +2
		{5, 11, true},  // the 2-stream rate equal to MCS5
		{5, 8, false},  // far below the 2-stream centre
		{7, 12, true},  // 150 → MCS12 (180): the next step across streams
		{7, 14, true},  // 270 ≤ 2 × 150
		{7, 15, false}, // centre MCS12 (closest to 150, ties to faster) + 3
		{15, 7, true},  // down across streams: MCS7 is closest to 300 in 1 stream
		{1, 7, false},  // far above
		{4, 12, true},  // 90 → centre MCS10 (90); MCS12 is 180 = 2×
		{3, 12, false}, // 180 is 3× MCS3 (60): too far above
		{6, 3, false},  // per-stream distance 3
		{6, 4, true},
	} {
		if got := n.neighbour(c.cur, c.r); got != c.ok {
			t.Errorf("neighbour(MCS%d, MCS%d) = %v", c.cur, c.r, got)
		}
	}
}

func TestStaleFailuresExpire(t *testing.T) {
	n := node(t)
	d := rate.Decision{Series: [4]rate.Series{{Rix: 6, Tries: 1}}, MaxBytes: 40000, ReqBytes: 40000, Cookie: 6}
	for i := 0; i < 5; i++ {
		c := rate.Completion{FinalSeries: 0, LongTries: 1, Frames: 20, FinalRix: -1}
		n.Complete(time.Duration(i)*time.Millisecond, &d, &c)
	}
	s := &n.st[BinOf(40000)][6]
	if !n.shunned(s, 10*time.Millisecond) {
		t.Fatal("5 successive failures did not shun the rate")
	}
	if n.shunned(s, 10*time.Millisecond+n.cfg.StaleFailure) {
		t.Error("failures did not expire")
	}
}

// The lookup returns the aggregate size for the chosen rate, and the
// completion is accounted to the bin of the requested size.
func TestLookupAndBins(t *testing.T) {
	n := node(t)
	tb := table(t)
	var d rate.Decision
	n.Pick(0, 200000, 1542, &d)
	r := int(d.Series[0].Rix)
	if d.MaxBytes <= 0 || d.MaxBytes > tb.Limit(r) || d.MaxBytes > 65535 || d.ReqBytes != d.MaxBytes {
		t.Fatalf("decision %+v, limit of rix %d = %d", d, r, tb.Limit(r))
	}
	if l := tb.Limit(int(d.Series[1].Rix)); d.Series[1].Tries > 0 && l < d.MaxBytes {
		t.Errorf("fallback series cannot carry the aggregate (%d < %d)", l, d.MaxBytes)
	}
	// Only 3000 bytes went out (the queue drained): still the requested bin.
	c := rate.Completion{FinalSeries: 0, FinalRix: r, LongTries: 1, Frames: 2, Acked: true, Bytes: 3000}
	n.Complete(time.Millisecond, &d, &c)
	if got := n.Arm(BinOf(d.ReqBytes), r).Reports; got != 1 {
		t.Errorf("requested bin has %d reports", got)
	}
	if got := n.Arm(BinOf(3000), r).Reports; got != 0 && BinOf(3000) != BinOf(d.ReqBytes) {
		t.Errorf("sent-size bin has %d reports", got)
	}
	// Small frames: a 52-byte TCP ACK alone gets a single-MPDU decision.
	n.Pick(0, 94, 94, &d)
	if d.MaxBytes != 0 || d.ReqBytes != 94 {
		t.Errorf("single small frame: %+v", d)
	}
	if BinOf(94) != 0 || BinOf(70000) != NumBins-1 || BinOf(1600) != 1 || BinOf(1601) != 2 {
		t.Error("BinOf")
	}
}

func TestNewErrors(t *testing.T) {
	if _, err := New(nil, Config{}); err == nil {
		t.Error("nil table accepted")
	}
	if _, err := New(table(t), Config{Smoothing: 100}); err == nil {
		t.Error("smoothing 100 % accepted")
	}
}

// Completion reports with impossible values are clamped and counted.
func TestImpossibleCompletions(t *testing.T) {
	n := node(t)
	var d rate.Decision
	n.Pick(0, 100000, 1542, &d)
	c := rate.Completion{FinalSeries: 9, FinalRix: 77, LongTries: 99, ShortTries: -4, Frames: 3, Bad: 40, Acked: true, Bytes: 1 << 30}
	n.Complete(0, &d, &c)
	a := n.Anomalies()
	if a.Total() < 5 {
		t.Errorf("anomalies counted: %v", a)
	}
	d.Series[0].Rix = 200 // unknown rate in the schedule itself
	c = rate.Completion{}
	n.Complete(0, &d, &c)
	if b := n.Anomalies(); b[0] != 1 {
		t.Errorf("bad decision not counted: %v", b)
	}
}

// FuzzComplete drives Pick and Complete with arbitrary completion reports:
// no panic, statistics stay in range.
func FuzzComplete(f *testing.F) {
	f.Add(100000, 1542, 0, -1, 1, 0, 10, 2, true, 0, int64(0))
	f.Add(94, 94, 3, 44, 99, -5, 0, 70, false, 1<<20, int64(5e9))
	f.Add(1, 0, -1, 0, -3, 400, 65, -1, true, -9, int64(-1))
	f.Fuzz(func(t *testing.T, queued, head, fs, frix, long, short, frames, bad int, acked bool, bytes int, now int64) {
		n := node(t)
		var d rate.Decision
		for i := 0; i < 3; i++ {
			n.Pick(time.Duration(now), queued, head, &d)
			c := rate.Completion{FinalSeries: fs, FinalRix: frix, LongTries: long, ShortTries: short,
				Frames: frames, Bad: bad, Acked: acked, Bytes: bytes}
			n.Complete(time.Duration(now), &d, &c)
			if d.MaxBytes < 0 || d.MaxBytes > 65535 || d.Series[0].Tries == 0 || int(d.Series[0].Rix) >= n.t.Len() {
				t.Fatalf("bad decision %+v", d)
			}
		}
		for b := 0; b < NumBins; b++ {
			for r := 0; r < n.t.Len(); r++ {
				if s := n.Arm(b, r); s.Delivery < 0 || s.Delivery > 1 {
					t.Fatalf("arm %d/%d delivery %v", b, r, s.Delivery)
				}
			}
		}
	})
}

func TestZeroAllocs(t *testing.T) {
	n := node(t)
	var d rate.Decision
	var c rate.Completion
	now := time.Duration(0)
	allocs := testing.AllocsPerRun(1000, func() {
		n.Pick(now, 100000, 1542, &d)
		c = rate.Completion{FinalSeries: 0, FinalRix: -1, LongTries: 1, Frames: 20, Bad: 2, Acked: true}
		n.Complete(now, &d, &c)
		now += time.Millisecond
	})
	if allocs != 0 {
		t.Errorf("Pick+Complete allocate %.1f times", allocs)
	}
}

// BenchmarkBaselineAttempts is the yardstick for the per-packet paths: one
// airtime computation of one attempt (what any rate control must do).
func BenchmarkBaselineAttempts(b *testing.B) {
	tb := table(b)
	p := tb.PHY
	r := tb.Rate(7)
	b.ReportAllocs()
	s := 0
	for i := 0; i < b.N; i++ {
		s += p.Attempts(r, 40000+i&1023, airtime.BlockAck, false, 0, 1)
	}
	_ = s
}

func BenchmarkPick(b *testing.B) {
	n := node(b)
	var d rate.Decision
	drive(n, 2000, time.Millisecond, func(rix int) float64 { return 1 - float64(rix%8)/10 })
	now := 2 * time.Second
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		n.Pick(now, 100000, 1542, &d)
	}
}

func BenchmarkComplete(b *testing.B) {
	n := node(b)
	var d rate.Decision
	now := 2 * time.Second
	drive(n, 2000, time.Millisecond, func(rix int) float64 { return 1 - float64(rix%8)/10 })
	n.Pick(now, 100000, 1542, &d)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c := rate.Completion{FinalSeries: 0, FinalRix: -1, LongTries: 1, Frames: 20, Bad: 2, Acked: true}
		n.Complete(now, &d, &c)
	}
}

func TestLegacyTable(t *testing.T) {
	caps := rate.Caps{Legacy: []uint32{6000, 9000, 12000, 18000, 24000, 36000, 48000, 54000}}
	tb, err := rate.NewTable(airtime.FiveGHz(), caps, caps)
	if err != nil {
		t.Fatal(err)
	}
	n, err := New(tb, Config{})
	if err != nil {
		t.Fatal(err)
	}
	// Up to 36 Mb/s (rix 5) delivers; faster rates fail.
	var d rate.Decision
	now := time.Duration(0)
	for i := 0; i < 3000; i++ {
		n.Pick(now, 100000, 1542, &d)
		if d.MaxBytes != 0 {
			t.Fatalf("legacy decision aggregates: %+v", d)
		}
		c := complete(&d, func(rix int) float64 {
			if rix <= 5 {
				return 1
			}
			return 0
		})
		n.Complete(now, &d, &c)
		now += 300 * time.Microsecond
	}
	if _, r := n.Current(1542); r != 5 {
		t.Errorf("legacy current rate rix %d, want 5 (36 Mb/s)", r)
	}
}
