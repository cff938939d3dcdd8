package dnsfwd

import "testing"

// TestNameEqualFold: ASCII letters match across case, nothing else does
// (RFC 4343 §3), including bytes that bytes.EqualFold takes for equal.
func TestNameEqualFold(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"\x07Example\x03COM\x00", "\x07example\x03com\x00", true},
		{"router.lan.", "ROUTER.LAN.", true},
		{"a.b.", "a.c.", false},
		{"ab", "abc", false},
		{"", "", true},
		{"\x80", "\x81", false}, // not UTF-8: bytes.EqualFold says equal
		{"\xc4", "\xe4", false}, // Latin-1 Ä and ä: not ASCII
		{"[", "{", false},       // 0x5b and 0x7b differ by the case bit but are not letters
		{"@", "`", false},       // 0x40 and 0x60 likewise
		{"\x01Z\x00", "\x01z\x00", true},
	} {
		if got := NameEqualFold([]byte(c.a), []byte(c.b)); got != c.want {
			t.Errorf("NameEqualFold(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
