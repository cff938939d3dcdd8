//go:build mips || mipsle

package malta

// Power-off through the PIIX4's ACPI power management (Intel PIIX4
// datasheet, function 3; QEMU hw/acpi/piix4.c, pm_io_space_update, and
// hw/acpi/core.c, acpi_pm1_cnt_write): enable the PM I/O space at PMBase
// (PMBA, configuration register 0x40, and PMIOSE, bit 0 of register
// 0x80), then write SLP_EN with sleep type 0 (soft off) to PM1_CNT. QEMU
// then shuts the machine down.
const (
	pciSlotPIIX4 = 10 // PCI 00:0a
	pciFnPM      = 3
	pmBA         = 0x40
	pmRegMisc    = 0x80
	pmIOSE       = 1 << 0
	// PMBase is the I/O port the power-management registers are placed
	// at: below the range PCI BARs are assigned from (0x2000, see package
	// pci) and above the ISA devices.
	PMBase    = 0x1000
	pm1Cnt    = 0x04
	pm1SlpEn  = 1 << 13    // sleep type (bits 12:10) 0: soft off
	gtBase    = 0xbbe00000 // GT-64120 registers through kseg1 (package pci: GTBase)
	gtCfgAddr = 0xcf8
	gtCfgData = 0xcfc
)

// PowerOff switches the board off; on return it did not work.
//
//go:nosplit
func PowerOff() {
	// Configuration data of devices other than the GT itself reads and
	// writes in CPU byte order (package pci, GT).
	pmConfig(pmBA)
	store32(gtBase+gtCfgData, PMBase|1)
	pmConfig(pmRegMisc)
	v := load32(gtBase + gtCfgData)
	pmConfig(pmRegMisc)
	store32(gtBase+gtCfgData, v|pmIOSE)
	// PM1_CNT is a 16-bit little-endian I/O register.
	store16(ISAIO+PMBase+pm1Cnt, le16(pm1SlpEn))
}

// pmConfig selects configuration register reg of the PIIX4's PM function.
// CFGADDR is a GT register, so it is little-endian.
//
//go:nosplit
func pmConfig(reg uint32) {
	store32(gtBase+gtCfgAddr, le32(0x8000_0000|pciSlotPIIX4<<11|pciFnPM<<8|reg))
}
