package barrier

import (
	"fmt"
	"math/bits"
	"unsafe"
)

// MMIO is the bare-metal Space: loads and stores to a device's registers
// through an uncached address (kseg1 on MIPS: 0xa0000000 + physical).
type MMIO struct {
	base unsafe.Pointer
	size uint32
	swap bool
	name string
}

// NewMMIO returns a Space over size bytes of device registers at the
// virtual address base, in byte order order. The caller guarantees that the
// address is mapped uncached.
func NewMMIO(name string, base uintptr, size uint32, order Order) (*MMIO, error) {
	if base == 0 || size < 4 {
		return nil, fmt.Errorf("barrier: MMIO region %q: zero base or size below 4 bytes", name)
	}
	if base%4 != 0 {
		return nil, fmt.Errorf("barrier: MMIO region %q: base %#x not 4-byte aligned", name, base)
	}
	if base+uintptr(size) < base {
		return nil, fmt.Errorf("barrier: MMIO region %q: %#x+%#x wraps", name, base, size)
	}
	return &MMIO{base: devicePointer(base), size: size, swap: order.swaps(), name: name}, nil
}

// NewMMIOBuffer returns an MMIO Space over ordinary memory. It exists for
// tests of the backend itself and for register files kept in RAM.
func NewMMIOBuffer(name string, mem []uint32, order Order) (*MMIO, error) {
	if len(mem) == 0 {
		return nil, fmt.Errorf("barrier: MMIO region %q: empty buffer", name)
	}
	return &MMIO{base: unsafe.Pointer(&mem[0]), size: uint32(len(mem) * 4), swap: order.swaps(), name: name}, nil
}

// devicePointer turns a device address into a pointer. Device registers
// (kseg1 on MIPS) lie outside every Go heap arena, so the garbage collector
// ignores the pointer; the indirection keeps vet's unsafeptr check, which
// is right about heap addresses, from flagging this one deliberate case.
func devicePointer(addr uintptr) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&addr))
}

// Each accessor checks its offset itself (aligned, inside the region;
// size >= 4 >= width, so size-width cannot wrap) rather than calling a
// shared checker: the check is then a few instructions in line and the
// panic's formatting stays out of line in bad.

//go:noinline
func (m *MMIO) bad(off, width uint32) {
	panic(fmt.Sprintf("barrier: %d-byte access at %#x outside or misaligned in MMIO region %q (size %#x)", width, off, m.name, m.size))
}

func (m *MMIO) Read8(off uint32) uint8 {
	if off > m.size-1 {
		m.bad(off, 1)
	}
	return load8(unsafe.Add(m.base, off))
}

func (m *MMIO) Read16(off uint32) uint16 {
	if off&1 != 0 || off > m.size-2 {
		m.bad(off, 2)
	}
	v := load16(unsafe.Add(m.base, off))
	if m.swap {
		v = bits.ReverseBytes16(v)
	}
	return v
}

func (m *MMIO) Read32(off uint32) uint32 {
	if off&3 != 0 || off > m.size-4 {
		m.bad(off, 4)
	}
	v := load32(unsafe.Add(m.base, off))
	if m.swap {
		v = bits.ReverseBytes32(v)
	}
	return v
}

func (m *MMIO) Write8(off uint32, v uint8) {
	if off > m.size-1 {
		m.bad(off, 1)
	}
	store8(unsafe.Add(m.base, off), v)
}

func (m *MMIO) Write16(off uint32, v uint16) {
	if off&1 != 0 || off > m.size-2 {
		m.bad(off, 2)
	}
	if m.swap {
		v = bits.ReverseBytes16(v)
	}
	store16(unsafe.Add(m.base, off), v)
}

func (m *MMIO) Write32(off uint32, v uint32) {
	if off&3 != 0 || off > m.size-4 {
		m.bad(off, 4)
	}
	if m.swap {
		v = bits.ReverseBytes32(v)
	}
	store32(unsafe.Add(m.base, off), v)
}

// Barrier is a full completion barrier (SYNC on MIPS): posted writes leave
// the CPU's write buffer before any later access.
func (m *MMIO) Barrier() { full() }

// The accessors are kept out of line so that the compiler can neither merge
// two reads of the same register nor drop a store it thinks is dead: each
// call is exactly one bus access, like a C volatile.

//go:noinline
func load8(a unsafe.Pointer) uint8 { return *(*uint8)(a) }

//go:noinline
func load16(a unsafe.Pointer) uint16 { return *(*uint16)(a) }

//go:noinline
func load32(a unsafe.Pointer) uint32 { return *(*uint32)(a) }

//go:noinline
func store8(a unsafe.Pointer, v uint8) { *(*uint8)(a) = v }

//go:noinline
func store16(a unsafe.Pointer, v uint16) { *(*uint16)(a) = v }

//go:noinline
func store32(a unsafe.Pointer, v uint32) { *(*uint32)(a) = v }
