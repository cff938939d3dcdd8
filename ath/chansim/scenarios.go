package chansim

import (
	"math"
	"time"
)

// Scale shortens every scenario (1 = full length). The qemu-mips run
// uses a smaller scale (see scale_*.go): the simulation is deterministic,
// so the shorter runs assert the same properties.
func scaled(d time.Duration, scale float64) time.Duration {
	return time.Duration(float64(d) * scale)
}

// walk returns a log-distance profile for a walk from d0 to d1 metres over
// dur, with snr0 at 2 m and path-loss exponent 3.5 (indoor).
func walk(d0, d1, snr0 float64, dur time.Duration) []Point {
	const steps = 16
	pts := make([]Point, 0, steps+1)
	for i := 0; i <= steps; i++ {
		f := float64(i) / steps
		d := d0 + f*(d1-d0)
		pts = append(pts, Point{T: time.Duration(f * float64(dur)), SNRdB: snr0 - 35*math.Log10(d/2)})
	}
	return pts
}

// Scenarios returns the scoreboard scenarios at the given length scale
// (1 = full) for one seed. Every parameter is stated here; none is chosen
// per algorithm.
//
//   - static close: 40 dB per branch, Rician K 10 dB, 0.5 Hz Doppler
//     (people moving in a room), 1500-byte MSDUs.
//   - static fringe: 17 dB, K 6 dB, 0.5 Hz: the edge of acceptable
//     behaviour, where single- and dual-stream rates compete.
//   - walk-away: 1.4 m/s from 2 m to ~13 m (40 → ~12 dB), K 3 dB,
//     Doppler 24 Hz (1.4 m/s at 5.2 GHz).
//   - walk-back: the same walk reversed.
//   - periodic interference: 30 dB, K 6 dB, 0.5 Hz, plus a 2 ms burst every
//     10 ms at 25 dB above the noise (a hidden periodic transmitter).
//   - mixed sizes: 26 dB, K 6 dB, 3 Hz, 30 % of transmit opportunities
//     serve a queue of 52-byte TCP ACKs, the rest 1500-byte MSDUs.
func Scenarios(scale float64, seed uint64) []Scenario {
	st := scaled(6*time.Second, scale)
	wk := scaled(8*time.Second, scale)
	return []Scenario{
		{Name: "static close", Duration: st, Profile: []Point{{0, 40}}, KdB: 10, Doppler: 0.5, Bulk: 1500, Seed: seed},
		{Name: "static fringe", Duration: st, Profile: []Point{{0, 17}}, KdB: 6, Doppler: 0.5, Bulk: 1500, Seed: seed + 1},
		{Name: "walk-away", Duration: wk, Profile: walk(2, 2+1.4*wk.Seconds(), 40, wk), KdB: 3, Doppler: 24, Bulk: 1500, Seed: seed + 2},
		{Name: "walk-back", Duration: wk, Profile: walk(2+1.4*wk.Seconds(), 2, 40, wk), KdB: 3, Doppler: 24, Bulk: 1500, Seed: seed + 3},
		{Name: "periodic interference", Duration: st, Profile: []Point{{0, 30}}, KdB: 6, Doppler: 0.5,
			Period: 10 * time.Millisecond, Burst: 2 * time.Millisecond, INRdB: 25, Bulk: 1500, Seed: seed + 4},
		{Name: "mixed sizes", Duration: st, Profile: []Point{{0, 26}}, KdB: 6, Doppler: 3, Bulk: 1500, Small: 52, SmallFrac: 0.3, Seed: seed + 5},
	}
}
