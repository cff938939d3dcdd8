package kernel

// Linux o32 system-call numbers the kernel services or refuses on purpose,
// and gowrt's private calls. This file is built for every architecture so the
// host-side drift guard (kernel/boottest) can classify what the runtime issues
// under qemu-mips -strace against exactly the kernel's table.
const (
	sysExit            = 4001
	sysRead            = 4003
	sysWrite           = 4004
	sysOpen            = 4005
	sysClose           = 4006
	sysGetpid          = 4020
	sysKill            = 4037
	sysBrk             = 4045
	sysReboot          = 4088
	sysIoctl           = 4054
	sysFcntl           = 4055
	sysMmap            = 4090
	sysMmap2           = 4210 // offset in pages; syscall.Mmap uses it
	sysMunmap          = 4091
	sysSetitimer       = 4104
	sysClone           = 4120
	sysUname           = 4122
	sysMprotect        = 4125
	sysSchedYield      = 4162
	sysNanosleep       = 4166
	sysPrctl           = 4192
	sysRtSigreturn     = 4193
	sysRtSigaction     = 4194
	sysRtSigprocmask   = 4195
	sysPread64         = 4200
	sysGetcwd          = 4203
	sysSigaltstack     = 4206
	sysStat64          = 4213
	sysLstat64         = 4214
	sysFstat64         = 4215
	sysMincore         = 4217
	sysMadvise         = 4218
	sysFcntl64         = 4220
	sysGettid          = 4222
	sysFutex           = 4238
	sysSchedGetaff     = 4240
	sysExitGroup       = 4246
	sysEpollCtl        = 4249
	sysTimerCreate     = 4257
	sysTimerSettime    = 4258
	sysTimerDelete     = 4261
	sysClockSettime    = 4262
	sysClockGettime    = 4263
	sysClockGetres     = 4264
	sysTgkill          = 4266
	sysOpenat          = 4288
	sysEpollPwait      = 4313
	sysEventfd2        = 4325
	sysEpollCreate1    = 4326
	sysPipe2           = 4328
	sysPrlimit64       = 4338
	sysClockAdjtime    = 4341
	sysGetrandom       = 4353
	sysClockGettime64  = 4403
	sysClockSettime64  = 4404
	sysClockAdjtime64  = 4405
	sysTimerSettime64  = 4409
	sysFutexTime64     = 4422
	sysEpollPwait2     = 4441
	sysGowrtInfo       = 4900 // gowrt: fill an Info record
	sysGowrtIRQ        = 4901 // gowrt: interrupt line control (irqOp*)
	sysGowrtIRQWait    = 4902 // gowrt: block until a line fires
	sysGowrtIdleStats  = 4903 // gowrt: idle-window counters
	sysGowrtCrash      = 4904 // gowrt: fault inside the trap handler (only with the ktest switch)
	sysGowrtDMAAlloc   = 4905 // gowrt: physically contiguous frames for device DMA
	sysGowrtHazard     = 4906 // gowrt: hazard injection (kernels built with -tags gowrt_hazard only)
	sysGowrtConsoleLog = 4907 // gowrt: copy out the console log (dmesg)
	firstLinuxSyscall  = 4000
	lastTrackedSyscall = 4511
)

// Errno values on MIPS (they differ from x86's for some).
const (
	ePERM     = 1
	eNOENT    = 2
	eSRCH     = 3
	eBADF     = 9
	eAGAIN    = 11
	eNOMEM    = 12
	eFAULT    = 14
	eNODEV    = 19
	eINVAL    = 22
	eNOTTY    = 25
	eNOSYS    = 89
	eTIMEDOUT = 145
)

// Disposition says how the kernel treats a system-call number.
type Disposition uint8

const (
	// Unknown numbers get ENOSYS and are logged once.
	Unknown Disposition = iota
	// Handled numbers are implemented.
	Handled
	// Refused numbers fail on purpose with the documented errno; the
	// runtime and std copes (see the comment at each case).
	Refused
)

// Classify returns how the kernel treats system call nr, and the errno
// for refused calls. The trap handler uses the same function, so the table
// here is the one the kernel actually runs.
//
//go:nosplit
func Classify(nr uint32) (Disposition, uint32) {
	switch nr {
	case sysExit, sysRead, sysWrite, sysClose, sysGetpid, sysBrk,
		sysFcntl, sysFcntl64, sysMmap, sysMmap2, sysMunmap, sysClone, sysUname,
		sysSchedYield, sysNanosleep, sysRtSigreturn, sysRtSigaction,
		sysRtSigprocmask, sysSigaltstack, sysMadvise, sysGettid,
		sysFutex, sysFutexTime64, sysSchedGetaff, sysExitGroup,
		sysEpollCtl, sysEpollPwait, sysEventfd2, sysEpollCreate1,
		sysClockGettime, sysClockGettime64, sysClockGetres, sysTgkill,
		sysKill, sysGetrandom, sysGowrtInfo, sysGowrtIRQ,
		sysGowrtIRQWait, sysGowrtIdleStats, sysGowrtCrash, sysGowrtDMAAlloc,
		sysSetitimer, sysReboot, sysClockSettime, sysClockSettime64,
		sysClockAdjtime, sysClockAdjtime64, sysGowrtConsoleLog: // adjtime: ADJ_SETOFFSET only, see clockAdjtime
		return Handled, 0
	case sysOpen, sysOpenat, sysStat64, sysLstat64:
		// No file system: the runtime's cgroup and hugepage probes and
		// the time package's /etc/localtime give up on ENOENT.
		return Refused, eNOENT
	case sysFstat64, sysPread64:
		// Nothing is ever opened, so fds other than the console,
		// eventfds and epoll instances do not exist.
		return Refused, eBADF
	case sysIoctl:
		// The console is not a terminal device (isatty is false).
		return Refused, eNOTTY
	case sysPrctl:
		// PR_SET_VMA naming: EINVAL makes the runtime stop trying.
		return Refused, eINVAL
	case sysPrlimit64, sysMprotect, sysMincore,
		sysTimerCreate, sysTimerSettime, sysTimerSettime64,
		sysTimerDelete, sysPipe2, sysEpollPwait2, sysGetcwd:
		// prlimit64: syscall.init ignores the error. mprotect: only the
		// runtime's debug fault mode. mincore: only without AT_PAGESZ.
		// Per-thread CPU timers: the runtime falls back to the process
		// profiling timer (setitimer ITIMER_PROF), which is handled.
		// pipe2, epoll_pwait2, getcwd: not used by the runtime on
		// linux/mips.
		return Refused, eNOSYS
	}
	return Unknown, eNOSYS
}
