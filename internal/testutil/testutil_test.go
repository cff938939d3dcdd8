package testutil

import (
	"bytes"
	"testing"
)

func TestUnhex(t *testing.T) {
	got := Unhex(t, "80 00 // frame control\n 3a 01\n")
	if !bytes.Equal(got, []byte{0x80, 0x00, 0x3a, 0x01}) {
		t.Fatalf("% x", got)
	}
}
