//go:build mips || mipsle

package baremetal

import (
	"fmt"
	gosync "sync"

	"github.com/gowrt/gowrt/barrier"
	"github.com/gowrt/gowrt/soc/ar71xx"
)

// resetBlockSize is the part of the reset block the watchdog needs.
const resetBlockSize = 0x100

var (
	wdtOnce  gosync.Once
	wdtTimer *ar71xx.WatchdogTimer
	wdtErr   error
)

// Watchdog returns the running chip's watchdog (program side, not a
// hook): the reset block through kseg1, counting at the rate WatchdogHz
// reads from the chip's PLL registers.
func Watchdog() (*ar71xx.WatchdogTimer, error) {
	wdtOnce.Do(func() {
		hz := ar71xx.WatchdogHz(kseg1{})
		if hz == 0 {
			wdtErr = fmt.Errorf("baremetal: watchdog: no clock rate for %s", ar71xx.ChipName(kseg1{}.Read32(ar71xx.PhysReset+ar71xx.RstRevID)))
			return
		}
		r, err := barrier.NewMMIO("reset", kseg1Base|ar71xx.PhysReset, resetBlockSize, barrier.Native)
		if err != nil {
			wdtErr = err
			return
		}
		wdtTimer = ar71xx.NewWatchdogTimer(r, hz)
	})
	return wdtTimer, wdtErr
}
