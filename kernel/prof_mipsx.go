//go:build mips || mipsle

package kernel

// CPU profiling: setitimer(ITIMER_PROF), the process-wide timer the Go
// runtime falls back to when it cannot create per-thread CPU timers
// (timer_create is refused). runtime/pprof then works unchanged: every
// interval of CPU time the thread that was using the CPU gets SIGPROF
// with si_code SI_KERNEL, and the runtime's handler records its stack.
//
// CPU time is approximated by wall time while a thread, not the idle
// loop, holds the CPU: the expiry is checked whenever the kernel
// schedules (every trap), the timer interrupt is armed for it only while
// a thread runs, and an expiry that finds the CPU idle samples nothing.

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
	now := k.nanotime()
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

// profTick runs from schedule: if the profiling timer expired, the thread
// that held the CPU (not the idle loop) gets SIGPROF, and the timer
// reloads.
//
//go:nosplit
func (k *kstate) profTick(now int64) {
	if k.profNext == 0 || now < k.profNext {
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
	if k.profNext <= now { // the CPU idled through several periods
		k.profNext = now + k.profNs
	}
}
