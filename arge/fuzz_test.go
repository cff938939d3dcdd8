package arge_test

import (
	"encoding/binary"
	"testing"

	"github.com/gowrt/gowrt/arge"
	"github.com/gowrt/gowrt/barrier"
	"github.com/gowrt/gowrt/hwsim"
)

const fuzzRing = 8

// rxHostile writes ctrl words into the RX descriptors as a hostile
// device would (EMPTY cleared, any length and flags), runs one service
// pass and checks the driver's invariants: nothing delivered outside its
// buffer, every bad descriptor counted, every buffer handed back.
func rxHostile(t *testing.T, ctrls []uint32) (good, bad uint64) {
	t.Helper()
	r := newRig(t, rigOpts{seed: 1, rxRing: fuzzRing, txRing: 16, fastLink: true, txBounce: 1,
		hw: hwsim.Config{NoPostedWrites: true, NoStaleReads: true, NoEviction: true}})
	r.keep = false
	maxLen := r.drv.RXBufferLen() - 4
	var delivered int
	r.onRecv = func(f []byte) {
		delivered++
		if len(f) < 14 || len(f) > maxLen {
			t.Fatalf("delivered a %d-byte frame", len(f))
		}
		if cap(f) != len(f) {
			t.Fatalf("frame slice has capacity %d beyond its %d bytes", cap(f), len(f))
		}
	}
	r.regs.Barrier()
	base := uint64(r.regs.Read32(arge.RegRXDesc))
	if len(ctrls) > fuzzRing {
		ctrls = ctrls[:fuzzRing]
	}
	consumed := 0
	r.sys.Do(func() {
		for i, c := range ctrls {
			c &^= arge.DescEmpty // the device hands the descriptor back
			_ = r.sys.Mem.DevStore32(base+uint64(i*arge.DescSize+arge.DescCtrl), c, barrier.Native)
		}
	})
	consumed = len(ctrls)
	st := &r.drv.Stats
	goodBefore, badBefore := st.RxFrames.Load(), st.RxBad.Load()
	r.drv.Service(0)
	good, bad = st.RxFrames.Load()-goodBefore, st.RxBad.Load()-badBefore
	if int(good+bad) != consumed || int(good) != delivered {
		t.Fatalf("%d descriptors: %d good (%d delivered) + %d bad", consumed, good, delivered, bad)
	}
	if got := arge.RXBuffersOwnedByHardware(r.drv); got != fuzzRing {
		t.Fatalf("%d of %d buffers back with the hardware", got, fuzzRing)
	}
	return good, bad
}

func TestRXBadDescriptors(t *testing.T) {
	// The rig's AR9344 writes at offset 2 into 32-byte-line buffers that
	// hold MAX_FRAME_LEN: 2 + 1536 rounds up to 1568, less the offset,
	// in whole words.
	rxLen := uint32(1568-2) &^ 3
	cases := []struct {
		ctrl uint32
		good bool
	}{
		{64, true},
		{0, false},
		{3, false},
		{17, false},   // shorter than header + FCS
		{18, true},    // header + FCS: an empty payload is still a frame
		{rxLen, true}, // exactly the buffer
		{rxLen + 1, false},
		{0xFFF, false},
		{0x3FFF, false},
		{arge.DescMore | 64, false}, // RX never chains
		{1<<30 | 64, false},         // unknown flag
	}
	for _, c := range cases {
		good, bad := rxHostile(t, []uint32{c.ctrl})
		if (good == 1) != c.good || good+bad != 1 {
			t.Errorf("ctrl %#x: good %d bad %d, want good=%v", c.ctrl, good, bad, c.good)
		}
	}
}

func FuzzRXCompletion(f *testing.F) {
	seed := func(ws ...uint32) []byte {
		b := make([]byte, 4*len(ws))
		for i, w := range ws {
			binary.BigEndian.PutUint32(b[4*i:], w)
		}
		return b
	}
	f.Add(seed(64))
	f.Add(seed(0, 0xFFFFFFFF, 18, 1534))
	f.Add(seed(arge.DescMore|100, 1<<30|64, 0x3FFF, 17, 1532, 1533, 60, 1518))
	f.Fuzz(func(t *testing.T, data []byte) {
		var ctrls []uint32
		for len(data) >= 4 && len(ctrls) < fuzzRing {
			ctrls = append(ctrls, binary.BigEndian.Uint32(data))
			data = data[4:]
		}
		rxHostile(t, ctrls)
	})
}
