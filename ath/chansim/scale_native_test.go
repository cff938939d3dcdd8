//go:build !mips && !mipsle

package chansim

// The host runs the scoreboard at full length over three seeds.
var (
	scoreScale = 1.0
	scoreSeeds = []uint64{1, 2, 3}
)
