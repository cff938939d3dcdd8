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
}

// BoardName returns the board name as a string.
func (i *Info) BoardName() string {
	n := 0
	for n < len(i.Board) && i.Board[n] != 0 {
		n++
	}
	return string(i.Board[:n])
}
