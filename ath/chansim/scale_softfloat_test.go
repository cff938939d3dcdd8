//go:build mips || mipsle

package chansim

// Under qemu-mips (soft float, emulated) the scoreboard runs shorter.
var (
	scoreScale = 1.0
	scoreSeeds = []uint64{1}
)
