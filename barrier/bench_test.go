package barrier_test

import (
	"testing"

	"github.com/gowrt/gowrt/barrier"
	"github.com/gowrt/gowrt/hwsim"
)

// nopDev is a register file with no behaviour, so the benchmark measures
// the access path itself.
type nopDev struct{ r [16]uint32 }

func (d *nopDev) ReadReg(off uint32, _ int) uint32     { return d.r[off/4] }
func (d *nopDev) WriteReg(off uint32, _ int, v uint32) { d.r[off/4] = v }

var sink uint32

// BenchmarkRegBaselinePlain: a plain load and store of a Go variable, the
// same-run baseline for the two backends.
func BenchmarkRegBaselinePlain(b *testing.B) {
	var r [16]uint32
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		r[4] = uint32(i)
		sink += r[4]
	}
}

// BenchmarkRegMMIO: one Write32 and one Read32 through the MMIO backend.
func BenchmarkRegMMIO(b *testing.B) {
	mem := make([]uint32, 16)
	var s barrier.Space
	s, err := barrier.NewMMIOBuffer("bench", mem, barrier.BigEndian)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		s.Write32(0x10, uint32(i))
		sink += s.Read32(0x10)
	}
}

// BenchmarkRegSim: one Write32 and one Read32 through the hwsim bus, with
// all hazards on (posted writes, stale reads, scheduling points).
func BenchmarkRegSim(b *testing.B) {
	sys := hwsim.New(hwsim.Config{Seed: 1})
	var s barrier.Space = sys.Bus.Map("bench", 64, &nopDev{})
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		s.Write32(0x10, uint32(i))
		sink += s.Read32(0x10)
	}
}

// BenchmarkRegSimBarrier adds the Barrier a driver issues per sequence.
func BenchmarkRegSimBarrier(b *testing.B) {
	sys := hwsim.New(hwsim.Config{Seed: 1})
	var s barrier.Space = sys.Bus.Map("bench", 64, &nopDev{})
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		s.Write32(0x10, uint32(i))
		s.Barrier()
		sink += s.Read32(0x10)
	}
}
