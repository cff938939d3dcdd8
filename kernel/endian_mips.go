//go:build mips

package kernel

// Word offsets of the high and low halves of a 64-bit value in memory.
const (
	hiOff     = 0
	loOff     = 4
	machine   = "mips"
	bigEndian = true
)
