//go:build !mips && !mipsle

package kernel

import "errors"

// ErrNotBareMetal is returned when the program is not running on this kernel.
var ErrNotBareMetal = errors.New("kernel: not running on the gowrt kernel")

// ReadInfo returns the kernel's counters; off MIPS there is no kernel.
func ReadInfo() (Info, error) { return Info{}, ErrNotBareMetal }
