//go:build mips || mipsle

package kernel

// CPU profiling: setitimer(ITIMER_PROF), the process-wide timer the Go
// runtime falls back to when it cannot create per-thread CPU timers
// (timer_create is refused). runtime/pprof then works unchanged: every
// interval of CPU time the thread that was using the CPU gets SIGPROF
// with si_code SI_KERNEL, and the runtime's handler records its stack.
//
// The timer counts CPU time, as ITIMER_PROF does: the kernel's busy time
// (uptime less the time in the idle loop, busyNanos), which with one
// process is the process's CPU time. The expiry is checked whenever the
// kernel schedules (every trap), and the timer interrupt is armed for it
// while a thread runs. Counting wall time instead, an expiry that found
// the CPU idle would sample nothing and restart the period at the next
// wake-up, so work done in bursts shorter than a period after an idle
// spell, a frame's receive path, would go unsampled: under QEMU's
// -icount with sleep=off, where an idle CPU jumps to its next timer, that
// was nearly every burst.

const (
	itimerProf    = 2       // ITIMER_PROF
	minProfPeriod = 1000000 // 1 ms: a shorter interval would be all signal frames
)

// setitimer implements setitimer(which, new, old) for ITIMER_PROF; the
// other timers are not provided (the runtime does not use them).
//
//go:nosplit
func (k *kstate) setitimer(fr *frame, which uint32, nv, ov uintptr) {
	if which != itimerProf {
		fail(fr, eINVAL)
		return
	}
	now := k.busyNanos(k.nanotime())
	if ov != 0 {
		left := int64(0)
		if k.profNext != 0 {
			left = max(k.profNext-now, 1000)
		}
		if !k.putTimeval(ov, k.profNs) || !k.putTimeval(ov+8, left) {
			fail(fr, eFAULT)
			return
		}
	}
	if nv != 0 {
		interval, ok1 := k.getTimeval(nv)
		value, ok2 := k.getTimeval(nv + 8)
		if !ok1 || !ok2 {
			fail(fr, eFAULT)
			return
		}
		if interval < 0 || value < 0 {
			fail(fr, eINVAL)
			return
		}
		if value == 0 { // disarm
			k.profNs, k.profNext = 0, 0
		} else {
			if interval != 0 {
				interval = max(interval, minProfPeriod)
			}
			k.profNs, k.profNext = interval, now+max(value, minProfPeriod)
		}
	}
	ok(fr, 0)
}

// getTimeval reads an o32 struct timeval (two 32-bit words) as ns; a
// negative result means an invalid tv_usec.
//
//go:nosplit
func (k *kstate) getTimeval(va uintptr) (int64, bool) {
	sec, ok1 := k.ur32(va)
	usec, ok2 := k.ur32(va + 4)
	if !ok1 || !ok2 {
		return 0, false
	}
	if int32(sec) < 0 || usec >= 1000000 {
		return -1, true
	}
	return int64(sec)*1_000_000_000 + int64(usec)*1000, true
}

//go:nosplit
func (k *kstate) putTimeval(va uintptr, ns int64) bool {
	return k.uw32(va, uint32(ns/1_000_000_000)) && k.uw32(va+4, uint32(ns%1_000_000_000/1000))
}

// profTick runs from schedule, busy being busyNanos: if the profiling
// timer expired, the thread that held the CPU gets SIGPROF, and the timer
// reloads.
//
//go:nosplit
func (k *kstate) profTick(busy int64) {
	if k.profNext == 0 || busy < k.profNext {
		return
	}
	if k.cur != idleTid {
		t := k.th(k.cur)
		if t.state != tFree {
			t.sigpend |= sigbit(sigPROF)
		}
	}
	if k.profNs == 0 {
		k.profNext = 0
		return
	}
	k.profNext += k.profNs
	if k.profNext <= busy { // a trap-free stretch of several periods
		k.profNext = busy + k.profNs
	}
}

// idleNanos returns the time the CPU spent in the idle loop, in ns: Count
// ticks to ns as mono does (8.24 fixed point), in two parts so that the
// product cannot overflow.
//
//go:nosplit
func (k *kstate) idleNanos() int64 {
	return int64((k.idleTicks>>24)*uint64(k.mult24) + (k.idleTicks&(1<<24-1))*uint64(k.mult24)>>24)
}

// busyNanos returns the CPU time used up to now (k.nanotime()): the
// uptime less the idle loop's time. The idle time is brought up to date
// on every trap out of the idle loop, before schedule runs.
//
//go:nosplit
func (k *kstate) busyNanos(now int64) int64 { return now - k.idleNanos() }
