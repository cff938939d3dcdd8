// Package baremetal provides the kernel's platform hooks (package kernel,
// kernel/platform_mipsx.go) on AR71xx-family SoCs, AR7130 to QCA9558: the
// console on the SoC's UART, the CPU interrupt pins IP2-IP5 and the MISC
// controller as the root interrupt controller (lines as package ar71xx
// numbers them), the CP0 Count rate from the PLL registers, the RAM size
// by aliasing, and reset through the reset controller. There is no RTC
// (the clock starts at 1970 until something sets it) and no power-off.
//
// A board package for an AR71xx-family board imports it:
//
//	import _ "github.com/gowrt/gowrt/soc/ar71xx/baremetal"
//
// The hooks are package ar71xx's generic platform functions instantiated
// with kseg1, which reaches the registers at constant uncached addresses;
// the same functions are tested against the ar71xxsim models. The chip is
// told from REV_ID on every call, so one image serves every chip of the
// family. It is a package of its own, not part of soc/ar71xx, because
// drivers and the sim board import soc/ar71xx on every platform, while the
// hooks belong only in a bare-metal image.
package baremetal
