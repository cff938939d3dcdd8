package netstack

import (
	"math/rand"
	"testing"

	"gvisor.dev/gvisor/pkg/tcpip/checksum"
)

// TestSum16 checks sum16 against the byte-by-byte reference and gVisor's
// checksum package at every alignment and many lengths, and the
// checksummer on the same bytes cut into pieces, odd ones included.
func TestSum16(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	mem := make([]byte, 4096+8)
	rng.Read(mem)
	for _, n := range []int{0, 1, 2, 3, 4, 5, 7, 8, 31, 32, 33, 63, 64, 65, 100, 1459, 1460, 1500, 4096} {
		for off := 0; off < 8; off++ {
			b := mem[off : off+n]
			want := refSum(b)
			if got := sum16(b); got != want {
				t.Fatalf("len %d at offset %d: sum16 %#04x, reference %#04x", n, off, got, want)
			}
			if g := checksum.Checksum(b, 0); g != want && !(g == 0xffff && want == 0) && !(g == 0 && want == 0xffff) {
				t.Fatalf("len %d at offset %d: reference %#04x disagrees with gVisor's %#04x", n, off, want, g)
			}
			var c checksummer
			for rest := b; len(rest) > 0; {
				k := min(len(rest), 1+rng.Intn(40))
				c.add(rest[:k])
				rest = rest[k:]
			}
			if got := c.sum(); got != want && !(got == 0xffff && want == 0) {
				t.Fatalf("len %d at offset %d in pieces: %#04x, reference %#04x", n, off, got, want)
			}
		}
	}
	// Carries: all ones, for long.
	ones := make([]byte, 64<<10)
	for i := range ones {
		ones[i] = 0xff
	}
	if got, want := sum16(ones), refSum(ones); got != want {
		t.Fatalf("all ones: %#04x, reference %#04x", got, want)
	}
}

// FuzzSum16: sum16 and the checksummer agree with the reference on any
// bytes, cut anywhere.
func FuzzSum16(f *testing.F) {
	f.Add([]byte("gowrt"), uint8(0), uint8(3))
	f.Add(make([]byte, 1500), uint8(3), uint8(1))
	f.Fuzz(func(t *testing.T, b []byte, off, cut uint8) {
		if int(off) > len(b) {
			return
		}
		b = b[off:]
		want := refSum(b)
		if got := sum16(b); got != want {
			t.Fatalf("sum16 %#04x, reference %#04x", got, want)
		}
		var c checksummer
		k := min(int(cut), len(b))
		c.add(b[:k])
		c.add(b[k:])
		if got := c.sum(); got != want && !(got == 0xffff && want == 0) {
			t.Fatalf("in two pieces at %d: %#04x, reference %#04x", k, got, want)
		}
	})
}

// BenchmarkSum16 and its baseline BenchmarkGVisorChecksum sum a full
// segment's payload.
func BenchmarkSum16(b *testing.B) {
	p := make([]byte, 1460)
	b.SetBytes(int64(len(p)))
	for range b.N {
		sum16(p)
	}
}

func BenchmarkGVisorChecksum(b *testing.B) {
	p := make([]byte, 1460)
	b.SetBytes(int64(len(p)))
	for range b.N {
		checksum.Checksum(p, 0)
	}
}
