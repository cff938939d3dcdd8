package netstack

import (
	"sync"
	"sync/atomic"
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

// CoarseNanotime returns a monotonic time in nanoseconds that lags the
// true time by up to coarsePeriod (more while the CPU is too busy to run
// the goroutine that refreshes it): for per-frame timestamps whose users
// count in tens of milliseconds or seconds, the bridge's FDB aging and
// storm control and the connection table's expiry, which read the clock
// for every frame. On the gowrt kernel it is a variable that goroutine
// refreshes, read with one atomic load and a plain one, where Nanotime
// costs about 70 instructions on mips32 (natbench); elsewhere it is
// Nanotime. Like Linux's jiffies, which conntrack and the bridge count
// in, it never goes back.
func CoarseNanotime() int64 {
	if !onKernel {
		return Nanotime()
	}
	// coarse.now, written out: the bridge and the connection table call
	// this through a func value for every frame, and the second call
	// level cost about 20 instructions per read on mips32 (natbench).
	if p := coarse.cur.Load(); p != nil {
		return *p
	}
	return coarse.slow()
}

// coarsePeriod is CoarseNanotime's refresh period on the gowrt kernel.
// Each refresh is a timer wake-up, which cost about 40 instructions per
// frame at 10 ms (natbench); the users count in seconds (connection
// timeouts, the FDB's one-second refresh) or in 67-ms units (FDB
// timestamps).
const coarsePeriod = 50 * time.Millisecond

var coarse = coarseClock{src: Nanotime, period: coarsePeriod}

// coarseClock is a time in ns that a goroutine, started by the first
// read, refreshes from src every period. Each refresh publishes a new
// int64 through one pointer, never written again: a 64-bit atomic takes
// the Go runtime's global spinlock on mips32, and the sequence-counted
// pair of 32-bit halves this replaced took four atomic loads per read,
// each between two SYNCs (about 60 instructions per NATed frame, two
// reads, natbench). The price is an 8-byte allocation per period, off
// the per-frame path.
type coarseClock struct {
	cur    atomic.Pointer[int64] // nil until the first refresh
	once   sync.Once
	src    func() int64
	period time.Duration
	stop   chan struct{} // closed to end the goroutine (tests); nil: never
}

// now reads the time (CoarseNanotime repeats it for coarse).
func (c *coarseClock) now() int64 {
	if p := c.cur.Load(); p != nil {
		return *p
	}
	return c.slow()
}

// slow is now before the first write.
func (c *coarseClock) slow() int64 {
	c.once.Do(c.start)
	return *c.cur.Load()
}

func (c *coarseClock) start() {
	c.store(c.src())
	go c.refresh()
}

// store publishes ns; only start and then refresh write, one at a time.
func (c *coarseClock) store(ns int64) {
	c.cur.Store(&ns)
}

func (c *coarseClock) refresh() {
	t := time.NewTicker(c.period)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			c.store(c.src())
		case <-c.stop:
			return
		}
	}
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
