//go:build mips || mipsle

package kernel

import (
	"math/rand"
	"testing"
)

// The address-space region table (mmap/munmap bookkeeping) checked against
// a page-by-page model. It runs under qemu-mips in make test: the region
// code touches no hardware.

const (
	modelBase  = userBase
	modelPages = 512
)

type vmaModel struct {
	k     *kstate
	prot  [modelPages]int // -1 unmapped
	steps int
}

func newModel() *vmaModel {
	m := &vmaModel{k: new(kstate)}
	for i := range m.prot {
		m.prot[i] = -1
	}
	return m
}

func (m *vmaModel) mapFixed(p, n int, prot uint32) bool {
	start, end := uintptr(modelBase+p*pageSize), uintptr(modelBase+(p+n)*pageSize)
	if !m.k.removeRange(start, end) || !m.k.addVMA(start, end, prot) {
		return false
	}
	for i := p; i < p+n; i++ {
		m.prot[i] = int(prot)
	}
	return true
}

func (m *vmaModel) mapAnywhere(n int, prot uint32) (int, bool) {
	a := m.k.findGap(modelBase, uintptr(n*pageSize))
	if a == 0 {
		return 0, false
	}
	p := int(a-modelBase) / pageSize
	if p+n > modelPages {
		return 0, false // outside the modelled window; not an error
	}
	for i := p; i < p+n; i++ {
		if m.prot[i] != -1 {
			return p, false
		}
	}
	return p, m.mapFixed(p, n, prot)
}

func (m *vmaModel) unmap(p, n int) bool {
	if !m.k.removeRange(uintptr(modelBase+p*pageSize), uintptr(modelBase+(p+n)*pageSize)) {
		return false
	}
	for i := p; i < p+n; i++ {
		m.prot[i] = -1
	}
	return true
}

func (m *vmaModel) check(t *testing.T) {
	t.Helper()
	k := m.k
	for i := 1; i < k.mem.nvma; i++ {
		a, b := k.mem.vmas[i-1], k.mem.vmas[i]
		if a.start >= a.end || a.end > b.start {
			t.Fatalf("step %d: regions %d and %d out of order or overlapping: %+v %+v", m.steps, i-1, i, a, b)
		}
	}
	writable := uint32(0)
	for i := 0; i < modelPages; i++ {
		va := uintptr(modelBase + i*pageSize)
		j := k.findVMA(va + 123)
		got := -1
		if j >= 0 {
			got = int(k.mem.vmas[j].prot)
		}
		if got != m.prot[i] {
			t.Fatalf("step %d: page %d: region prot %d, model %d", m.steps, i, got, m.prot[i])
		}
		if k.rangeFree(va, va+pageSize) != (m.prot[i] == -1) {
			t.Fatalf("step %d: page %d: rangeFree disagrees", m.steps, i)
		}
		if m.prot[i] >= 0 && uint32(m.prot[i])&protWrite != 0 {
			writable++
		}
	}
	if w := k.writablePages(modelBase, modelBase+modelPages*pageSize); w != writable {
		t.Fatalf("step %d: writablePages %d, model %d", m.steps, w, writable)
	}
}

func (m *vmaModel) step(t *testing.T, op, a, b, c byte) {
	m.steps++
	p := int(a) % modelPages
	n := 1 + int(b)%32
	if p+n > modelPages {
		n = modelPages - p
	}
	prot := uint32(c % 4)
	switch op % 3 {
	case 0:
		if !m.mapFixed(p, n, prot) {
			t.Fatalf("step %d: fixed map failed", m.steps)
		}
	case 1:
		m.mapAnywhere(n, prot)
	case 2:
		if !m.unmap(p, n) {
			t.Fatalf("step %d: unmap failed", m.steps)
		}
	}
	m.check(t)
}

func TestVMARandom(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	m := newModel()
	for i := 0; i < 3000; i++ {
		m.step(t, byte(r.Intn(3)), byte(r.Intn(256)), byte(r.Intn(256)), byte(r.Intn(4)))
	}
}

// TestVMASplitMerge: unmapping the middle of a region splits it; mapping it
// again with the same protection merges the three pieces back into one.
func TestVMASplitMerge(t *testing.T) {
	m := newModel()
	m.mapFixed(10, 20, protRead|protWrite)
	m.unmap(15, 5)
	if m.k.mem.nvma != 2 {
		t.Fatalf("%d regions after a hole, want 2", m.k.mem.nvma)
	}
	m.mapFixed(15, 5, protRead|protWrite)
	if m.k.mem.nvma != 1 {
		t.Fatalf("%d regions after refilling the hole, want 1", m.k.mem.nvma)
	}
	m.check(t)
}

func FuzzVMA(f *testing.F) {
	f.Add([]byte{0, 10, 20, 3, 2, 15, 5, 0, 0, 15, 5, 3})
	f.Add([]byte{1, 0, 31, 2, 1, 0, 31, 0, 2, 0, 255, 0})
	f.Fuzz(func(t *testing.T, ops []byte) {
		m := newModel()
		for i := 0; i+3 < len(ops) && i < 4*500; i += 4 {
			m.step(t, ops[i], ops[i+1], ops[i+2], ops[i+3])
		}
	})
}
