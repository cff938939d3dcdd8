package medium

import "github.com/gowrt/gowrt/ath/airtime"

// defaultSNR is the SNR (dB) of a link without a channel model: close
// range, every rate decodes.
const defaultSNR = 40

// linkSNR returns the SNR (dB) at which to receives from from at t (µs).
func (m *Medium) linkSNR(from, to *SimRadio, t int64) float64 {
	return defaultSNR
}

// linkOK draws whether an n-byte MPDU from from survives the link to to,
// sent at rate r in the PPDU that started at start, off µs into it.
func (m *Medium) linkOK(from, to *SimRadio, r airtime.Rate, n int, start, off int64) bool {
	if p := m.loss[[2]int{from.id, to.id}]; p > 0 && m.rng.Float64() < p {
		return false
	}
	return true
}

// receiveMask returns the subframes of a that to receives (bit i:
// frame i), all on the link's error model.
func (m *Medium) receiveMask(from, to *SimRadio, a *onAir, t int64) uint64 {
	var ok uint64
	for i, f := range a.frames {
		if m.linkOK(from, to, a.rate, len(f)+fcsLen, a.start, 0) {
			ok |= 1 << uint(i)
		}
	}
	return ok
}
