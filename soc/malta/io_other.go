//go:build !mips && !mipsle

package malta

// Off MIPS there is no Malta I/O space; these exist so the package builds
// (and its pure functions test) everywhere. Calling them is a bug.

// Inb reads ISA I/O port p.
func Inb(p uintptr) uint8 { panic("malta: port I/O off MIPS") }

// Outb writes v to ISA I/O port p.
func Outb(p uintptr, v uint8) { panic("malta: port I/O off MIPS") }

func store32(a uintptr, v uint32) { panic("malta: MMIO off MIPS") }

func readCount() uint32 { panic("malta: CP0 off MIPS") }
