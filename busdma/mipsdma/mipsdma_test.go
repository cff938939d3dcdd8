package mipsdma

import (
	"encoding/binary"
	"testing"

	"github.com/gowrt/gowrt/barrier"
)

// Config1 decoding: line = 2^(DL+1), DL in bits 12:10. QEMU malta's
// default 24Kf reports Config1 0x9E190C8F (QEMU target/mips/cpu-defs.c.inc)
// with DL=3: 16-byte lines; AR71xx 24Kc boards report 32-byte lines (DL=4).
func TestLineSizeFromConfig1(t *testing.T) {
	for _, c := range []struct {
		c1   uint32
		want int
	}{
		{0x9E190C8F, 16}, {4 << 10, 32}, {5 << 10, 64}, {1 << 10, 4}, {0, 0}, {7 << 10, 0},
	} {
		if got := LineSizeFromConfig1(c.c1); got != c.want {
			t.Errorf("Config1 %#x: line %d, want %d", c.c1, got, c.want)
		}
	}
}

// The span must cover every byte of the buffer, start and end on line
// boundaries, and cover no more than one extra line at each edge.
func TestLineSpan(t *testing.T) {
	for _, c := range []struct {
		va    uintptr
		n     int
		start uintptr
		end   uintptr
	}{
		{0x1000, 32, 0x1000, 0x1020},
		{0x1002, 32, 0x1000, 0x1040},
		{0x101f, 1, 0x1000, 0x1020},
		{0x1020, 1500, 0x1020, 0x1600},
	} {
		s, e := lineSpan(c.va, c.n, 32)
		if s != c.start || e != c.end {
			t.Errorf("lineSpan(%#x, %d) = [%#x,%#x), want [%#x,%#x)", c.va, c.n, s, e, c.start, c.end)
		}
	}
}

// TestSwaps: coherent memory's words (CoherentWords) are swapped exactly
// when the memory's byte order is not the CPU's (run on qemu-mips too).
func TestSwaps(t *testing.T) {
	var b [4]byte
	binary.NativeEndian.PutUint32(b[:], 0x01020304)
	big := b[0] == 1
	for o, want := range map[barrier.Order]bool{barrier.Native: false, barrier.LittleEndian: big, barrier.BigEndian: !big} {
		if swaps(o) != want {
			t.Errorf("swaps(%v) = %v on a big=%v CPU", o, !want, big)
		}
	}
}
