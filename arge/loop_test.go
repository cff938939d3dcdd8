package arge_test

import (
	"testing"

	"github.com/gowrt/gowrt/arge"
)

func TestLoopbackBasic(t *testing.T) {
	for _, rev := range []uint32{revAR7161, revAR9344} {
		r := newRig(t, rigOpts{rev: rev, seed: 1})
		const n = 300
		sizes := []int{60, 64, 127, 512, 1514}
		sent := 0
		for i := 0; i < n; i++ {
			f := frame(sizes[i%len(sizes)], uint32(i))
			for {
				err := r.drv.TransmitFrame(f, uint64(i))
				if err == nil {
					break
				}
				if !r.pump(1, func() bool { return false }) && r.drv.TXQueued() == 0 {
					t.Fatal(err)
				}
			}
			sent++
			if i%16 == 15 {
				r.pump(1, func() bool { return false })
			}
		}
		if !r.pump(2000, func() bool { return r.rxN == n && r.doneN == n }) {
			t.Fatalf("%#x: received %d sent %d done %d; model %+v drv %+v", rev, r.rxN, sent, r.doneN, r.mac.Snapshot(), &r.drv.Stats)
		}
		for i, f := range r.got {
			if err := checkFrame(f, sizes[i%len(sizes)], uint32(i)); err != nil {
				t.Fatalf("%#x: %v", rev, err)
			}
		}
		if got := arge.RXBuffersOwnedByHardware(r.drv); got != 256 {
			t.Fatalf("%d RX buffers with the hardware, want 256", got)
		}
	}
}
