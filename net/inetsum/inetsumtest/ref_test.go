package inetsumtest

import "testing"

// TestSumRFC1071: the worked example of RFC 1071, section 3 (bytes 00 01
// f2 03 f4 f5 f6 f7 sum to ddf2), whole and cut at an odd byte.
func TestSumRFC1071(t *testing.T) {
	b := []byte{0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7}
	if got := Sum(b); got != 0xddf2 {
		t.Fatalf("sum %#04x, want 0xddf2", got)
	}
	if got := Sum(b[:3], b[3:]); got != 0xddf2 {
		t.Fatalf("cut at 3: sum %#04x, want 0xddf2", got)
	}
}
