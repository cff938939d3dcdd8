package ar71xx_test

import (
	"testing"

	"github.com/gowrt/gowrt/soc/ar71xx"
	"github.com/gowrt/gowrt/soc/ar71xx/ar71xxsim"
)

// bootFlash is a boot flash image: a boot loader and an environment with
// a MAC address.
func bootFlash(mac byte) []byte {
	f := make([]byte, 128<<10)
	for i := range f {
		f[i] = byte(i*7 + i>>8)
	}
	copy(f[0xF000:], "ethaddr=00:03:7f:00:00:")
	f[0xF017] = mac
	return f
}

func seedOf(t *testing.T, hwSeed uint64, rev uint32, flash []byte, in [32]byte) [32]byte {
	t.Helper()
	_, s := newSoC(t, hwSeed, ar71xxsim.Config{Rev: rev, Flash: flash})
	buf := in
	ar71xx.Seed(s.Phys(), &buf)
	return buf
}

// TestSeedDiffers: Seed against the models gives a different seed for
// every difference in what it reads — the timing jitter (the models'
// seeds), the chip, one byte of flash, the loader's seed — and the same
// seed for the same inputs (it is a function of them, nothing else).
func TestSeedDiffers(t *testing.T) {
	var zero [32]byte
	base := seedOf(t, 1, revAR7161, bootFlash(1), zero)
	seen := map[[32]byte]string{base: "base"}
	for name, got := range map[string][32]byte{
		"other timing (model seed 2)": seedOf(t, 2, revAR7161, bootFlash(1), zero),
		"other timing (model seed 3)": seedOf(t, 3, revAR7161, bootFlash(1), zero),
		"other chip":                  seedOf(t, 1, revAR9344, bootFlash(1), zero),
		"other MAC in flash":          seedOf(t, 1, revAR7161, bootFlash(2), zero),
		"no flash":                    seedOf(t, 1, revAR7161, nil, zero),
		"a loader seed":               seedOf(t, 1, revAR7161, bootFlash(1), [32]byte{31: 1}),
	} {
		if prev, dup := seen[got]; dup {
			t.Errorf("%s: the same seed as %s: %x", name, prev, got)
		}
		seen[got] = name
	}
	if again := seedOf(t, 1, revAR7161, bootFlash(1), zero); again != base {
		t.Errorf("same inputs, different seeds: %x, %x", base, again)
	}
	// Nothing constant: every word is mixed.
	for w := 0; w < 32; w += 4 {
		if base[w] == 0 && base[w+1] == 0 && base[w+2] == 0 && base[w+3] == 0 {
			t.Errorf("word %d of the seed is zero: %x", w/4, base)
		}
	}
	// Jitter alone moves every byte lane: count bytes that differ between
	// two timings.
	other := seedOf(t, 2, revAR7161, bootFlash(1), zero)
	same := 0
	for i := range base {
		if base[i] == other[i] {
			same++
		}
	}
	if same > 4 {
		t.Errorf("two timings share %d of 32 seed bytes: %x, %x", same, base, other)
	}
}
