// Package mipsdma is busdma's bare-metal backend for MIPS32 cores with
// non-coherent caches (24K/74K in the AR71xx family, QEMU malta).
//
// Cache maintenance uses the CACHE instruction's Hit operations on the
// buffer's virtual addresses, one D-cache line at a time, with the line
// size read from CP0 Config1 at run time, and ends with SYNC:
//
//	Hit_Writeback_D      0x19  (op 6, D-cache)
//	Hit_Invalidate_D     0x11  (op 4, D-cache)
//	Hit_Writeback_Inv_D  0x15  (op 5, D-cache)
//
// (MIPS32 Architecture Vol. II, CACHE; the same encodings as Linux
// arch/mips/include/asm/cacheops.h and FreeBSD sys/mips/include/cache_r4k.h.)
// Partial lines at buffer edges are covered by whole-line operations here;
// busdma never hands the device a line it shares with other data for a
// read (it bounces such buffers), so invalidating a whole edge line only
// ever discards bytes of the buffer itself.
//
// Coherent memory is reached through the kseg1 (uncached) alias of its
// physical pages after the kseg0 alias has been written back and
// invalidated, as Linux's arch_dma_prep_coherent does.
package mipsdma

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"

	"github.com/gowrt/gowrt/barrier"
	"github.com/gowrt/gowrt/busdma"
)

// MIPS32 unmapped segments (MIPS32 Architecture Vol. III, §4.3).
const (
	kseg0 = 0x8000_0000 // cached, unmapped
	kseg1 = 0xa000_0000 // uncached, unmapped
	// ksegSize is how much physical memory kseg0/kseg1 reach.
	ksegSize = 0x2000_0000
)

// PhysMem is what the kernel provides: translation of its virtual
// addresses and allocation of physical pages for DMA.
type PhysMem interface {
	// Translate returns the physical address of va and how many bytes from
	// there are physically contiguous (at most n).
	Translate(va uintptr, n int) (pa uint64, contiguous int, err error)
	// AllocPhys returns size bytes of physically contiguous, zeroed memory
	// aligned to align. DMA memory is never freed.
	AllocPhys(size, align int) (pa uint64, err error)
}

// Platform implements busdma.Platform on bare-metal MIPS.
type Platform struct {
	mem  PhysMem
	line int
}

var _ busdma.Platform = (*Platform)(nil)

// ErrNoCache is returned when Config1 reports no D-cache.
var ErrNoCache = errors.New("mipsdma: Config1 reports no D-cache")

// New returns the platform. It reads the D-cache line size from Config1
// and must run on the target in kernel mode.
func New(mem PhysMem) (*Platform, error) {
	line := LineSizeFromConfig1(readConfig1())
	if line == 0 {
		return nil, ErrNoCache
	}
	return &Platform{mem: mem, line: line}, nil
}

// LineSizeFromConfig1 decodes the D-cache line size from CP0 Config1: DL
// (bits 12:10) gives 2^(DL+1) bytes, 0 meaning no cache; 7 is reserved.
func LineSizeFromConfig1(c1 uint32) int {
	dl := (c1 >> 10) & 7
	if dl == 0 || dl == 7 {
		return 0
	}
	return 2 << dl
}

// LineSize implements busdma.Platform.
func (p *Platform) LineSize() int { return p.line }

// lineSpan returns the line-aligned [start, end) covering [va, va+n).
func lineSpan(va uintptr, n, line int) (start, end uintptr) {
	l := uintptr(line)
	return va &^ (l - 1), (va + uintptr(n) + l - 1) &^ (l - 1)
}

// Cache implements busdma.Platform: the Hit operation over every line of
// buf, then SYNC.
func (p *Platform) Cache(op busdma.CacheOp, buf []byte) error {
	if len(buf) == 0 {
		return nil
	}
	start, end := lineSpan(uintptr(unsafe.Pointer(unsafe.SliceData(buf))), len(buf), p.line)
	switch op {
	case busdma.Writeback:
		hitWriteback(start, end, uintptr(p.line))
	case busdma.Invalidate:
		hitInvalidate(start, end, uintptr(p.line))
	case busdma.WritebackInvalidate:
		hitWritebackInv(start, end, uintptr(p.line))
	default:
		return fmt.Errorf("mipsdma: unknown cache op %d", op)
	}
	return nil
}

// CacheCompletes implements busdma.CompletingCache: Cache ends with SYNC
// (cache_mipsx.s), which completes the hit operations and every earlier
// load and store (MIPS32 Architecture, SYNC; the cache instructions are
// ordered by it like stores).
func (p *Platform) CacheCompletes() {}

// LineOp implements busdma.LineCache: the hit loops themselves
// (cache_mipsx.s), which end with SYNC as Cache does.
func (p *Platform) LineOp(op busdma.CacheOp) func(start, end, line uintptr) {
	switch op {
	case busdma.Writeback:
		return hitWriteback
	case busdma.Invalidate:
		return hitInvalidate
	case busdma.WritebackInvalidate:
		return hitWritebackInv
	}
	return nil
}

var _ busdma.LineCache = (*Platform)(nil)

// Barrier implements busdma.Platform (SYNC).
func (p *Platform) Barrier() { barrier.Full() }

// Translate implements busdma.Platform.
func (p *Platform) Translate(buf []byte) (uint64, int, error) {
	if len(buf) == 0 {
		return 0, 0, fmt.Errorf("mipsdma: translate of an empty buffer")
	}
	return p.mem.Translate(uintptr(unsafe.Pointer(unsafe.SliceData(buf))), len(buf))
}

// Release implements busdma.Platform; translations hold nothing here.
func (p *Platform) Release(uint64) error { return nil }

func (p *Platform) allocPhys(size, align int) (uint64, error) {
	if align < p.line {
		align = p.line
	}
	size = (size + p.line - 1) &^ (p.line - 1)
	pa, err := p.mem.AllocPhys(size, align)
	if err != nil {
		return 0, err
	}
	if pa+uint64(size) > ksegSize {
		return 0, fmt.Errorf("mipsdma: physical memory at %#x is beyond kseg0/kseg1", pa)
	}
	return pa, nil
}

// AllocCached implements busdma.Platform: the kseg0 alias of fresh pages.
func (p *Platform) AllocCached(name string, size, align int) ([]byte, uint64, error) {
	pa, err := p.allocPhys(size, align)
	if err != nil {
		return nil, 0, fmt.Errorf("mipsdma: %s: %w", name, err)
	}
	return unsafe.Slice((*byte)(segPointer(kseg0|uintptr(pa))), size), pa, nil
}

// AllocCoherent implements busdma.Platform: the kseg1 alias of fresh pages,
// after flushing any lines of their kseg0 alias.
func (p *Platform) AllocCoherent(name string, size, align int, order barrier.Order) (barrier.Space, uint64, error) {
	pa, err := p.allocPhys(size, align)
	if err != nil {
		return nil, 0, fmt.Errorf("mipsdma: %s: %w", name, err)
	}
	start, end := lineSpan(kseg0|uintptr(pa), size, p.line)
	hitWritebackInv(start, end, uintptr(p.line))
	s, err := barrier.NewMMIO(name, kseg1|uintptr(pa), uint32(size), order)
	if err != nil {
		return nil, 0, err
	}
	w := unsafe.Slice((*uint32)(segPointer(kseg1|uintptr(pa))), size/4)
	return &coherent{MMIO: s, words: w, swap: swaps(order)}, pa, nil
}

// coherent is uncached memory from AllocCoherent: an MMIO Space, and its
// words (busdma.CoherentWords).
type coherent struct {
	*barrier.MMIO
	words []uint32
	swap  bool
}

var _ busdma.CoherentWords = (*coherent)(nil)

// Words implements busdma.CoherentWords.
func (c *coherent) Words() ([]uint32, bool) { return c.words, c.swap }

// swaps reports whether memory in byte order o holds words byte-swapped
// from this CPU's order.
func swaps(o barrier.Order) bool {
	big := binary.NativeEndian.Uint16([]byte{0, 1}) == 1
	return o == barrier.LittleEndian && big || o == barrier.BigEndian && !big
}

// segPointer turns a kseg0/kseg1 address into a pointer. Those segments lie
// outside every Go heap arena (heapAddrBits is 31 on mips), so the garbage
// collector ignores the pointer.
func segPointer(addr uintptr) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&addr))
}
