// Package arswitch drives the Atheros/QCA Ethernet switches found behind
// the CPU port of most Atheros routers: the external AR8216, AR8316 and
// AR8327/AR8337 (QCA8327/8337) on a board MDIO bus, and the switch built
// into the AR7240/AR7241/AR7242 and AR9341/AR9342/AR9344 SoCs (reached on
// GE1's MDIO bus).
//
// # Access
//
// Switch registers are 32-bit and reached through 16-bit MDIO transactions:
// a page select (PHY 0x18 reg 0 on the external chips, PHY 0x1f reg 0x10
// on the built-in switch), a settle delay, then the two halves in the order
// the chip commits them (high first on the AR8216 family, low first on the
// AR8327). The bus's mdio.Locker is held across the whole sequence so no
// other bus user can interleave. Attach reads the ID register, rejects
// unstable or unknown IDs, and selects a per-chip operations table; all
// chip differences live behind it.
//
// # Configuration
//
// The API follows etherswitch(8): Info, Port/SetPort, VLANMode/SetVLANMode,
// VLANGroup/SetVLANGroup/DelVLANGroup, plus link polling with address-table
// flush (PollLinks), ATU dump and flush, MIB counters, PHY and raw register
// access. Three VLAN modes:
//
//   - ModeSingle (default): all ports in one group sharing VID 1.
//   - ModePort: port-based groups, one per port, listing where that port
//     may forward (port isolation).
//   - ModeDot1Q: 802.1Q VLANs with tagged and untagged members and a PVID
//     per port, with ingress filtering. The AR8327 tags per port per VLAN;
//     the AR8216 family tags per port, so a port must be tagged in all its
//     VLANs or untagged in exactly one, and other layouts are refused.
//
// Every configuration call validates the complete resulting setup before
// touching a register: a rejected configuration returns an error wrapping
// ErrBadVID, ErrBadPort, ErrBadGroup, ErrDupVID, ErrMode or ErrUnsupported
// and leaves the switch exactly as it was. Accepted changes are programmed
// incrementally (only changed VTU entries and port registers are written).
//
// Board wiring (CPU port mode and delays, port→PHY map, LEDs) is data the
// board passes in: see Board. The wiring of particular boards lives with
// the boards (board/ar71xx/profiles).
//
// The package has no per-frame path: the switch forwards in hardware. Its
// model, with a frame-forwarding simulation, is package arswitchsim.
//
// # Sources
//
// Register facts come from the upstream drivers for these chips, which
// comments in this package cite by tag:
//
//	[FB-REG]   FreeBSD sys/dev/etherswitch/arswitch/arswitchreg.h
//	[FB-RIO]   FreeBSD sys/dev/etherswitch/arswitch/arswitch_reg.c
//	[FB-SW]    FreeBSD sys/dev/etherswitch/arswitch/arswitch.c
//	[FB-VL]    FreeBSD sys/dev/etherswitch/arswitch/arswitch_vlans.c
//	[FB-PHY]   FreeBSD sys/dev/etherswitch/arswitch/arswitch_phy.c
//	[FB-7240]  FreeBSD sys/dev/etherswitch/arswitch/arswitch_7240.c
//	[FB-8316]  FreeBSD sys/dev/etherswitch/arswitch/arswitch_8316.c
//	[FB-8327]  FreeBSD sys/dev/etherswitch/arswitch/arswitch_8327.c
//	[FB-9340]  FreeBSD sys/dev/etherswitch/arswitch/arswitch_9340.c
//	[OW-8216]  OpenWrt target/linux/generic/files/drivers/net/phy/ar8216.c
//	           and ar8216.h (the AR8327 parts in ar8327.c/.h in later trees)
//	[OW-7240]  OpenWrt target/linux/ar71xx/files/drivers/net/ethernet/
//	           atheros/ag71xx/ag71xx_ar7240.c (the built-in switch driver
//	           of the old ar71xx target)
//	[LX-QCA8K] Linux drivers/net/dsa/qca/qca8k.h and qca8k-8xxx.c
//	           (drivers/net/dsa/qca8k.c in older trees)
//
// Where this package relies on something these sources do not state, the
// code says so and calls it uncertain.
package arswitch
