package image

import (
	"slices"
	"testing"
)

// TestGoFlags: a caller's -tags joins the board's instead of replacing it.
func TestGoFlags(t *testing.T) {
	b := RouterBoard("tl-wdr4300", "")
	for _, tc := range []struct{ in, want []string }{
		{nil, []string{"-tags", "gowrt_ar71xx"}},
		{[]string{"-race"}, []string{"-tags", "gowrt_ar71xx", "-race"}},
		{[]string{"-tags", "a,b", "-v"}, []string{"-tags", "gowrt_ar71xx,a,b", "-v"}},
		{[]string{"-tags=a b"}, []string{"-tags", "gowrt_ar71xx,a,b"}},
	} {
		if got := b.GoFlags(tc.in...); !slices.Equal(got, tc.want) {
			t.Errorf("%q: %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := Boards["malta-be"].GoFlags("-tags", "x"); !slices.Equal(got, []string{"-tags", "x"}) {
		t.Errorf("malta: %q", got)
	}
}
