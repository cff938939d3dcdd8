//go:build mips || mipsle

package kernel

const (
	maxThreads = 256 // power of two (indexes are masked)
	maxFDs     = 32
	maxEpoll   = 32 // interest entries per kernel (shared by all epoll fds)
	maxVMA     = 512
	rxSize     = 1024 // console receive ring (power of two)
	numSig     = 65   // signals 1..64 are tracked
	maxIRQ     = 64   // lines of the platform's root interrupt controller (power of two)
	idleTid    = -1
)

// Thread states.
const (
	tFree = iota
	tRunnable
	tBlocked
)

// What a blocked thread waits for.
const (
	wNone = iota
	wFutex
	wSleep
	wEpoll
	wRead // console or eventfd read
	wIRQ
)

type thread struct {
	fr       frame
	state    uint32
	wait     uint32
	tid      uint32
	waddr    uintptr // futex address, fd, or IRQ line
	deadline int64   // monotonic ns; 0 = none
	a1, a2   uint32  // syscall arguments needed to complete a blocked call
	sigmask  uint64  // bit sig-1
	sigpend  uint64
	altSP    uint32
	altSize  uint32
	altOn    uint32 // nonzero when an altstack is registered
}

type sigaction struct {
	handler uint32
	flags   uint32
	mask    uint64
}

// File descriptor kinds.
const (
	fdFree = iota
	fdConsole
	fdEventfd
	fdEpoll
	fdIRQ // an interrupt line's readiness (irqOpFD), for the netpoller
)

type fdesc struct {
	kind    uint32
	flags   uint32 // O_NONBLOCK etc.
	counter uint64 // eventfd
	line    uint32 // fdIRQ
}

type epollItem struct {
	used   uint32
	epfd   int32
	fd     int32
	events uint32
	data   uint64
	edge   uint32 // EPOLLET: set when new input arrived since last report
}

type vma struct {
	start, end uintptr
	prot       uint32
}

type memState struct {
	vmas         [maxVMA]vma
	nvma         int
	freeStack    uintptr // kseg0 address of the per-colour PFN stacks
	colourCap    uint32  // entries per colour stack
	colourFree   [4]uint32
	colourMisses uint32
	nfree        uint32 // all colours
	framesBoot   uint32 // free frames after boot
	committed    uint32 // pages of writable anonymous mappings (reported, not enforced)
	bssPages     uint32 // BSS/data pages materialised on demand
	limit        uint32 // frames a program can ever hold: no one mapping may be larger
	returned     uint64 // frames given back by munmap and madvise since boot
	ptPages      uint32
	peakUsed     uint32
	dataStart    uintptr // program data+BSS (the -D segment)
	dataEnd      uintptr
	mmapBase     uintptr // mmap(nil) search starts here
	ramTop       uintptr // physical
	faults       uint32
}

// kstate is all kernel state, at the fixed kseg0 address kstateAddr.
type kstate struct {
	kernG fakeG // must be first: asm loads R30 = kstateAddr
	idleG fakeG

	threads                     [maxThreads]thread
	idleFr                      frame
	cur                         int32 // running thread index, or idleTid
	nthr                        int32 // 1 + highest slot ever used
	nextTid                     uint32
	runnable                    uint32 // read by the idle loop: nonzero if a thread can run
	yieldNr                     uint32
	idleWaitEnd                 uint32 // address after the idle loop's WAIT
	idleRetEPC, idleRetRunnable uint32 // how the idle loop was last resumed
	seenWaitHits                uint32 // window hits the trap handler has seen
	// Idle accounting: while idling, idleSince is the CP0 Count at which
	// the kernel last resumed the idle loop; idleTicks sums the Count
	// ticks spent there. Under QEMU -icount that tells busy instructions
	// from the time the virtual clock skipped over in WAIT. Raw Count
	// keeps it to two register reads per wake-up; the idle loop never
	// runs longer than the timer horizon (1 s), far below Count's wrap.
	idling    bool
	idleSince uint32
	idleTicks uint64

	statusRun uint32 // Status for running threads (IM bits, EXL), IE kept per thread

	conlog consoleRing // console output, for kernel.ConsoleLog

	// Clock: Count extended to 64 bits.
	countHi      uint32
	lastCount    uint32
	mult24       uint32 // ns per Count tick, 8.24 fixed point
	ticksPerNs32 uint32 // Count ticks per ns, 0.32 fixed point
	countHz      uint32
	baseTicks    uint64 // clock base, see clock_mipsx.go
	baseSec      int64
	baseNsec     uint32
	wallSec      int64 // CLOCK_REALTIME minus CLOCK_MONOTONIC
	wallNsec     uint32
	armed        int64 // deadline Compare is programmed for (ns), 0 = none
	sliceEnd     int64

	mem memState

	fds    [maxFDs]fdesc
	epitem [maxEpoll]epollItem

	sigact [128]sigaction

	rx       [rxSize]byte
	rxr, rxw uint32

	// The platform's root interrupt controller (platform_mipsx.go).
	rootPins      uint32 // CPU pins it signals on (bit n = IPn)
	pinsMasked    uint32 // of those, pins masked because a line that is a pin is
	irqLines      int32
	consoleLine   int32  // -1: none
	reservedLines uint64 // lines the platform keeps (a cascade)
	irqEnabled    uint64 // lines opened through the intr Source
	irqFired      [maxIRQ]uint32
	irqTaken      [maxIRQ]uint32 // low 32 bits of CLOCK_MONOTONIC ns when the line was last taken
	irqFD         [maxIRQ]int32  // the line's fdIRQ descriptor, 0: none

	unknownSeen [16]uint32 // syscalls 4000..4511 already logged

	rngKey   [8]uint32
	rngCtr   uint32
	rngBuf   [16]uint32
	rngAvail uint32

	flags      uint32 // kernel command-line switches (kf*)
	exitCode   int32
	bootCount  uint32 // Count at entry
	calibTicks uint32 // Count ticks spent calibrating the clock at boot
	stats      kstats
	hz         hazardState // test hooks (-tags gowrt_hazard); empty in the shipped kernel
	alock      atomicLock  // the runtime's 64-bit atomic spinlock
	ramSize    uint32
	boardName  [16]byte
	cmdline    [256]byte
	cmdlineLen uint32
	profNs     int64 // ITIMER_PROF interval (ns), 0 = one-shot or off
	profNext   int64 // next ITIMER_PROF expiry (ns), 0 = off

	loaderConfig uint32   // CP0 Config as the boot loader left it
	seed         [32]byte // boot: the seed handed to platformSeed
}

type kstats struct {
	traps, syscalls, interrupts, switches, signals, pageFaults uint32
	timerWrites, timerMissed, idleStalls                       uint32
	// The runtime's 64-bit atomic lock (atomiclock_mipsx.go): slices
	// extended because it was held, extensions that ran out (preempted
	// anyway, or kslice=plain), traps that found a thread spinning on
	// it, and the last spinner's tid, return address (the atomic) and
	// that one's caller.
	lockExtends, lockOverruns, lockSpinTraps uint32
	lastSpinTid, lastSpinRA, lastSpinCaller  uint32
	lastHoldTid, lastHoldPC                  uint32 // the last thread descheduled with the lock held, and where
}

// Kernel command-line switches.
const (
	kfTrace     = 1 << iota // print every system call
	kfNaiveIdle             // do not register the idle window (tests the race)
	kfNoSig                 // do not deliver signals (asyncpreemptoff)
	kfTest                  // allow the deliberate kernel-fault call (tests)
)
