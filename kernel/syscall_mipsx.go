//go:build mips || mipsle

package kernel

import "unsafe"

// Flags and constants of the Linux mips ABI used below.
const (
	futexWait       = 0
	futexWake       = 1
	futexCmdMask    = 0x7f
	mapFixed        = 0x10
	mapAnon         = 0x800
	protRead        = 1
	protWrite       = 2
	madvDontneed    = 4
	madvFree        = 8
	oNonblock       = 0x80
	fGetfd          = 1
	fSetfd          = 2
	fGetfl          = 3
	fSetfl          = 4
	epollCtlAdd     = 1
	epollCtlDel     = 2
	epollCtlMod     = 3
	epollIn         = 0x001
	epollOut        = 0x004
	epollET         = 1 << 31
	sigBlock        = 1 // mips numbering
	sigUnblock      = 2
	sigSetmask      = 3
	ssOnstack       = 1
	ssDisable       = 2
	clockRealtime   = 0
	clockMonotonic  = 1
	clockBoottime   = 7
	clockMonoRaw    = 4
	clockMonoCoarse = 6
	clockRealCoarse = 5
)

//go:nosplit
func ok(fr *frame, v uint32) {
	fr[2] = v
	fr[7] = 0
}

//go:nosplit
func fail(fr *frame, errno uint32) {
	fr[2] = errno
	fr[7] = 1
}

// arg returns syscall argument n (0-based): a0-a3 in registers, the rest at
// sp+16.. of the caller's stack.
//
//go:nosplit
func (k *kstate) arg(fr *frame, n int) uint32 {
	if n < 4 {
		return fr[4+n&3]
	}
	v, _ := k.ur32(uintptr(fr[29]) + 16 + uintptr(n-4)*4)
	return v
}

// syscall services the call in fr. fast reports that nothing changed that
// needs the scheduler (the common clock_gettime path); yield asks the
// scheduler to switch away from the caller.
//
//go:nosplit
func (k *kstate) syscall(fr *frame) (fast, yield bool) {
	nr := fr[2]
	if k.flags&kfTrace != 0 {
		kputs("[")
		kputdec(int32(k.th(k.cur).tid))
		kputs("] sys ")
		kputdec(int32(nr))
		kputs("(")
		kputhex(fr[4])
		kputs(", ")
		kputhex(fr[5])
		kputs(", ")
		kputhex(fr[6])
		kputs(") epc ")
		kputhex(fr[fEPC])
	}
	if nr == sysRtSigreturn {
		k.sigreturn(fr)
		return false, false
	}
	fr[fEPC] += 4
	a0, a1, a2, a3 := fr[4], fr[5], fr[6], fr[7]
	t := k.th(k.cur)
	if k.cur == idleTid {
		// The idle loop gives up the CPU (idle.Code). Anything else from
		// idle is a kernel bug.
		return false, true
	}
	switch nr {
	case sysClockGettime, sysClockGettime64:
		k.clockGettime(fr, a0, uintptr(a1), nr == sysClockGettime64)
		return true, false
	case sysClockSettime, sysClockSettime64:
		k.clockSettime(fr, a0, uintptr(a1), nr == sysClockSettime64)
		return true, false
	case sysClockAdjtime, sysClockAdjtime64:
		k.clockAdjtime(fr, a0, uintptr(a1), nr == sysClockAdjtime64)
		return true, false
	case sysClockGetres:
		if a1 != 0 {
			k.uw32(uintptr(a1), 0)
			k.uw32(uintptr(a1)+4, 1)
		}
		ok(fr, 0)
	case sysGettid:
		ok(fr, t.tid)
		return true, false
	case sysGetpid:
		ok(fr, 1)
		return true, false
	case sysWrite:
		k.write(fr, a0, uintptr(a1), a2)
	case sysRead:
		k.read(fr, t, a0, uintptr(a1), a2)
	case sysClose:
		k.close(fr, a0)
	case sysFcntl, sysFcntl64:
		k.fcntl(fr, a0, a1, a2)
	case sysMmap, sysMmap2:
		k.mmap(fr, uintptr(a0), uintptr(a1), a2, a3, k.arg(fr, 4))
	case sysMunmap:
		k.munmap(fr, uintptr(a0), uintptr(a1))
	case sysMadvise:
		k.madvise(fr, uintptr(a0), uintptr(a1), a2)
	case sysBrk:
		ok(fr, 0)
	case sysClone:
		k.clone(fr, t, a0, a1)
	case sysExit:
		t.state = tFree
		t.wait = wNone
		return false, true
	case sysExitGroup:
		k.exit(int32(a0))
	case sysReboot:
		k.reboot(fr, a0, a1, a2)
	case sysUname:
		k.uname(fr, uintptr(a0))
	case sysSchedYield:
		ok(fr, 0)
		return false, true
	case sysNanosleep:
		k.nanosleep(fr, t, uintptr(a0))
	case sysFutex, sysFutexTime64:
		k.futex(fr, t, uintptr(a0), a1, a2, uintptr(a3), nr == sysFutexTime64)
	case sysSchedGetaff:
		if a1 < 4 {
			fail(fr, eINVAL)
			break
		}
		if !k.uw32(uintptr(a2), 1) {
			fail(fr, eFAULT)
			break
		}
		ok(fr, 4)
	case sysRtSigaction:
		k.sigaction(fr, a0, uintptr(a1), uintptr(a2))
	case sysRtSigprocmask:
		k.sigprocmask(fr, t, a0, uintptr(a1), uintptr(a2))
	case sysSigaltstack:
		k.sigaltstack(fr, t, uintptr(a0), uintptr(a1))
	case sysTgkill:
		k.tgkill(fr, a1, a2)
	case sysSetitimer:
		k.setitimer(fr, a0, uintptr(a1), uintptr(a2))
	case sysKill:
		k.tgkill(fr, 0, a1)
	case sysEpollCreate1:
		k.epollCreate(fr)
	case sysEpollCtl:
		k.epollCtl(fr, a0, a1, a2, uintptr(a3))
	case sysEpollPwait:
		k.epollWait(fr, t, a0, uintptr(a1), a2, int32(a3))
	case sysEventfd2:
		k.eventfd(fr, a0, a1)
	case sysGetrandom:
		k.getrandom(fr, uintptr(a0), a1)
	case sysGowrtInfo:
		k.info(fr, uintptr(a0), a1)
	case sysGowrtIRQ:
		k.irqOp(fr, a0, a1)
	case sysGowrtIRQWait:
		k.irqWait(fr, t, a0)
	case sysGowrtIdleStats:
		k.idleStats(fr, uintptr(a0))
	case sysGowrtConsoleLog:
		k.consoleLog(fr, uintptr(a0), a1, a2)
	case sysGowrtDMAAlloc:
		k.dmaAlloc(fr, a0, a1)
	case sysGowrtCrash:
		if k.flags&kfTest == 0 {
			fail(fr, ePERM)
			break
		}
		// Touch an unmapped kseg2 address from trap context: the nested
		// exception path must dump registers and halt.
		ok(fr, *mem32(uintptr(a0)))
	default:
		if k.hazardSyscall(fr, t, nr, a0, a1) {
			break
		}
		d, errno := Classify(nr)
		if d == Unknown {
			k.logUnknown(nr)
		}
		fail(fr, errno)
	}
	return false, t.state != tRunnable
}

//go:nosplit
func (k *kstate) logUnknown(nr uint32) {
	if nr >= firstLinuxSyscall && nr <= lastTrackedSyscall {
		i := nr - firstLinuxSyscall
		bit := uint32(1) << (i & 31)
		w := &k.unknownSeen[(i>>5)&15]
		if *w&bit != 0 {
			return
		}
		*w |= bit
	}
	kputs("gowrt: unimplemented system call ")
	kputdec(int32(nr))
	kputs(", returning ENOSYS\n")
}

//go:nosplit
func (k *kstate) exit(code int32) {
	kputs("gowrt: exit ")
	kputdec(code)
	kputs("\n")
	platformReset()
	waitForever()
}

// reboot(2) commands and magic numbers (Linux include/uapi/linux/reboot.h).
const (
	rebootMagic1   = 0xfee1dead
	rebootRestart  = 0x01234567
	rebootHalt     = 0xcdef0123
	rebootPowerOff = 0x4321fedc
	rebootCADOn    = 0x89abcdef
	rebootCADOff   = 0x00000000
)

// reboot restarts, halts or powers off the board (the platform's reset and
// power-off hooks); Ctrl-Alt-Del settings are accepted and ignored.
//
//go:nosplit
func (k *kstate) reboot(fr *frame, magic1, magic2, cmd uint32) {
	switch magic2 {
	case 672274793, 85072278, 369367448, 537993216: // LINUX_REBOOT_MAGIC2, 2A, 2B, 2C
	default:
		magic1 = 0
	}
	if magic1 != rebootMagic1 {
		fail(fr, eINVAL)
		return
	}
	switch cmd {
	case rebootCADOn, rebootCADOff:
		ok(fr, 0)
		return
	case rebootRestart:
		kputs("gowrt: restart\n")
		platformReset()
	case rebootPowerOff:
		kputs("gowrt: power off\n")
		platformPowerOff()
	case rebootHalt:
	default:
		fail(fr, eINVAL)
		return
	}
	kputs("gowrt: halted\n")
	waitForever()
}

//go:nosplit
func (k *kstate) clockGettime(fr *frame, clk uint32, ts uintptr, ts64 bool) {
	var sec int64
	var nsec uint32
	switch clk {
	case clockRealtime, clockRealCoarse:
		sec, nsec = k.wall()
	case clockMonotonic, clockMonoRaw, clockMonoCoarse, clockBoottime:
		sec, nsec = k.mono()
	default:
		fail(fr, eINVAL)
		return
	}
	if ts64 {
		// struct __kernel_timespec: two 64-bit fields (Linux
		// include/uapi/linux/time_types.h), so nsec is a 64-bit store.
		if !k.uw64(ts, uint64(sec)) || !k.uw64(ts+8, uint64(nsec)) {
			fail(fr, eFAULT)
			return
		}
	} else if !k.uw32(ts, uint32(sec)) || !k.uw32(ts+4, nsec) {
		fail(fr, eFAULT)
		return
	}
	ok(fr, 0)
}

// ktimeSecMax is the largest settable second (Linux KTIME_SEC_MAX,
// include/linux/time64.h: KTIME_MAX / NSEC_PER_SEC).
const ktimeSecMax = (1<<63 - 1) / 1_000_000_000

// clockSettime sets CLOCK_REALTIME, the only settable clock, the way
// Linux's clock_settime does (kernel/time/posix-timers.c and
// timekeeping.c): any other clock id is EINVAL before the timespec is
// read, an unreadable timespec is EFAULT, a negative second or a
// nanosecond outside [0, 1e9) is EINVAL, and so is a time earlier than
// CLOCK_MONOTONIC (Linux refuses a wall-to-monotonic offset that would
// turn positive). Only the offset wallSec/wallNsec changes: CLOCK_MONOTONIC,
// every sleep and every armed timer run on Count and are not disturbed.
// One CPU, interrupts off: the fast clock_gettime path in asm_mipsx.s
// sees either the old or the new offset, never half of it.
//
//go:nosplit
func (k *kstate) clockSettime(fr *frame, clk uint32, ts uintptr, ts64 bool) {
	if clk != clockRealtime {
		fail(fr, eINVAL)
		return
	}
	sec, nsec, readable := k.readTimespec(ts, ts64)
	if !readable {
		fail(fr, eFAULT)
		return
	}
	if sec < 0 || sec >= ktimeSecMax || nsec >= 1_000_000_000 {
		fail(fr, eINVAL)
		return
	}
	msec, mnsec := k.mono()
	wsec := sec - msec
	var wnsec uint32
	if nsec >= mnsec {
		wnsec = nsec - mnsec
	} else {
		wnsec = nsec + 1_000_000_000 - mnsec
		wsec--
	}
	if wsec < 0 {
		fail(fr, eINVAL)
		return
	}
	k.wallSec, k.wallNsec = wsec, wnsec
	ok(fr, 0)
}

// clock_adjtime modes (Linux include/uapi/linux/timex.h).
const (
	adjSetoffset = 0x0100 // add time.tv_sec/tv_usec to the clock
	adjNano      = 0x2000 // tv_usec holds nanoseconds
	timeOK       = 0      // clock state returned: synchronised, no leap
)

// Offsets of the time member (a timeval) in struct timex: the 32-bit
// layout of clock_adjtime (nine 32-bit fields before it; Linux
// include/uapi/linux/timex.h, old_timex32) and struct __kernel_timex of
// clock_adjtime64 (64-bit fields, the int fields padded).
const (
	timexTime32 = 36
	timexTime64 = 72
)

// clockAdjtime implements clock_adjtime(CLOCK_REALTIME) for one mode,
// ADJ_SETOFFSET (with or without ADJ_NANO): add a signed offset to
// CLOCK_REALTIME in one step. This is what a user-space slew needs: a
// read-modify-set with clock_settime loses the time between the read and
// the set (hundreds of microseconds under emulation), an offset added here
// loses nothing. The offset is {tv_sec, tv_usec} with tv_usec in
// [0, 1e6) (or [0, 1e9) with ADJ_NANO) and tv_sec carrying the sign, as
// Linux requires (kernel/time/timekeeping.c, timekeeping_validate_timex).
// Any other mode, the frequency and PLL disciplines included, is EINVAL:
// this kernel has no NTP discipline to adjust. The timex is not written
// back. The result must not be before CLOCK_MONOTONIC (EINVAL, as in
// Linux's timekeeping_inject_offset).
//
//go:nosplit
func (k *kstate) clockAdjtime(fr *frame, clk uint32, tx uintptr, tx64 bool) {
	if clk != clockRealtime {
		fail(fr, eINVAL)
		return
	}
	modes, ok0 := k.ur32(tx)
	if !ok0 {
		fail(fr, eFAULT)
		return
	}
	if modes&^adjNano != adjSetoffset {
		fail(fr, eINVAL)
		return
	}
	var sec, frac int64
	var ok1, ok2 bool
	if tx64 {
		var s, f uint64
		s, ok1 = k.ur64(tx + timexTime64)
		f, ok2 = k.ur64(tx + timexTime64 + 8)
		sec, frac = int64(s), int64(f)
	} else {
		var s, f uint32
		s, ok1 = k.ur32(tx + timexTime32)
		f, ok2 = k.ur32(tx + timexTime32 + 4)
		sec, frac = int64(int32(s)), int64(int32(f))
	}
	if !ok1 || !ok2 {
		fail(fr, eFAULT)
		return
	}
	limit := int64(1_000_000)
	if modes&adjNano != 0 {
		limit = 1_000_000_000
	}
	if frac < 0 || frac >= limit || sec <= -ktimeSecMax || sec >= ktimeSecMax {
		fail(fr, eINVAL)
		return
	}
	nsec := uint32(frac)
	if limit == 1_000_000 {
		nsec *= 1000
	}
	wsec := k.wallSec + sec
	wnsec := k.wallNsec + nsec // < 2e9: fits
	if wnsec >= 1_000_000_000 {
		wnsec -= 1_000_000_000
		wsec++
	}
	if wsec < 0 {
		fail(fr, eINVAL)
		return
	}
	k.wallSec, k.wallNsec = wsec, wnsec
	ok(fr, timeOK)
}

// ts64Nsec reads tv_nsec of a 64-bit timespec (struct __kernel_timespec:
// 64-bit tv_sec, 64-bit tv_nsec) at ts.
//
// Linux keeps the low word of the 64-bit tv_nsec and drops the high one
// (kernel/time/time.c, get_timespec64). Go's runtime up to at least 1.26
// declares that field on 32-bit targets as an int32 followed by padding
// (runtime/defs_linux_mipsx.go), which on big-endian MIPS puts the
// nanoseconds in the high word and leaves the low word zero: its futex
// timeouts (futex_time64) would all lose their sub-second part
// (golang/go#77934). This kernel hosts that runtime, so a zero low word
// with a valid nanosecond count in the high word is read as Go writes it;
// anything else as Linux reads it. On little-endian both agree.
//
//go:nosplit
func (k *kstate) ts64Nsec(ts uintptr) (uint32, bool) {
	lo, ok1 := k.ur32(ts + 8 + loOff)
	hi, ok2 := k.ur32(ts + 8 + hiOff)
	if lo == 0 && hi < 1_000_000_000 {
		return hi, ok1 && ok2
	}
	return lo, ok1 && ok2
}

// readTimespec reads a user timespec: the 32-bit layout (tv_sec and
// tv_nsec words) or the 64-bit one (struct __kernel_timespec, see
// ts64Nsec). ok is false when the memory is not readable.
//
//go:nosplit
func (k *kstate) readTimespec(ts uintptr, ts64 bool) (sec int64, nsec uint32, ok bool) {
	if ts64 {
		s, ok1 := k.ur64(ts)
		ns, ok2 := k.ts64Nsec(ts)
		return int64(s), ns, ok1 && ok2
	}
	s, ok1 := k.ur32(ts)
	ns, ok2 := k.ur32(ts + 4)
	return int64(int32(s)), ns, ok1 && ok2
}

// tsToNs reads a timespec (32- or 64-bit layout) and returns ns, or -1.
//
//go:nosplit
func (k *kstate) tsToNs(ts uintptr, ts64 bool) int64 {
	sec, nsec, ok := k.readTimespec(ts, ts64)
	if !ok || sec < 0 || nsec >= 1_000_000_000 {
		return -1
	}
	if sec > 1<<32 {
		sec = 1 << 32
	}
	return sec*1_000_000_000 + int64(nsec)
}

//go:nosplit
func (k *kstate) nanosleep(fr *frame, t *thread, req uintptr) {
	d := k.tsToNs(req, false)
	if d < 0 {
		fail(fr, eINVAL)
		return
	}
	ok(fr, 0)
	if d == 0 {
		return
	}
	k.block(t, wSleep, 0, k.nanotime()+d)
}

//go:nosplit
func (k *kstate) futex(fr *frame, t *thread, addr uintptr, op, val uint32, ts uintptr, ts64 bool) {
	switch op & futexCmdMask {
	case futexWait:
		v, good := k.ur32(addr)
		if !good {
			fail(fr, eFAULT)
			return
		}
		if v != val {
			fail(fr, eAGAIN)
			return
		}
		deadline := int64(0)
		if ts != 0 {
			d := k.tsToNs(ts, ts64)
			if d < 0 {
				fail(fr, eINVAL)
				return
			}
			deadline = k.nanotime() + d
			if d == 0 {
				fail(fr, eTIMEDOUT)
				return
			}
		}
		ok(fr, 0)
		k.block(t, wFutex, addr, deadline)
	case futexWake:
		n := uint32(0)
		for i := int32(0); i < k.nthr && n < val; i++ {
			w := k.th(i)
			if w.state == tBlocked && w.wait == wFutex && w.waddr == addr {
				k.wake(w, 0, 0)
				n++
			}
		}
		ok(fr, n)
	default:
		fail(fr, eNOSYS)
	}
}

// clone creates a thread sharing everything (the runtime's only use:
// CLONE_VM|FS|FILES|SIGHAND|SYSVSEM|THREAD). The child resumes after the
// SYSCALL with v0 = 0 on the stack the parent prepared (Go's
// runtime/sys_linux_mipsx.s, runtime·clone).
//
//go:nosplit
func (k *kstate) clone(fr *frame, parent *thread, flags, stack uint32) {
	slot := int32(-1)
	for i := int32(0); i < maxThreads; i++ {
		if k.th(i).state == tFree {
			slot = i
			break
		}
	}
	if slot < 0 {
		fail(fr, eAGAIN)
		return
	}
	c := k.th(slot)
	c.fr = *fr
	c.fr[2] = 0
	c.fr[7] = 0
	c.fr[29] = stack
	c.state = tRunnable
	c.wait = wNone
	c.deadline = 0
	k.nextTid++
	c.tid = k.nextTid
	c.sigmask = parent.sigmask
	c.sigpend = 0
	c.altOn = 0
	if slot >= k.nthr {
		k.nthr = slot + 1
	}
	ok(fr, c.tid)
}

//go:nosplit
func (k *kstate) uname(fr *frame, buf uintptr) {
	// struct utsname: six 65-byte fields; the buffer may be unaligned.
	fields := [6]string{"Linux", "gowrt", "5.10.0-gowrt", "#1 gowrt", machine, "(none)"}
	for i := 0; i < 6; i++ {
		base := buf + uintptr(i)*65
		s := fields[i]
		for j := uintptr(0); j < 65; j++ {
			c := byte(0)
			if j < uintptr(len(s)) {
				c = s[j]
			}
			if !k.uw8(base+j, c) {
				fail(fr, eFAULT)
				return
			}
		}
	}
	ok(fr, 0)
}

//go:nosplit
func (k *kstate) getrandom(fr *frame, buf uintptr, n uint32) {
	// One translation per page, not per byte: a byte-wise uw8 walked the
	// page table 4096 times for a 4 KiB read (gVisor's first random read
	// at init fills two of them; about 1.8 M instructions at boot).
	total := n
	for n > 0 {
		p := k.kaddr(buf, true)
		if p == 0 {
			fail(fr, eFAULT)
			return
		}
		c := uint32(pageSize - buf&(pageSize-1))
		if c > n {
			c = n
		}
		for i := uintptr(0); i < uintptr(c); {
			if k.rngAvail == 0 {
				k.refill()
			}
			// The block's unread bytes, in randByte's order.
			for ; k.rngAvail > 0 && i < uintptr(c); i++ {
				j := 64 - k.rngAvail
				k.rngAvail--
				*(*byte)(unsafe.Add(nil, p+i)) = byte(k.rngBuf[(j>>2)&15] >> ((j & 3) * 8))
			}
		}
		buf += uintptr(c)
		n -= c
	}
	ok(fr, total)
}

//go:nosplit
func (k *kstate) info(fr *frame, buf uintptr, size uint32) {
	var in Info
	in.Board = k.boardName
	in.RAM = k.ramSize
	used := k.mem.framesBoot - k.mem.nfree + (k.ramSize>>pageShift - k.mem.framesBoot)
	in.RAMUsed = used << pageShift
	if used > k.mem.peakUsed {
		k.mem.peakUsed = used
	}
	in.RAMPeak = k.mem.peakUsed << pageShift
	in.Committed = k.mem.committed << pageShift
	in.CountHz = k.countHz
	for i := int32(0); i < k.nthr; i++ {
		if k.th(i).state != tFree {
			in.Threads++
		}
	}
	in.Traps = k.stats.traps
	in.Syscalls = k.stats.syscalls
	in.Interrupts = k.stats.interrupts
	in.Switches = k.stats.switches
	in.Signals = k.stats.signals
	in.PageFaults = k.stats.pageFaults
	in.Calibrate = uint32(uint64(k.calibTicks) * uint64(k.mult24) >> 24)
	in.Uptime = uint64(k.nanotime())
	in.Idle = uint64(k.idleNanos())
	in.ColourMisses = k.mem.colourMisses
	in.Config = readConfig()
	in.LoaderConfig = k.loaderConfig
	in.AtomicLock = uint32(k.alock.addr)
	in.LockExtends, in.LockOverruns, in.LockSpinTraps = k.stats.lockExtends, k.stats.lockOverruns, k.stats.lockSpinTraps
	in.LastSpinTid, in.LastSpinPC, in.LastSpinCaller = k.stats.lastSpinTid, k.stats.lastSpinRA, k.stats.lastSpinCaller
	in.LastHoldTid, in.LastHoldPC = k.stats.lastHoldTid, k.stats.lastHoldPC
	in.Returned = k.mem.returned << pageShift
	in.Free = k.mem.nfree << pageShift
	if !k.copyOut(buf, uintptrOfInfo(&in), uintptr(size)) {
		fail(fr, eFAULT)
		return
	}
	ok(fr, 0)
}

//go:nosplit
func (k *kstate) idleStats(fr *frame, buf uintptr) {
	if !k.uw32(buf, *mem32(waitHitsAddr)) || !k.uw32(buf+4, *mem32(naiveHitsAddr)) ||
		!k.uw32(buf+8, k.stats.timerWrites) || !k.uw32(buf+12, k.stats.timerMissed) ||
		!k.uw32(buf+16, k.stats.idleStalls) {
		fail(fr, eFAULT)
		return
	}
	ok(fr, 0)
}
