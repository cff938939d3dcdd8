package inetsum

import (
	"bytes"
	"github.com/gowrt/gowrt/net/inetsum/inetsumtest"
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
	for _, n := range []int{0, 1, 2, 3, 4, 5, 7, 8, 31, 32, 33, 63, 64, 65, 95, 96, 100, 127, 128, 129, 1459, 1460, 1500, 4096} {
		for off := 0; off < 8; off++ {
			b := mem[off : off+n]
			want := refSum(b)
			if got := Sum(b); got != want {
				t.Fatalf("len %d at offset %d: sum16 %#04x, reference %#04x", n, off, got, want)
			}
			if g := checksum.Checksum(b, 0); g != want && !(g == 0xffff && want == 0) && !(g == 0 && want == 0xffff) {
				t.Fatalf("len %d at offset %d: reference %#04x disagrees with gVisor's %#04x", n, off, want, g)
			}
			var c Checksummer
			for rest := b; len(rest) > 0; {
				k := min(len(rest), 1+rng.Intn(40))
				c.Add(rest[:k])
				rest = rest[k:]
			}
			if got := c.Sum(); got != want && !(got == 0xffff && want == 0) {
				t.Fatalf("len %d at offset %d in pieces: %#04x, reference %#04x", n, off, got, want)
			}
		}
	}
	// Carries: all ones, for long.
	ones := make([]byte, 64<<10)
	for i := range ones {
		ones[i] = 0xff
	}
	if got, want := Sum(ones), refSum(ones); got != want {
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
		if got := Sum(b); got != want {
			t.Fatalf("sum16 %#04x, reference %#04x", got, want)
		}
		var c Checksummer
		k := min(int(cut), len(b))
		c.Add(b[:k])
		c.Add(b[k:])
		if got := c.Sum(); got != want && !(got == 0xffff && want == 0) {
			t.Fatalf("in two pieces at %d: %#04x, reference %#04x", k, got, want)
		}
	})
}

// TestCopySum: copySum copies exactly and sums as sum16 does, for every
// alignment of source and destination (equal ones take the word loop)
// and many lengths, all-ones runs included (the 64-bit sum's carries).
func TestCopySum(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	src := make([]byte, 4096+8)
	rng.Read(src)
	ones := make([]byte, 4096+8)
	for i := range ones {
		ones[i] = 0xff
	}
	for _, mem := range [][]byte{src, ones} {
		for _, n := range []int{0, 1, 2, 3, 4, 5, 7, 31, 32, 33, 35, 64, 96, 97, 100, 127, 128, 129, 1447, 1448, 1460, 4096} {
			for so := 0; so < 4; so++ {
				for do := 0; do < 4; do++ {
					dst := make([]byte, n+8)
					rng.Read(dst)
					guard := append([]byte{}, dst...)
					b := mem[so : so+n]
					got := CopySum(dst[do:do+n], b)
					if want := refSum(b); got != want {
						t.Fatalf("len %d, offsets %d/%d: sum %#04x, reference %#04x", n, so, do, got, want)
					}
					if !bytes.Equal(dst[do:do+n], b) || !bytes.Equal(dst[:do], guard[:do]) || !bytes.Equal(dst[do+n:], guard[do+n:]) {
						t.Fatalf("len %d, offsets %d/%d: copied wrong, or outside dst", n, so, do)
					}
				}
			}
		}
	}
}

// FuzzCopySum: copySum agrees with copy and the reference sum on any
// bytes at any pair of alignments.
func FuzzCopySum(f *testing.F) {
	f.Add([]byte("gowrt copies and sums"), uint8(2), uint8(2))
	f.Add(make([]byte, 1500), uint8(1), uint8(3))
	f.Fuzz(func(t *testing.T, b []byte, so, do uint8) {
		if int(so) > len(b) {
			return
		}
		b = b[so:]
		dst := make([]byte, len(b)+int(do&7))[do&7:]
		if got, want := CopySum(dst, b), refSum(b); got != want || !bytes.Equal(dst, b) {
			t.Fatalf("sum %#04x, reference %#04x; copied right: %v", got, want, bytes.Equal(dst, b))
		}
	})
}

// BenchmarkCopySum and its baseline BenchmarkCopyThenSum16 copy and sum a
// full segment's payload, equally aligned.
func BenchmarkCopySum(b *testing.B) {
	src, dst := make([]byte, 1448+2), make([]byte, 1448+2)
	b.SetBytes(1448)
	for range b.N {
		CopySum(dst[2:], src[2:])
	}
}

func BenchmarkCopyThenSum16(b *testing.B) {
	src, dst := make([]byte, 1448+2), make([]byte, 1448+2)
	b.SetBytes(1448)
	for range b.N {
		copy(dst[2:], src[2:])
		Sum(src[2:])
	}
}

// BenchmarkSum16 and its baseline BenchmarkGVisorChecksum sum a full
// segment's payload.
func BenchmarkSum16(b *testing.B) {
	p := make([]byte, 1460)
	b.SetBytes(int64(len(p)))
	for range b.N {
		Sum(p)
	}
}

func BenchmarkGVisorChecksum(b *testing.B) {
	p := make([]byte, 1460)
	b.SetBytes(int64(len(p)))
	for range b.N {
		checksum.Checksum(p, 0)
	}
}

// refSum is the reference sum the tests check against.
var refSum = inetsumtest.Sum

// TestGather: CopyGather and SumGather agree with the reference over the
// frame a gather list makes, whatever the cuts (odd lengths move later
// segments to odd offsets) and wherever the sum starts.
func TestGather(t *testing.T) {
	rng := rand.New(rand.NewSource(17))
	for range 2000 {
		frame := make([]byte, rng.Intn(1600))
		rng.Read(frame)
		if rng.Intn(4) == 0 {
			for i := range frame {
				frame[i] = 0xff // carries
			}
		}
		var segs [][]byte
		for rest := frame; len(rest) > 0; {
			k := min(len(rest), 1+rng.Intn(700))
			// Each segment in memory of its own, at a random alignment.
			mem := make([]byte, k+3)
			o := rng.Intn(4)
			copy(mem[o:], rest[:k])
			segs = append(segs, mem[o:o+k])
			rest = rest[k:]
		}
		start := 0
		if len(frame) > 0 {
			start = rng.Intn(len(frame) + 1)
		}
		want := refSum(frame[start:])
		dst := make([]byte, len(frame)+3)[rng.Intn(4):]
		n, got := CopyGather(dst, segs, start)
		if n != len(frame) || !bytes.Equal(dst[:n], frame) {
			t.Fatalf("CopyGather copied %d bytes, wrong ones: frame of %d", n, len(frame))
		}
		if !same(got, want) {
			t.Fatalf("CopyGather from %d of %d bytes in %d segments: %#04x, reference %#04x", start, len(frame), len(segs), got, want)
		}
		if got := SumGather(segs, start); !same(got, want) {
			t.Fatalf("SumGather from %d of %d bytes in %d segments: %#04x, reference %#04x", start, len(frame), len(segs), got, want)
		}
	}
}

// TestChecksum: the field Checksum gives makes the covered bytes sum to
// 0xffff, and is never 0.
func TestChecksum(t *testing.T) {
	for _, sum := range []uint16{0, 1, 0x1234, 0xfffe, 0xffff} {
		c := Checksum(sum)
		if c == 0 || Fold(uint32(sum)+uint32(c)) != 0xffff {
			t.Fatalf("sum %#04x: field %#04x", sum, c)
		}
	}
}

// same reports whether one's complement sums a and b are equal, the two
// zeros alike.
func same(a, b uint16) bool { return a == b || a|b == 0xffff && a&b == 0 }
