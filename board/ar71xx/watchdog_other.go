//go:build !mips && !mipsle

package ar71xx

import (
	"time"

	"github.com/gowrt/gowrt/kernel"
)

// Arm implements board.Watchdog; off the SoC there is no watchdog.
func (Board) Arm(time.Duration) (time.Duration, error) { return 0, kernel.ErrNotBareMetal }

// Pet implements board.Watchdog.
func (Board) Pet() {}

// Disarm implements board.Watchdog.
func (Board) Disarm() {}
