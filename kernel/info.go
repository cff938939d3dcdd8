package kernel

// Info is what the kernel reports about itself through its private
// system call (see Stats). All sizes are bytes.
type Info struct {
	Board      [16]byte // board name, NUL padded
	RAM        uint32   // physical RAM
	RAMUsed    uint32   // frames in use, including the image and kernel
	RAMPeak    uint32   // highest RAMUsed seen
	Committed  uint32   // writable anonymous mappings (commit charge)
	CountHz    uint32   // calibrated CP0 Count frequency
	Threads    uint32
	Traps      uint32
	Syscalls   uint32
	Interrupts uint32
	Switches   uint32
	Signals    uint32
	PageFaults uint32
	Calibrate  uint32 // ns of boot spent calibrating the clock
	// ColourMisses counts demand-zero pages that got a frame of the wrong
	// cache colour because that colour was exhausted.
	ColourMisses uint32
	Uptime       uint64 // ns
	// Idle is the ns of Uptime the CPU spent in the kernel's idle loop
	// (sleeping in WAIT, or about to); Uptime-Idle is busy time, under
	// QEMU -icount shift=0 busy instructions.
	Idle uint64
	// Config is CP0 Config (select 0) now, LoaderConfig as the boot
	// loader left it; bits 2:0 (K0) are kseg0's cache coherency
	// attribute, which the kernel sets to CacheWriteBack at entry.
	Config       uint32
	LoaderConfig uint32
	// The runtime's 64-bit atomic spinlock (kernel/atomiclock_mipsx.go):
	// AtomicLock is its address (0: the kernel did not find it);
	// LockExtends counts time slices extended because it was held at
	// their end, LockOverruns slices that ended with it held anyway
	// (the extensions ran out, or kslice=plain), LockSpinTraps traps
	// that found a thread spinning on it while another held it.
	// LastSpinTid is the last such thread, LastSpinPC the 64-bit atomic
	// it was in, LastSpinCaller that atomic's caller; LastHoldTid and
	// LastHoldPC the last thread descheduled with the lock held and
	// where it was (PCs: runtime.FuncForPC names them).
	AtomicLock     uint32
	LockExtends    uint32
	LockOverruns   uint32
	LockSpinTraps  uint32
	LastSpinTid    uint32
	LastSpinPC     uint32
	LastSpinCaller uint32
	LastHoldTid    uint32
	LastHoldPC     uint32
	// Returned is the bytes of RAM the program gave back since boot:
	// frames freed by munmap and by madvise(MADV_DONTNEED or
	// MADV_FREE), which is how the Go runtime's scavenger returns idle
	// heap pages. Free is the RAM free now.
	Returned uint64
	Free     uint32
}

// CacheWriteBack is the Config.K0 value for cacheable, noncoherent,
// write-back kseg0 (MIPS32 Vol. III, cache coherency attributes).
const CacheWriteBack = 3

// K0 returns kseg0's cache coherency attribute (Config bits 2:0).
func (i *Info) K0() uint32 { return i.Config & 7 }

// BoardName returns the board name as a string.
func (i *Info) BoardName() string {
	n := 0
	for n < len(i.Board) && i.Board[n] != 0 {
		n++
	}
	return string(i.Board[:n])
}
