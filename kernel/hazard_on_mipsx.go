//go:build (mips || mipsle) && gowrt_hazard

package kernel

// Hazard injection for the boot tests, compiled in only with
// -tags gowrt_hazard (the shipped kernel has empty stand-ins,
// hazard_off_mipsx.go).
//
// The hazard: the CP0 timer interrupt is raised when Count becomes equal to
// Compare. A Compare value that Count has already passed when the write
// lands is matched only after Count wraps, 2^32 ticks later (25.8 s at
// QEMU's 166.67 MHz Count; 12-21 s on the AR71xx family, whose Count runs
// at half of a 400-720 MHz CPU clock). arm re-reads Count after every write
// and handles a passed deadline at once; these hooks make a deadline pass
// inside the write on purpose and can switch that guard off:
//
//   - system call sysGowrtHazard, op hazardOpLateSleep: sleep for arg ns;
//     the first time during the sleep that arm programs Compare for the CPU
//     to idle, it holds the write back until Count has passed the value it
//     writes, so the write lands late whatever the speed of the CPU or
//     emulator;
//   - boot switch kcompare=noguard: arm trusts every Compare write (it does
//     not re-read Count), as a kernel without the guard would;
//   - boot switch kslice=plain: time slices end whether or not the runtime's
//     64-bit atomic lock is held, and spinners are not switched away, as in
//     a kernel without atomiclock_mipsx.go (its spinners are still counted).

// Operations of sysGowrtHazard.
const (
	hazardOpHeld      = 0 // returns the number of Compare writes held back so far
	hazardOpGuard     = 1 // returns 1 if arm guards its Compare writes, 0 with kcompare=noguard
	hazardOpLateSleep = 2 // sleep arg ns (1 µs..1 ms) with one Compare write landing late
)

type hazardState struct {
	late int64  // deadline of a hazardOpLateSleep not yet served, 0 = none
	held uint32 // Compare writes held back so far
	// switches holds the boot switches (bootTestSwitch's bits):
	// hzNoGuard (kcompare=noguard) makes arm trust its Compare writes (no
	// re-read of Count); hzPlainSlice (kslice=plain) ends slices and lets
	// spinners spin whether or not the runtime's atomic lock is held.
	switches uint32
}

const (
	hzNoGuard    = 1
	hzPlainSlice = 2
)

// hazardLateWrite tells arm, programming Compare for deadline, to write
// even if Compare already holds that deadline and to hold the write back
// (hazardHold). It does so once per hazardOpLateSleep: at the first write
// made, during the sleep, for the CPU to idle (schedule has picked the idle
// loop) with a deadline no later than the sleep's. That is the write whose
// loss stalls the machine, whichever thread's deadline it carries (often
// the runtime's sysmon, which sleeps 20 µs at a time); a write followed by
// a running thread is rescued by that thread's next system call.
//
//go:nosplit
func (k *kstate) hazardLateWrite(deadline int64) bool {
	if k.hz.late == 0 || k.cur != idleTid || deadline > k.hz.late {
		return false
	}
	k.hz.late = 0
	k.hz.held++
	return true
}

// hazardHold spins until Count has passed c, the value arm is about to
// write, so the write lands behind Count.
//
//go:nosplit
func (k *kstate) hazardHold(c uint32) {
	for int32(readCount()-c) <= 0 {
	}
}

// hazardTrustWrite reports whether arm is to skip its guard.
//
//go:nosplit
func (k *kstate) hazardTrustWrite() bool { return k.hz.switches&hzNoGuard != 0 }

// hazardPlainSlice reports whether slices end and spinners spin as if the
// kernel did not know the runtime's atomic lock (kslice=plain).
//
//go:nosplit
func (k *kstate) hazardPlainSlice() bool { return k.hz.switches&hzPlainSlice != 0 }

// hazardSyscall serves sysGowrtHazard; it reports false for other calls.
//
//go:nosplit
func (k *kstate) hazardSyscall(fr *frame, t *thread, nr, op, arg uint32) bool {
	if nr != sysGowrtHazard {
		return false
	}
	switch op {
	case hazardOpHeld:
		ok(fr, k.hz.held)
	case hazardOpGuard:
		ok(fr, 1-k.hz.switches&hzNoGuard)
	case hazardOpLateSleep:
		if arg < 1_000 || arg > 1_000_000 {
			fail(fr, eINVAL)
			break
		}
		ok(fr, 0)
		deadline := k.nanotime() + int64(arg)
		k.hz.late = deadline
		k.block(t, wSleep, 0, deadline)
	default:
		fail(fr, eINVAL)
	}
	return true
}

// hazardToken consumes the hazard boot switches. It stays small enough to
// be inlined into the boot code, which the discipline walk does not cover
// (only hazard hooks reachable from the trap entry are walked).
//
//go:nosplit
func (k *kstate) hazardToken(a, n uintptr) bool {
	f := bootTestSwitch(a, n)
	k.hz.switches |= f
	return f != 0
}

//go:nosplit
func isHazardToken(a, n uintptr) bool { return bootTestSwitch(a, n) != 0 }

// bootTestSwitch returns the switch's bit (hzNoGuard, hzPlainSlice), 0
// for anything else. Boot only.
//
//go:nosplit
func bootTestSwitch(a, n uintptr) uint32 {
	switch {
	case strEq(a, n, "kcompare=noguard"):
		return hzNoGuard
	case strEq(a, n, "kslice=plain"):
		return hzPlainSlice
	}
	return 0
}
