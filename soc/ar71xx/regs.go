package ar71xx

// Physical base addresses of the register blocks (FreeBSD ar71xxreg.h,
// Linux ar71xx_regs.h; identical on every family member unless noted).
const (
	PhysDDR   = 0x1800_0000 // DDR controller, including the write-buffer flush registers
	PhysUART  = 0x1802_0000 // 16550 (4-byte stride) or the AR933x UART
	PhysUSB   = 0x1803_0000
	PhysGPIO  = 0x1804_0000
	PhysPLL   = 0x1805_0000
	PhysReset = 0x1806_0000 // timers, watchdog, MISC interrupt controller, reset, REV_ID
	PhysGMAC  = 0x1807_0000 // AR71xx/AR913x MII0/1_CTRL; AR934x/QCA955x ETH_CFG
	PhysGE0   = 0x1900_0000 // arge0 MAC
	PhysGE1   = 0x1A00_0000 // arge1 MAC
	PhysEHCI  = 0x1B00_0000
	PhysOHCI  = 0x1C00_0000 // AR71xx only; interrupt through MISC bit 6
	PhysSPI   = 0x1F00_0000

	// BlockSize is the size this package assumes for each 0x1800_0000..
	// 0x1807_0000 register block; every offset used below is inside it.
	BlockSize = 0x1_0000
	// MACSize is the size of one arge register window.
	MACSize = 0x1000
)

// KSEG1 turns a physical register address into the uncached kernel
// address through which MIPS software accesses it.
func KSEG1(phys uint32) uintptr { return uintptr(0xA000_0000 | phys) }

// Reset block (0x1806_0000) offsets: FreeBSD ar71xxreg.h AR71XX_RST_*,
// Linux AR71XX_RESET_REG_*.
const (
	RstTimer         = 0x00
	RstTimerReload   = 0x04
	RstWdogCtrl      = 0x08 // action bits 1:0, LAST_RESET bit 31
	RstWdogTimer     = 0x0C
	RstMiscIntStatus = 0x10
	RstMiscIntMask   = 0x14 // "enable" in Linux
	RstPCIIntStatus  = 0x18 // AR71xx only
	RstPCIIntMask    = 0x1C // AR71xx only; RESET_MODULE on every later SoC
	RstGlobalInt     = 0x20 // AR71xx
	RstModuleAR71xx  = 0x24 // RESET_MODULE on AR71xx
	RstModuleOther   = 0x1C // RESET_MODULE on AR724x/AR913x/AR933x/AR934x/QCA955x
	RstRevID         = 0x90
	RstBootstrap933x = 0xAC // AR933x: bit 0 = 40 MHz reference
	RstExtIntStatus  = 0xAC // AR934x PCIE_WMAC_INT_STATUS, QCA955x EXT_INT_STATUS
	RstBootstrap934x = 0xB0 // AR934x/QCA955x: bit 4 = 40 MHz reference
)

// Watchdog control (FreeBSD ar71xxreg.h AR71XX_RST_WDOG_CONTROL).
const (
	WdogActionNone  = 0
	WdogActionGPI   = 1 // general-purpose interrupt
	WdogActionNMI   = 2
	WdogActionReset = 3
	WdogActionMask  = 3
	WdogLastReset   = 1 << 31 // set when the last reset was the watchdog's
)

// REV_ID fields (FreeBSD ar71xxreg.h, ar934xreg.h, qca955xreg.h; Linux
// ar71xx_regs.h REV_ID_MAJOR_*).
const (
	RevMajorMask = 0xFFF0
	RevMinorMask = 0x3 // AR71xx: 0 AR7130, 1 AR7141, 2 AR7161
	RevMajor71xx = 0x00A0
	RevMajor913x = 0x00B0
	RevMajor7240 = 0x00C0
	RevMajor7241 = 0x0100
	RevMajor7242 = 0x1100
	RevMajor9330 = 0x0110
	RevMajor9331 = 0x1110
	RevMajor9341 = 0x0120
	RevMajor9342 = 0x1120
	RevMajor9344 = 0x2120
	RevMajor9556 = 0x0130
	RevMajor9558 = 0x1130
)

// MISC interrupt controller bits (FreeBSD ar71xxreg.h AR71XX_MISC_INTR_*,
// Linux ATH79_MISC_IRQ_*).
const (
	MiscTimer    = 0
	MiscError    = 1
	MiscGPIO     = 2
	MiscUART     = 3
	MiscWatchdog = 4
	MiscPerf     = 5
	MiscOHCI     = 6 // AR71xx
	MiscDMA      = 7
	MiscTimer2   = 8
	MiscTimer3   = 9
	MiscTimer4   = 10
	MiscEthSw    = 12 // built-in switch, AR934x family
	MiscLines    = 32
)

// CPU interrupt lines: MIPS Cause IP2..IP7 as hardware interrupt 0..5
// (FreeBSD hints; Linux arch/mips/ath79/irq.c).
const (
	CPUIRQPCI  = 0 // IP2: PCI/PCIe/WMAC (demuxed on AR934x/QCA955x)
	CPUIRQUSB  = 1 // IP3
	CPUIRQGE0  = 2 // IP4
	CPUIRQGE1  = 3 // IP5
	CPUIRQMisc = 4 // IP6: the MISC controller's summary
	CPUIRQTick = 5 // IP7: CP0 count/compare
)

// Reset-module bits common to the whole family (FreeBSD ar71xxreg.h /
// ar934xreg.h; Linux AR71XX_RESET_*, AR934X_RESET_*).
const (
	ResetGE0PHY  = 1 << 8 // AR71xx; ETH_SWITCH on AR934x
	ResetGE0MAC  = 1 << 9
	ResetGE1PHY  = 1 << 12
	ResetGE1MAC  = 1 << 13
	ResetDDR     = 1 << 16
	ResetGE0MDIO = 1 << 22 // AR724x and later
	ResetGE1MDIO = 1 << 23 // AR724x and later
	ResetFull    = 1 << 24
)

// DDR block (0x1800_0000) write-buffer flush registers (FreeBSD
// ar71xxreg.h, ar724xreg.h, ar91xxreg.h, ar933xreg.h, ar934xreg.h,
// qca955xreg.h; Linux ar71xx_regs.h). Two layouts exist: AR71xx's PCI
// window registers occupy 0x7C..0x98, so AR71xx (and AR934x/QCA955x,
// which kept the layout) start at 0x9C; AR724x/AR913x/AR933x start at 0x7C.
const (
	DDRFlushBase9C = 0x9C
	DDRFlushBase7C = 0x7C
	ddrFlushBusy   = 1 // bit 0: write 1 to start, reads 1 until drained
)

// FlushChannel names a DDR write-buffer flush channel. The numbering is
// Linux's (ath79_ddr_wb_flush): the register is base + 4*channel.
type FlushChannel int

const (
	FlushGE0 FlushChannel = iota
	FlushGE1
	FlushUSB
	FlushPCI // PCI on AR71xx, PCIe on AR724x/AR934x/QCA955x
	FlushWMAC
	numFlushChannels
)

func (c FlushChannel) String() string {
	switch c {
	case FlushGE0:
		return "GE0"
	case FlushGE1:
		return "GE1"
	case FlushUSB:
		return "USB"
	case FlushPCI:
		return "PCI"
	case FlushWMAC:
		return "WMAC"
	}
	return "FlushChannel(?)"
}

// PLL block (0x1805_0000).
const (
	// AR71xx (FreeBSD ar71xxreg.h AR71XX_PLL_*).
	PLLCPUConfig      = 0x00
	PLLSecConfig71xx  = 0x04
	PLLEthInt0Clk71xx = 0x10
	PLLEthInt1Clk71xx = 0x14
	PLLEth0Shift71xx  = 17 // 2-bit field in SEC_CONFIG
	PLLEth1Shift71xx  = 19

	// AR913x (OpenWrt ar71xx.h / FreeBSD ar91xxreg.h AR91XX_PLL_REG_*).
	PLLEthConfig913x  = 0x04
	PLLEthInt0Clk913x = 0x14
	PLLEthInt1Clk913x = 0x18
	PLLEth0Shift913x  = 20
	PLLEth1Shift913x  = 22

	// AR934x / QCA955x ETH_XMII_CONTROL (FreeBSD ar934xreg.h,
	// qca955xreg.h; the values below are marked "verify" there).
	PLLEthXMII934x = 0x2C
	PLLEthXMII955x = 0x28
	// AR934x SWITCH_CLOCK_CONTROL: bit 6 selects a 100 MHz MDIO
	// reference (FreeBSD ar934x_chip.c).
	PLLSwitchClk934x    = 0x24
	PLLSwitchClkMDIO100 = 1 << 6
)

// GMAC block (0x1807_0000).
const (
	// AR71xx/AR913x MII control (FreeBSD ar71xxreg.h AR71XX_MII0_CTRL).
	MII0Ctrl          = 0x00
	MII1Ctrl          = 0x04
	MIICtrlSpeedShift = 4
	MIICtrlSpeedMask  = 3 << MIICtrlSpeedShift
	MIICtrlSpeed10    = 0
	MIICtrlSpeed100   = 1
	MIICtrlSpeed1000  = 2
	MIICtrlIfMask     = 3 // interface select bits 1:0

	// AR934x/QCA955x ETH_CFG (FreeBSD ar934xreg.h / qca955xreg.h).
	EthCfg            = 0x00
	EthCfgRGMIIGMAC0  = 1 << 0
	EthCfgMIIGMAC0    = 1 << 1
	EthCfgGMIIGMAC0   = 1 << 2
	EthCfgSwOnlyMode  = 1 << 6 // QCA955x: GE0_SGMII
	EthCfgSwPhySwap   = 1 << 7
	EthCfgSwAPBAccess = 1 << 9
	EthCfgRMIIGMAC0   = 1 << 10
)

// GPIO block (0x1804_0000) (FreeBSD ar71xxreg.h AR71XX_GPIO_*; Linux
// AR71XX_GPIO_REG_*).
const (
	GPIOOE          = 0x00
	GPIOIn          = 0x04
	GPIOOut         = 0x08
	GPIOSet         = 0x0C
	GPIOClear       = 0x10
	GPIOIntMode     = 0x14
	GPIOIntType     = 0x18
	GPIOIntPolarity = 0x1C
	GPIOIntPending  = 0x20
	GPIOIntMask     = 0x24
	GPIOFunc71xx    = 0x28
	GPIOFunc934x    = 0x6C // AR934x/QCA955x
)

// CPU clock configuration in the PLL block, per family (Linux
// arch/mips/include/asm/mach-ath79/ar71xx_regs.h and arch/mips/ath79/
// clock.c; FreeBSD sys/mips/atheros/*_chip.c, *_detect_sys_frequency).
// The CP0 Count register counts at half the CPU clock on these 24K/74K
// cores (Linux arch/mips/ath79/setup.c, plat_time_init).

// AR71xx CPU_CONFIG (0x00): PLL = (FB+1) x 40 MHz, CPU = PLL / (CPU_DIV+1).
const (
	PLLFBShift71xx     = 3
	PLLFBMask71xx      = 0x1F
	PLLCPUDivShift71xx = 16
	PLLCPUDivMask71xx  = 0x3
	RefHz71xx          = 40_000_000
)

// AHB dividers (Linux ar71xx_regs.h AR71XX_AHB_DIV_*, AR724X_AHB_DIV_*,
// AR913X_AHB_DIV_*, AR933X_PLL_CLOCK_CTRL_AHB_DIV_*; arch/mips/ath79/
// clock.c): AR71xx, AR724x and AR913x AHB = CPU / ((AHB_DIV+1) x 2) from
// CPU_CONFIG; AR933x AHB = PLL output / (AHB_DIV+1) from CLOCK_CTRL (the
// reference clock in bypass).
const (
	PLLAHBDivShift71xx = 20
	PLLAHBDivMask71xx  = 0x7
	PLLAHBDivShift724x = 19 // AR724x and AR913x
	PLLAHBDivMask724x  = 0x1
	PLLAHBDivShift933x = 15
	PLLAHBDivMask933x  = 0x7
)

// AR724x and AR913x CPU_CONFIG (0x00): CPU = 40 MHz x FB / (REF_DIV x 2)
// (Linux ar724x_clk_init, which current Linux uses for AR913x too; older
// trees and FreeBSD's ar91xx_chip.c compute AR913x as FB x 5 MHz, the
// same for the REF_DIV of 4 it runs with).
const (
	PLLFBMask724x      = 0x3FF // bits 9:0
	PLLRefDivShift724x = 10
	PLLRefDivMask724x  = 0xF
	RefHz724x          = 40_000_000
)

// AR933x CPU_CONFIG (0x00) and CLOCK_CTRL (0x08): CPU = ref / REFDIV x
// NINT >> OUTDIV (an OUTDIV of 0 counts as 1) / (CPU_DIV+1); BYPASS runs
// the CPU at the reference clock, 25 or 40 MHz by the bootstrap pins.
const (
	PLLNIntShift933x   = 10
	PLLNIntMask933x    = 0x3F
	PLLRefDivShift933x = 16
	PLLRefDivMask933x  = 0x1F
	PLLOutDivShift933x = 23
	PLLOutDivMask933x  = 0x7
	PLLClockCtrl933x   = 0x08
	PLLClockBypass933x = 1 << 2
	PLLCPUDivShift933x = 5
	PLLCPUDivMask933x  = 0x3
	Bootstrap933xRef40 = 1 << 0 // in RstBootstrap933x: 40 MHz reference, else 25
	RefHz25            = 25_000_000
	RefHz40            = 40_000_000
)

// AR934x and QCA955x: a CPU PLL and a DDR PLL, each ref / REFDIV x (NINT +
// NFRAC / 2^fraction bits) >> OUTDIV, and a clock control register that
// picks the CPU clock's PLL (or the reference clock) and its post
// divider: CPU = PLL / (CPU_POST_DIV+1). The reference is 25 or 40 MHz by
// the bootstrap pins.
const (
	PLLCPUConfig934x      = 0x00 // CPU_PLL_CONFIG
	PLLDDRConfig934x      = 0x04 // DDR_PLL_CONFIG
	PLLClkCtrl934x        = 0x08 // AR934x CPU_DDR_CLK_CTRL, QCA955x CLK_CTRL
	Bootstrap934xRef40    = 1 << 4
	PLLNFracMask934x      = 0x3F // CPU_PLL_CONFIG bits 5:0, 6 fraction bits
	PLLNIntShift934x      = 6
	PLLNIntMask934x       = 0x3F
	PLLRefDivShift934x    = 12
	PLLRefDivMask934x     = 0x1F
	PLLOutDivShift934x    = 19
	PLLOutDivMask934x     = 0x3
	PLLDDRNFracMask934x   = 0x3FF // DDR_PLL_CONFIG bits 9:0, 10 fraction bits
	PLLDDRNIntShift934x   = 10
	PLLDDRNIntMask934x    = 0x3F
	PLLDDRRefDivShift934x = 16
	PLLDDRRefDivMask934x  = 0x1F
	PLLDDROutDivShift934x = 23
	PLLDDROutDivMask934x  = 0x7
	ClkCtrlCPUBypass934x  = 1 << 2
	ClkCtrlPostDivShift   = 5 // CPU_POST_DIV
	ClkCtrlPostDivMask    = 0x1F
	// ClkCtrlCPUFromCPUPLL selects the CPU PLL on AR934x. On QCA955x
	// the bit of the same name selects the DDR PLL when set: Linux's
	// qca955x_clocks_init and FreeBSD's qca955x_chip.c both read it
	// that way, whatever its name says.
	ClkCtrlCPUFromCPUPLL = 1 << 20
)

// AR934x SRIF block: when its CPU (DDR) DPLL2 has LOCAL_PLL set, the CPU
// (DDR) PLL is the SRIF's DPLL1, with 18 fraction bits, and the PLL block's
// CPU_PLL_CONFIG (DDR_PLL_CONFIG) does not count (Linux ar934x_clocks_init,
// since "MIPS: ath79: Fix CPU/DDR frequency calculation for SRIF PLLs").
const (
	PhysSRIF934x        = 0x1811_6000
	SRIFCPUDPLL1        = 0x1C0
	SRIFCPUDPLL2        = 0x1C4
	SRIFDDRDPLL1        = 0x240
	SRIFDDRDPLL2        = 0x244
	SRIFDPLL1RefDivSh   = 27
	SRIFDPLL1RefDivMask = 0x1F
	SRIFDPLL1NIntShift  = 18
	SRIFDPLL1NIntMask   = 0x1FF
	SRIFDPLL1NFracMask  = 0x3FFFF
	SRIFDPLL2LocalPLL   = 1 << 30
	SRIFDPLL2OutDivSh   = 13
	SRIFDPLL2OutDivMask = 0x7
)

// The 16550 interrupt enable bit for received data (ERBFI, IER bit 0), and
// the AR933x UART's interrupt bits (FreeBSD ar933x_uart.h; Linux
// drivers/tty/serial/ar933x_uart.c acknowledges RX_VALID by writing it to
// INT).
const (
	UARTIERRDA          = 1 << 0
	UART933xIntRXValid  = 1 << 0 // in INT and INT_EN
	UART933xCSHostIntEn = 1 << 13
)
