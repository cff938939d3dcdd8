// Package sample is gowrt's 802.11n rate control: John Bicket's SampleRate
// as FreeBSD's ath_rate_sample runs it (choose what minimises expected
// airtime per delivered packet, sample a little airtime on rates that could
// do better), rebuilt for MCS rates and A-MPDUs instead of retrofitted.
//
// What is kept from FreeBSD (sys/dev/ath/ath_rate/sample, facts only):
// per-packet-size-bin statistics (bins 250 … 65536 bytes), an EWMA with
// 75 % weight on history after a plain average over the first four
// reports, a sampling budget of 10 % of airtime spent on probes, probes
// limited to rates whose lossless airtime could beat the current average,
// a ±2 per-stream MCS probe neighbourhood across stream counts, a limit on
// successive failures that expires after a stale timeout, and multi-rate
// retry schedules.
//
// What is rebuilt:
//
//   - Airtime comes from package airtime: short GI, per-stream HT-LTFs,
//     the real control-response rates, RTS/CTS when protection is on.
//   - The unit of choice is an "arm": a (size bin, rate) pair. For an
//     aggregate the lookup considers the bin of the queued data and the
//     two below it, so when the tail of long aggregates is lost (fading,
//     interference) a shorter aggregate at a fast rate can win over a
//     long one. The decision returns the schedule and the maximum A-MPDU
//     bytes (bin, 4 ms at the rate, the peer's maximum).
//   - The metric is expected airtime per delivered byte: an EWMA of the
//     airtime an exchange spent at the rate per byte sent, divided by an
//     EWMA of the fraction of sub-frames delivered. An aggregate whose
//     BlockAck arrives while most sub-frames are lost is charged for it.
//   - Each rate in a multi-rate exchange is charged only its own tries
//     (with the backoff those retries really had); RTS attempts that drew
//     no CTS are charged the RTS exchange, not a data transmission.
//   - Probes are chosen round-robin among neighbouring arms: rates within
//     ±2 per-stream MCS (for other stream counts centred on the rate of
//     that count closest to the current one, not on the same per-stream
//     index as FreeBSD does) and at most twice the current nominal rate,
//     in the current bin, plus the current rate one bin up or down. A probe gets one try and falls back to the current rate in
//     the same exchange (its aggregate is sized so the current rate can
//     carry it), so a failed probe costs one PPDU, not a lost aggregate.
//     An arm measured worse than the current one at least twice is not
//     probed again for Reprobe (1 s).
//   - The EWMAs weigh each report by its airtime against a time constant
//     (100 ms, at most 25 % per report), so long aggregates and single
//     TCP ACKs move the averages at the same rate per second of airtime.
//   - Statistics older than MaxAge (1 s) restart their average instead of
//     dragging an old channel into the new one; successive failures older
//     than StaleFailure (1 s; FreeBSD uses 10 s) no longer shun a rate.
//
// Defaults: Smoothing 75, MinPackets 4, SampleRate 10 %, MaxFailures 3,
// 4 tries on the first series of an aggregate (3 for single MPDUs), 5 %
// hysteresis before the current arm changes. They were chosen on the
// chansim scoreboard, not per scenario.
//
// A Node is one peer's state. It is not safe for concurrent use; Pick and
// Complete allocate nothing.
package sample

import (
	"fmt"
	"math"
	"time"

	"github.com/gowrt/gowrt/ath/agg"
	"github.com/gowrt/gowrt/ath/airtime"
	"github.com/gowrt/gowrt/ath/rate"
)

// Bins are the packet-size bins (upper limits, bytes): FreeBSD's newest
// sample.h set.
var Bins = [NumBins]int{250, 1600, 4096, 8192, 16384, 32768, 65536}

// NumBins is the number of size bins.
const NumBins = 7

// BinOf returns the first bin whose limit is at least size (the last bin
// for anything larger).
func BinOf(size int) int {
	for i, b := range Bins {
		if size <= b {
			return i
		}
	}
	return NumBins - 1
}

// Config holds the tunables. Zero fields take the defaults.
type Config struct {
	Smoothing      int           // % weight on history in the EWMAs (75)
	MinPackets     int           // reports averaged plainly before the EWMA (4)
	MinReports     int           // reports an arm needs before it can become the best (1)
	SampleRate     int           // % of airtime spent on probes (10)
	MaxFailures    int           // successive failed exchanges before a rate is shunned (3)
	StaleFailure   time.Duration // after this, a shunned rate may be probed again (1 s)
	MaxAge         time.Duration // statistics older than this restart (1 s)
	TimeConstant   time.Duration // airtime over which the EWMAs average (100 ms)
	Reprobe        time.Duration // an arm measured worse (twice) is not probed again for this long (1 s)
	Hysteresis     int           // % a new best arm must beat the current one by (5)
	ProtectionRTS  bool          // protect every exchange with RTS/CTS
	AggBins        int           // bins below the queued bin considered for aggregates (2)
	TriesAggregate uint8         // tries of series 0 for aggregates (4, as FreeBSD's 11n schedules)
	TriesSingle    uint8         // tries of series 0 for single MPDUs (3)
}

func (c *Config) defaults() {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&c.Smoothing, 75)
	def(&c.MinPackets, 4)
	def(&c.MinReports, 1)
	def(&c.SampleRate, 10)
	def(&c.MaxFailures, 3)
	def(&c.Hysteresis, 5)
	def(&c.AggBins, 2)
	if c.StaleFailure <= 0 {
		c.StaleFailure = time.Second
	}
	if c.TimeConstant <= 0 {
		c.TimeConstant = 100 * time.Millisecond
	}
	if c.Reprobe <= 0 {
		c.Reprobe = time.Second
	}
	if c.MaxAge <= 0 {
		c.MaxAge = time.Second
	}
	if c.TriesAggregate == 0 {
		c.TriesAggregate = 4
	}
	if c.TriesSingle == 0 {
		c.TriesSingle = 3
	}
}

// stats are kept per arm (bin, rix).
type stats struct {
	cost    uint64 // EWMA airtime per byte sent, µs·2^16
	exp     uint64 // cost / delivery: airtime per delivered byte, µs·2^16
	pct     uint32 // EWMA sub-frame delivery, 0..1000
	perfect uint64 // lossless airtime per byte, µs·2^16
	n       uint32 // reports folded in (saturating)
	fails   uint32 // successive failed exchanges
	last    time.Duration
	bytes   int // what this arm requests when chosen
}

type arm struct{ bin, rix int8 }

var noArm = arm{-1, -1}

// Node is the rate-control state of one peer.
type Node struct {
	cfg  Config
	t    *rate.Table
	ack  airtime.Ack
	st   [NumBins][rate.MaxRates]stats
	cur  [NumBins]arm // current arm per class (bin of the queued data)
	rr   [NumBins]int // round-robin position of the last probe per class
	sTT  [NumBins]uint64
	sAir [NumBins]uint64
	an   rate.Anomalies
	kbps [rate.MaxRates]uint32 // nominal rate per rix
	ps   [rate.MaxRates]uint8  // per-stream MCS (HT)
	near [rate.MaxRates]uint64 // probe neighbourhood per current rix
	// Probes counts decisions that probed.
	Probes uint64
}

// New returns the state for a peer with table t.
func New(t *rate.Table, cfg Config) (*Node, error) {
	if t == nil || t.Len() == 0 {
		return nil, fmt.Errorf("sample: %w", rate.ErrNoCommonRates)
	}
	cfg.defaults()
	if cfg.Smoothing >= 100 || cfg.SampleRate > 100 {
		return nil, fmt.Errorf("sample: smoothing %d%% / sample rate %d%% out of range", cfg.Smoothing, cfg.SampleRate)
	}
	n := &Node{cfg: cfg, t: t, ack: airtime.NormalAck}
	for b := range n.cur {
		n.cur[b] = noArm
	}
	for r := 0; r < t.Len(); r++ {
		n.kbps[r] = t.Rate(r).KbpsNominal()
		n.ps[r] = t.Rate(r).MCS % 8
	}
	n.neighbours()
	for b := 0; b < NumBins; b++ {
		for r := 0; r < t.Len(); r++ {
			s := &n.st[b][r]
			s.bytes = n.armBytes(b, r, math.MaxInt32)
			s.exp = math.MaxUint64
			ack := airtime.NormalAck
			if t.HT && s.bytes > 0 {
				ack = airtime.BlockAck
			}
			if s.bytes > 0 {
				tt := t.PHY.Attempts(t.Rate(r), s.bytes, ack, cfg.ProtectionRTS, 0, 1)
				s.perfect = uint64(tt) << 16 / uint64(s.bytes)
			}
		}
	}
	return n, nil
}

// Name implements rate.Controller.
func (n *Node) Name() string { return "sample" }

// Anomalies returns the counts of corrected completion reports.
func (n *Node) Anomalies() rate.Anomalies { return n.an }

// armBytes is what arm (b, r) asks for with q bytes queued: the bin's
// limit, the queued data, and (HT) the rate's A-MPDU limit; 0 when the arm
// does not exist because the result would fall into a lower bin.
func (n *Node) armBytes(b, r, q int) int {
	x := Bins[b]
	if x > agg.MaxPSDU {
		x = agg.MaxPSDU
	}
	if q < x {
		x = q
	}
	if n.t.HT {
		if l := n.t.Limit(r); l < x {
			x = l
		}
	} else if b > 1 {
		return 0 // legacy rates carry single MPDUs only
	}
	if b > 0 && x <= Bins[b-1] {
		return 0
	}
	return x
}

// costPerDelivered returns the expected airtime per delivered byte of s
// (µs·2^16), or MaxUint64 without data or deliveries. It is computed when
// a report arrives, so the per-packet lookup does no division.
func (s *stats) costPerDelivered() uint64 { return s.exp }

func (s *stats) refresh() {
	if s.n == 0 || s.pct == 0 {
		s.exp = math.MaxUint64
		return
	}
	s.exp = s.cost * 1000 / uint64(s.pct)
}

func (n *Node) shunned(s *stats, now time.Duration) bool {
	return int(s.fails) > n.cfg.MaxFailures && now-s.last < n.cfg.StaleFailure
}

func (n *Node) fresh(s *stats, now time.Duration) bool {
	return s.n > 0 && now-s.last <= n.cfg.MaxAge
}

func (n *Node) binRange(class int) (lo, hi int) {
	lo = class
	if n.t.HT && class >= 2 {
		lo = class - n.cfg.AggBins
		if lo < 2 {
			lo = 2
		}
	}
	return lo, class
}

// best returns the arm with the lowest expected airtime per delivered byte
// among arms with fresh statistics that admit head and are not shunned.
func (n *Node) best(class, q, head int, now time.Duration) (arm, uint64) {
	best, bc := noArm, uint64(math.MaxUint64)
	lo, hi := n.binRange(class)
	for b := lo; b <= hi; b++ {
		for r := 0; r < n.t.Len(); r++ {
			x := n.armBytes(b, r, q)
			if x < head || x == 0 {
				continue
			}
			s := &n.st[b][r]
			if !n.fresh(s, now) || n.shunned(s, now) || int(s.n) < n.cfg.MinReports {
				continue
			}
			if c := s.costPerDelivered(); c < bc {
				best, bc = arm{int8(b), int8(r)}, c
			}
		}
	}
	return best, bc
}

// seed is the starting arm for a class without data: FreeBSD's choice of
// the highest single-stream MCS ≤ 4 (legacy: highest rate ≤ 36 Mb/s) that
// is not shunned, in the largest bin that admits head.
func (n *Node) seed(class, q, head int, now time.Duration) arm {
	r0 := 0
	for r := 0; r < n.t.Len(); r++ {
		rt := n.t.Rate(r)
		ok := (n.t.HT && rt.MCS <= 4) || (!n.t.HT && rt.Kbps <= 36000)
		if ok && !n.shunned(&n.st[class][r], now) {
			r0 = r
		}
	}
	lo, hi := n.binRange(class)
	for b := hi; b >= lo; b-- {
		if x := n.armBytes(b, r0, q); x >= head && x > 0 {
			return arm{int8(b), int8(r0)}
		}
	}
	// Nothing admits head (a frame longer than the rate's limit): send it
	// alone in its own bin; the TX path sends an oversized MPDU unaggregated.
	return arm{int8(class), int8(r0)}
}

// neighbour reports whether rate r may be probed from rate c.
func (n *Node) neighbour(c, r int) bool { return n.near[c]&(1<<uint(r)) != 0 }

// neighbours precomputes the probe neighbourhoods. HT: within ±2
// per-stream MCS — around c itself for c's stream count, and for every
// other stream count around the rate of that count whose nominal rate is
// closest to c's (ties to the faster). FreeBSD centres every stream count
// on c's per-stream index, which from MCS7 (64-QAM 5/6) never reaches
// the two-stream 16-QAM rates just above it. Legacy: at most two rates up
// above 11 Mb/s. Never more than twice c's nominal rate.
func (n *Node) neighbours() {
	nr := n.t.Len()
	for c := 0; c < nr; c++ {
		var m uint64
		for r := 0; r < nr; r++ {
			if n.kbps[r] > 2*n.kbps[c] {
				continue // never jump far above the current rate
			}
			ok := false
			if n.t.HT {
				sc, sr := n.t.Rate(c).Streams(), n.t.Rate(r).Streams()
				centre := int(n.ps[c])
				if sr != sc {
					best, bd := -1, uint32(0)
					for e := 0; e < nr; e++ {
						if n.t.Rate(e).Streams() != sr {
							continue
						}
						d := n.kbps[e] - n.kbps[c]
						if n.kbps[e] < n.kbps[c] {
							d = n.kbps[c] - n.kbps[e]
						}
						if best < 0 || d < bd || (d == bd && n.kbps[e] > n.kbps[best]) {
							best, bd = e, d
						}
					}
					centre = int(n.ps[best])
				}
				d := int(n.ps[r]) - centre
				ok = d >= -2 && d <= 2
			} else {
				ok = r <= c+2 || n.kbps[r] <= 11000
			}
			if ok {
				m |= 1 << uint(r)
			}
		}
		n.near[c] = m
	}
}

// probe picks the next arm to sample, round-robin, or noArm. Candidates
// are the neighbouring rates in the current arm's bin and the current rate
// one bin up or down (longer or shorter aggregates).
func (n *Node) probe(class, q, head int, cur arm, curCost uint64, now time.Duration) arm {
	lo, hi := n.binRange(class)
	nr := n.t.Len()
	span := nr + 2
	start := n.rr[class]
	for i := 1; i <= span; i++ {
		k := (start + i) % span
		b, r := int(cur.bin), k
		switch {
		case k == nr:
			b, r = b-1, int(cur.rix)
		case k == nr+1:
			b, r = b+1, int(cur.rix)
		case !n.neighbour(int(cur.rix), r):
			continue
		}
		if b < lo || b > hi || (b == int(cur.bin) && r == int(cur.rix)) {
			continue
		}
		x := n.armBytes(b, r, q)
		if x < head || x == 0 {
			continue
		}
		s := &n.st[b][r]
		if s.perfect >= curCost || n.shunned(s, now) {
			continue // cannot win, or failing
		}
		if s.n > 1 && now-s.last < n.cfg.Reprobe && s.costPerDelivered() >= curCost {
			continue // measured worse recently: wait until that ages out
		}
		n.rr[class] = k
		return arm{int8(b), int8(r)}
	}
	return noArm
}

// Pick implements rate.Controller.
func (n *Node) Pick(now time.Duration, queued, head int, d *rate.Decision) {
	*d = rate.Decision{}
	q := queued
	if q > n.t.MaxAMPDU {
		q = n.t.MaxAMPDU
	}
	if head < 1 {
		head = 1
	}
	if q < head || !n.t.HT {
		q = head // legacy rates send one MPDU at a time
	}
	class := BinOf(q)
	best, bc := n.best(class, q, head, now)
	cur := n.cur[class]
	var cc uint64 = math.MaxUint64
	if cur != noArm {
		s := &n.st[cur.bin][cur.rix]
		x := n.armBytes(int(cur.bin), int(cur.rix), q)
		if x < head || x == 0 || !n.fresh(s, now) || n.shunned(s, now) {
			cur = noArm
		} else {
			cc = s.costPerDelivered()
		}
	}
	switch {
	case best == noArm && cur == noArm:
		cur = n.seed(class, q, head, now)
		cc = n.st[cur.bin][cur.rix].perfect * 2 // unknown: probe what could halve it
	case cur == noArm:
		cur, cc = best, bc
	case best != noArm && best != cur && bc*100 < cc*uint64(100-n.cfg.Hysteresis):
		cur, cc = best, bc
	}
	n.cur[class] = cur
	use := cur
	if n.sAir[class]*uint64(n.cfg.SampleRate) > n.sTT[class]*100 {
		if p := n.probe(class, q, head, cur, cc, now); p != noArm {
			use = p
			d.Probe = true
			n.Probes++
		}
	}
	n.fill(d, class, use, cur, q, head, now)
}

// fill builds the retry schedule for arm a (cur is the current best, used
// as the first fallback of a probe).
func (n *Node) fill(d *rate.Decision, class int, a, cur arm, q, head int, now time.Duration) {
	x := n.armBytes(int(a.bin), int(a.rix), q)
	if x < head {
		x = head
	}
	tries := n.cfg.TriesSingle
	if n.t.HT && x > head {
		tries = n.cfg.TriesAggregate
	}
	if a != cur {
		// A probe gets one try, then falls back to the current rate in
		// the same exchange: size it so the current rate can carry it,
		// as long as that keeps it in the probed bin.
		tries = 1
		if n.t.HT {
			if l := n.t.Limit(int(cur.rix)); l < x && (a.bin == 0 || l > Bins[a.bin-1]) && l >= head {
				x = l
			}
		}
	}
	bin := int(a.bin)
	d.Series[0] = rate.Series{Rix: uint8(a.rix), Tries: tries}
	k := 1
	add := func(r int, t uint8) {
		if r < 0 || k >= rate.MaxSeries {
			return
		}
		for i := 0; i < k; i++ {
			if int(d.Series[i].Rix) == r {
				return
			}
		}
		d.Series[k] = rate.Series{Rix: uint8(r), Tries: t}
		k++
	}
	if a != cur {
		add(int(cur.rix), n.cfg.TriesAggregate)
	}
	// Fallback: the cheapest slower rate with fresh data in this bin,
	// else the highest slower rate; then the most reliable rate.
	ra := n.kbps[a.rix]
	fb, fc, hs := -1, uint64(math.MaxUint64), -1
	robust, rp := -1, uint32(0)
	for r := 0; r < n.t.Len(); r++ {
		kr := n.kbps[r]
		if kr >= ra {
			continue
		}
		if hs < 0 || kr > n.kbps[hs] {
			hs = r
		}
		s := &n.st[bin][r]
		if !n.fresh(s, now) {
			continue
		}
		if c := s.costPerDelivered(); c < fc {
			fb, fc = r, c
		}
		if s.pct > rp {
			robust, rp = r, s.pct
		}
	}
	if fb < 0 {
		fb = hs
	}
	add(fb, 2)
	if robust < 0 || rp < 900 {
		robust = 0
	}
	add(robust, 2)
	add(0, 2)
	d.MaxBytes = 0
	if n.t.HT && x > head {
		d.MaxBytes = x
	}
	d.ReqBytes = x
	d.RTS = n.cfg.ProtectionRTS
	d.Cookie = uint32(class)
	if d.MaxBytes > 0 {
		n.t.FitSchedule(d, x)
	}
}

// Complete implements rate.Controller.
func (n *Node) Complete(now time.Duration, d *rate.Decision, c *rate.Completion) {
	a := c.Clamp(d, n.t.Len())
	n.an.Add(a)
	if a&rate.AnomBadDecision != 0 {
		return
	}
	class := int(d.Cookie)
	if class >= NumBins {
		class = NumBins - 1
	}
	bin := BinOf(d.ReqBytes)
	ack := airtime.NormalAck
	if d.MaxBytes > 0 {
		ack = airtime.BlockAck
	}
	p := n.t.PHY
	var total uint64
	first := 0
	for i := 0; i <= c.FinalSeries; i++ {
		tries := c.TriesAt(d, i)
		if tries == 0 {
			continue
		}
		rix := int(d.Series[i].Rix)
		rt := n.t.Rate(rix)
		tt := p.Attempts(rt, c.Bytes, ack, d.RTS, first, tries)
		if i == 0 && c.ShortTries > 0 {
			// An RTS that draws no CTS costs contention, the RTS and the
			// CTS timeout (SIFS + slot + the CTS it waited for), not the data.
			cr := p.ControlRate(rt)
			per := p.AIFS() + p.TxTime(cr, airtime.RTSLen) + p.SIFS + p.Slot + p.TxTime(cr, airtime.CTSLen)
			for j := 0; j < c.ShortTries; j++ {
				tt += per + p.Backoff(j)
			}
		}
		good := 0
		if i == c.FinalSeries && c.Acked {
			good = c.Frames - c.Bad
		}
		n.update(bin, rix, uint64(tt), c.Bytes, good, c.Frames, now)
		total += uint64(tt)
		first += tries
	}
	if d.Probe {
		n.sTT[class] = total
		n.sAir[class] = 0
	} else {
		n.sAir[class] += total
	}
}

func (n *Node) update(bin, rix int, tt uint64, bytes, good, frames int, now time.Duration) {
	s := &n.st[bin][rix]
	if now-s.last > n.cfg.MaxAge {
		s.n = 0 // restart stale statistics
	}
	cs := tt << 16 / uint64(bytes)
	ps := uint32(good * 1000 / frames)
	if int(s.n) < n.cfg.MinPackets {
		s.cost = (s.cost*uint64(s.n) + cs) / uint64(s.n+1)
		s.pct = (s.pct*s.n + ps) / (s.n + 1)
	} else {
		// The new report's weight is its share of the averaging time
		// constant, at most 100 − Smoothing percent (in 1/1000).
		nw := tt * 1000 / uint64(n.cfg.TimeConstant/time.Microsecond)
		if max := uint64(10 * (100 - n.cfg.Smoothing)); nw > max {
			nw = max
		}
		if nw == 0 {
			nw = 1
		}
		s.cost = (s.cost*(1000-nw) + cs*nw) / 1000
		s.pct = uint32((uint64(s.pct)*(1000-nw) + uint64(ps)*nw) / 1000)
	}
	if s.n < math.MaxUint32 {
		s.n++
	}
	s.refresh()
	if good == 0 {
		if s.fails < math.MaxUint32 {
			s.fails++
		}
	} else {
		s.fails = 0
	}
	s.last = now
}

// ArmStats is a snapshot of one arm's statistics, for tests and debugging.
type ArmStats struct {
	Bytes      int           // bytes the arm requests with a full queue
	CostUsPerB float64       // EWMA airtime per byte sent, µs
	Delivery   float64       // EWMA sub-frame delivery, 0..1
	PerfectUs  float64       // lossless airtime per byte, µs
	Reports    uint32        // reports folded in since the last restart
	Failures   uint32        // successive failed exchanges
	Last       time.Duration // time of the last report
}

// Arm returns the statistics of arm (bin, rix); the zero value if out of range.
func (n *Node) Arm(bin, rix int) ArmStats {
	if bin < 0 || bin >= NumBins || rix < 0 || rix >= n.t.Len() {
		return ArmStats{}
	}
	s := &n.st[bin][rix]
	return ArmStats{Bytes: s.bytes, CostUsPerB: float64(s.cost) / 65536, Delivery: float64(s.pct) / 1000,
		PerfectUs: float64(s.perfect) / 65536, Reports: s.n, Failures: s.fails, Last: s.last}
}

// Current returns the current arm for data of queued bytes, or (-1, -1).
func (n *Node) Current(queued int) (bin, rix int) {
	if queued > n.t.MaxAMPDU {
		queued = n.t.MaxAMPDU
	}
	a := n.cur[BinOf(queued)]
	return int(a.bin), int(a.rix)
}
