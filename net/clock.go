package net

import (
	"time"

	"github.com/gowrt/gowrt/kernel"
	"gvisor.dev/gvisor/pkg/tcpip"
)

// StackClock returns the clock for the firmware's gVisor stacks
// (stack.Options.Clock). gVisor reads its monotonic clock several times
// per TCP segment; on mips32 each read of the standard clock is a system
// call (Linux has no vDSO there, and the runtime's nanotime traps), which
// cost a fifth of the CPU time of a transfer into the stack on QEMU malta.
// On the gowrt kernel the returned clock reads CP0 Count directly
// (kernel.Nanotime); anywhere else it is gVisor's standard clock. Wall
// time and timers are the standard clock's in both cases.
func StackClock() tcpip.Clock {
	std := tcpip.NewStdClock()
	if !kernel.Running() {
		return std
	}
	return kernelClock{std}
}

type kernelClock struct{ tcpip.Clock }

// NowMonotonic implements tcpip.Clock from CLOCK_MONOTONIC, the clock the
// runtime's timers (AfterFunc) use too.
func (kernelClock) NowMonotonic() tcpip.MonotonicTime {
	return tcpip.MonotonicTime{}.Add(time.Duration(kernel.Nanotime()))
}
