//go:build mips || mipsle

package mipsdma

// Implemented in cache_mipsx.s; they must run in kernel mode.

func readConfig1() uint32
func hitWriteback(start, end, line uintptr)
func hitInvalidate(start, end, line uintptr)
func hitWritebackInv(start, end, line uintptr)
