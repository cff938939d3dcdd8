//go:build mips || mipsle

package ar71xx

import (
	"time"

	"github.com/gowrt/gowrt/board"
	"github.com/gowrt/gowrt/soc/ar71xx/baremetal"
)

var _ board.Watchdog = Board{}

// Arm implements board.Watchdog with the SoC's watchdog (reset action).
// Its 32-bit timer counts at the AHB clock up to AR933x, so a 30 s
// timeout is clamped to about 10-21 s there; AR934x and QCA955x count at
// the reference clock and hold 107 s or more.
func (Board) Arm(timeout time.Duration) (time.Duration, error) {
	w, err := baremetal.Watchdog()
	if err != nil {
		return 0, err
	}
	return w.Arm(timeout)
}

// Pet implements board.Watchdog.
func (Board) Pet() {
	if w, err := baremetal.Watchdog(); err == nil {
		w.Pet()
	}
}

// Disarm implements board.Watchdog.
func (Board) Disarm() {
	if w, err := baremetal.Watchdog(); err == nil {
		w.Disarm()
	}
}
