package gather

import (
	"bytes"
	"testing"
)

type txBuf [][]byte

func (t txBuf) Segments() [][]byte { return t }
func (t txBuf) Len() int {
	n := 0
	for _, s := range t {
		n += len(s)
	}
	return n
}
func (t txBuf) Release() {}

func TestFlat(t *testing.T) {
	buf := make([]byte, 8)
	one := []byte("abcdefghij")
	if got, ok := Flat(txBuf{one}, make([]byte, 16)); !ok || &got[0] != &one[0] {
		t.Errorf("one segment: %q %v, want it as it is", got, ok)
	}
	got, ok := Flat(txBuf{[]byte("abc"), nil, []byte("de"), []byte("f")}, buf)
	if !ok || !bytes.Equal(got, []byte("abcdef")) || &got[0] != &buf[0] {
		t.Errorf("segments: %q %v, want abcdef in buf", got, ok)
	}
	if _, ok := Flat(txBuf{[]byte("abcde"), []byte("fghi")}, buf); ok {
		t.Error("9 octets fit in 8")
	}
	if _, ok := Flat(txBuf{one}, buf); ok {
		t.Error("a single 10-octet segment fits in 8")
	}
}
