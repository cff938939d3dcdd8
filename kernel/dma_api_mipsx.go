//go:build mips || mipsle

package kernel

import (
	"fmt"
	"sync"
	"syscall"
)

// DMA is the kernel's physical memory for device DMA. It implements
// busdma/mipsdma.PhysMem:
//
//	plat, err := mipsdma.New(kernel.DMA)
//
// AllocPhys carves buffers out of 64 KiB (or larger) runs of physically
// contiguous frames that the kernel removes from its frame pool for good;
// DMA memory is never freed. Translate accepts kseg0/kseg1 addresses (what
// mipsdma hands out); program memory (Go heap, data, stacks) is refused:
// its pages are not contiguous and the runtime may return them to the
// kernel at any time with madvise, so a device must never target them.
var DMA = &dmaMem{}

type dmaMem struct {
	mu        sync.Mutex
	next, end uint64
}

const dmaChunk = 64 << 10

// AllocPhys implements mipsdma.PhysMem.
func (m *dmaMem) AllocPhys(size, align int) (uint64, error) {
	if size <= 0 || size > dmaMaxPages*pageSize || align <= 0 || align&(align-1) != 0 || align > dmaMaxPages*pageSize {
		return 0, fmt.Errorf("kernel: DMA allocation of %d bytes aligned %d", size, align)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	a := (m.next + uint64(align) - 1) &^ uint64(align-1)
	if m.end == 0 || a+uint64(size) > m.end {
		n := (max(size, dmaChunk) + pageSize - 1) &^ (pageSize - 1)
		al := max(align, pageSize) / pageSize
		pa, _, e := syscall.RawSyscall(sysGowrtDMAAlloc, uintptr(n/pageSize), uintptr(al), 0)
		if e == syscall.ENOSYS {
			return 0, ErrNotBareMetal
		}
		if e != 0 {
			return 0, fmt.Errorf("kernel: DMA allocation of %d KiB: %w", n>>10, e)
		}
		m.next, m.end = uint64(pa), uint64(pa)+uint64(n)
		a = m.next
	}
	m.next = a + uint64(size)
	return a, nil
}

// Translate implements mipsdma.PhysMem for kseg0/kseg1 addresses.
func (m *dmaMem) Translate(va uintptr, n int) (uint64, int, error) {
	if va >= kseg0 && va < kseg2 && n >= 0 && uint64(va&0x1fffffff)+uint64(n) <= 0x20000000 {
		return uint64(va & 0x1fffffff), n, nil
	}
	return 0, 0, fmt.Errorf("kernel: %#x is program memory, not DMA memory (allocate DMA buffers with busdma Tag.Alloc)", va)
}
