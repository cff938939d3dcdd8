package wlan

import (
	"bytes"
	"errors"
	"testing"
)

// TestMSDU: RFC 1042 encapsulation of an ARP payload, byte-exact, and
// bodies that are not one refused.
func TestMSDU(t *testing.T) {
	got := AppendMSDU([]byte{0xff}, 0x0806, []byte{1, 2})
	want := []byte{0xff, 0xaa, 0xaa, 0x03, 0x00, 0x00, 0x00, 0x08, 0x06, 1, 2}
	if !bytes.Equal(got, want) {
		t.Fatalf("% x", got)
	}
	et, p, err := ParseMSDU(got[1:])
	if err != nil || et != 0x0806 || !bytes.Equal(p, []byte{1, 2}) {
		t.Fatalf("%#x % x %v", et, p, err)
	}
	for _, bad := range [][]byte{nil, want[1:8], {0xaa, 0xaa, 0x03, 0x00, 0x00, 0xf8, 0x08, 0x06}} {
		if _, _, err := ParseMSDU(bad); !errors.Is(err, ErrMSDU) {
			t.Errorf("% x: %v", bad, err)
		}
	}
}
