// Package wrongcode makes a correct driver commit the mistakes the hazard
// tests (TestHazard*) must catch, from outside the driver: wrappers of the
// hardware contracts a driver is given (barrier.Space, busdma.Platform)
// that drop barriers, skip cache maintenance or swallow register writes.
// The shipped driver carries no switch for them; a test hands it a
// wrapped contract instead of the real one.
//
// Only tests import this package (internal/layering checks that no
// firmware links it).
package wrongcode

import (
	"github.com/gowrt/gowrt/barrier"
	"github.com/gowrt/gowrt/busdma"
)

// NoBarriers returns s without its barriers: every access goes through,
// Barrier does nothing. A driver given it orders nothing it writes
// through s (posted writes may overtake each other, re-reads may be
// stale).
func NoBarriers(s barrier.Space) barrier.Space { return noBarriers{s} }

type noBarriers struct{ barrier.Space }

func (noBarriers) Barrier() {}

// WriteFilter returns s with the writes drop reports true for swallowed
// (the driver believes it wrote them; the device never sees them). drop
// is called with the access width in bytes.
func WriteFilter(s barrier.Space, drop func(width int, off, v uint32) bool) barrier.Space {
	return writeFilter{s, drop}
}

type writeFilter struct {
	barrier.Space
	drop func(width int, off, v uint32) bool
}

func (f writeFilter) Write8(off uint32, v uint8) {
	if !f.drop(1, off, uint32(v)) {
		f.Space.Write8(off, v)
	}
}

func (f writeFilter) Write16(off uint32, v uint16) {
	if !f.drop(2, off, uint32(v)) {
		f.Space.Write16(off, v)
	}
}

func (f writeFilter) Write32(off uint32, v uint32) {
	if !f.drop(4, off, v) {
		f.Space.Write32(off, v)
	}
}

// Platform wraps a busdma.Platform with mistakes switched on.
type Platform struct {
	busdma.Platform
	// SkipCache are the cache operations dropped: Writeback is a driver
	// that never does PREWRITE (the device reads memory the cache has
	// not written back), Invalidate one that never does PREREAD or
	// POSTREAD (the CPU reads its stale copy of what the device wrote).
	// An operation with both bits keeps the bits not skipped.
	SkipCache busdma.CacheOp
	// CoherentNoBarriers drops the barriers of every coherent region
	// (descriptor rings) the driver allocates: descriptor stores reach
	// memory in any order.
	CoherentNoBarriers bool
}

// Cache implements busdma.Platform.
func (p *Platform) Cache(op busdma.CacheOp, buf []byte) error {
	op &^= p.SkipCache
	if op == 0 {
		return nil
	}
	return p.Platform.Cache(op, buf)
}

// AllocCoherent implements busdma.Platform.
func (p *Platform) AllocCoherent(name string, size, align int, order barrier.Order) (barrier.Space, uint64, error) {
	s, a, err := p.Platform.AllocCoherent(name, size, align, order)
	if err == nil && p.CoherentNoBarriers {
		s = NoBarriers(s)
	}
	return s, a, err
}
