//go:build mips || mipsle

package kernel

import (
	"errors"
	"sync"
	"syscall"
	"unsafe"
)

// ErrNotBareMetal is returned when the program is not running on this kernel
// (for example under qemu-mips or on Linux).
var ErrNotBareMetal = errors.New("kernel: not running on the gowrt kernel")

// ReadInfo returns the kernel's counters.
func ReadInfo() (Info, error) {
	var in Info
	_, _, e := syscall.RawSyscall(sysGowrtInfo, uintptr(unsafe.Pointer(&in)), unsafe.Sizeof(in), 0)
	if e == syscall.ENOSYS {
		return in, ErrNotBareMetal
	}
	if e != 0 {
		return in, e
	}
	return in, nil
}

// IdleStats are the idle window's counters: interrupts taken inside the
// registered (skip-over) window and inside the naive window (kidle=naive;
// only those taken after the loop found no work, the ones that can lose a
// wake-up), the Compare writes and deadlines missed while writing, and lost wake-ups
// (the idle loop taking a further interrupt while work it had been told
// about was waiting: it slept in WAIT with work runnable).
type IdleStats struct {
	WindowHits, NaiveHits, TimerWrites, TimerMissed, LostWakeups uint32
}

// ReadIdleStats returns the idle counters.
func ReadIdleStats() (IdleStats, error) {
	var s IdleStats
	_, _, e := syscall.RawSyscall(sysGowrtIdleStats, uintptr(unsafe.Pointer(&s)), 0, 0)
	if e != 0 {
		return s, ErrNotBareMetal
	}
	return s, nil
}

// IRQ line control, used by board packages to implement intr.Source and
// intr.Controller on top of the kernel. Lines are those of the platform's
// root interrupt controller, numbered by its SoC package.

// IRQOpen starts delivering line (it stays masked until IRQUnmask).
func IRQOpen(line int) error { return irqOp(irqOpOpen, line) }

// IRQClose stops delivery and wakes a blocked IRQWait with an error.
func IRQClose(line int) error { return irqOp(irqOpClose, line) }

// IRQMask masks line at the interrupt controller.
func IRQMask(line int) error { return irqOp(irqOpMask, line) }

// IRQUnmask unmasks line.
func IRQUnmask(line int) error { return irqOp(irqOpUnmask, line) }

// IRQAck acknowledges line after its handler cleared the device's cause,
// for controllers whose requests latch (intr.Controller.Ack). The kernel
// also ends the line's service when it takes it, so controllers that do
// not latch need no Ack.
func IRQAck(line int) error { return irqOp(irqOpAck, line) }

// IRQPending returns the controller's raw request bits.
func IRQPending() uint64 {
	lo, hi, e := syscall.RawSyscall(sysGowrtIRQ, irqOpPend, 0, 0)
	if e != 0 {
		return 0
	}
	return uint64(lo) | uint64(hi)<<32
}

func irqOp(op uintptr, line int) error {
	_, _, e := syscall.RawSyscall(sysGowrtIRQ, op, uintptr(line), 0)
	if e != 0 {
		return e
	}
	return nil
}

// ErrIRQClosed is returned by IRQWait after IRQClose.
var ErrIRQClosed = errors.New("kernel: interrupt line closed")

// IRQWait blocks the calling thread until line fires and returns how many
// times it fired since the last call (coalesced, at least 1). The line is
// masked when it returns. It is a blocking system call: the Go runtime hands
// the P to another thread meanwhile.
func IRQWait(line int) (uint32, error) {
	n, _, err := IRQWaitTimed(line)
	return n, err
}

// IRQWaitTimed is IRQWait that also returns the low 32 bits of the
// CLOCK_MONOTONIC nanosecond at which the kernel took the interrupt (see
// Nanotime32), for interrupt-latency measurements.
func IRQWaitTimed(line int) (uint32, uint32, error) {
	r, taken, e := syscall.Syscall(sysGowrtIRQWait, uintptr(line), 0, 0)
	if e == syscall.EBADF {
		return 0, 0, ErrIRQClosed
	}
	if e != 0 {
		return 0, 0, e
	}
	return uint32(r), uint32(taken), nil
}

// IRQFD returns a new descriptor for line that the Go runtime's netpoller
// can wait on: it is non-blocking, and readable while the line has fired
// since the last IRQPoll or is closed. Wrapped in an os.File, a
// RawConn.Read around IRQPoll parks the goroutine in the scheduler until
// the line fires, where IRQWait blocks its thread in the kernel. Only
// the newest descriptor of a line is signalled; close it with the File.
func IRQFD(line int) (int, error) {
	fd, _, e := syscall.RawSyscall(sysGowrtIRQ, irqOpFD, uintptr(line), 0)
	if e != 0 {
		return -1, e
	}
	return int(fd), nil
}

// IRQPoll is IRQWaitTimed that does not block: syscall.EAGAIN if line
// has not fired since the last call.
func IRQPoll(line int) (fired, taken uint32, err error) {
	r, t, e := syscall.RawSyscall(sysGowrtIRQ, irqOpPoll, uintptr(line), 0)
	switch e {
	case 0:
		return uint32(r), uint32(t), nil
	case syscall.EBADF:
		return 0, 0, ErrIRQClosed
	}
	return 0, 0, e
}

// IRQSetTrigger selects level (true) or edge triggering for line.
func IRQSetTrigger(line int, level bool) error {
	if level {
		return irqOp(irqOpLevel, line)
	}
	return irqOp(irqOpEdge, line)
}

// Nanotime returns CLOCK_MONOTONIC in nanoseconds, the clock the runtime's
// nanotime reads, without a system call: on mips32 Linux has no vDSO and
// the runtime pays a trap for every clock read, which made clock reads a
// quarter of the CPU time of a TCP transfer into gVisor on QEMU (its
// stack clock reads the time several times per segment). It reads CP0
// Count with interrupts briefly off and converts it the way the kernel's
// clock_gettime fast path does; when that path would fall back (a clock
// base more than a quarter second old) it makes the system call.
//
// Only on the gowrt kernel: under Linux, reading CP0 registers faults.
// Use Running to choose.
func Nanotime() int64 {
	if sec, nsec, ok := fastMono(); ok {
		return int64(sec)*1e9 + int64(nsec)
	}
	var ts [2]int32
	syscall.RawSyscall(sysClockGettime, clockMonotonic, uintptr(unsafe.Pointer(&ts)), 0)
	return int64(ts[0])*1e9 + int64(ts[1])
}

var running = sync.OnceValue(func() bool {
	var in Info
	_, _, e := syscall.RawSyscall(sysGowrtInfo, uintptr(unsafe.Pointer(&in)), unsafe.Sizeof(in), 0)
	return e == 0
})

// Running reports whether the program runs on the gowrt kernel (and not
// as an ordinary Linux/MIPS program, as the library mode allows).
func Running() bool { return running() }

// Nanotime32 returns the low 32 bits of CLOCK_MONOTONIC in nanoseconds.
func Nanotime32() uint32 {
	var ts [2]int32
	syscall.RawSyscall(sysClockGettime, clockMonotonic, uintptr(unsafe.Pointer(&ts)), 0)
	return uint32(int64(ts[0])*1e9 + int64(ts[1]))
}

// ConsoleLog copies console output (the kernel's messages and everything
// the program wrote to fd 1 and 2) into p, starting at position from: 0
// at boot, then the start+n of the previous call. The kernel keeps the
// last 16 KiB; when from is older than that, the copy starts at the
// oldest byte kept, and start > from says how much was lost.
func ConsoleLog(p []byte, from uint32) (n int, start uint32, err error) {
	if len(p) == 0 {
		return 0, from, nil
	}
	r1, r2, e := syscall.RawSyscall(sysGowrtConsoleLog, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), uintptr(from))
	if e == syscall.ENOSYS {
		return 0, from, ErrNotBareMetal
	}
	if e != 0 {
		return 0, from, e
	}
	return int(r1), uint32(r2), nil
}
