package main

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel kill cmd when gowrt dies, even by SIGKILL,
// so no QEMU or sim firmware outlives the gowrt that started it.
func dieWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
