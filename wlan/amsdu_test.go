package wlan

import (
	"bytes"
	"github.com/gowrt/gowrt/internal/testutil"
	"testing"
)

// Two subframes (802.11-2016 9.3.2.2.2): the first padded to 4 bytes, the
// last not.
const amsduHex = `
02 00 00 00 00 03  // subframe 1 DA
02 00 00 00 00 02  // subframe 1 SA
00 03              // length 3 (big-endian)
aa bb cc           // MSDU
00 00 00           // padding: 14 + 3 = 17 bytes, to 20
02 00 00 00 00 02  // subframe 2 DA
02 00 00 00 00 03  // subframe 2 SA
00 02              // length 2
dd ee              // MSDU, last: no padding
`

func TestAMSDUVector(t *testing.T) {
	raw := testutil.Unhex(t, amsduHex)
	prefix := []byte{9, 9, 9} // a header before the A-MSDU: padding counts from start
	out := AppendAMSDUSubframe(prefix, len(prefix), lanMAC, staMAC, []byte{0xaa, 0xbb, 0xcc})
	out = AppendAMSDUSubframe(out, len(prefix), staMAC, lanMAC, []byte{0xdd, 0xee})
	if !bytes.Equal(out[len(prefix):], raw) {
		t.Fatalf("built\n%x\nwant\n%x", out[len(prefix):], raw)
	}
	r := NewAMSDUReader(raw)
	s1, ok1 := r.Next()
	s2, ok2 := r.Next()
	_, ok3 := r.Next()
	if !ok1 || !ok2 || ok3 || r.Err() != nil {
		t.Fatalf("walk: %v %v %v %v", ok1, ok2, ok3, r.Err())
	}
	if s1.DA != lanMAC || s1.SA != staMAC || !bytes.Equal(s1.MSDU, []byte{0xaa, 0xbb, 0xcc}) ||
		s2.DA != staMAC || s2.SA != lanMAC || !bytes.Equal(s2.MSDU, []byte{0xdd, 0xee}) {
		t.Fatalf("subframes %+v %+v", s1, s2)
	}
	// A padded last subframe is tolerated.
	padded := AppendAMSDUSubframe(nil, 0, lanMAC, staMAC, []byte{1, 2, 3})
	padded = AppendAMSDUSubframe(padded, 0, lanMAC, staMAC, []byte{4, 5, 6})
	padded = append(padded, 0, 0, 0) // 37 bytes padded to 40
	r = NewAMSDUReader(padded)
	n := 0
	for _, ok := r.Next(); ok; _, ok = r.Next() {
		n++
	}
	if n != 2 || r.Err() != nil {
		t.Fatalf("padded: %d subframes, %v", n, r.Err())
	}
}

func TestAMSDUMalformed(t *testing.T) {
	raw := testutil.Unhex(t, amsduHex)
	cases := []struct {
		name  string
		b     []byte
		whole int // subframes returned before the error
		err   error
	}{
		{"header cut", raw[:10], 0, ErrAMSDUTruncated},
		{"msdu cut", raw[:16], 0, ErrAMSDUTruncated},
		{"second cut", raw[:len(raw)-1], 1, ErrAMSDUTruncated},
		{"second header cut", raw[:25], 1, ErrAMSDUTruncated},
		{"padding cut", raw[:18], 1, ErrAMSDUPadding},
		{"length too big", append(append([]byte(nil), raw[:12]...), 0x09, 0x01), 0, ErrAMSDULength}, // 2305
	}
	for _, c := range cases {
		r := NewAMSDUReader(c.b)
		n := 0
		for _, ok := r.Next(); ok; _, ok = r.Next() {
			n++
		}
		if n != c.whole || r.Err() != c.err {
			t.Errorf("%s: %d subframes, %v; want %d, %v", c.name, n, r.Err(), c.whole, c.err)
		}
	}
}
