package ar9300_test

import (
	"encoding/binary"
	"testing"

	"github.com/gowrt/gowrt/ath/ar9300"
)

// rxStatus builds a 48-byte RX status in the driver's (native) order.
func rxStatus(info, w2, w11 uint32) []byte {
	b := make([]byte, 48)
	binary.NativeEndian.PutUint32(b[0:], info)
	binary.NativeEndian.PutUint32(b[8:], w2)
	binary.NativeEndian.PutUint32(b[44:], w11)
	return b
}

func TestParseRxStatus(t *testing.T) {
	const id = 0x168c << 16
	for _, c := range []struct {
		name    string
		b       []byte
		buf     int
		wantErr error
	}{
		{"short", make([]byte, 47), 2048, ar9300.ErrBadStatus},
		{"not done", rxStatus(id, 100, 0), 2048, ar9300.ErrNotDone},
		{"foreign ID", rxStatus(0x1234<<16, 100, 3), 2048, ar9300.ErrBadStatus},
		{"TX status", rxStatus(id|0x8000, 100, 3), 2048, ar9300.ErrBadStatus},
		{"length past the buffer", rxStatus(id, 2001, 3), 2048, ar9300.ErrBadStatus},
		{"fits exactly", rxStatus(id, 2000, 3), 2048, nil},
		{"tiny buffer", rxStatus(id, 0, 3), 10, ar9300.ErrBadStatus},
	} {
		d, err := ar9300.ParseRxStatus(c.b, c.buf)
		if err != c.wantErr {
			t.Errorf("%s: err %v, want %v", c.name, err, c.wantErr)
		}
		if err == nil && (d.DataLen != 2000 || !d.FrameOK) {
			t.Errorf("%s: %+v", c.name, d)
		}
	}
	// Key index, decrypt flags, aggregate marks.
	d, err := ar9300.ParseRxStatus(rxStatus(id, 50, 1|0x100|37<<9|0x00020000|0x00010000|0x20000000), 2048)
	if err != nil || !d.KeyValid || d.KeyIdx != 37 || !d.Aggr || !d.MoreAggr || !d.FirstAggr || d.FrameOK {
		t.Fatalf("%+v %v", d, err)
	}
}

func FuzzParseRxStatus(f *testing.F) {
	f.Add(rxStatus(0x168c<<16, 100, 3), 2048)
	f.Add(rxStatus(0x168c<<16, 4095, 0xffffffff), 4095)
	f.Add(make([]byte, 48), 0)
	f.Add([]byte{1, 2, 3}, -5)
	f.Fuzz(func(t *testing.T, b []byte, bufLen int) {
		d, err := ar9300.ParseRxStatus(b, bufLen)
		if err != nil {
			return
		}
		if d.DataLen < 0 || d.DataLen > bufLen-48 || len(b) < 48 {
			t.Fatalf("accepted length %d for a %d-byte buffer", d.DataLen, bufLen)
		}
	})
}

func FuzzParseTxStatus(f *testing.F) {
	seed := func(w [9]uint32) []byte {
		b := make([]byte, 36)
		for i, v := range w {
			binary.LittleEndian.PutUint32(b[4*i:], v)
		}
		return b
	}
	f.Add(seed([9]uint32{0x168c<<16 | 0x8000 | 1<<8 | 9, 7 << 16, 0x40000000, 1, 0, 0xff, 0, 0, 1 | 5<<1}))
	f.Add(seed([9]uint32{}))
	f.Add(seed([9]uint32{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0, 0, 0, 0, 0xffffffff}))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < 36 {
			return
		}
		var w [9]uint32
		for i := range w {
			w[i] = binary.LittleEndian.Uint32(b[4*i:])
		}
		e, err := ar9300.ParseTxStatus(&w)
		if err != nil {
			return
		}
		if e.QCU < 0 || e.QCU >= 10 || e.Final > 3 || e.LongTries > 15 {
			t.Fatalf("accepted %+v", e)
		}
	})
}
