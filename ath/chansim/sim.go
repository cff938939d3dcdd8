package chansim

import (
	"fmt"
	"math"
	"time"

	"github.com/gowrt/gowrt/ath/agg"
	"github.com/gowrt/gowrt/ath/airtime"
	"github.com/gowrt/gowrt/ath/rate"
)

// Window is the genie's decision interval and the granularity of Result.Windows.
const Window = 100 * time.Millisecond

// Result is the outcome of one run.
type Result struct {
	Name      string
	Bytes     uint64   // unique MSDU payload bytes delivered
	Windows   []uint64 // bytes delivered per Window
	Exchanges uint64
	Probes    uint64
	Dropped   uint64 // MPDUs dropped after SoftRetries
	Anomalies uint64
	// Overlong counts A-MPDU transmissions longer than the 4 ms limit at
	// the rate they went out at (a too-long aggregate retried at a slower
	// rate by the hardware).
	Overlong uint64
	Duration time.Duration
}

// Mbps returns the goodput in Mb/s.
func (r Result) Mbps() float64 {
	return float64(r.Bytes) * 8 / r.Duration.Seconds() / 1e6
}

type entry struct {
	msdu, mpdu int
	rcvd       bool
	retries    int
}

// Link is one scenario bound to a rate table, ready to run controllers.
type Link struct {
	sc    Scenario
	p     Params
	ch    *channel
	t     *rate.Table
	phy   airtime.PHY
	lnS   [8][]float32 // ln(1 − PER1000) by m and SNR step
	bulk  []entry
	small []entry
	lens  []int
	res   Result
}

const (
	perMinDB = -20.0
	perStep  = 0.02
	perN     = 4000 // up to +60 dB
)

// NewLink precomputes the channel of sc for rate table t.
func NewLink(sc Scenario, p Params, t *rate.Table) (*Link, error) {
	if sc.Duration <= 0 || len(sc.Profile) == 0 || sc.Bulk <= 0 {
		return nil, fmt.Errorf("chansim: scenario %q incomplete", sc.Name)
	}
	if sc.Burst > 0 && (sc.Period <= sc.Burst) {
		return nil, fmt.Errorf("chansim: scenario %q: burst %v not shorter than period %v", sc.Name, sc.Burst, sc.Period)
	}
	if sc.SmallFrac > 0 && sc.Small <= 0 {
		return nil, fmt.Errorf("chansim: scenario %q: small frames without a size", sc.Name)
	}
	l := &Link{sc: sc, p: p, t: t, phy: t.PHY}
	l.ch = newChannel(&l.sc, p)
	for m := 0; m < 8; m++ {
		l.lnS[m] = make([]float32, perN)
		for i := range l.lnS[m] {
			db := perMinDB + float64(i)*perStep
			p1 := 1 / (1 + math.Exp(p.Slope*(db-p.SNR50[m])))
			if p1 > 1-1e-12 {
				p1 = 1 - 1e-12
			}
			l.lnS[m][i] = float32(math.Log1p(-p1))
		}
	}
	return l, nil
}

// ok draws whether an L-byte frame with per-stream modulation m survives
// at SNR db (dB): success probability exp(L/1000·ln(1 − PER1000)),
// compared in the log domain against the hashed uniform.
func (l *Link) ok(h uint64, m int, db float64, n int) bool {
	i := int((db - perMinDB) * (1 / perStep))
	if i < 0 {
		return false
	}
	if i >= perN {
		i = perN - 1
	}
	return lnUniform(h) < float64(l.lnS[m][i])*float64(n)/1000
}

// legacyM maps a control-response rate to the per-stream MCS curve.
func legacyM(r airtime.Rate) int {
	switch r.Kbps {
	case 6000:
		return 0
	case 9000, 12000:
		return 1
	case 18000:
		return 2
	case 24000:
		return 3
	case 36000:
		return 4
	case 48000:
		return 5
	}
	return 6
}

func rateM(r airtime.Rate) int {
	if r.Mod == airtime.HT {
		return int(r.MCS % 8)
	}
	return legacyM(r)
}

func (l *Link) refill() {
	for len(l.bulk) < 2*agg.MaxSubframes {
		l.bulk = append(l.bulk, entry{msdu: l.sc.Bulk, mpdu: l.sc.Bulk + l.p.MPDUOverhead})
	}
	if len(l.small) == 0 && l.sc.Small > 0 {
		l.small = append(l.small, entry{msdu: l.sc.Small, mpdu: l.sc.Small + l.p.MPDUOverhead})
	}
}

func (l *Link) deliver(e *entry, at int64) {
	if e.rcvd {
		return
	}
	e.rcvd = true
	l.res.Bytes += uint64(e.msdu)
	w := int(time.Duration(at) * time.Microsecond / Window)
	if w >= len(l.res.Windows) {
		w = len(l.res.Windows) - 1
	}
	l.res.Windows[w] += uint64(e.msdu)
}

// Run simulates ctl over the whole scenario. Runs are independent and
// deterministic: the same controller state gives the same Result.
func (l *Link) Run(ctl rate.Controller) Result {
	end := int64(l.sc.Duration / time.Microsecond)
	l.res = Result{Name: ctl.Name(), Duration: l.sc.Duration,
		Windows: make([]uint64, int((l.sc.Duration+Window-1)/Window))}
	l.bulk, l.small = l.bulk[:0], l.small[:0]
	var d rate.Decision
	var c rate.Completion
	now := int64(0)
	for k := uint64(0); now < end; k++ {
		l.refill()
		q := &l.bulk
		if l.sc.SmallFrac > 0 && uniform(l.sc.Seed, 10, k, 0) < l.sc.SmallFrac {
			q = &l.small
		}
		fr := *q
		if len(fr) > agg.MaxSubframes {
			fr = fr[:agg.MaxSubframes]
		}
		l.lens = l.lens[:0]
		queued := 0
		for i := range fr {
			l.lens = append(l.lens, fr[i].mpdu)
			queued += agg.SubframeLen(fr[i].mpdu, 0, i == len(fr)-1)
		}
		head := agg.SubframeLen(fr[0].mpdu, 0, true)
		ctl.Pick(time.Duration(now)*time.Microsecond, queued, head, &d)
		n, psdu := 1, fr[0].mpdu
		ampdu := l.t.HT && d.MaxBytes > 0
		if ampdu {
			var err error
			n, psdu, err = agg.Form(l.lens, agg.Limits{MaxBytes: d.MaxBytes})
			if err != nil || n == 0 {
				n, psdu = 1, head
			}
		}
		el := l.exchange(now, &d, fr[:n], psdu, ampdu, &c)
		now += el
		ctl.Complete(time.Duration(now)*time.Microsecond, &d, &c)
		l.res.Exchanges++
		if d.Probe {
			l.res.Probes++
		}
		// Sender side: acknowledged sub-frames leave the queue, the rest
		// are retried in software or dropped.
		w := 0
		for i := range *q {
			e := (*q)[i]
			if i < n {
				if c.Acked && e.rcvd {
					continue
				}
				e.retries++
				if e.retries > l.p.SoftRetries {
					l.res.Dropped++
					continue
				}
			}
			(*q)[w] = e
			w++
		}
		*q = (*q)[:w]
	}
	return l.res
}

// exchange simulates one schedule from now and fills c; it returns the
// medium time used (µs).
func (l *Link) exchange(now int64, d *rate.Decision, fr []entry, psdu int, ampdu bool, c *rate.Completion) int64 {
	p := l.phy
	seed := l.sc.Seed
	t := now
	long, short, attempt := 0, 0, 0
	*c = rate.Completion{FinalRix: -1, Frames: len(fr), Bytes: psdu}
	last := 0
	for i, s := range d.Series {
		if s.Tries > 0 {
			last = i
		}
	}
	for i, s := range d.Series {
		if s.Tries == 0 {
			continue
		}
		r := l.t.Rate(int(s.Rix))
		cr := p.ControlRate(r)
		cm := legacyM(cr)
		rtsD, ctsD := int64(p.TxTime(cr, airtime.RTSLen)), int64(p.TxTime(cr, airtime.CTSLen))
		respLen := airtime.ACKLen
		if ampdu {
			respLen = airtime.BlockAckLen
		}
		respD := int64(p.TxTime(cr, respLen))
		dur := int64(p.TxTime(r, psdu))
		streams, m := r.Streams(), rateM(r)
		dbps := r.DataBitsPerSymbol()
		for try := 0; try < int(s.Tries); {
			cw := (p.CWMin+1)<<attempt - 1
			if cw > p.CWMax || attempt > 10 {
				cw = p.CWMax
			}
			bo := int64(hash(seed, 30, uint64(t), uint64(attempt)) % uint64(cw+1))
			t += int64(p.AIFS()) + bo*int64(p.Slot)
			attempt++
			if d.RTS {
				ok := l.ok(hash(seed, 31, uint64(t), 0), cm, l.ch.sinrDB(1, false, t, 0, l.ch.interfered(t, t+rtsD)), airtime.RTSLen)
				t2 := t + rtsD + int64(p.SIFS)
				ok = ok && l.ok(hash(seed, 32, uint64(t2), 0), cm, l.ch.sinrDB(1, false, t2, 0, l.ch.interfered(t2, t2+ctsD)), airtime.CTSLen)
				t = t2 + ctsD
				if !ok {
					short++
					if short >= 7 {
						c.FinalSeries, c.LongTries, c.ShortTries = last, long, short
						if long == 0 {
							// Never sent: report one try on series 0 as
							// the hardware does (ts_longretry 0).
							c.FinalSeries, c.LongTries = 0, 1
						}
						c.Bad = c.Frames
						return t - now
					}
					continue
				}
				t += int64(p.SIFS)
			}
			try++
			long++
			if ampdu && dur > agg.DefaultLimitUs {
				l.res.Overlong++
			}
			if long > 64 {
				break
			}
			// Preamble, then each sub-frame at its place in the PPDU.
			// Legacy preamble 20 µs; HT-mixed adds HT-SIG, HT-STF and the
			// HT-LTFs: TxTime of an empty PSDU less its one data symbol.
			symNs := int64(4000)
			if r.SGI {
				symNs = 3600
			}
			preData := int64(20)
			if r.Mod == airtime.HT {
				preData = int64(p.TxTime(r, 0)-p.SignalExt) - 4
			}
			preOK := l.ok(hash(seed, 33, uint64(t), 0), 0, l.ch.sinrDB(1, r.HT40, t, 0, l.ch.interfered(t, t+preData)), 24)
			any := false
			if preOK {
				off := 0
				for j := range fr {
					sl := fr[j].mpdu
					if ampdu {
						sl = agg.SubframeLen(fr[j].mpdu, 0, j == len(fr)-1)
					}
					a := t + preData + int64(16+8*off)/int64(dbps)*symNs/1000
					b := t + preData + (int64(16+8*(off+sl))+int64(dbps)-1)/int64(dbps)*symNs/1000
					if dbps == 0 {
						a, b = t+preData, t+dur
					}
					off += sl
					snr := l.ch.sinrDB(streams, r.HT40, (a+b)/2, (a+b)/2-t, l.ch.interfered(a, b))
					if l.ok(hash(seed, 34, uint64(a), uint64(j)), m, snr, fr[j].mpdu) {
						any = true
						l.deliver(&fr[j], b)
					}
				}
			}
			t += dur + int64(p.SIFS)
			if any {
				ok := l.ok(hash(seed, 35, uint64(t), 0), cm, l.ch.sinrDB(1, false, t, 0, l.ch.interfered(t, t+respD)), respLen)
				t += respD
				if ok {
					bad := 0
					for j := range fr {
						if !fr[j].rcvd {
							bad++
						}
					}
					c.FinalSeries, c.FinalRix, c.LongTries, c.ShortTries = i, int(s.Rix), long, short
					c.Acked, c.Bad = true, bad
					return t - now
				}
			} else {
				t += respD // ACK timeout
			}
		}
	}
	c.FinalSeries, c.FinalRix, c.LongTries, c.ShortTries = last, int(d.Series[last].Rix), long, short
	c.Bad = c.Frames
	if long == 0 {
		c.FinalSeries, c.LongTries = 0, 1
	}
	return t - now
}

// Fixed is the oracle controller: one rate, the largest aggregate its
// 4 ms limit allows, four tries.
type Fixed struct {
	T   *rate.Table
	Rix int
}

// Name implements rate.Controller.
func (f *Fixed) Name() string { return fmt.Sprintf("fixed %v", f.T.Rate(f.Rix)) }

// Pick implements rate.Controller.
func (f *Fixed) Pick(now time.Duration, queued, head int, d *rate.Decision) {
	*d = rate.Decision{Series: [rate.MaxSeries]rate.Series{{Rix: uint8(f.Rix), Tries: 4}}, ReqBytes: head}
	if m := f.T.Limit(f.Rix); f.T.HT && m > head {
		if queued < m {
			m = queued
		}
		d.MaxBytes, d.ReqBytes = m, m
	}
}

// Complete implements rate.Controller.
func (f *Fixed) Complete(time.Duration, *rate.Decision, *rate.Completion) {}

// Oracles runs every fixed rate and returns the best one and the genie:
// for each Window the best fixed rate's delivery in that window.
func (l *Link) Oracles() (best Result, genie Result) {
	genie = Result{Name: "genie", Duration: l.sc.Duration}
	for rix := 0; rix < l.t.Len(); rix++ {
		r := l.Run(&Fixed{T: l.t, Rix: rix})
		if rix == 0 || r.Bytes > best.Bytes {
			best = r
		}
		if genie.Windows == nil {
			genie.Windows = make([]uint64, len(r.Windows))
		}
		for w, b := range r.Windows {
			if b > genie.Windows[w] {
				genie.Windows[w] = b
			}
		}
	}
	for _, b := range genie.Windows {
		genie.Bytes += b
	}
	return best, genie
}
