//go:build mips || mipsle

package eth

import "testing"

func TestRxRingFor(t *testing.T) {
	for _, c := range []struct {
		ram  uint32
		want int
	}{
		{0, 256},        // unknown: as before
		{16 << 20, 128}, // the 16 MiB board
		{20 << 20, 128},
		{32<<20 - 4096, 128},
		{32 << 20, 256},
		{128 << 20, 256},
	} {
		if got := rxRingFor(c.ram); got != c.want {
			t.Errorf("rxRingFor(%d MiB) = %d, want %d", c.ram>>20, got, c.want)
		}
	}
}
