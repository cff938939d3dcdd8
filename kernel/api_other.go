//go:build !mips && !mipsle

package kernel

import (
	"errors"
	"time"
)

// ErrNotBareMetal is returned when the program is not running on this kernel.
var ErrNotBareMetal = errors.New("kernel: not running on the gowrt kernel")

// ReadInfo returns the kernel's counters; off MIPS there is no kernel.
func ReadInfo() (Info, error) { return Info{}, ErrNotBareMetal }

// IdleStats are the idle window's counters (see the MIPS build).
type IdleStats struct {
	WindowHits, NaiveHits, TimerWrites, TimerMissed, LostWakeups uint32
}

// ReadIdleStats returns the idle counters; off MIPS there is no kernel.
func ReadIdleStats() (IdleStats, error) { return IdleStats{}, ErrNotBareMetal }

var start = time.Now()

// Nanotime returns a monotonic time in ns; off MIPS, from the time package.
func Nanotime() int64 { return int64(time.Since(start)) }

// Running reports whether the program runs on the gowrt kernel: off MIPS
// it never does.
func Running() bool { return false }

// ConsoleLog reads the bare-metal kernel's console log; elsewhere there
// is none.
func ConsoleLog(p []byte, from uint32) (n int, start uint32, err error) {
	return 0, from, ErrNotBareMetal
}
