// Package ar71xx is SoC support for the Atheros/QCA AR71xx family of MIPS
// router SoCs: AR7130/7141/7161 ("AR71xx"), AR7240/7241/7242 ("AR724x"),
// AR9130/9132 ("AR913x"), AR9330/9331 ("AR933x"), AR9341/9342/9344
// ("AR934x") and QCA9556/9558 ("QCA955x").
//
// The variants differ in small, easily confused ways: where the reset
// register lives (0x24 on AR71xx, 0x1C elsewhere), whether the MISC
// interrupt controller needs an explicit acknowledge, which DDR write-buffer
// flush registers exist and at what offsets, how the Ethernet PLL is set for
// a link speed, which MDIO clock divisors the MAC offers. All of that is
// data in an Info, selected once from the REV_ID register by Identify; code
// in this package and in drivers consults the Info (or calls the SoC's
// operations) and never tests the chip type itself.
//
// Register offsets are named constants; each block says which source the
// facts come from (FreeBSD sys/mips/atheros/*reg.h and *_chip.c, Linux
// arch/mips/include/asm/mach-ath79/ar71xx_regs.h and arch/mips/ath79/*.c).
// Where the sources conflict the choice made is written next to the code
// and pinned by a test.
//
// Register blocks are reached through barrier.Space regions the board
// maps: DDR controller (0x1800_0000), PLL (0x1805_0000), reset/MISC
// (0x1806_0000), GMAC/MII control (0x1807_0000), GPIO (0x1804_0000) and
// UART (0x1802_0000). The same code drives the real registers on bare
// metal and the ar71xxsim model in tests.
//
// The chips have no random number generator and U-Boot passes the kernel
// no seed, so the kernel's random numbers on this family are keyed from
// what Seed gathers at boot: timing jitter of uncached reads, REV_ID, the
// PLL settings and the first 64 KiB of the boot flash. That seed is weak
// (the jitter of an in-order core clocked from one crystal is small, and
// the flash differs between boards and loader versions, not between units
// of one model): firmware that makes long-lived keys at first boot should
// wait for entropy it gathers later or keep a seed across boots.
//
// The watchdog (Watchdog, WatchdogTimer) counts at WatchdogHz: the AHB
// clock up to AR933x, so its 32-bit timer holds only 10-21 s there, and
// the reference clock on AR934x and QCA955x.
package ar71xx
