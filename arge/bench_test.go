package arge_test

import (
	"errors"
	"testing"

	"github.com/gowrt/gowrt/arge"
)

// benchTXRX pushes b.N frames of size bytes through driver TX → MAC model
// (DMA engines, DDR write buffer, cache model) → looped-back wire → model
// RX → driver RX, polling with the default budget. The driver copies no
// packet bytes: TX buffers are mapped in place and RX frames are lent in
// place; the model's DMA moves the bytes as the hardware would.
func benchTXRX(b *testing.B, size int) {
	r := newRig(b, rigOpts{seed: 1, fastLink: true})
	r.keep, r.noTokens = false, true
	const slots = 64
	stride := (size + 31) &^ 31
	pool, _, err := r.sys.Mem.AllocCached("bench", slots*stride, 32)
	if err != nil {
		b.Fatal(err)
	}
	frames := make([][]byte, slots)
	for i := range frames {
		frames[i] = pool[i*stride : i*stride+size]
		copy(frames[i], frame(size, uint32(i)))
	}
	// Warm up: every ring slot, map and model buffer used once.
	run := func(n int) {
		start := r.rxN
		for i := 0; i < n; i++ {
			for {
				err := r.drv.TransmitFrame(frames[i%slots], uint64(i))
				if err == nil {
					break
				}
				if !errors.Is(err, arge.ErrRingFull) {
					b.Fatal(err)
				}
				r.sys.Sched.Settle(64)
				r.drv.Service(0)
			}
			if i%32 == 31 {
				r.sys.Sched.Settle(64)
				r.drv.Service(0)
			}
		}
		for r.rxN-start < n {
			r.sys.Sched.Settle(64)
			r.drv.Service(0)
		}
	}
	run(1024)
	bounced0 := r.drv.Stats.TxBounced.Load()
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	run(b.N)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "frames/s")
	// The driver's only possible packet copy is a TX bounce (busdma);
	// measured, not assumed. RX frames are lent in place.
	st := &r.drv.Stats
	b.ReportMetric(float64(st.TxBounced.Load()-bounced0)/float64(b.N), "txbounces/op")
	if bad := st.RxBad.Load(); bad != 0 {
		b.Fatalf("%d bad RX descriptors", bad)
	}
}

func BenchmarkTXRX64(b *testing.B)   { benchTXRX(b, 64) }
func BenchmarkTXRX512(b *testing.B)  { benchTXRX(b, 512) }
func BenchmarkTXRX1514(b *testing.B) { benchTXRX(b, 1514) }

// The baseline: one plain copy of the same bytes per frame, measured in
// the same run.
func benchCopy(b *testing.B, size int) {
	src, dst := make([]byte, size), make([]byte, size)
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		copy(dst, src)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "frames/s")
}

func BenchmarkTXRXBaselineCopy64(b *testing.B)   { benchCopy(b, 64) }
func BenchmarkTXRXBaselineCopy512(b *testing.B)  { benchCopy(b, 512) }
func BenchmarkTXRXBaselineCopy1514(b *testing.B) { benchCopy(b, 1514) }
