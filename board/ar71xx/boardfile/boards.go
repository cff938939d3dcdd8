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

// wdr43xx is the TL-WDR3600/TL-WDR4300 v1. Verified against OpenWrt
// ath79 ar9344_tplink_tl-wdrxxxx.dtsi, ar9344_tplink_tl-wdr4300.dtsi and
// base-files etc/board.d/02_network: AR9344, 8 MiB flash (u-boot
// 0x20000, firmware, art in the last 64 KiB), the base MAC at u-boot
// 0x1fc00 (02_network: WAN = base+1), an AR8327 (qca8327 at MDIO 0x10)
// on GE0 over RGMII with a fixed 1000/full link, switch port 1 the WAN,
// ports 2-5 LAN 1-4 (02_network "0@eth0" "2:lan:1" … "5:lan:4" "1:wan":
// one CPU port, so it is tagged in both VLANs, OpenWrt's eth0.1 and
// eth0.2), GE0's pll-data <0x06000000 0x00000101 0x00001616> (1000, 100,
// 10 Mbit/s). LEDs system 14, qss 15 and usb1 11, usb2 12, all active-low;
// the wlan2g LED (13) is driven by the radio (the WMAC's led-sources), not
// as a GPIO. Buttons reset 16, rfkill 17, active-low. RAM 128 MiB
// UNVERIFIED (not in the device tree).
func wdr43xx(name, model string, hwid uint32) *Board {
	return &Board{
		Name: name, Model: model, Rev: ar71xx.RevMajor9344, RAMMiB: 128,
		Flash: tplinkFlash(8 << 20),
		Eth: []Eth{{Unit: 0, If: RGMII, PLL: [3]uint32{0x06000000, 0x00000101, 0x00001616},
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
		LEDs: []GPIO{{Name: "usb1", Pin: 11, ActiveLow: true}, {Name: "usb2", Pin: 12, ActiveLow: true},
			{Name: "wlan2g", Pin: 13, ActiveLow: true}, {Name: "system", Pin: 14, ActiveLow: true},
			{Name: "qss", Pin: 15, ActiveLow: true}},
		Buttons: []GPIO{{Name: "reset", Pin: 16, ActiveLow: true}, {Name: "rfkill", Pin: 17, ActiveLow: true}},
		Baud:    115200,
		MACAddr: MACLocation{Part: "u-boot", Offset: tplinkMAC},
		Image: Image{Format: TPLink, TPLinkHWID: hwid, FlashBase: flashKseg1, TFTPLoad: tplinkTFTP,
			BootmLimit: bootm8M},
		USB: wdr43xxUSB,
	}
}

var (
	// TLWDR4300 is the TP-Link TL-WDR4300 v1.
	TLWDR4300 = wdr43xx("tl-wdr4300", "TP-Link TL-WDR4300 v1", fwimage.TPLinkHWIDWDR4300v1)
	// TLWDR3600 is the TP-Link TL-WDR3600 v1: the TL-WDR4300's board with
	// a 2x2 5 GHz radio and one USB port.
	TLWDR3600 = wdr43xx("tl-wdr3600", "TP-Link TL-WDR3600 v1", fwimage.TPLinkHWIDWDR3600v1)

	// ArcherC7v2 is the TP-Link Archer C7 v2. Verified against OpenWrt
	// ath79 qca9558_tplink_archer-c7.dtsi and 02_network: QCA9558, an
	// AR8327 on GE0's MDIO (PHY address 0) whose initvals make port 0
	// SGMII (PAD0 0x00080080) and port 6 RGMII with TX delay 1 and RX
	// delay 2 (PAD6 0x07600000); GE0 is RGMII (gmac-config
	// rgmii-enabled, pll-data <0x56000000 0x00000101 0x00001616>) and
	// carries the WAN, its MAC base+1 (mtd-mac-address-increment 1); GE1
	// is SGMII with a fixed 1000/full link (pll-data <0x03000101
	// 0x00000101 0x00001616>) and carries the LAN, its MAC the base at
	// u-boot 0x1fc00. 02_network: "0@eth1" "2:lan" "3:lan" "4:lan"
	// "5:lan" "6@eth0" "1:wan", both CPU ports untagged. LEDs system 14,
	// qss 15, wlan2g 12, usb1 19, usb2 18 and the reset button 16, all
	// active-low. The rfkill button (17), RAM and the flash layout
	// beyond U-Boot and ART are UNVERIFIED; the LAN sockets' numbering
	// (02_network gives none) UNVERIFIED.
	ArcherC7v2 = &Board{
		Name: "archer-c7-v2", Model: "TP-Link Archer C7 v2", Rev: ar71xx.RevMajor9558, RAMMiB: 128,
		Flash: tplinkFlash(16 << 20),
		Eth: []Eth{
			{Unit: 0, If: RGMII, PLL: [3]uint32{0x56000000, 0x00000101, 0x00001616}, PHY: -1, SwitchPort: 6, MDIO: true},
			{Unit: 1, If: SGMII, PLL: [3]uint32{0x03000101, 0x00000101, 0x00001616}, PHY: -1, SwitchPort: 0},
		},
		Switch: &Switch{Chip: arswitch.ChipAR8327, Profile: archerC7Switch, MDIOUnit: 0,
			VLANs: []VLAN{
				{VID: 1, Ports: []int{0, 2, 3, 4, 5}},
				{VID: 2, Ports: []int{1, 6}},
			}},
		Ports: []Port{
			{Name: "lan", Role: board.LAN, Unit: 1, SwitchPorts: []int{2, 3, 4, 5}, PHY: -1},
			{Name: "wan", Role: board.WAN, Unit: 0, SwitchPorts: []int{1}, PHY: -1},
		},
		LEDs: []GPIO{{Name: "system", Pin: 14, ActiveLow: true}, {Name: "qss", Pin: 15, ActiveLow: true},
			{Name: "wlan2g", Pin: 12, ActiveLow: true}, {Name: "usb1", Pin: 19, ActiveLow: true},
			{Name: "usb2", Pin: 18, ActiveLow: true}},
		Buttons: []GPIO{{Name: "reset", Pin: 16, ActiveLow: true}, {Name: "rfkill", Pin: 17, ActiveLow: true}},
		Baud:    115200,
		MACAddr: MACLocation{Part: "u-boot", Offset: tplinkMAC},
		Image: Image{Format: TPLink, TPLinkHWID: fwimage.TPLinkHWIDArcherC7v2, FlashBase: flashKseg1,
			TFTPLoad: tplinkTFTP, BootmLimit: bootm8M},
		USB: archerC7USB,
	}

	// Carambola2 is the 8devices Carambola2 module on its development
	// board. Verified against OpenWrt ath79 ar9331_8dev_carambola2.dts,
	// ar9331.dtsi and 02_network: AR9331, 16 MiB flash (u-boot 0x40000,
	// u-boot-env 0x10000, firmware from 0x50000, art in the last 64 KiB),
	// GE0 over MII to a PHY of the built-in switch (gmac-config
	// switch-phy-swap and switch-phy-addr-swap: PHY0 and PHY4 trade
	// places), GE1 over GMII to the built-in switch's CPU port 0;
	// 02_network has no entry, so its default applies: LAN eth0, WAN eth1.
	// MACs: GE0 art 0x0 (the base), GE1 art 0x6 (a stored address, which
	// wire's base+1 does not reproduce). LEDs wlan 0 active-low, eth0 13
	// and eth1 14 active-high; the wps button 11 active-low. UNVERIFIED:
	// the PHY address GE0's PHY answers at after the address swap (4),
	// which switch port the development board's WAN socket is on (1), RAM.
	Carambola2 = &Board{
		Name: "carambola2", Model: "8devices Carambola2", Rev: ar71xx.RevMajor9331, RAMMiB: 64,
		Flash: ubootEnvFlash(16 << 20),
		Eth: []Eth{
			{Unit: 0, If: MII, PHY: 4, PHYUnit: 1, PHYViaSwitch: true, SwitchPort: -1},
			{Unit: 1, If: GMII, PHY: -1, SwitchPort: 0, MDIO: true},
		},
		Switch: &Switch{Chip: arswitch.ChipAR7240, Profile: carambola2Switch, MDIOUnit: 1},
		Ports: []Port{
			{Name: "lan", Role: board.LAN, Unit: 0, PHY: 4},
			{Name: "wan", Role: board.WAN, Unit: 1, SwitchPorts: []int{1}, PHY: -1},
		},
		LEDs:    []GPIO{{Name: "wlan", Pin: 0, ActiveLow: true}, {Name: "eth0", Pin: 13}, {Name: "eth1", Pin: 14}},
		Buttons: []GPIO{{Name: "wps", Pin: 11, ActiveLow: true}},
		Baud:    115200,
		MACAddr: MACLocation{Part: PartART, Offset: 0},
		Image:   Image{Format: UImage, FlashBase: flashKseg1, TFTPLoad: 0x81000000, BootmLimit: bootm8M},
		USB:     carambola2USB,
	}

	// RSPro is the Ubiquiti RouterStation Pro. Verified against OpenWrt
	// ath79 ar7161_ubnt_routerstation-pro.dts, ar7161_ubnt_routerstation.dtsi
	// and 02_network: AR7161, RedBoot with its FIS directory
	// (redboot-fis-partitions), both MACs RGMII; GE0 has PHY 4 on GE0's
	// MDIO (the AR8316's PHY4 in "port 4 as PHY" mode) and is the WAN
	// (02_network: wan eth0); GE1 is the AR8316's CPU port 0 (phy-handle
	// PHY 0 on mdio0, the switch), whose ports 4, 3, 2 are LAN 1, 2, 3
	// ("0@eth1" "2:lan:3" "3:lan:2" "4:lan:1"). MACs: RedBoot's fconfig
	// key ar7100_esa is the WAN's, the LAN's is that +1 — the reverse of
	// wire's LAN = base; MACLocation cannot name an fconfig key, so its
	// offset is a placeholder, UNVERIFIED. The radios are mini-PCI cards
	// with their own EEPROMs, so there is no ART partition. Partition
	// offsets are gowrt's static view of the FIS directory, UNVERIFIED;
	// RAM UNVERIFIED.
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
			{Unit: 0, If: RGMII, PHY: 4, PHYUnit: 0, SwitchPort: -1, MDIO: true},
			{Unit: 1, If: RGMII, PHY: -1, SwitchPort: 0},
		},
		Switch: &Switch{Chip: arswitch.ChipAR8316, Profile: rsproSwitch, MDIOUnit: 0},
		Ports: []Port{
			{Name: "lan", Role: board.LAN, Unit: 1, SwitchPorts: []int{4, 3, 2}, PHY: -1},
			{Name: "wan", Role: board.WAN, Unit: 0, PHY: 4},
		},
		LEDs:    []GPIO{{Name: "rf", Pin: 2}},
		Buttons: []GPIO{{Name: "reset", Pin: 8, ActiveLow: true}},
		Baud:    115200,
		MACAddr: MACLocation{Part: "redboot-config", Offset: 0, Text: true},
		Image:   Image{Format: RedBoot, FlashBase: 0xbf000000, TFTPLoad: 0x80100000},
		USB:     rsproUSB,
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
	// archerC7Switch: port 0 SGMII to GE1, port 6 RGMII to GE0 with TX
	// delay 1 and RX delay 2, LED_CTRL0-3 c737c737, 0, 0, 0030c300 (the
	// device tree's qca,ar8327-initvals, see ArcherC7v2).
	archerC7Switch = arswitch.Board{Name: "Archer-C7-v2",
		CPU: []arswitch.CPUPort{
			{Port: 0, Mode: arswitch.ModeSGMII},
			{Port: 6, Mode: arswitch.ModeRGMII, TXDelay: delay(1), RXDelay: delay(2)},
		},
		Labels: []string{"cpu", "wan", "lan1", "lan2", "lan3", "lan4", "cpu"},
		LEDs:   &arswitch.LEDConfig{Ctrl: [4]uint32{0xc737c737, 0x00000000, 0x00000000, 0x0030c300}},
	}
	carambola2Switch = arswitch.Board{Name: "Carambola2", CPU: []arswitch.CPUPort{{Port: 0, Mode: arswitch.ModeGMII}},
		Labels: []string{"cpu", "lan", "", "", "", ""}}
	rsproSwitch = arswitch.Board{Name: "RouterStation-Pro", CPU: []arswitch.CPUPort{{Port: 0, Mode: arswitch.ModeRGMII}},
		PHY4ToCPU: true, Labels: []string{"cpu", "", "lan3", "lan2", "lan1", ""}}
)

func delay(v uint8) *uint8 { return &v }
