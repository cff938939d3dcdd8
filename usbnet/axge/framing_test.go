package axge

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"strings"
	"testing"
	"unsafe"

	gnet "github.com/gowrt/gowrt/net"
)

// aggVector is a bulk-in transfer built by hand from the layout in
// Linux's ax88179_rx_fixup comment: a 16-byte frame at 0, a 20-byte frame
// at 16 (padded to 24), the header array at 40 with a zero-length DROP
// dummy after each real header, 4 bytes of padding, and rx_hdr = count 4,
// offset 40.
const aggVector = "" +
	"000102030405060708090a0b0c0d0e0f" + // frame 0 (16)
	"101112131415161718191a1b1c1d1e1f20212223" + "00000000" + // frame 1 (20) + pad to 24
	"00081000" + "00000080" + // hdr 0: len 16, RX_GOOD; dummy: len 0, DROP
	"00081400" + "00000080" + // hdr 1: len 20, RX_GOOD; dummy
	"00000000" + // pad so rx_hdr ends 8-aligned
	"04002800" // rx_hdr: count 4, offset 0x28

func decodeAll(f *Framing, xfer []byte) (frames [][]byte, dropped int, reason gnet.DropReason) {
	dropped, reason = f.DecodeRx(xfer, func(fr []byte) { frames = append(frames, append([]byte(nil), fr...)) })
	return
}

func TestDecodeRxVector(t *testing.T) {
	xfer, err := hex.DecodeString(aggVector)
	if err != nil || len(xfer) != 64 {
		t.Fatalf("vector: %v, %d bytes", err, len(xfer))
	}
	var f Framing
	frames, dropped, _ := decodeAll(&f, xfer)
	if dropped != 0 || len(frames) != 2 {
		t.Fatalf("got %d frames, %d dropped; want 2, 0", len(frames), dropped)
	}
	if !bytes.Equal(frames[0], xfer[0:16]) || !bytes.Equal(frames[1], xfer[16:36]) {
		t.Fatalf("frames %x %x", frames[0], frames[1])
	}
	if f.Stats.Dummies.Load() != 2 {
		t.Errorf("dummies %d, want 2", f.Stats.Dummies.Load())
	}
}

// aggregate builds a transfer the way the chip does (the model has its
// own encoder; this one is the test's, written from the same layout).
func aggregate(frames [][]byte, hdrBits []uint32, dummies bool) []byte {
	var b []byte
	var hdrs []uint32
	for i, fr := range frames {
		b = append(b, fr...)
		for len(b)%8 != 0 {
			b = append(b, 0)
		}
		h := uint32(len(fr))<<16 | 0x800
		if hdrBits != nil {
			h |= hdrBits[i]
		}
		hdrs = append(hdrs, h)
		if dummies {
			hdrs = append(hdrs, pktDrop)
		}
	}
	off := len(b)
	for _, h := range hdrs {
		b = binary.LittleEndian.AppendUint32(b, h)
	}
	return binary.LittleEndian.AppendUint32(b, uint32(off)<<16|uint32(len(hdrs)))
}

func frameOf(n int, seed byte) []byte {
	fr := make([]byte, n)
	for i := range fr {
		fr[i] = seed + byte(i)
	}
	return fr
}

func TestDecodeRxErrorsAndBounds(t *testing.T) {
	good := [][]byte{frameOf(60, 1), frameOf(1514, 2), frameOf(64, 3)}
	tests := []struct {
		name    string
		xfer    func() []byte
		frames  int
		dropped int
		reason  gnet.DropReason
	}{
		{"three good", func() []byte { return aggregate(good, nil, true) }, 3, 0, 0},
		{"crc error", func() []byte { return aggregate(good, []uint32{0, pktCRCErr, 0}, false) }, 2, 1, gnet.DropRxErrors},
		{"mii error", func() []byte { return aggregate(good, []uint32{pktMIIErr, 0, 0}, false) }, 2, 1, gnet.DropRxErrors},
		{"drop bit with data", func() []byte { return aggregate(good, []uint32{0, 0, pktDrop}, false) }, 2, 1, gnet.DropRxErrors},
		{"undersize", func() []byte { return aggregate([][]byte{frameOf(10, 0), frameOf(60, 0)}, nil, false) }, 1, 1, gnet.DropRxUndersize},
		{"oversize", func() []byte { return aggregate([][]byte{frameOf(2100, 0)}, nil, false) }, 0, 1, gnet.DropRxOversize},
		{"empty", func() []byte { return nil }, 0, 0, 0},
		{"too short for rx_hdr", func() []byte { return []byte{1, 2} }, 0, 1, gnet.DropRxBadDescriptor},
		{"offset past the end", func() []byte {
			b := aggregate(good, nil, false)
			binary.LittleEndian.PutUint32(b[len(b)-4:], 0xFFFF0001)
			return b
		}, 0, 1, gnet.DropRxBadDescriptor},
		{"count past the end", func() []byte {
			b := aggregate(good, nil, false)
			v := binary.LittleEndian.Uint32(b[len(b)-4:])
			binary.LittleEndian.PutUint32(b[len(b)-4:], v&0xFFFF0000|0xFFFF)
			return b
		}, 0, 1, gnet.DropRxBadDescriptor},
		{"frame runs into the headers", func() []byte {
			b := aggregate(good, nil, false)
			off := int(binary.LittleEndian.Uint32(b[len(b)-4:]) >> 16)
			// second frame claims 8000 bytes: it and the third are lost
			binary.LittleEndian.PutUint32(b[off+4:], 8000<<16|0x800)
			return b
		}, 1, 2, gnet.DropRxBadDescriptor},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var f Framing
			frames, dropped, reason := decodeAll(&f, tc.xfer())
			if len(frames) != tc.frames || dropped != tc.dropped || (dropped > 0 && reason != tc.reason) {
				t.Fatalf("got %d frames, %d dropped (%v); want %d, %d (%v)",
					len(frames), dropped, reason, tc.frames, tc.dropped, tc.reason)
			}
		})
	}
	// The good frames come back byte for byte.
	var f Framing
	frames, _, _ := decodeAll(&f, aggregate(good, nil, true))
	for i := range good {
		if !bytes.Equal(frames[i], good[i]) {
			t.Fatalf("frame %d differs", i)
		}
	}
}

func TestEncodeTx(t *testing.T) {
	var f Framing
	dst := make([]byte, 2048+f.TxOverhead())
	for _, tc := range []struct {
		n, mps  int
		wantLen int
		pad     bool
	}{
		{100, 512, 108, false},
		{504, 512, 513, true},   // 504 + 8 = 512
		{1016, 512, 1025, true}, // two packets exactly
		{56, 64, 65, true},      // full-speed bulk: 64-byte packets
		{1514, 512, 1522, false},
		{1528, 512, 1537, true}, // tagged jumbo-ish: 3 packets
	} {
		fr := frameOf(tc.n, 7)
		// split across two segments to exercise the gather copy
		l, flags, err := f.EncodeTx(dst, [][]byte{fr[:10], fr[10:]}, tc.n, tc.mps)
		if err != nil || flags != 0 || l != tc.wantLen {
			t.Fatalf("n=%d mps=%d: len %d flags %v err %v; want %d", tc.n, tc.mps, l, flags, err, tc.wantLen)
		}
		w0 := binary.LittleEndian.Uint32(dst[0:])
		w1 := binary.LittleEndian.Uint32(dst[4:])
		if w0 != uint32(tc.n) {
			t.Errorf("n=%d: word0 %#x", tc.n, w0)
		}
		if tc.pad != (w1 == txPadding) || (!tc.pad && w1 != 0) {
			t.Errorf("n=%d mps=%d: word1 %#x, pad %v", tc.n, tc.mps, w1, tc.pad)
		}
		if l%tc.mps == 0 {
			t.Errorf("n=%d: transfer of %d ends on a packet boundary", tc.n, l)
		}
		if !bytes.Equal(dst[8:8+tc.n], fr) {
			t.Errorf("n=%d: payload differs", tc.n)
		}
	}
	for _, n := range []int{0, 13, 2049} {
		if _, _, err := f.EncodeTx(dst, [][]byte{make([]byte, n)}, n, 512); err == nil {
			t.Errorf("n=%d accepted", n)
		}
	}
	if _, _, err := f.EncodeTx(dst[:100], [][]byte{make([]byte, 100)}, 100, 512); err == nil {
		t.Error("short dst accepted")
	}
	if _, _, err := f.EncodeTx(dst, [][]byte{make([]byte, 100)}, 90, 512); err == nil {
		t.Error("segments longer than n accepted")
	}
	if _, _, err := f.EncodeTx(dst, [][]byte{make([]byte, 80)}, 90, 512); err == nil {
		t.Error("segments shorter than n accepted")
	}
}

func TestFramingAllocs(t *testing.T) {
	var f Framing
	xfer := aggregate([][]byte{frameOf(60, 1), frameOf(1514, 2), frameOf(64, 3), frameOf(10, 4)}, nil, true)
	n := 0
	deliver := func([]byte) { n++ }
	if a := testing.AllocsPerRun(200, func() { f.DecodeRx(xfer, deliver) }); a != 0 {
		t.Errorf("DecodeRx: %v allocations per transfer", a)
	}
	dst := make([]byte, 2048+f.TxOverhead())
	fr := frameOf(504, 1)
	segs := [][]byte{fr}
	if a := testing.AllocsPerRun(200, func() { f.EncodeTx(dst, segs, len(fr), 512) }); a != 0 {
		t.Errorf("EncodeTx: %v allocations per frame", a)
	}
}

func BenchmarkDecodeRx(b *testing.B) {
	var fr [][]byte
	for i := 0; i < 14; i++ {
		fr = append(fr, frameOf(1514, byte(i)))
	}
	xfer := aggregate(fr, nil, true)
	var f Framing
	deliver := func([]byte) {}
	b.SetBytes(int64(len(xfer)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		f.DecodeRx(xfer, deliver)
	}
}

func BenchmarkEncodeTx(b *testing.B) {
	var f Framing
	dst := make([]byte, 2048+f.TxOverhead())
	fr := frameOf(1514, 1)
	segs := [][]byte{fr[:54], fr[54:]}
	b.SetBytes(1514)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		f.EncodeTx(dst, segs, len(fr), 512)
	}
}

// FuzzDecodeRx feeds arbitrary transfers: no panic, every delivered
// frame lies inside xfer before the header array, and no more frames
// come out than the trailer announced.
func FuzzDecodeRx(f *testing.F) {
	v, _ := hex.DecodeString(aggVector)
	f.Add(v)
	f.Add(aggregate([][]byte{frameOf(60, 1), frameOf(1514, 2)}, nil, true))
	f.Add(aggregate([][]byte{frameOf(60, 1)}, []uint32{pktCRCErr}, false))
	f.Add([]byte{})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Add([]byte(strings.Repeat("\x00", 8) + "\x00\x00\x3c\x00" + "\x01\x00\x08\x00"))
	f.Fuzz(func(t *testing.T, xfer []byte) {
		var fr Framing
		base := uintptr(unsafe.Pointer(unsafe.SliceData(xfer)))
		end := base + uintptr(len(xfer))
		n := 0
		dropped, _ := fr.DecodeRx(xfer, func(frame []byte) {
			n++
			p := uintptr(unsafe.Pointer(unsafe.SliceData(frame)))
			if len(frame) < minRxFrame || len(frame) > maxRxFrame || p < base || p+uintptr(len(frame)) > end-rxHdrLen {
				t.Fatalf("frame of %d bytes at %#x outside the transfer [%#x,%#x)", len(frame), p-base, 0, len(xfer))
			}
		})
		if len(xfer) >= rxHdrLen {
			count := int(binary.LittleEndian.Uint32(xfer[len(xfer)-4:]) & 0xFFFF)
			if n+dropped > count && dropped != 1 {
				t.Fatalf("%d frames + %d drops from a trailer announcing %d", n, dropped, count)
			}
		}
	})
}
