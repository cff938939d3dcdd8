//go:build !mips && !mipsle

package kernel

import "errors"

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
