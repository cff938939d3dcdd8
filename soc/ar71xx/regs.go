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
