// Package profiles holds the Ethernet switch wiring of particular
// AR71xx-family boards, as arswitch.Board data: the boards that have those
// switches own the facts, the switch driver only their type and its
// validation. A board package for one of these routers passes its profile
// (a Clone, if it changes anything) to arswitch.Attach.
//
// The values are not from the register sources the switch driver cites:
// they are recalled from OpenWrt's ar71xx board files (mach-db120.c,
// mach-tl-wdr4300.c, mach-ap136.c and their DTS successors) and are
// UNVERIFIED; they show the shape of the data and must be checked against
// the board files before use on hardware. The AR8327 pad encoding itself
// (RGMII_EN, delay enables and selectors) is from FreeBSD
// sys/dev/etherswitch/arswitch/arswitchreg.h AR8327_PAD_* and Linux
// drivers/net/dsa/qca/qca8k.h.
package profiles

import "github.com/gowrt/gowrt/arswitch"

func delay(v uint8) *uint8 { return &v }

var (
	// DB120: AR934x reference board, AR8327 on GE0 over RGMII with TX
	// delay select 1 and RX delay select 2, open-drain LEDs.
	DB120 = arswitch.Board{
		Name: "DB120",
		CPU:  []arswitch.CPUPort{{Port: 0, Mode: arswitch.ModeRGMII, TXDelay: delay(1), RXDelay: delay(2)}},
		LEDs: &arswitch.LEDConfig{Ctrl: [4]uint32{0x00000000, 0xc737c737, 0x00000000, 0x00c30c00}, OpenDrain: true},
	}
	// AP135: QCA955x reference board, AR8327 on GE0 over RGMII and
	// GMAC6 over SGMII to GE1. LED programming left at the chip default.
	AP135 = arswitch.Board{
		Name: "AP135",
		CPU: []arswitch.CPUPort{
			{Port: 0, Mode: arswitch.ModeRGMII, TXDelay: delay(1), RXDelay: delay(2)},
			{Port: 6, Mode: arswitch.ModeSGMII},
		},
	}
	// TLWDR4300: TL-WDR3600/TL-WDR4300, AR9344 + AR8327 over RGMII; port
	// 1 is WAN, ports 2-5 LAN 1-4.
	TLWDR4300 = arswitch.Board{
		Name:   "TL-WDR4300",
		CPU:    []arswitch.CPUPort{{Port: 0, Mode: arswitch.ModeRGMII, TXDelay: delay(1), RXDelay: delay(2)}},
		Labels: []string{"cpu", "wan", "lan1", "lan2", "lan3", "lan4", ""},
		LEDs:   &arswitch.LEDConfig{Ctrl: [4]uint32{0xc737c737, 0x00000000, 0x00000000, 0x0030c300}},
	}
	// AR934xBuiltIn: the AR934x's built-in switch on GE1 over its internal
	// GMII link, e.g. the TL-WR841N v8 style of board.
	AR934xBuiltIn = arswitch.Board{
		Name: "AR934x-builtin",
		CPU:  []arswitch.CPUPort{{Port: 0, Mode: arswitch.ModeGMII}},
	}
)
