//go:build mips || mipsle

package mipsdma

// Implemented in cache_mipsx.s; they must run in kernel mode.

func readConfig1() uint32
func hitWriteback(start, end, line uintptr)
func hitInvalidate(start, end, line uintptr)
func hitWritebackInv(start, end, line uintptr)

// hitProbe runs the same loop with a byte store for the cache operation,
// for TestHitLoopBounds; it runs in user mode.
func hitProbe(start, end, line uintptr)
