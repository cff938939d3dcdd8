//go:build mipsle

package kernel

const (
	hiOff     = 4
	loOff     = 0
	machine   = "mips"
	bigEndian = false
)
