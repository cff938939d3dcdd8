package spinor_test

import (
	"testing"
)

// TestNoAllocs: ReadAt and Program allocate nothing per call (errors only
// on failure). Reprogramming identical bytes is legal NOR (clears no new
// bits), so Program can repeat over the same range.
func TestNoAllocs(t *testing.T) {
	r := newRig(t, 1, true, small, nil)
	data := make([]byte, 300)
	for i := range data {
		data[i] = byte(i)
	}
	buf := make([]byte, 1024)
	if err := r.f.Program(0x101, data); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(10, func() {
		if _, err := r.f.ReadAt(buf, 3); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("ReadAt: %v allocs", n)
	}
	if n := testing.AllocsPerRun(5, func() {
		if err := r.f.Program(0x101, data); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("Program: %v allocs", n)
	}
	r.noMisuse(t)
}

func BenchmarkReadAt4K(b *testing.B) {
	r := newRig(b, 1, true, small, nil)
	buf := make([]byte, 4096)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := r.f.ReadAt(buf, 0x1000); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkProgramPage(b *testing.B) {
	r := newRig(b, 1, true, small, nil)
	data := make([]byte, 256)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := r.f.Program(0x2000, data); err != nil {
			b.Fatal(err)
		}
	}
}
