package barrier

import (
	"encoding/binary"
	"fmt"
)

// Space is a mapped register region: 8/16/32-bit accesses at byte offsets
// from its base, in the region's byte order. Accesses are relaxed; Barrier
// is the ordering point (see the package documentation).
//
// Two backends implement it: MMIO (raw loads and stores to an uncached
// address, used on bare metal) and the hwsim MMIO bus (calls into a device
// model, used in sim mode and tests). Drivers hold a Space and never know
// which.
//
// An offset outside the region, or one not aligned to the access width, is
// a driver bug, not bad input: implementations panic with a message naming
// the region and offset.
type Space interface {
	Read8(off uint32) uint8
	Read16(off uint32) uint16
	Read32(off uint32) uint32
	Write8(off uint32, v uint8)
	Write16(off uint32, v uint16)
	Write32(off uint32, v uint32)
	// Barrier completes every access issued before it (posted writes have
	// reached the device) before any access issued after it.
	Barrier()
}

// Order is a region's byte order: how a multi-byte register value is laid
// out in the bytes the bus carries.
type Order uint8

const (
	// Native registers are laid out in the CPU's own order (SoC-internal
	// registers of the AR71xx family on their big-endian CPUs).
	Native Order = iota
	BigEndian
	LittleEndian
)

func (o Order) String() string {
	switch o {
	case Native:
		return "native"
	case BigEndian:
		return "big-endian"
	case LittleEndian:
		return "little-endian"
	}
	return fmt.Sprintf("Order(%d)", uint8(o))
}

// cpuBigEndian is the byte order of the CPU this program runs on.
var cpuBigEndian = binary.NativeEndian.Uint16([]byte{1, 0}) != 1

// swaps reports whether values must be byte-swapped between this CPU and a
// region of order o.
func (o Order) swaps() bool {
	switch o {
	case BigEndian:
		return !cpuBigEndian
	case LittleEndian:
		return cpuBigEndian
	}
	return false
}

// SetBits32 read-modify-writes the register at off: bits in set are set,
// bits in clear are cleared. It is not atomic against other users.
func SetBits32(s Space, off uint32, clear, set uint32) {
	s.Write32(off, s.Read32(off)&^clear|set)
}

// Poll32 reads the register at off until (value & mask) == want, issuing a
// Barrier before every read so that each read observes the device's current
// state rather than a value ordered before an earlier write. It gives up
// after tries reads and reports whether the condition was met, along with
// the last value read.
func Poll32(s Space, off, mask, want uint32, tries int) (uint32, bool) {
	var v uint32
	for i := 0; i < tries; i++ {
		s.Barrier()
		v = s.Read32(off)
		if v&mask == want {
			return v, true
		}
	}
	return v, false
}
