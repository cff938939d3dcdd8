package firmware

import (
	"syscall"
	"time"

	"github.com/gowrt/gowrt/kernel"
)

// kernelConsoleLog reads the bare-metal kernel's console log.
var kernelConsoleLog = kernel.ConsoleLog

// rebootGrace lets the answer to a reboot request (web page, shell)
// reach its client before the services stop.
const rebootGrace = time.Second

// rebootDevice stops the firmware cleanly (leases and time saved) and
// restarts the board, shortly after returning; off the device it refuses.
func (f *Firmware) rebootDevice() error {
	if !kernel.Running() {
		return errNoReboot
	}
	go func() {
		time.Sleep(rebootGrace)
		_ = f.Stop()
		_ = syscall.Reboot(syscall.LINUX_REBOOT_CMD_RESTART)
	}()
	return nil
}
