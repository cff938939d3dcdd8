package netstack

import (
	"time"
	"unsafe"

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

var clockStart = time.Now()

// onKernel is kernel.Running, read once: the bridge and the connection
// table read Nanotime for every frame, and a sync.OnceValue call costs
// about 50 instructions on mips32 (natbench).
var onKernel = kernel.Running()

// Nanotime returns a monotonic time in nanoseconds for per-frame
// timestamps (the bridge's FDB aging): kernel.Nanotime on the gowrt
// kernel, where the runtime's clock costs a trap per read, the time
// package elsewhere.
func Nanotime() int64 {
	if onKernel {
		return kernel.Nanotime()
	}
	return int64(time.Since(clockStart))
}

// NowMonotonic implements tcpip.Clock from CLOCK_MONOTONIC, the clock the
// runtime's timers (AfterFunc) use too.
func (kernelClock) NowMonotonic() tcpip.MonotonicTime {
	return monotonic(kernel.Nanotime())
}

// monotonic returns the tcpip.MonotonicTime ns nanoseconds after the zero
// one, what MonotonicTime{}.Add(ns) returns. The type's only constructor,
// Add, goes through time.Unix and time.Time.Sub: 64-bit divisions, which
// mips32 does in software, made the stack's clock reads 3.5% of a bulk
// download's instructions on malta (XferInstructionsMaltaLE). The type is
// one int64 of nanoseconds (gVisor's pkg/tcpip/tcpip.go); the size checks
// below and TestMonotonicMatchesAdd hold it to that.
func monotonic(ns int64) tcpip.MonotonicTime {
	return *(*tcpip.MonotonicTime)(unsafe.Pointer(&ns))
}

// Compile-time checks that tcpip.MonotonicTime is 8 bytes, as an int64.
var (
	_ [unsafe.Sizeof(tcpip.MonotonicTime{}) - 8]byte
	_ [8 - unsafe.Sizeof(tcpip.MonotonicTime{})]byte
)
