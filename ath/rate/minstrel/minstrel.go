// Package minstrel is an implementation of Linux's minstrel_ht rate
// control (net/mac80211/rc80211_minstrel_ht.c, the 4.x generation; facts
// only, no code copied), used in gowrt as a selectable alternative and as
// the baseline the sample algorithm must beat.
//
// The essentials, as Linux does them:
//
//   - rates are grouped by stream count (a table has one width and guard
//     interval, so Linux's (streams, SGI, width) groups reduce to streams);
//     legacy tables form a single group;
//   - per rate, attempts and successes are counted per sub-frame
//     (tries × A-MPDU length attempted, acknowledged sub-frames succeeded)
//     and folded every 50 ms into an EWMA of the success probability
//     (75 % weight on history, 16-bit fixed point);
//   - the throughput metric is 0 below 10 % probability, caps the
//     probability at 90 %, and divides it by the rate's airtime for a
//     1200-byte frame (16-frame A-MPDU average) plus the MAC overhead
//     amortised over the EWMA of the A-MPDU length;
//   - max_tp_rate[0], max_tp_rate[1] and max_prob_rate (highest throughput
//     among rates above 75 % probability, else the most probable; then
//     moved to fewer streams when that group offers more throughput), used
//     as a three-rate retry chain with per-rate try counts fitted into a
//     6 ms segment;
//   - sampling from a per-group random permutation table, one probe every
//     16 + 2·avg_ampdu_len frames, 8 probes per group per interval, no
//     probes of rates above 95 % or of slower rates unless skipped 20
//     times; probes are single MPDUs with one try (ath9k does not
//     aggregate rate-control probes); Linux asks for a rate per MPDU, so
//     sample_wait is counted in MPDUs although Pick is called per A-MPDU;
//   - "sudden death": more than 30 attempts below 20 % on max_tp_rate
//     downgrades it to the best rate of the next lower stream group.
//
// The aggregate is sized as ath9k does: the smallest 4 ms limit over the
// series of the chain.
package minstrel

import (
	"fmt"
	"time"

	"github.com/gowrt/gowrt/ath/airtime"
	"github.com/gowrt/gowrt/ath/rate"
)

const (
	scale          = 16
	one            = 1 << scale
	ewmaLevel      = 96 // of ewmaDiv: 75 % weight on history
	ewmaDiv        = 128
	groupRates     = 8
	maxGroups      = 5 // 4 HT stream counts, or one legacy group of ≤ 12 rates
	legacyRates    = 12
	sampleColumns  = 10
	updateInterval = 50 * time.Millisecond
	segmentUs      = 6000
	maxRetry       = 7
	avgPkt         = 1200
	avgAMPDU       = 16
)

func frac(a, b uint64) uint64 {
	if b == 0 {
		return 0
	}
	return a * one / b
}
func ewma(old, cur uint64) uint64 { return (cur*(ewmaDiv-ewmaLevel) + old*ewmaLevel) / ewmaDiv }

type rateStats struct {
	rix              int
	attempts, succ   uint64
	attHist          uint64
	prob             uint64 // EWMA success probability, scale 2^16
	retry, retryRTS  int
	sampleSkipped    int
	durNs            uint64 // airtime of one average frame
	streams          int
	supported        bool
	lastAtt, lastSuc uint64
}

type group struct {
	rates         [legacyRates]rateStats
	n             int
	maxTp         [2]int // global index g*stride+i
	maxProb       int
	index, column int
}

// Node is minstrel_ht state for one peer; not safe for concurrent use.
type Node struct {
	t          *rate.Table
	groups     [maxGroups]group
	ng         int
	stride     int
	rts        bool
	overhead   uint64 // µs
	overRTS    uint64
	sample     [sampleColumns][legacyRates]uint8
	maxTp      [2]int
	maxProb    int
	avgAMPDU   uint64 // scale 2^16
	ampduLen   uint64
	ampduPkts  uint64
	sampleWait int
	sampleTry  int
	sampleCnt  int
	sampleSlow int
	sampleGrp  int
	lastUpdate time.Duration
	started    bool
	an         rate.Anomalies
	// Probes counts probe decisions.
	Probes uint64
}

// New returns minstrel_ht state for table t. seed fixes the sample table
// permutation (Linux draws it from the kernel RNG at module load).
func New(t *rate.Table, seed uint64, rts bool) (*Node, error) {
	if t == nil || t.Len() == 0 {
		return nil, fmt.Errorf("minstrel: %w", rate.ErrNoCommonRates)
	}
	n := &Node{t: t, rts: rts, avgAMPDU: one}
	p := t.PHY
	// Linux: overhead = duration of a 0-byte frame plus of a 10-byte
	// frame at 6 Mb/s, each with SIFS (ieee80211_frame_duration adds 4
	// bytes FCS): RTS/CTS adds two more of the latter.
	six := airtime.Legacy(6000)
	ack := uint64(p.SIFS + p.TxTime(six, 14))
	n.overhead = uint64(p.SIFS+p.TxTime(six, 4)) + ack
	n.overRTS = n.overhead + 2*ack
	if t.HT {
		n.stride = groupRates
		for r := 0; r < t.Len(); r++ {
			rt := t.Rate(r)
			g := rt.Streams() - 1
			rs := &n.groups[g].rates[rt.MCS%8]
			rs.rix, rs.supported, rs.streams = r, true, rt.Streams()
			nsym := (avgPkt*avgAMPDU*8 + rt.DataBitsPerSymbol() - 1) / rt.DataBitsPerSymbol()
			sym := uint64(4000)
			if rt.SGI {
				sym = 3600
			}
			rs.durNs = uint64(nsym) * sym / avgAMPDU
			if g+1 > n.ng {
				n.ng = g + 1
			}
		}
		for g := range n.groups[:n.ng] {
			n.groups[g].n = groupRates
		}
	} else {
		n.stride, n.ng = legacyRates, 1
		for r := 0; r < t.Len() && r < legacyRates; r++ {
			rs := &n.groups[0].rates[r]
			rs.rix, rs.supported, rs.streams = r, true, 1
			rs.durNs = uint64(avgPkt*8) * 1000000 / uint64(t.Rate(r).Kbps)
		}
		n.groups[0].n = legacyRates
	}
	// Per-column random permutations (init_sample_table), from a
	// SplitMix64 stream so a seed reproduces the table.
	x := seed
	for c := 0; c < sampleColumns; c++ {
		var seq [legacyRates]uint8
		for i := range seq {
			seq[i] = uint8(i)
		}
		m := n.groups[0].n
		for i := m - 1; i > 0; i-- {
			x += 0x9e3779b97f4a7c15
			z := x
			z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
			z = (z ^ z>>27) * 0x94d049bb133111eb
			z ^= z >> 31
			j := int(z % uint64(i+1))
			seq[i], seq[j] = seq[j], seq[i]
		}
		n.sample[c] = seq
	}
	n.sampleTry = 4
	n.updateStats()
	return n, nil
}

// Name implements rate.Controller.
func (n *Node) Name() string { return "minstrel_ht" }

// Anomalies returns the counts of corrected completion reports.
func (n *Node) Anomalies() rate.Anomalies { return n.an }

func (n *Node) rs(idx int) *rateStats {
	return &n.groups[idx/n.stride].rates[idx%n.stride]
}

// tp is minstrel_ht_get_tp_avg: probability over time per frame, with the
// MAC overhead amortised over the average A-MPDU length.
func (n *Node) tp(idx int, prob uint64) uint64 {
	if prob < frac(10, 100) {
		return 0
	}
	if prob > frac(90, 100) {
		prob = frac(90, 100)
	}
	al := n.avgAMPDU >> scale
	if al == 0 {
		al = 1
	}
	ns := 1000 * n.overhead / al
	if !n.t.HT {
		ns = 0 // Linux does not charge overhead to the legacy group
	}
	ns += n.rs(idx).durNs
	return 100000 * (prob * 1000 / ns) >> scale
}

func (n *Node) better(a, b int) bool {
	ra, rb := n.rs(a), n.rs(b)
	ta, tb := n.tp(a, ra.prob), n.tp(b, rb.prob)
	return ta > tb || (ta == tb && ra.prob > rb.prob)
}

// setProb is minstrel_ht_set_best_prob_rate for one slot.
func (n *Node) setProb(slot *int, idx int) {
	cur, r := n.rs(*slot), n.rs(idx)
	if r.prob > frac(75, 100) {
		if n.tp(idx, r.prob) > n.tp(*slot, cur.prob) {
			*slot = idx
		}
	} else if r.prob > cur.prob {
		*slot = idx
	}
}

// calcRetransmit is minstrel_calc_retransmit: as many tries as fit a 6 ms
// segment with binary-exponential contention, between 2 and 7.
func (n *Node) calcRetransmit(idx int) {
	r := n.rs(idx)
	if r.prob < frac(1, 10) {
		r.retry, r.retryRTS = 1, 1
		return
	}
	r.retry, r.retryRTS = 2, 2
	p := n.t.PHY
	cw := uint64(p.CWMin)
	slot := uint64(p.Slot)
	al := n.avgAMPDU >> scale
	if al == 0 {
		al = 1
	}
	data := r.durNs * al / 1000
	next := func() uint64 {
		c := slot * cw >> 1
		cw = cw<<1 | 1
		if cw > uint64(p.CWMax) {
			cw = uint64(p.CWMax)
		}
		return c
	}
	ct := next() + next()
	tx := ct + 2*(n.overhead+data)
	txr := ct + 2*(n.overRTS+data)
	for {
		c := next()
		tx += c + n.overhead + data
		txr += c + n.overRTS + data
		if txr < segmentUs {
			r.retryRTS++
		}
		if tx >= segmentUs {
			break
		}
		r.retry++
		if r.retry >= maxRetry {
			break
		}
	}
}

func (n *Node) first() int {
	for g := 0; g < n.ng; g++ {
		for i := 0; i < n.groups[g].n; i++ {
			if n.groups[g].rates[i].supported {
				return g*n.stride + i
			}
		}
	}
	return 0
}

// updateStats is minstrel_ht_update_stats.
func (n *Node) updateStats() {
	if n.ampduPkts > 0 {
		n.avgAMPDU = ewma(n.avgAMPDU, frac(n.ampduLen, n.ampduPkts))
		n.ampduLen, n.ampduPkts = 0, 0
	}
	n.sampleSlow = 0
	n.sampleCnt = 0
	f := n.first()
	tp := [2]int{f, f}
	prob := f
	for g := 0; g < n.ng; g++ {
		gr := &n.groups[g]
		any := false
		gfirst := -1
		for i := 0; i < gr.n; i++ {
			r := &gr.rates[i]
			if !r.supported {
				continue
			}
			idx := g*n.stride + i
			if gfirst < 0 {
				gfirst = idx
				gr.maxTp = [2]int{idx, idx}
				gr.maxProb = idx
			}
			any = true
			if r.attempts > 0 {
				r.sampleSkipped = 0
				cur := frac(r.succ, r.attempts)
				if r.attHist == 0 {
					r.prob = cur
				} else {
					r.prob = ewma(r.prob, cur)
				}
				r.attHist += r.attempts
			} else {
				r.sampleSkipped++
			}
			r.lastAtt, r.lastSuc = r.attempts, r.succ
			r.attempts, r.succ = 0, 0
			n.calcRetransmit(idx)
			// Sort into the global and group top-2 by (tp, prob).
			insert := func(l *[2]int) {
				if idx == l[0] || idx == l[1] {
					return
				}
				if n.better(idx, l[0]) {
					l[1], l[0] = l[0], idx
				} else if n.better(idx, l[1]) {
					l[1] = idx
				}
			}
			insert(&tp)
			insert(&gr.maxTp)
			n.setProb(&prob, idx)
			n.setProb(&gr.maxProb, idx)
		}
		if any {
			n.sampleCnt++
		}
	}
	// minstrel_ht_prob_rate_reduce_streams: a more robust max_prob_rate
	// from a group with fewer streams than max_tp_rate, if it offers more.
	if n.t.HT {
		maxS := n.rs(tp[0]).streams
		var best uint64
		for g := 0; g < n.ng; g++ {
			gp := n.groups[g].maxProb
			r := n.rs(gp)
			if !r.supported || r.streams >= maxS {
				continue
			}
			if t := n.tp(gp, r.prob); t > best {
				prob, best = gp, t
			}
		}
	}
	n.maxTp, n.maxProb = tp, prob
	n.sampleCnt *= 8
}

// nextSampleIdx is minstrel_set_next_sample_idx: the next group,
// round-robin, and the next entry of its sample table column.
func (n *Node) nextSampleIdx() {
	n.sampleGrp = (n.sampleGrp + 1) % n.ng
	g := &n.groups[n.sampleGrp]
	g.index++
	if g.index >= g.n {
		g.index = 0
		g.column++
		if g.column >= sampleColumns {
			g.column = 0
		}
	}
}

// sampleRate is minstrel_get_sample_rate; -1 for no probe.
func (n *Node) sampleRate() int {
	if n.sampleWait > 0 {
		n.sampleWait--
		return -1
	}
	if n.sampleTry == 0 {
		return -1
	}
	g := n.sampleGrp
	gr := &n.groups[g]
	i := int(n.sample[gr.column][gr.index])
	n.nextSampleIdx()
	if i >= gr.n || !gr.rates[i].supported {
		return -1
	}
	idx := g*n.stride + i
	r := n.rs(idx)
	if idx == n.maxTp[0] || idx == n.maxTp[1] || idx == n.maxProb {
		return -1
	}
	if r.prob > frac(95, 100) {
		return -1
	}
	curS := n.rs(n.maxTp[0]).streams
	if r.durNs > n.rs(n.maxTp[1]).durNs && (curS-1 < r.streams || r.durNs >= n.rs(n.maxProb).durNs) {
		if r.sampleSkipped < 20 {
			return -1
		}
		n.sampleSlow++
		if n.sampleSlow > 3 {
			return -1
		}
	}
	n.sampleTry--
	return idx
}

func (n *Node) tries(idx int) uint8 {
	r := n.rs(idx)
	c := r.retry
	if n.rts {
		c = r.retryRTS
	}
	if r.prob < frac(20, 100) || c == 0 {
		c = 2
	}
	return uint8(c)
}

// Pick implements rate.Controller.
func (n *Node) Pick(now time.Duration, queued, head int, d *rate.Decision) {
	*d = rate.Decision{RTS: n.rts}
	if !n.started {
		n.started, n.lastUpdate = true, now
	}
	if head < 1 {
		head = 1
	}
	// Linux asks minstrel_ht for a rate once per MPDU and counts
	// sample_wait in MPDUs; we are asked once per aggregate, so the
	// aggregate's MPDUs are charged to sample_wait here.
	nf := 1
	if n.t.HT {
		q := queued
		if q > n.t.MaxAMPDU {
			q = n.t.MaxAMPDU
		}
		nf = q / head
		if nf < 1 {
			nf = 1
		} else if nf > 64 {
			nf = 64
		}
	}
	k := 0
	if n.sampleWait >= nf {
		n.sampleWait -= nf - 1 // sampleRate takes the last one
	} else {
		n.sampleWait = 0
	}
	if s := n.sampleRate(); s >= 0 {
		d.Series[0] = rate.Series{Rix: uint8(n.rs(s).rix), Tries: 1}
		d.Probe = true
		n.Probes++
		k = 1
	}
	for _, idx := range [3]int{n.maxTp[0], n.maxTp[1], n.maxProb} {
		d.Series[k] = rate.Series{Rix: uint8(n.rs(idx).rix), Tries: n.tries(idx)}
		k++
		if k == rate.MaxSeries {
			break
		}
	}
	d.ReqBytes = head
	if n.t.HT && !d.Probe {
		m := n.t.MinLimit(d)
		if queued < m {
			m = queued
		}
		if m > head {
			d.MaxBytes = m
			d.ReqBytes = m
		}
	}
}

// Complete implements rate.Controller (minstrel_ht_tx_status).
func (n *Node) Complete(now time.Duration, d *rate.Decision, c *rate.Completion) {
	a := c.Clamp(d, n.t.Len())
	n.an.Add(a)
	if a&rate.AnomBadDecision != 0 {
		return
	}
	n.ampduPkts++
	n.ampduLen += uint64(c.Frames)
	if n.sampleWait == 0 && n.sampleTry == 0 && n.sampleCnt > 0 {
		n.sampleWait = 16 + 2*int(n.avgAMPDU>>scale)
		n.sampleTry = 1
		n.sampleCnt--
	}
	for i := 0; i <= c.FinalSeries; i++ {
		t := c.TriesAt(d, i)
		if t == 0 {
			continue
		}
		r := n.byRix(int(d.Series[i].Rix))
		if r == nil {
			continue
		}
		if i == c.FinalSeries {
			r.succ += uint64(c.Frames - c.Bad)
		}
		r.attempts += uint64(t * c.Frames)
	}
	// Sudden death of spatial multiplexing.
	for slot := 0; slot < 2; slot++ {
		r := n.rs(n.maxTp[slot])
		if r.attempts > 30 && frac(r.succ, r.attempts) < frac(20, 100) {
			n.downgrade(slot)
		}
	}
	if now-n.lastUpdate >= updateInterval {
		n.lastUpdate = now
		n.updateStats()
	}
}

func (n *Node) byRix(rix int) *rateStats {
	for g := 0; g < n.ng; g++ {
		for i := 0; i < n.groups[g].n; i++ {
			r := &n.groups[g].rates[i]
			if r.supported && r.rix == rix {
				return r
			}
		}
	}
	return nil
}

// downgrade is minstrel_downgrade_rate: move max_tp_rate[slot] to the
// best rate of the next lower group with no more streams.
func (n *Node) downgrade(slot int) {
	og := n.maxTp[slot] / n.stride
	for g := og - 1; g >= 0; g-- {
		if n.groups[g].n == 0 || n.rs(n.groups[g].maxTp[slot]).streams > n.rs(n.maxTp[slot]).streams {
			continue
		}
		if !n.rs(n.groups[g].maxTp[slot]).supported {
			continue
		}
		n.maxTp[slot] = n.groups[g].maxTp[slot]
		return
	}
}
