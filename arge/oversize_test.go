package arge_test

import (
	"errors"
	"testing"

	"github.com/gowrt/gowrt/arge"
	"github.com/gowrt/gowrt/arge/argesim"
	gnet "github.com/gowrt/gowrt/net"
)

// TestRXFrameSizeLimit: the largest frame MAX_FRAME_LEN lets through
// (1532 bytes, 1536 with its FCS) fits an RX buffer and is received
// intact; every longer one is dropped by the MAC and counted, from its
// MIB, in Stats.RxOversize, however long it is.
func TestRXFrameSizeLimit(t *testing.T) {
	r := newRig(t, rigOpts{seed: 3, fastLink: true})
	if got, want := r.drv.RXBufferLen(), arge.MaxFrameLen; got < want {
		t.Fatalf("RX buffers offer %d bytes, less than MAX_FRAME_LEN %d", got, want)
	}
	if err := r.mac.Deliver(frame(arge.MaxFrameLen-4, 1)); err != nil {
		t.Fatalf("largest frame refused: %v", err)
	}
	if !r.pump(100, func() bool { return r.rxN == 1 }) {
		t.Fatal("largest frame not received")
	}
	if err := checkFrame(r.got[0], arge.MaxFrameLen-4, 1); err != nil {
		t.Fatal(err)
	}
	sizes := []int{arge.MaxFrameLen - 3, 1600, 2044, 2045, 9000}
	for i, n := range sizes {
		if err := r.mac.Deliver(frame(n, uint32(10+i))); !errors.Is(err, argesim.ErrTooLong) {
			t.Fatalf("%d-byte frame: %v, want ErrTooLong", n, err)
		}
	}
	r.pump(20, func() bool { return false })
	r.drv.UpdateMIB()
	st := &r.drv.Stats
	if st.RxOversize.Load() != uint64(len(sizes)) || r.rxN != 1 || st.RxBad.Load() != 0 {
		t.Fatalf("oversize %d (want %d), received %d (want 1), bad descriptors %d",
			st.RxOversize.Load(), len(sizes), r.rxN, st.RxBad.Load())
	}
}

// TestMIBWrap: the 12-bit MIB drop counters wrap; UpdateMIB called often
// enough counts every drop, and a MAC reset (Start) does not turn into a
// bogus count.
func TestMIBWrap(t *testing.T) {
	r := newRig(t, rigOpts{seed: 4, fastLink: true})
	big := frame(2000, 0)
	const total = 10000
	for i := 1; i <= total; i++ {
		_ = r.mac.Deliver(big)
		if i%3000 == 0 {
			r.drv.UpdateMIB()
		}
	}
	r.drv.UpdateMIB()
	if got := r.drv.Stats.RxOversize.Load(); got != total {
		t.Fatalf("counted %d oversize frames, want %d", got, total)
	}
	if err := r.drv.Stop(); err != nil {
		t.Fatal(err)
	}
	_ = r.mac.Deliver(big) // the MAC still counts while the driver is stopped
	if err := r.drv.Start(); err != nil {
		t.Fatal(err)
	}
	if err := r.drv.SetLink(gnet.LinkState{Up: true, SpeedMbps: 1000, FullDuplex: true}); err != nil {
		t.Fatal(err)
	}
	_ = r.mac.Deliver(big)
	r.drv.UpdateMIB()
	if got := r.drv.Stats.RxOversize.Load(); got != total+2 {
		t.Fatalf("after a restart: %d oversize frames, want %d", got, total+2)
	}
}
