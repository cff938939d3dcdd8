package medium

import (
	"time"

	"github.com/gowrt/gowrt/ath/agg"
	"github.com/gowrt/gowrt/ath/airtime"
	"github.com/gowrt/gowrt/ath/chansim"
)

// defaultSNR is the SNR (dB) of a link without a channel model: close
// range, every rate decodes.
const defaultSNR = 40

// preambleProbe is how chansim judges a PPDU's preamble: as a 24-byte
// frame at MCS 0 at its start (ath/chansim package doc).
const preambleProbe = 24

// SetChannelModel makes the link from one radio to another follow a
// chansim channel (faded SNR over time, the logistic error model per
// subframe at the rate used, channel ageing along an A-MPDU, interference
// bursts). A link without a model is at defaultSNR with no errors but
// those of SetLoss. Links are directed: set both ways for a pair.
func (m *Medium) SetChannelModel(from, to Endpoint, c *chansim.Channel) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := [2]int{from.endpointID(), to.endpointID()}
	if c == nil {
		delete(m.models, k)
		return
	}
	m.models[k] = c
}

func usDur(us int64) time.Duration { return time.Duration(us) * time.Microsecond }

// linkSNR returns the SNR (dB) at which to receives a 20 MHz
// single-stream transmission from from at t (µs): the RSSI a receiver
// reports.
func (m *Medium) linkSNR(from, to *SimRadio, t int64) float64 {
	c := m.models[[2]int{from.id, to.id}]
	if c == nil {
		return defaultSNR
	}
	return c.SNR(airtime.MCS(0, false, false), usDur(t), 0)
}

// linkOK draws whether an n-byte MPDU from from survives the link to to,
// sent at rate r in the PPDU that started at start, off µs into it.
func (m *Medium) linkOK(from, to *SimRadio, r airtime.Rate, n int, start, off int64) bool {
	if p := m.loss[[2]int{from.id, to.id}]; p > 0 && m.rng.Float64() < p {
		return false
	}
	c := m.models[[2]int{from.id, to.id}]
	if c == nil {
		return true
	}
	snr := c.SNR(r, usDur(start), usDur(off))
	return m.rng.Float64() < c.Success(r, snr, n)
}

// receiveMask returns the subframes of a that to receives (bit i:
// frame i): none if the preamble fails, else each on the link's error
// model at its offset in the PPDU.
func (m *Medium) receiveMask(from, to *SimRadio, a *onAir, t int64) uint64 {
	if c := m.models[[2]int{from.id, to.id}]; c != nil {
		mcs0 := airtime.MCS(0, false, false)
		if m.rng.Float64() >= c.Success(mcs0, c.SNR(mcs0, usDur(a.start), 0), preambleProbe) {
			return 0
		}
	}
	var ok uint64
	cum := 0
	for i, f := range a.frames {
		n := len(f) + fcsLen
		off := int64(0)
		if len(a.frames) > 1 {
			cum += agg.SubframeLen(n, 0, i == len(a.frames)-1)
			off = int64(m.phy.TxTime(a.rate, cum))
		}
		if m.linkOK(from, to, a.rate, n, a.start, off) {
			ok |= 1 << uint(i)
		}
	}
	return ok
}
