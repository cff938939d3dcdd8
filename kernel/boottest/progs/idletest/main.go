//go:build mips || mipsle

// Command idletest makes timer interrupts land inside the idle loop's
// WAIT window thousands of times and counts lost wake-ups.
//
// The thread sleeps in futex(FUTEX_WAIT) with a timeout d that sweeps
// nanosecond by nanosecond across the time the kernel needs to reach the
// idle loop's WAIT: for some d the deadline expires after the idle loop
// checked for work but before its WAIT (the interrupt is then taken inside
// the window). The kernel counts interrupts taken in the window; the
// kernel also counts lost wake-ups: the idle loop resumed knowing work was
// runnable, ran on into WAIT and was woken from there by a later, unrelated
// interrupt (here mostly the runtime's sysmon timer, so a stall lasts
// microseconds instead of forever, and shows in the wake latency of the
// window hits). Booted normally the kernel skips the WAIT and nothing is
// lost; booted with kidle=naive the window is not skipped and every window
// hit is a lost wake-up. Run under -icount so the sweep
// is deterministic and the latencies are instruction counts.
package main

import (
	"fmt"
	"os"
	"runtime"
	"sort"
	"syscall"
	"unsafe"

	_ "github.com/gowrt/gowrt/board/malta"
	"github.com/gowrt/gowrt/kernel"
)

const (
	sysFutexTime64   = 4422
	futexWaitPrivate = 128
	wantHits         = 2000
)

type timespec64 struct {
	sec  int64
	nsec int32
	_    int32
}

var word uint32

// sleep blocks in the kernel for d ns and returns how late it woke.
func sleep(d int32) uint32 {
	ts := timespec64{nsec: d}
	t0 := kernel.Nanotime32()
	syscall.RawSyscall6(sysFutexTime64, uintptr(unsafe.Pointer(&word)), futexWaitPrivate, 0,
		uintptr(unsafe.Pointer(&ts)), 0, 0)
	return kernel.Nanotime32() - t0 - uint32(d)
}

func hits() uint32 {
	s, err := kernel.ReadIdleStats()
	if err != nil {
		fmt.Println("idletest: FAIL", err)
		os.Exit(1)
	}
	return s.WindowHits + s.NaiveHits
}

func main() {
	runtime.GOMAXPROCS(1)
	runtime.LockOSThread()
	var hitDs []int32
	var total, iters uint32
	var lat, hitLat []uint32
	try := func(d int32) bool {
		h0 := hits()
		late := sleep(d)
		hit := hits() != h0
		iters++
		lat = append(lat, late)
		if hit {
			total++
			hitLat = append(hitLat, late)
		}
		return hit
	}
	// Sweep to find the timeouts whose expiry lands in the window.
	for d := int32(0); d < 8000; d++ {
		if try(d) {
			hitDs = append(hitDs, d)
		}
	}
	if len(hitDs) == 0 {
		st, _ := kernel.ReadIdleStats()
		fmt.Printf("idletest: FAIL no timeout landed in the idle window (%+v)\n", st)
		os.Exit(1)
	}
	// Repeat those until the window was hit wantHits times.
	for round := 0; total < wantHits && round < 20000; round++ {
		for _, d := range hitDs {
			try(d)
		}
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	sort.Slice(hitLat, func(i, j int) bool { return hitLat[i] < hitLat[j] })
	s, _ := kernel.ReadIdleStats()
	fmt.Printf("idletest: %d sleeps, %d interrupts inside the window (%d skipped over, %d naive), %d lost wake-ups\n",
		iters, total, s.WindowHits, s.NaiveHits, s.LostWakeups)
	fmt.Printf("idletest: wake latency all p50 %d ns p99 %d ns max %d ns; window hits p50 %d ns p99 %d ns\n",
		lat[len(lat)/2], lat[len(lat)*99/100], lat[len(lat)-1], hitLat[len(hitLat)/2], hitLat[len(hitLat)*99/100])
	fmt.Printf("idletest: %d Compare writes, %d deadlines passed while writing (caught by re-reading Count)\n",
		s.TimerWrites, s.TimerMissed)
}
