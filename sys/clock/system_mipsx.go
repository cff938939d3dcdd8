//go:build mips || mipsle

package clock

import (
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// o32 system-call numbers (Linux arch/mips/kernel/syscalls/syscall_o32.tbl);
// the gowrt kernel implements both.
const (
	sysClockSettime   = 4262 // 32-bit timespec
	sysClockSettime64 = 4404 // struct __kernel_timespec
	sysClockAdjtime   = 4341 // 32-bit struct timex
	clockRealtime     = 0

	// clock_adjtime modes (Linux include/uapi/linux/timex.h).
	adjSetoffset = 0x0100
	adjNano      = 0x2000
)

// timex32 is the 32-bit struct timex of clock_adjtime (Linux
// include/uapi/linux/timex.h): modes, eight longs and an int, the time
// member, then fields this package does not use.
type timex32 struct {
	modes uint32
	_     [8]int32 // offset, freq, maxerror, esterror, status, constant, precision, tolerance
	sec   int32    // time.tv_sec
	nsec  int32    // time.tv_usec, in ns with ADJ_NANO
	_     [27]int32
}

// slewTick is how often a slew in progress moves the kernel clock: each
// tick steps it by at most MaxSlewPPM of a tick (500 µs per second), a
// jump no timestamp consumer notices.
const slewTick = time.Second

// System is the firmware's wall clock: the kernel's CLOCK_REALTIME, which
// the Go runtime's time.Now reads, so setting it moves every package's time.
type System struct {
	set    func(time.Time) error     // sets CLOCK_REALTIME
	adjust func(time.Duration) error // adds to CLOCK_REALTIME
	synced atomic.Bool

	mu      sync.Mutex
	pending time.Duration // slew still to apply
	timer   *time.Timer   // next slew tick; nil when none is due
	gen     uint64        // invalidates ticks of a replaced slew
}

// NewSystem returns the kernel's wall clock.
func NewSystem() *System { return &System{set: settime, adjust: adjust} }

// adjust adds d to CLOCK_REALTIME in the kernel with
// clock_adjtime(ADJ_SETOFFSET|ADJ_NANO), so no time is lost between a
// read and a set; on a kernel without it (ENOSYS) it falls back to
// clock_settime(now + d).
func adjust(d time.Duration) error {
	sec, nsec := int64(d/time.Second), int64(d%time.Second)
	if nsec < 0 { // tv_usec must be in [0, 1e9): the sign goes to tv_sec
		sec--
		nsec += int64(time.Second)
	}
	tx := timex32{modes: adjSetoffset | adjNano, sec: int32(sec), nsec: int32(nsec)}
	_, _, e := syscall.Syscall(sysClockAdjtime, clockRealtime, uintptr(unsafe.Pointer(&tx)), 0)
	if e == syscall.ENOSYS {
		return settime(time.Now().Add(d))
	}
	if e != 0 {
		return &timeError{"clock_adjtime", e}
	}
	return nil
}

// settime sets CLOCK_REALTIME with clock_settime64, falling back to the
// 32-bit clock_settime on a kernel older than Linux 5.1 (ENOSYS).
func settime(t time.Time) error {
	ts64 := struct{ sec, nsec int64 }{t.Unix(), int64(t.Nanosecond())}
	_, _, e := syscall.Syscall(sysClockSettime64, clockRealtime, uintptr(unsafe.Pointer(&ts64)), 0)
	if e == syscall.ENOSYS {
		ts := syscall.NsecToTimespec(t.UnixNano())
		_, _, e = syscall.Syscall(sysClockSettime, clockRealtime, uintptr(unsafe.Pointer(&ts)), 0)
	}
	if e != 0 {
		return &timeError{"clock_settime", e}
	}
	return nil
}

type timeError struct {
	op  string
	err syscall.Errno
}

func (e *timeError) Error() string { return "clock: " + e.op + ": " + e.err.Error() }
func (e *timeError) Unwrap() error { return e.err }

// Now returns time.Now(): the kernel clock is the clock.
func (c *System) Now() time.Time { return time.Now() }

func (c *System) step(to time.Time, synced bool) error {
	c.mu.Lock()
	c.cancelSlewLocked()
	err := c.set(to)
	c.mu.Unlock()
	if err == nil && synced {
		c.synced.Store(true)
	}
	return err
}

// Step sets CLOCK_REALTIME to to, cancelling a slew in progress.
func (c *System) Step(to time.Time) error { return c.step(to, true) }

// Slew moves CLOCK_REALTIME by offset in steps of at most MaxSlewPPM of
// slewTick each slewTick, replacing a slew in progress. The gowrt kernel
// has no frequency discipline, so a slew is a series of tiny relative
// steps (clock_adjtime ADJ_SETOFFSET), each too small for any timestamp
// consumer to notice.
func (c *System) Slew(offset time.Duration) error {
	c.mu.Lock()
	c.cancelSlewLocked()
	c.pending = offset
	if offset != 0 {
		c.scheduleLocked()
	}
	c.mu.Unlock()
	c.synced.Store(true)
	return nil
}

func (c *System) cancelSlewLocked() {
	c.gen++
	c.pending = 0
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
}

func (c *System) scheduleLocked() {
	gen := c.gen
	c.timer = time.AfterFunc(slewTick, func() { c.tick(gen) })
}

// tick applies one slew step.
func (c *System) tick(gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen || c.pending == 0 {
		return
	}
	limit := slewTick / (1_000_000 / MaxSlewPPM)
	d := max(-limit, min(limit, c.pending))
	if err := c.adjust(d); err != nil {
		c.pending, c.timer = 0, nil // a clock that cannot be set stops slewing
		return
	}
	c.pending -= d
	if c.pending == 0 {
		c.timer = nil
		return
	}
	c.scheduleLocked()
}

// Synced reports whether Step or Slew was called.
func (c *System) Synced() bool { return c.synced.Load() }
