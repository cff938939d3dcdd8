//go:build mips || mipsle

package mipsdma

import (
	"testing"
	"unsafe"
)

// TestHitLoopBounds: the cache loops' unrolled steps visit every line of
// [start, end) once and nothing outside it, for the line sizes they
// unroll for (16, 32) and one they do not (64), at every length up to
// past two of the largest step. hitProbe stores a zero at each line it
// visits where the cache loops would run a CACHE instruction.
func TestHitLoopBounds(t *testing.T) {
	mem := make([]byte, 4<<10+64)
	base := (uintptr(unsafe.Pointer(&mem[0])) + 63) &^ 63
	off := int(base - uintptr(unsafe.Pointer(&mem[0])))
	for _, line := range []int{16, 32, 64} {
		for first := 0; first < 3; first++ {
			for lines := 0; lines*line+first*line <= 2*256+3*line && (first+lines)*line <= 4<<10; lines++ {
				for i := range mem {
					mem[i] = 0xff
				}
				start := base + uintptr(first*line)
				hitProbe(start, start+uintptr(lines*line), uintptr(line))
				for i := range mem {
					a := i - off // offset from base
					in := a >= first*line && a < (first+lines)*line && (a-first*line)%line == 0
					if want := byte(0xff); in && mem[i] != 0 || !in && mem[i] != want {
						t.Fatalf("line %d, lines %d from line %d: byte %d (base%+d) is %#x", line, lines, first, i, a, mem[i])
					}
				}
			}
		}
	}
}
