//go:build mips || mipsle

package router

import (
	"github.com/gowrt/gowrt/intr/kernelirq"
	"github.com/gowrt/gowrt/soc/ar71xx"
)

// rootController is the kernel's root interrupt controller on this family
// (soc/ar71xx/platform.go): the MISC controller's 32 lines, then the CPU
// pins IP2-IP5 as lines ar71xx.LineIP2..LineIP2+3, all level-triggered
// (the Ethernet lines are CPU pins the MAC drops once its cause is
// cleared). The console UART's MISC line is the kernel's.
var rootController = &kernelirq.Controller{
	ControllerName: "ar71xx-root",
	NumLines:       ar71xx.IntrLines,
	Reserved:       uint64(1) << ar71xx.MiscUART,
}
