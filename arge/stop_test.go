package arge_test

import (
	"errors"
	"testing"

	"github.com/gowrt/gowrt/arge"
)

// TestHazardInterruptAfterStop: neither an interrupt handled after (or
// while) Stop runs nor a transmit from a stack that has not heard of the
// Stop may restart an engine whose descriptor pointer Stop cleared; the
// model reports a DMA from address 0 if one does (the rig fails on any
// misuse). Frames keep arriving on the wire meanwhile. Found by running the
// router in sim mode: gVisor sent its last frames during shutdown.
func TestHazardInterruptAfterStop(t *testing.T) {
	for seed := uint64(0); seed < 50; seed++ {
		r := newRig(t, rigOpts{seed: seed, fastLink: true, rxRing: 4})
		// Overflow the receiver so that Service's recovery path has work.
		for i := 0; i < 12; i++ {
			r.mac.Deliver(frame(64, uint32(i)))
		}
		r.sys.Sched.Settle(16)
		if err := r.drv.Stop(); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 4; i++ {
			r.mac.Deliver(frame(64, uint32(100+i)))
			r.drv.Interrupt()
			r.drv.Service(0)
			// A stack that has not heard of the Stop yet still sends.
			if err := r.drv.TransmitFrame(frame(64, uint32(200+i)), uint64(200+i)); !errors.Is(err, arge.ErrStopped) {
				t.Fatalf("seed %d: Transmit after Stop: %v, want ErrStopped", seed, err)
			}
			r.sys.Sched.Settle(16)
		}
		if r.regs.Read32(arge.RegRXCtrl)&arge.RXCtrlEnable != 0 {
			t.Fatalf("seed %d: receiver re-enabled after Stop", seed)
		}
	}
}
