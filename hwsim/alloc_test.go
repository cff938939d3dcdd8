package hwsim_test

import (
	"testing"

	"github.com/gowrt/gowrt/barrier"
	"github.com/gowrt/gowrt/busdma"
	"github.com/gowrt/gowrt/hwsim"
)

// TestAccessAllocatesNothing: the model's per-access paths (a device
// reading and writing descriptors, the CPU's coherent accesses, cache
// maintenance) must not allocate, or driver benchmarks run on the model
// cannot show that the drivers themselves allocate nothing.
func TestAccessAllocatesNothing(t *testing.T) {
	sys := hwsim.New(hwsim.Config{Seed: 1})
	buf, addr, err := sys.Mem.AllocCached("buf", 256, 32)
	if err != nil {
		t.Fatal(err)
	}
	ring, caddr, err := sys.Mem.AllocCoherent("ring", 64, 32, barrier.BigEndian)
	if err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]func(){
		"DevLoad32":   func() { sys.Do(func() { _, _ = sys.Mem.DevLoad32(caddr, barrier.BigEndian) }) },
		"DevStore32":  func() { sys.Do(func() { _ = sys.Mem.DevStore32(addr, 7, barrier.LittleEndian) }) },
		"Read32":      func() { _ = ring.Read32(8) },
		"Write16":     func() { ring.Write16(4, 1) },
		"Barrier":     func() { ring.Barrier() },
		"Cache WbInv": func() { buf[0]++; _ = sys.Mem.Cache(busdma.WritebackInvalidate, buf) },
	} {
		if n := testing.AllocsPerRun(200, f); n != 0 {
			t.Errorf("%s: %v allocations per call", name, n)
		}
	}
}

// TestAllocation: a slice of cached DMA memory is known by its
// allocation's name; Go memory and memory only loaded into a map are not.
func TestAllocation(t *testing.T) {
	sys := hwsim.New(hwsim.Config{Seed: 1})
	buf, _, err := sys.Mem.AllocCached("rx", 256, 32)
	if err != nil {
		t.Fatal(err)
	}
	if name, ok := sys.Mem.Allocation(buf[10:20]); !ok || name != "rx" {
		t.Fatalf("slice of the allocation: %q, %v", name, ok)
	}
	heap := make([]byte, 64)
	addr, _, err := sys.Mem.Translate(heap) // loaded for DMA, still not an allocation
	if err != nil {
		t.Fatal(err)
	}
	defer sys.Mem.Release(addr)
	for what, b := range map[string][]byte{"heap": heap, "empty": nil} {
		if name, ok := sys.Mem.Allocation(b); ok {
			t.Fatalf("%s memory reported as allocation %q", what, name)
		}
	}
}
