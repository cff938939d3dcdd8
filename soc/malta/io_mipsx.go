//go:build mips || mipsle

package malta

// Inb reads ISA I/O port p (io_mipsx.s).
//
//go:noescape
func Inb(p uintptr) uint8

// Outb writes v to ISA I/O port p.
func Outb(p uintptr, v uint8)

func store32(a uintptr, v uint32)

func load32(a uintptr) uint32

func store16(a uintptr, v uint16)

// readCount reads CP0 Count.
func readCount() uint32
