package ar71xx

import (
	"fmt"
	"sync"
)

// regs is a test register file implementing barrier.Space. Hooks give a
// register behaviour: onWrite decides what a write stores, onRead what a
// read returns (and may change state).
type regs struct {
	mu      sync.Mutex
	v       map[uint32]uint32
	onWrite map[uint32]func(old, val uint32) uint32
	onRead  map[uint32]func(cur uint32) (ret, next uint32)
	log     []string
}

func newRegs() *regs {
	return &regs{v: map[uint32]uint32{}, onWrite: map[uint32]func(uint32, uint32) uint32{}, onRead: map[uint32]func(uint32) (uint32, uint32){}}
}

func (r *regs) Read32(off uint32) uint32 {
	r.mu.Lock()
	defer r.mu.Unlock()
	cur := r.v[off]
	if f := r.onRead[off]; f != nil {
		ret, next := f(cur)
		r.v[off] = next
		cur = ret
	}
	r.log = append(r.log, fmt.Sprintf("R%#x=%#x", off, cur))
	return cur
}

func (r *regs) Write32(off, val uint32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.log = append(r.log, fmt.Sprintf("W%#x=%#x", off, val))
	if f := r.onWrite[off]; f != nil {
		val = f(r.v[off], val)
	}
	r.v[off] = val
}

func (r *regs) Read8(off uint32) uint8       { return uint8(r.Read32(off &^ 3)) }
func (r *regs) Read16(off uint32) uint16     { return uint16(r.Read32(off &^ 3)) }
func (r *regs) Write8(off uint32, v uint8)   { r.Write32(off&^3, uint32(v)) }
func (r *regs) Write16(off uint32, v uint16) { r.Write32(off&^3, uint32(v)) }
func (r *regs) Barrier()                     {}

func (r *regs) get(off uint32) uint32 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.v[off]
}

func (r *regs) set(off, v uint32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.v[off] = v
}

func (r *regs) writes(off uint32) []uint32 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []uint32
	pfx := fmt.Sprintf("W%#x=", off)
	for _, l := range r.log {
		if len(l) > len(pfx) && l[:len(pfx)] == pfx {
			var v uint32
			fmt.Sscanf(l[len(pfx):], "%v", &v)
			out = append(out, v)
		}
	}
	return out
}
