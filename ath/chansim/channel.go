// Package chansim is a deterministic, seeded simulator of one 802.11n
// link, used to compare rate-control algorithms against each other and
// against oracles (the best fixed rate, found exhaustively, and a
// per-window genie).
//
// # Model
//
// Everything is a function of the scenario and its seed: the channel is a
// function of time (precomputed on a grid), and every random decision is a
// hash of (seed, purpose, time, index), so two algorithms transmitting at
// the same instant see the same channel, and a run reproduces exactly.
//
// Mean SNR. Each scenario gives the mean SNR per receive antenna in a
// 20 MHz channel as a function of time (piecewise linear; walking scenarios
// use log-distance path loss with exponent PathLossExp).
//
// Fading. Two receive branches, each a Rician process with K-factor KdB
// whose scattered part is a sum of 16 sinusoids with random angles of
// arrival and phases (Clarke's model) at maximum Doppler Doppler Hz; K=-inf
// (KdB ≤ -50) is Rayleigh. The gains are sampled every GridUs and
// interpolated linearly.
//
// Per-rate SNR. A 40 MHz channel carries the same power over twice the
// noise bandwidth: −3 dB. One spatial stream is received with maximal-ratio
// combining over both branches (SNR × (g1+g2)). N streams split the
// transmit power (SNR/N) and, with a zero-forcing receiver, keep no
// receive diversity (each stream sees one branch); the codeword spans the
// streams, so the effective SNR is the geometric mean over the streams'
// branches, minus MIMOPenaltyDB for the noise enhancement of separating
// them. This is the per-stream SNR penalty of multi-stream rates.
//
// Channel ageing inside an A-MPDU. The receiver estimates the channel from
// the HT-LTFs at the start of the PPDU; a sub-frame Δt later is decoded with
// a stale estimate. The residual error acts as noise of relative power
// AgeingKappa·(1 − J0(2π·fd·Δt)²), so late sub-frames of long aggregates at
// high MCS fail while the user moves — the tail losses reported by
// measurement studies of A-MPDUs under mobility (e.g. MoFA, CoNEXT 2014).
// In the static scenarios fd is ≤ 0.5 Hz and the effect is negligible.
//
// Errors. The MPDU error rate at SNR s for an MCS whose per-stream
// modulation and coding is m is logistic around SNR50[m] (the SNR at which
// a 1000-byte MPDU fails half the time): PER1000 = 1/(1+exp(Slope·(s −
// SNR50[m]))), and for L bytes PER = 1 − (1 − PER1000)^(L/1000). SNR50
// follows the spacing of the receiver minimum sensitivities of IEEE
// 802.11-2020 Table 19-23 (−82, −79, −77, −74, −70, −66, −65, −64 dBm for
// MCS 0..7), anchored at 2 dB for MCS 0. Control frames (ACK, BlockAck,
// RTS, CTS) use the same curves at their legacy rate (6→MCS0, 12→MCS1,
// 24→MCS3). A PPDU whose preamble (evaluated as a 24-byte MCS 0 frame at
// its start) fails loses every sub-frame.
//
// Interference. Periodic bursts (Period, Burst, INRdB) add interference of
// INRdB above the noise; a sub-frame overlapping a burst, or a control
// frame, is evaluated at the reduced SINR.
//
// MAC. Contention is AIFS plus a backoff drawn uniformly from [0, CW]
// slots, CW doubling per retry of the same frame from CWmin (15) to CWmax.
// The hardware walks the retry series; an A-MPDU attempt succeeds if the
// BlockAck (sent when at least one sub-frame was received) is received;
// the BlockAck bitmap reports every sub-frame received so far. RTS/CTS
// failures are short retries (up to 7) and do not consume long tries.
// Sub-frames not acknowledged go back to the head of the queue (software
// retry, at most SoftRetries times); sub-frames received but reported
// lost (BlockAck lost) are sent again and count only once.
//
// Traffic is saturated: the queue always holds Bulk-byte MSDUs; in a
// fraction SmallFrac of transmit opportunities (decided by hash) the
// transmitter instead serves a second queue holding one Small-byte MSDU
// (a TCP ACK), as with two flows.
//
// Goodput is unique MSDU payload bytes delivered per second of simulated
// time.
package chansim

import (
	"math"
	"math/bits"
	"time"
)

// Params are the model constants shared by all scenarios.
type Params struct {
	SNR50         [8]float64 // dB, per-stream MCS 0..7, 1000-byte MPDU, 50 % PER
	Slope         float64    // 1/dB, logistic slope
	MIMOPenaltyDB float64    // extra loss for N>1 streams
	AgeingKappa   float64    // channel-ageing residual error weight
	GridUs        int        // fading grid
	SoftRetries   int        // software retries per MPDU
	MPDUOverhead  int        // bytes added to an MSDU: QoS header 26, LLC/SNAP 8, FCS 4
}

// DefaultParams are the documented defaults used by the scoreboard.
func DefaultParams() Params {
	return Params{
		// Table 19-23 spacing (0,3,5,8,12,16,17,18 dB) + 2 dB.
		SNR50:         [8]float64{2, 5, 7, 10, 14, 18, 19, 20},
		Slope:         2.2, // 10 %→90 % PER over 2 dB, an AWGN waterfall
		MIMOPenaltyDB: 2,
		AgeingKappa:   0.25,
		GridUs:        500,
		SoftRetries:   10,
		MPDUOverhead:  38,
	}
}

// Point is one vertex of a mean-SNR profile.
type Point struct {
	T     time.Duration
	SNRdB float64
}

// Scenario describes one simulated link.
type Scenario struct {
	Name     string
	Duration time.Duration
	Profile  []Point // mean SNR per branch, 20 MHz; linear between points
	KdB      float64 // Rician K-factor (≤ -50: Rayleigh)
	Doppler  float64 // Hz
	// Periodic interference.
	Period, Burst time.Duration
	INRdB         float64
	// Traffic.
	Bulk, Small int     // MSDU bytes
	SmallFrac   float64 // share of transmit opportunities serving the small queue
	Seed        uint64
}

// channel is the precomputed time-varying state of a scenario. The hot
// path (one evaluation per sub-frame) uses table lookups and a few float
// additions only, so that the simulator stays fast under soft-float MIPS.
type channel struct {
	sc    *Scenario
	p     Params
	grid  int
	db1   []float32   // 1 stream, MRC over both branches, 20 MHz, dB
	db2   []float32   // geometric mean of the branches per stream, 20 MHz, dB
	age   [][]float32 // [Δt/ageUs][(dB−ageMinDB)/ageStep]: ageing loss in dB
	ageUs int
	intDB float64    // interference loss, dB
	mimo  [5]float64 // per-stream power split + MIMO penalty, dB, by streams
}

const (
	ageMinDB = -20.0
	ageStep  = 0.5
	ageN     = 160
)

func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// hash returns deterministic 64 random bits for (seed, purpose, a, b).
func hash(seed, purpose, a, b uint64) uint64 {
	return mix(seed ^ mix(purpose^mix(a^mix(b))))
}

// uniform returns a deterministic number in [0,1) for (seed, purpose, a, b).
func uniform(seed, purpose, a, b uint64) float64 {
	return float64(hash(seed, purpose, a, b)>>11) / (1 << 53)
}

// log2tab[i] = log2(1 + i/1024).
var log2tab = func() (t [1025]float32) {
	for i := range t {
		t[i] = float32(math.Log2(1 + float64(i)/1024))
	}
	return
}()

// lnUniform returns ln(u) for the uniform u ∈ (0,1] drawn from h, to
// within 0.001, with integer operations and a table.
func lnUniform(h uint64) float64 {
	x := h>>11 | 1 // 53 bits, never 0
	lz := bits.LeadingZeros64(x)
	e := 63 - lz // x = 2^e·(1+f)
	var m uint64
	if e >= 10 {
		m = (x >> uint(e-10)) & 1023
	} else {
		m = (x << uint(10-e)) & 1023
	}
	return (float64(e-53) + float64(log2tab[m])) * math.Ln2
}

func newChannel(sc *Scenario, p Params) *channel {
	c := &channel{sc: sc, p: p, grid: p.GridUs, ageUs: 100}
	n := int(sc.Duration/time.Microsecond)/c.grid + 2
	k := 0.0
	if sc.KdB > -50 {
		k = math.Pow(10, sc.KdB/10)
	}
	los := math.Sqrt(k / (k + 1))
	sca := math.Sqrt(1/(k+1)) / math.Sqrt(16)
	const m = 17 // 16 scattered paths + the line of sight
	var g [2][]float64
	for br := 0; br < 2; br++ {
		// Each path is a phasor rotating at its Doppler shift; advance
		// them by complex multiplication instead of calling sincos per
		// sample (renormalised every step).
		var re, im, rr, ri [m]float64
		for i := 0; i < m; i++ {
			a := 2 * math.Pi * uniform(sc.Seed, 1, uint64(br), uint64(i))
			ph := 2 * math.Pi * uniform(sc.Seed, 2, uint64(br), uint64(i))
			amp := sca
			if i == m-1 {
				amp = los
			}
			im[i], re[i] = math.Sincos(ph)
			re[i], im[i] = re[i]*amp, im[i]*amp
			w := 2 * math.Pi * sc.Doppler * math.Cos(a) * float64(c.grid) * 1e-6
			ri[i], rr[i] = math.Sincos(w)
		}
		g[br] = make([]float64, n)
		for j := 0; j < n; j++ {
			var sr, si float64
			for i := 0; i < m; i++ {
				sr += re[i]
				si += im[i]
				re[i], im[i] = re[i]*rr[i]-im[i]*ri[i], re[i]*ri[i]+im[i]*rr[i]
			}
			g[br][j] = sr*sr + si*si
		}
	}
	c.db1 = make([]float32, n)
	c.db2 = make([]float32, n)
	for j := 0; j < n; j++ {
		mean := c.meanDB(int64(j * c.grid))
		c.db1[j] = float32(mean + 10*math.Log10(g[0][j]+g[1][j]+1e-12))
		c.db2[j] = float32(mean + 5*math.Log10(g[0][j]*g[1][j]+1e-24))
	}
	for s := 2; s < len(c.mimo); s++ {
		c.mimo[s] = 10*math.Log10(float64(s)) + p.MIMOPenaltyDB
	}
	// Ageing residual r(Δt) = κ(1 − J0(2π·fd·Δt)²) for Δt = 0, 100 µs, …
	// 8 ms; its loss at SNR s is 10·log10(1 + r·s).
	if sc.Doppler > 0 {
		c.age = make([][]float32, 81)
		for i := range c.age {
			x := 2 * math.Pi * sc.Doppler * float64(i*c.ageUs) * 1e-6
			j := math.J0(x)
			r := p.AgeingKappa * (1 - j*j)
			if r < 1e-6 {
				continue
			}
			c.age[i] = make([]float32, ageN)
			for d := range c.age[i] {
				snr := math.Pow(10, (ageMinDB+float64(d)*ageStep)/10)
				c.age[i][d] = float32(10 * math.Log10(1+r*snr))
			}
		}
	}
	if sc.Burst > 0 {
		c.intDB = 10 * math.Log10(1+math.Pow(10, sc.INRdB/10))
	}
	return c
}

// meanDB returns the mean SNR per branch in dB at t µs.
func (c *channel) meanDB(us int64) float64 {
	pr := c.sc.Profile
	t := time.Duration(us) * time.Microsecond
	for i := 1; i < len(pr); i++ {
		if t <= pr[i].T {
			a, b := pr[i-1], pr[i]
			if b.T == a.T {
				return b.SNRdB
			}
			f := float64(t-a.T) / float64(b.T-a.T)
			return a.SNRdB + f*(b.SNRdB-a.SNRdB)
		}
	}
	return pr[len(pr)-1].SNRdB
}

// interfered reports whether [from, to) µs overlaps a burst.
func (c *channel) interfered(from, to int64) bool {
	if c.intDB == 0 {
		return false
	}
	p := int64(c.sc.Period / time.Microsecond)
	b := int64(c.sc.Burst / time.Microsecond)
	// The burst of period k occupies [k·p, k·p+b).
	k := from / p
	if from-k*p < b {
		return true
	}
	return (k+1)*p < to
}

// sinrDB returns the effective per-stream SNR (dB) of a transmission with
// the given streams and width at time us, decoded with a channel estimate
// from age µs earlier, with or without interference.
func (c *channel) sinrDB(streams int, ht40 bool, us, age int64, interf bool) float64 {
	j := (int(us) + c.grid/2) / c.grid
	if j >= len(c.db1) {
		j = len(c.db1) - 1
	}
	var db float64
	if streams <= 1 {
		db = float64(c.db1[j])
	} else {
		if streams >= len(c.mimo) {
			streams = len(c.mimo) - 1
		}
		db = float64(c.db2[j]) - c.mimo[streams]
	}
	if ht40 {
		db -= 3.0103
	}
	if interf {
		db -= c.intDB
	}
	if age > 0 && c.age != nil {
		i := int(age) / c.ageUs
		if i >= len(c.age) {
			i = len(c.age) - 1
		}
		if t := c.age[i]; t != nil {
			d := int((db - ageMinDB) / ageStep)
			if d < 0 {
				d = 0
			} else if d >= ageN {
				d = ageN - 1
			}
			db -= float64(t[d])
		}
	}
	return db
}
