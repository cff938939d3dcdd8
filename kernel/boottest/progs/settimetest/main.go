// Command settimetest checks clock_settime on the gowrt kernel: setting
// CLOCK_REALTIME through both system calls (clock_settime 4262 with a
// 32-bit timespec, clock_settime64 4404 with the 64-bit one) moves
// time.Now() and clock_gettime(64) to the value set, leaves
// CLOCK_MONOTONIC (and so every sleep) alone, and refuses what Linux
// refuses: another clock (EINVAL), a nanosecond out of range or a
// negative second (EINVAL), an unreadable timespec (EFAULT).
package main

import (
	"fmt"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// o32 numbers (Linux arch/mips/kernel/syscalls/syscall_o32.tbl).
const (
	sysClockSettime   = 4262
	sysClockGettime   = 4263
	sysClockGettime64 = 4403
	sysClockSettime64 = 4404

	clockRealtime  = 0
	clockMonotonic = 1
)

// kernelTimespec64 is struct __kernel_timespec (two 64-bit fields).
type kernelTimespec64 struct {
	Sec  int64
	Nsec int64
}

func settime32(clk uintptr, sec int32, nsec int32) syscall.Errno {
	ts := [2]int32{sec, nsec}
	_, _, e := syscall.RawSyscall(sysClockSettime, clk, uintptr(unsafe.Pointer(&ts)), 0)
	return e
}

func settime64(clk uintptr, sec, nsec int64) syscall.Errno {
	ts := kernelTimespec64{sec, nsec}
	_, _, e := syscall.RawSyscall(sysClockSettime64, clk, uintptr(unsafe.Pointer(&ts)), 0)
	return e
}

func gettime64(clk uintptr) (kernelTimespec64, syscall.Errno) {
	ts := kernelTimespec64{-1, -1}
	_, _, e := syscall.RawSyscall(sysClockGettime64, clk, uintptr(unsafe.Pointer(&ts)), 0)
	return ts, e
}

func monoNs() int64 {
	var ts [2]int32
	syscall.RawSyscall(sysClockGettime, clockMonotonic, uintptr(unsafe.Pointer(&ts)), 0)
	return int64(ts[0])*1e9 + int64(ts[1])
}

// near fails unless got is within a second after want (and not before it).
func near(what string, got, want time.Time) {
	if d := got.Sub(want); d < 0 || d > time.Second {
		fail("%s: %v, want within a second after %v (off by %v)", what, got.UTC(), want.UTC(), d)
	}
}

func main() {
	mono0 := monoNs()

	// clock_settime (32-bit timespec).
	t1 := time.Date(2031, 5, 17, 8, 30, 15, 250_000_000, time.UTC)
	if e := settime32(clockRealtime, int32(t1.Unix()), int32(t1.Nanosecond())); e != 0 {
		fail("clock_settime(CLOCK_REALTIME): %v", e)
	}
	near("time.Now after clock_settime", time.Now(), t1)
	ts, e := gettime64(clockRealtime)
	if e != 0 {
		fail("clock_gettime64: %v", e)
	}
	if ts.Nsec < 0 || ts.Nsec >= 1e9 {
		fail("clock_gettime64 nsec field %#x is not a 64-bit nanosecond", ts.Nsec)
	}
	near("clock_gettime64 after clock_settime", time.Unix(ts.Sec, ts.Nsec), t1)

	// clock_settime64 (64-bit timespec), also backwards.
	t2 := time.Date(2027, 2, 3, 4, 5, 6, 999_999_999, time.UTC)
	if e := settime64(clockRealtime, t2.Unix(), int64(t2.Nanosecond())); e != 0 {
		fail("clock_settime64(CLOCK_REALTIME): %v", e)
	}
	near("time.Now after clock_settime64", time.Now(), t2)

	// Wall time keeps running with the monotonic clock.
	time.Sleep(300 * time.Millisecond)
	if d := time.Now().Sub(t2); d < 300*time.Millisecond || d > 1300*time.Millisecond {
		fail("300 ms after clock_settime64 the wall clock moved %v", d)
	}

	// Refusals, none of which may change the clock.
	before := time.Now()
	for _, c := range []struct {
		what string
		e    syscall.Errno
		want syscall.Errno
	}{
		{"CLOCK_MONOTONIC", settime32(clockMonotonic, 1, 0), syscall.EINVAL},
		{"clock 7 (BOOTTIME)", settime64(7, 2e9, 0), syscall.EINVAL},
		{"nsec = 1e9", settime32(clockRealtime, 2e9, 1e9), syscall.EINVAL},
		{"nsec < 0", settime64(clockRealtime, 2e9, -1), syscall.EINVAL},
		{"sec < 0", settime64(clockRealtime, -5, 0), syscall.EINVAL},
		{"sec before CLOCK_MONOTONIC", settime32(clockRealtime, 0, 0), syscall.EINVAL},
	} {
		if c.e != c.want {
			fail("clock_settime %s: errno %d, want %d", c.what, c.e, c.want)
		}
	}
	for _, p := range []uintptr{0, 0x100, 0x7ffffff0} {
		if _, _, e := syscall.RawSyscall(sysClockSettime, clockRealtime, p, 0); e != syscall.EFAULT {
			fail("clock_settime(%#x): errno %d, want EFAULT", p, e)
		}
		if _, _, e := syscall.RawSyscall(sysClockSettime64, clockRealtime, p, 0); e != syscall.EFAULT {
			fail("clock_settime64(%#x): errno %d, want EFAULT", p, e)
		}
	}
	near("time.Now after the refused calls", time.Now(), before)

	// CLOCK_MONOTONIC never moved with the wall clock.
	if d := monoNs() - mono0; d < 300e6 || d > 5e9 {
		fail("CLOCK_MONOTONIC moved %d ns across the test", d)
	}
	fmt.Printf("settimetest: ok, now %s\n", time.Now().UTC().Format(time.RFC3339))
}

func fail(format string, args ...any) {
	fmt.Printf("settimetest: FAIL "+format+"\n", args...)
	os.Exit(1)
}
