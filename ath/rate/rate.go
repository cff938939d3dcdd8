// Package rate holds what every 802.11 rate-control algorithm in gowrt
// shares: the per-peer rate table (the intersection of our and the peer's
// capabilities, with each rate's A-MPDU limit precomputed), the multi-rate
// retry schedule handed to the hardware, the completion report that comes
// back, and the validation that turns impossible completion reports into
// clamped, counted ones instead of panics.
//
// The schedule mirrors the Atheros descriptor: up to four series, each a
// rate index and a try count; the hardware walks them in order until the
// frame (or the aggregate's BlockAck) is acknowledged or all tries are
// used.
package rate

import (
	"errors"
	"fmt"
	"time"

	"github.com/gowrt/gowrt/ath/agg"
	"github.com/gowrt/gowrt/ath/airtime"
)

const (
	// MaxRates bounds a table (the sample algorithm keeps 64-bit masks).
	MaxRates = 64
	// MaxSeries is the number of retry series in an Atheros descriptor.
	MaxSeries = 4
	// MaxTries bounds the tries of one series (4-bit descriptor field).
	MaxTries = 15
)

// Caps describes one side's rate capabilities.
type Caps struct {
	Legacy   []uint32 // supported CCK/OFDM rates in kb/s
	MCS      uint32   // bit n set: MCS n supported (0..31)
	HT40     bool     // 40 MHz channel in use
	SGI      bool     // short GI supported (for the width in use)
	MaxAMPDU int      // peer only: max A-MPDU bytes (0: 65535)
	Density  uint8    // peer only: MPDU density code 0..7
}

// ErrNoCommonRates is returned by NewTable when the two sides share no rate.
var ErrNoCommonRates = errors.New("rate: no common rates")

// Table is the rate table for one peer. Rates are indexed by "rix", in
// ascending order of MCS (HT) or nominal rate (legacy).
type Table struct {
	PHY      airtime.PHY
	HT       bool
	MaxAMPDU int // peer's limit, ≤ agg.MaxPSDU
	Density  uint8
	rates    []airtime.Rate
	limit    []int // max A-MPDU PSDU per rix: min(4 ms at the rate, MaxAMPDU)
}

// NewTable intersects our capabilities with the peer's. When both sides
// are HT and share an MCS, the table holds the common MCS rates only (HT
// peers are rate-controlled over MCS, as FreeBSD's sample does); otherwise
// it holds the common legacy rates valid in the band.
func NewTable(p airtime.PHY, ours, peer Caps) (*Table, error) {
	t := &Table{PHY: p, MaxAMPDU: agg.MaxPSDU, Density: peer.Density}
	if peer.MaxAMPDU > 0 && peer.MaxAMPDU < agg.MaxPSDU {
		t.MaxAMPDU = peer.MaxAMPDU
	}
	if peer.Density > 7 {
		return nil, fmt.Errorf("rate: peer MPDU density %d out of range 0..7", peer.Density)
	}
	if common := ours.MCS & peer.MCS; common != 0 {
		t.HT = true
		ht40 := ours.HT40 && peer.HT40
		sgi := ours.SGI && peer.SGI
		for m := uint8(0); m < 32; m++ {
			if common&(1<<m) != 0 {
				t.rates = append(t.rates, airtime.MCS(m, ht40, sgi))
			}
		}
	} else {
		for _, k := range ours.Legacy {
			r := airtime.Legacy(k)
			if r.Validate() != nil || (r.Mod == airtime.CCK && p.Band != airtime.Band2GHz) {
				continue
			}
			for _, pk := range peer.Legacy {
				if pk == k && !t.has(r) {
					t.rates = append(t.rates, r)
				}
			}
		}
		// Insertion sort by nominal rate (tables are short).
		for i := 1; i < len(t.rates); i++ {
			for j := i; j > 0 && t.rates[j].Kbps < t.rates[j-1].Kbps; j-- {
				t.rates[j], t.rates[j-1] = t.rates[j-1], t.rates[j]
			}
		}
	}
	if len(t.rates) == 0 {
		return nil, fmt.Errorf("%w: ours MCS %#x legacy %v, peer MCS %#x legacy %v",
			ErrNoCommonRates, ours.MCS, ours.Legacy, peer.MCS, peer.Legacy)
	}
	if len(t.rates) > MaxRates {
		t.rates = t.rates[:MaxRates]
	}
	t.limit = make([]int, len(t.rates))
	for i, r := range t.rates {
		l := agg.ForRate(p, r, agg.DefaultLimitUs)
		if l > t.MaxAMPDU {
			l = t.MaxAMPDU
		}
		t.limit[i] = l
	}
	return t, nil
}

func (t *Table) has(r airtime.Rate) bool {
	for _, x := range t.rates {
		if x == r {
			return true
		}
	}
	return false
}

// Len returns the number of rates.
func (t *Table) Len() int { return len(t.rates) }

// Rate returns rate rix (rix must be < Len).
func (t *Table) Rate(rix int) airtime.Rate { return t.rates[rix] }

// Limit returns the largest A-MPDU (PSDU bytes) rate rix may carry: the
// 4 ms duration limit at that rate and the peer's maximum; 0 for legacy.
func (t *Table) Limit(rix int) int { return t.limit[rix] }

// Series is one entry of a multi-rate retry schedule.
type Series struct {
	Rix   uint8
	Tries uint8
}

// Decision is what rate control hands the TX path for one frame or
// aggregate.
type Decision struct {
	Series [MaxSeries]Series
	// MaxBytes is the largest A-MPDU PSDU to form (0: a single MPDU).
	MaxBytes int
	// ReqBytes is the size completion statistics are accounted to.
	ReqBytes int
	RTS      bool   // protect with RTS/CTS
	Probe    bool   // a rate-control probe (sample)
	Cookie   uint32 // private to the algorithm that made the decision
}

// TotalTries returns the tries over all series.
func (d *Decision) TotalTries() int {
	n := 0
	for _, s := range d.Series {
		n += int(s.Tries)
	}
	return n
}

// Completion is the hardware's report for one Decision.
type Completion struct {
	FinalSeries int  // index of the series that ended the exchange
	FinalRix    int  // rate index the hardware reports, -1 if unknown
	LongTries   int  // data transmissions in total (ts_longretry + 1)
	ShortTries  int  // RTS transmissions that drew no CTS
	Frames      int  // MPDUs in the PPDU (1 without aggregation)
	Bad         int  // MPDUs not acknowledged
	Acked       bool // ACK or BlockAck received
	Bytes       int  // PSDU bytes actually sent (0: use ReqBytes)
}

// Anomaly flags what Clamp had to correct.
type Anomaly uint16

const (
	AnomBadDecision  Anomaly = 1 << iota // the decision itself is unusable
	AnomFinalSeries                      // final series out of range or without tries
	AnomUnknownRix                       // reported rate is not in the schedule/table
	AnomTries                            // tries outside what the schedule allows
	AnomFrames                           // frame count out of range
	AnomBad                              // more bad sub-frames than frames, or negative
	AnomShortTries                       // negative or absurd RTS retry count
	AnomBytes                            // byte count out of range
	AnomAckedNothing                     // acknowledged with every sub-frame bad
	numAnomalies     = iota
)

// Anomalies counts corrected completion reports per kind.
type Anomalies [numAnomalies]uint64

// Add counts the flags in a.
func (c *Anomalies) Add(a Anomaly) {
	for i := range c {
		if a&(1<<i) != 0 {
			c[i]++
		}
	}
}

// Total returns the number of flags counted.
func (c *Anomalies) Total() uint64 {
	var n uint64
	for _, v := range c {
		n += v
	}
	return n
}

// Clamp makes c consistent with the decision d it reports on, for a table
// of nrates rates, and returns what it corrected. After Clamp (unless the
// result has AnomBadDecision, in which case c must be ignored):
// 0 ≤ FinalSeries < MaxSeries with tries; the tries before it are all
// used and LongTries lies within the schedule; 1 ≤ Frames ≤ 64;
// 0 ≤ Bad ≤ Frames, Bad == Frames unless Acked; 1 ≤ Bytes ≤ 65535.
func (c *Completion) Clamp(d *Decision, nrates int) Anomaly {
	var a Anomaly
	last := -1
	for i, s := range d.Series {
		if s.Tries > 0 {
			if int(s.Rix) >= nrates || s.Tries > MaxTries {
				return AnomBadDecision
			}
			last = i
		}
	}
	if last < 0 {
		return AnomBadDecision
	}
	if c.FinalSeries < 0 || c.FinalSeries >= MaxSeries || d.Series[c.FinalSeries].Tries == 0 {
		a |= AnomFinalSeries
		c.FinalSeries = last
	}
	if c.FinalRix >= 0 && c.FinalRix != int(d.Series[c.FinalSeries].Rix) {
		found := false
		if c.FinalRix < nrates {
			for i, s := range d.Series {
				if s.Tries > 0 && int(s.Rix) == c.FinalRix {
					c.FinalSeries, found = i, true
					break
				}
			}
		}
		if !found {
			a |= AnomUnknownRix
		}
	}
	c.FinalRix = int(d.Series[c.FinalSeries].Rix)
	before := 0
	for i := 0; i < c.FinalSeries; i++ {
		before += int(d.Series[i].Tries)
	}
	lo, hi := before+1, before+int(d.Series[c.FinalSeries].Tries)
	if c.LongTries < lo {
		a |= AnomTries
		c.LongTries = lo
	} else if c.LongTries > hi {
		a |= AnomTries
		c.LongTries = hi
	}
	if c.ShortTries < 0 || c.ShortTries > 255 {
		a |= AnomShortTries
		if c.ShortTries < 0 {
			c.ShortTries = 0
		} else {
			c.ShortTries = 255
		}
	}
	if c.Frames < 1 || c.Frames > agg.MaxSubframes {
		a |= AnomFrames
		if c.Frames < 1 {
			c.Frames = 1
		} else {
			c.Frames = agg.MaxSubframes
		}
	}
	if c.Bad < 0 || c.Bad > c.Frames {
		a |= AnomBad
		if c.Bad < 0 {
			c.Bad = 0
		} else {
			c.Bad = c.Frames
		}
	}
	if !c.Acked {
		c.Bad = c.Frames // nothing acknowledged: every sub-frame failed
	} else if c.Bad == c.Frames {
		a |= AnomAckedNothing
		c.Acked = false
	}
	if c.Bytes == 0 {
		c.Bytes = d.ReqBytes
	}
	if c.Bytes < 1 || c.Bytes > agg.MaxPSDU {
		a |= AnomBytes
		if c.Bytes < 1 {
			c.Bytes = 1
		} else {
			c.Bytes = agg.MaxPSDU
		}
	}
	return a
}

// TriesAt returns how many transmissions a clamped completion made with
// series i: all of its tries before the final series, the remainder at
// the final series, none after it.
func (c *Completion) TriesAt(d *Decision, i int) int {
	if i > c.FinalSeries {
		return 0
	}
	if i < c.FinalSeries {
		return int(d.Series[i].Tries)
	}
	n := c.LongTries
	for j := 0; j < c.FinalSeries; j++ {
		n -= int(d.Series[j].Tries)
	}
	return n
}

// FitSchedule applies the re-forming rule to a schedule for an aggregate
// of psdu bytes: every retry series whose rate could not carry it within
// its own limit loses its tries, so the hardware never retries a too-long
// aggregate at a slower rate; the software re-forms it after the
// completion instead. Series 0 is the rate the aggregate was formed for.
func (t *Table) FitSchedule(d *Decision, psdu int) {
	for i := 1; i < MaxSeries; i++ {
		s := &d.Series[i]
		if s.Tries > 0 && int(s.Rix) < len(t.limit) && t.limit[s.Rix] < psdu {
			s.Tries = 0
		}
	}
}

// MinLimit returns the smallest A-MPDU limit over the series with tries
// (how ath9k and FreeBSD size an aggregate for a whole schedule).
func (t *Table) MinLimit(d *Decision) int {
	m := agg.MaxPSDU
	for _, s := range d.Series {
		if s.Tries > 0 && int(s.Rix) < len(t.limit) && t.limit[s.Rix] < m {
			m = t.limit[s.Rix]
		}
	}
	return m
}

// Controller is a rate-control algorithm bound to one peer. Calls for one
// peer must be serialised by the caller; Pick and Complete allocate nothing.
type Controller interface {
	// Pick chooses the schedule for the next transmission. queued is the
	// data queued for the peer/TID in bytes (A-MPDU subframe lengths);
	// head is the first subframe's length, which MaxBytes must admit.
	Pick(now time.Duration, queued, head int, d *Decision)
	// Complete reports the outcome of a decision made by Pick.
	Complete(now time.Duration, d *Decision, c *Completion)
	// Name identifies the algorithm.
	Name() string
}
