package boardfile

import (
	"github.com/gowrt/gowrt/arswitch"
	"github.com/gowrt/gowrt/board"
	"github.com/gowrt/gowrt/board/ar71xx/profiles"
	"github.com/gowrt/gowrt/fwimage"
	"github.com/gowrt/gowrt/soc/ar71xx"
)

// gowrt keeps its configuration in a partition of its own (flash/confstore
// needs two erase blocks for its alternating copies), carved from the end
// of the vendor's firmware partition: OpenWrt keeps it inside the
// firmware partition, in the root file system's JFFS2 overlay, which gowrt
// does not have.
const configSize = 0x20000

// bootm8M is U-Boot's default CONFIG_SYS_BOOTM_LEN (8 MiB). UNVERIFIED for
// the vendors' U-Boot 1.1.4 builds (Atheros LSDK): recalled from U-Boot's
// common/bootm.c default, not read in these loaders' sources.
const bootm8M = 8 << 20

// The TP-Link boards' common facts (OpenWrt ath79 tl-wdr4300 and
// archer-c7 device trees; fwimage's mktplinkfw facts): U-Boot 0x20000 at
// the start, ART in the last 64 KiB, the MAC address at 0x1fc00 in the
// U-Boot partition, the firmware at 0x9f020000 (bootm address), tftpboot
// to 0x81000000 as TP-Link's recovery instructions use.
const (
	tplinkUBoot   = 0x20000
	tplinkMAC     = 0x1fc00
	flashKseg1    = 0x9f000000
	tplinkTFTP    = 0x81000000
	art64K        = 0x10000
	ubootEnvSplit = 0x40000 // U-Boot 256 KiB + env 64 KiB boards
)

func tplinkFlash(size int64) Flash {
	fw := size - tplinkUBoot - configSize - art64K
	return Flash{Size: size, Parts: []Partition{
		{Name: "u-boot", Offset: 0, Size: tplinkUBoot, ReadOnly: true},
		{Name: PartFirmware, Offset: tplinkUBoot, Size: fw},
		{Name: PartConfig, Offset: tplinkUBoot + fw, Size: configSize},
		{Name: PartART, Offset: size - art64K, Size: art64K, ReadOnly: true},
	}}
}

// ubootEnvFlash: U-Boot 256 KiB, its environment 64 KiB, firmware, config,
// ART (Carambola2, AP135).
func ubootEnvFlash(size int64) Flash {
	fw := size - ubootEnvSplit - 0x10000 - configSize - art64K
	return Flash{Size: size, Parts: []Partition{
		{Name: "u-boot", Offset: 0, Size: ubootEnvSplit, ReadOnly: true},
		{Name: "u-boot-env", Offset: ubootEnvSplit, Size: 0x10000, ReadOnly: true},
		{Name: PartFirmware, Offset: ubootEnvSplit + 0x10000, Size: fw},
		{Name: PartConfig, Offset: ubootEnvSplit + 0x10000 + fw, Size: configSize},
		{Name: PartART, Offset: size - art64K, Size: art64K, ReadOnly: true},
	}}
}

// wdr43xx is the TL-WDR3600/TL-WDR4300 v1 (OpenWrt ath79
// ar9344_tplink_tl-wdr4300.dtsi family): AR9344, 128 MiB, 8 MiB flash,
// AR8327 on GE0 over RGMII; switch port 1 is WAN, 2-5 are LAN 1-4, and
// the CPU port carries both as VLAN 1 and VLAN 2 (OpenWrt's eth0.1 and
// eth0.2). GPIOs from the same device tree (recalled, UNVERIFIED).
func wdr43xx(name, model string, hwid uint32) *Board {
	return &Board{
		Name: name, Model: model, Rev: ar71xx.RevMajor9344, RAMMiB: 128,
		Flash: tplinkFlash(8 << 20),
		Eth: []Eth{{Unit: 0, If: RGMII, PLL: [3]uint32{0x02000000, 0x00000101, 0x00001313},
			PHY: -1, SwitchPort: 0, MDIO: true}},
		Switch: &Switch{Chip: arswitch.ChipAR8327, Profile: profiles.TLWDR4300, MDIOUnit: 0,
			VLANs: []VLAN{
				{VID: 1, Ports: []int{0, 2, 3, 4, 5}, Tagged: []int{0}},
				{VID: 2, Ports: []int{0, 1}, Tagged: []int{0}},
			}},
		Ports: []Port{
			{Name: "lan", Role: board.LAN, Unit: 0, VID: 1, SwitchPorts: []int{2, 3, 4, 5}, PHY: -1},
			{Name: "wan", Role: board.WAN, Unit: 0, VID: 2, SwitchPorts: []int{1}, PHY: -1},
		},
		LEDs: []GPIO{{Name: "usb1", Pin: 11}, {Name: "usb2", Pin: 12},
			{Name: "wlan2g", Pin: 13, ActiveLow: true}, {Name: "system", Pin: 14, ActiveLow: true},
			{Name: "qss", Pin: 15, ActiveLow: true}},
		Buttons: []GPIO{{Name: "reset", Pin: 16, ActiveLow: true}, {Name: "rfkill", Pin: 17, ActiveLow: true}},
		Baud:    115200,
		MACAddr: MACLocation{Part: "u-boot", Offset: tplinkMAC},
		Image: Image{Format: TPLink, TPLinkHWID: hwid, FlashBase: flashKseg1, TFTPLoad: tplinkTFTP,
			BootmLimit: bootm8M},
	}
}

var (
	// TLWDR4300 is the TP-Link TL-WDR4300 v1.
	TLWDR4300 = wdr43xx("tl-wdr4300", "TP-Link TL-WDR4300 v1", fwimage.TPLinkHWIDWDR4300v1)
	// TLWDR3600 is the TP-Link TL-WDR3600 v1: the TL-WDR4300's board with
	// a 2x2 5 GHz radio and one USB port.
	TLWDR3600 = wdr43xx("tl-wdr3600", "TP-Link TL-WDR3600 v1", fwimage.TPLinkHWIDWDR3600v1)

	// ArcherC7v2 is the TP-Link Archer C7 v2 (OpenWrt ath79
	// qca9558_tplink_archer-c7.dtsi and its 02_network): QCA9558, 128 MiB,
	// 16 MiB flash, AR8327 with GE0 on port 0 over RGMII carrying the LAN
	// (ports 2-5, LAN 1-4) and GE1 on port 6 over SGMII carrying the WAN
	// (port 1), both untagged. PLL values recalled, UNVERIFIED.
	ArcherC7v2 = &Board{
		Name: "archer-c7-v2", Model: "TP-Link Archer C7 v2", Rev: ar71xx.RevMajor9558, RAMMiB: 128,
		Flash: tplinkFlash(16 << 20),
		Eth: []Eth{
			{Unit: 0, If: RGMII, PLL: [3]uint32{0x56000000, 0x00000101, 0x00001616}, PHY: -1, SwitchPort: 0, MDIO: true},
			{Unit: 1, If: SGMII, PLL: [3]uint32{0x03000101, 0x00000101, 0x00001616}, PHY: -1, SwitchPort: 6},
		},
		Switch: &Switch{Chip: arswitch.ChipAR8327, Profile: archerC7Switch, MDIOUnit: 0,
			VLANs: []VLAN{
				{VID: 1, Ports: []int{0, 2, 3, 4, 5}},
				{VID: 2, Ports: []int{1, 6}},
			}},
		Ports: []Port{
			{Name: "lan", Role: board.LAN, Unit: 0, SwitchPorts: []int{2, 3, 4, 5}, PHY: -1},
			{Name: "wan", Role: board.WAN, Unit: 1, SwitchPorts: []int{1}, PHY: -1},
		},
		LEDs: []GPIO{{Name: "system", Pin: 14, ActiveLow: true}, {Name: "wps", Pin: 15, ActiveLow: true},
			{Name: "wlan2g", Pin: 12, ActiveLow: true}, {Name: "usb1", Pin: 18, ActiveLow: true},
			{Name: "usb2", Pin: 19, ActiveLow: true}},
		Buttons: []GPIO{{Name: "reset", Pin: 16, ActiveLow: true}, {Name: "rfkill", Pin: 17, ActiveLow: true}},
		Baud:    115200,
		MACAddr: MACLocation{Part: "u-boot", Offset: tplinkMAC},
		Image: Image{Format: TPLink, TPLinkHWID: fwimage.TPLinkHWIDArcherC7v2, FlashBase: flashKseg1,
			TFTPLoad: tplinkTFTP, BootmLimit: bootm8M},
	}

	// Carambola2 is the 8devices Carambola2 module on its development
	// board (OpenWrt ath79 ar9331_8dev_carambola2.dts): AR9331, 64 MiB,
	// 16 MiB flash, GE0 over MII to the built-in switch's PHY4 as the WAN
	// port, GE1 over GMII to the built-in switch, whose PHY0 (switch port
	// 1) is the LAN port. U-Boot with uImages. GPIOs UNVERIFIED.
	Carambola2 = &Board{
		Name: "carambola2", Model: "8devices Carambola2", Rev: ar71xx.RevMajor9331, RAMMiB: 64,
		Flash: ubootEnvFlash(16 << 20),
		Eth: []Eth{
			{Unit: 0, If: MII, PHY: 4, PHYUnit: 1, PHYViaSwitch: true, SwitchPort: -1},
			{Unit: 1, If: GMII, PHY: -1, SwitchPort: 0, MDIO: true},
		},
		Switch: &Switch{Chip: arswitch.ChipAR7240, Profile: carambola2Switch, MDIOUnit: 1},
		Ports: []Port{
			{Name: "lan", Role: board.LAN, Unit: 1, SwitchPorts: []int{1}, PHY: -1},
			{Name: "wan", Role: board.WAN, Unit: 0, PHY: 4},
		},
		LEDs:    []GPIO{{Name: "wlan", Pin: 0}, {Name: "eth0", Pin: 13, ActiveLow: true}, {Name: "eth1", Pin: 14, ActiveLow: true}},
		Baud:    115200,
		MACAddr: MACLocation{Part: PartART, Offset: 0},
		Image:   Image{Format: UImage, FlashBase: flashKseg1, TFTPLoad: 0x81000000, BootmLimit: bootm8M},
	}

	// RSPro is the Ubiquiti RouterStation Pro (OpenWrt ath79
	// ar7161_ubnt_routerstation-pro.dts): AR7161, 128 MiB, 16 MiB flash
	// with RedBoot and its FIS directory, an AR8316 on GE0 over RGMII for
	// LAN 1-3 and its PHY4 wired to GE1 over RGMII ("port 4 as PHY") as
	// the WAN port. The radios are mini-PCI cards with their own EEPROMs,
	// so there is no ART partition. RedBoot loads an ELF (load -m tftp,
	// fis create, fis load; exec). Partition offsets are gowrt's static
	// view of the FIS directory RedBoot keeps at the end of the flash; the
	// MAC address location UNVERIFIED.
	RSPro = &Board{
		Name: "rspro", Model: "Ubiquiti RouterStation Pro", Rev: ar71xx.RevMajor71xx | 2, RAMMiB: 128,
		Flash: Flash{Size: 16 << 20, Parts: []Partition{
			{Name: "redboot", Offset: 0, Size: 0x40000, ReadOnly: true},
			{Name: PartFirmware, Offset: 0x40000, Size: 0xf80000},
			{Name: PartConfig, Offset: 0xfc0000, Size: configSize},
			{Name: "fis-directory", Offset: 0xfe0000, Size: 0x10000, ReadOnly: true},
			{Name: "redboot-config", Offset: 0xff0000, Size: 0x10000, ReadOnly: true},
		}},
		Eth: []Eth{
			{Unit: 0, If: RGMII, PHY: -1, SwitchPort: 0, MDIO: true},
			{Unit: 1, If: RGMII, PHY: 4, PHYUnit: 0, SwitchPort: -1},
		},
		Switch: &Switch{Chip: arswitch.ChipAR8316, Profile: rsproSwitch, MDIOUnit: 0},
		Ports: []Port{
			{Name: "lan", Role: board.LAN, Unit: 0, SwitchPorts: []int{1, 2, 3}, PHY: -1},
			{Name: "wan", Role: board.WAN, Unit: 1, PHY: 4},
		},
		Baud:    115200,
		MACAddr: MACLocation{Part: "redboot-config", Offset: 0, Text: true},
		Image:   Image{Format: RedBoot, FlashBase: 0xbf000000, TFTPLoad: 0x80100000},
	}

	// AP135 is Qualcomm Atheros' QCA9558 reference board (OpenWrt ath79
	// qca9558_qca_ap135 style): 128 MiB, 16 MiB flash, AR8327 with GE0 on
	// port 0 over RGMII for the LAN and GE1 on port 6 over SGMII for the
	// WAN. Port map and GPIOs UNVERIFIED.
	AP135 = &Board{
		Name: "ap135", Model: "Qualcomm Atheros AP135 reference board", Rev: ar71xx.RevMajor9558, RAMMiB: 128,
		Flash: ubootEnvFlash(16 << 20),
		Eth: []Eth{
			{Unit: 0, If: RGMII, PLL: [3]uint32{0x56000000, 0x00000101, 0x00001616}, PHY: -1, SwitchPort: 0, MDIO: true},
			{Unit: 1, If: SGMII, PLL: [3]uint32{0x03000101, 0x00000101, 0x00001616}, PHY: -1, SwitchPort: 6},
		},
		Switch: &Switch{Chip: arswitch.ChipAR8327, Profile: profiles.AP135, MDIOUnit: 0,
			VLANs: []VLAN{
				{VID: 1, Ports: []int{0, 1, 2, 3, 4}},
				{VID: 2, Ports: []int{5, 6}},
			}},
		Ports: []Port{
			{Name: "lan", Role: board.LAN, Unit: 0, SwitchPorts: []int{1, 2, 3, 4}, PHY: -1},
			{Name: "wan", Role: board.WAN, Unit: 1, SwitchPorts: []int{5}, PHY: -1},
		},
		Baud:    115200,
		MACAddr: MACLocation{Part: PartART, Offset: 0},
		Image:   Image{Format: UImage, FlashBase: flashKseg1, TFTPLoad: 0x81000000, BootmLimit: bootm8M},
	}

	// All lists the router boards gowrt builds for.
	All = []*Board{TLWDR4300, TLWDR3600, ArcherC7v2, Carambola2, RSPro, AP135}
)

// Switch wiring not in board/ar71xx/profiles yet.
var (
	archerC7Switch = func() arswitch.Board {
		b := profiles.AP135.Clone()
		b.Name = "Archer-C7-v2"
		b.Labels = []string{"cpu", "wan", "lan1", "lan2", "lan3", "lan4", "cpu2"}
		return b
	}()
	carambola2Switch = arswitch.Board{Name: "Carambola2", CPU: []arswitch.CPUPort{{Port: 0, Mode: arswitch.ModeGMII}},
		Labels: []string{"cpu", "lan", "", "", "", ""}}
	rsproSwitch = arswitch.Board{Name: "RouterStation-Pro", CPU: []arswitch.CPUPort{{Port: 0, Mode: arswitch.ModeRGMII}},
		PHY4ToCPU: true, Labels: []string{"cpu", "lan1", "lan2", "lan3", "", ""}}
)
