// Package boardfile describes particular AR71xx-family routers as data:
// the SoC, RAM and flash, the flash layout, how the SoC's Ethernet MACs
// are wired (to a PHY, to a switch's CPU port), the switch with its port
// map and default VLANs, the LEDs and buttons, where the MAC address is
// kept, and what the boot loader takes as a firmware image.
//
// One description serves three consumers, so they cannot drift apart:
// gowrt build (which image format, which load address, does it fit the
// firmware partition), the bare-metal board package (which MACs, which
// switch, which partition holds the configuration), and the board's sim
// twin (board/sim), which drives the hardware models (ar71xxsim, argesim,
// arswitchsim, physim) from the same description so the router can run
// as that board without the hardware.
//
// A description is plain data and Validate checks its internal
// consistency (partitions inside the flash and not overlapping, ports
// naming existing MACs or switch ports, VLANs naming existing ports). The
// facts in the descriptions come from the OpenWrt ath79 device trees and
// image definitions and from the vendors' boot loaders, as each board's
// comment says; a value that was not confirmed in such a source is marked
// UNVERIFIED there. None of these boards has run gowrt: see the README's
// "Flashing a real router".
package boardfile

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/gowrt/gowrt/arswitch"
	"github.com/gowrt/gowrt/board"
)

// Board describes one router model.
type Board struct {
	Name  string // what gowrt build -board selects: "tl-wdr4300"
	Model string // the name on the box: "TP-Link TL-WDR4300 v1"

	// Rev is the SoC's REV_ID register value (soc/ar71xx RevMajor* with
	// the minor revision), which the sim twin's SoC model reports.
	Rev    uint32
	RAMMiB int

	Flash Flash
	// Eth lists the SoC MACs the board uses, by unit.
	Eth []Eth
	// Switch is the Ethernet switch behind a CPU MAC, nil if none.
	Switch *Switch
	// Ports are the external Ethernet ports, LAN ports first, as the
	// router sees them (board.Port).
	Ports []Port

	LEDs    []GPIO
	Buttons []GPIO
	// Baud is the console UART's rate as the boot loader leaves it.
	Baud int
	// MACAddr is where the board's base MAC address is stored.
	MACAddr MACLocation
	// Image is what the boot loader accepts.
	Image Image
	// USB lists the EHCI root ports brought out to the case (usb.go).
	USB []USBPort
}

// Flash is the board's SPI NOR flash and its layout.
type Flash struct {
	Size  int64 // bytes
	Parts []Partition
}

// Partition is one named region of the flash.
type Partition struct {
	Name     string // "u-boot", "firmware", "art" …
	Offset   int64
	Size     int64
	ReadOnly bool // never written by gowrt (boot loader, calibration data)
}

// Partition names the rest of gowrt looks for.
const (
	PartFirmware = "firmware" // the image gowrt build writes
	PartConfig   = "config"   // flash/confstore's two copies
	PartART      = "art"      // radio calibration: read-only, for the Wi-Fi driver
)

// Interface is how a MAC is wired.
type Interface int

const (
	MII Interface = iota + 1
	RMII
	GMII
	RGMII
	SGMII
)

func (i Interface) String() string {
	switch i {
	case MII:
		return "MII"
	case RMII:
		return "RMII"
	case GMII:
		return "GMII"
	case RGMII:
		return "RGMII"
	case SGMII:
		return "SGMII"
	}
	return fmt.Sprintf("Interface(%d)", int(i))
}

// Eth is one SoC Ethernet MAC in use.
type Eth struct {
	Unit int // 0 = GE0, 1 = GE1
	If   Interface
	// PLL holds the MAC clock's PLL register values for 1000, 100 and 10
	// Mbit/s (the device trees' pll-data), 0 where the SoC computes it.
	PLL [3]uint32
	// PHY is the address of a PHY wired to this MAC alone, -1 if the MAC
	// is wired to a switch's CPU port (SwitchPort).
	PHY int
	// PHYVia says how that PHY is managed: on PHYUnit's MDIO bus, or
	// (PHYViaSwitch) through the switch's MDIO master, as the AR933x's
	// PHY4 is.
	PHYUnit      int
	PHYViaSwitch bool
	// SwitchPort is the switch port this MAC is the CPU end of, -1 if it
	// has its own PHY.
	SwitchPort int
	// MDIO: this MAC's MDIO bus carries the switch (or the PHYs).
	MDIO bool
}

// Switch is the Ethernet switch and its default setup.
type Switch struct {
	Chip    arswitch.ChipID
	Profile arswitch.Board // CPU port wiring, port→PHY map, LEDs
	// MDIOUnit is the MAC whose MDIO bus reaches the switch.
	MDIOUnit int
	// VLANs is the default 802.1Q setup (OpenWrt's switch defaults); empty
	// means the switch stays in its single-group default (all ports one
	// LAN), for boards whose WAN does not go through the switch.
	VLANs []VLAN
}

// VLAN is one default VLAN: its ports and which of them are tagged (the
// CPU port, when it carries more than one VLAN).
type VLAN struct {
	VID    uint16
	Ports  []int
	Tagged []int
}

// Port is one external port as the router sees it.
type Port struct {
	Name string // the label on the case: "lan1", "wan"
	Role board.Role
	// Unit is the MAC that carries it. VID is its VLAN on that MAC's
	// trunk (0: untagged, the MAC carries this port alone).
	Unit int
	VID  uint16
	// SwitchPorts are the switch ports behind it (none for a MAC with its
	// own PHY): what the sim twin cables.
	SwitchPorts []int
	// PHY is the PHY of a port that bypasses the switch, -1 otherwise.
	PHY int
}

// GPIO is one LED or button.
type GPIO struct {
	Name      string // "system", "wlan2g", "reset", "wps"
	Pin       int
	ActiveLow bool
}

// MACLocation says where the base MAC address is kept: Offset bytes into
// the partition Part. Increments are applied per port by the board
// (OpenWrt's mac-address-increment): WAN is base+Inc[WAN].
type MACLocation struct {
	Part   string
	Offset int64
	// Text: stored as "xx:xx:xx:xx:xx:xx" text (RedBoot config) rather
	// than six bytes.
	Text bool
}

// Format is a boot loader's image format.
type Format int

const (
	UImage  Format = iota + 1 // U-Boot legacy uImage
	TPLink                    // TP-Link v1 header (U-Boot 1.1.4, TP-Link's)
	RedBoot                   // an ELF RedBoot loads with load/exec, FIS entry
)

func (f Format) String() string {
	switch f {
	case UImage:
		return "uimage"
	case TPLink:
		return "tplink"
	case RedBoot:
		return "redboot"
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// Image is what the boot loader accepts and how it boots it.
type Image struct {
	Format Format
	// TPLinkHWID is the header's hardware ID (TPLink format).
	TPLinkHWID uint32
	// FlashBase is the flash's address in kseg1 as the boot loader sees
	// it (bootm 0x9f020000 on TP-Link), for the printed console commands.
	FlashBase uint32
	// TFTPLoad is a RAM address where the boot loader's tftpboot can put
	// an image without overwriting itself or the load address (the usual
	// value in the board's vendor documentation).
	TFTPLoad uint32
	// BootmLimit is the largest decompressed size the boot loader's bootm
	// takes (U-Boot's CONFIG_SYS_BOOTM_LEN), 0 if unknown. Past it the
	// build warns: the loader would refuse to decompress the image.
	BootmLimit int64
}

// Part returns the named partition.
func (b *Board) Part(name string) (Partition, error) {
	for _, p := range b.Flash.Parts {
		if p.Name == name {
			return p, nil
		}
	}
	return Partition{}, fmt.Errorf("%s: no %q partition (has %s)", b.Name, name, b.partNames())
}

func (b *Board) partNames() string {
	var n []string
	for _, p := range b.Flash.Parts {
		n = append(n, p.Name)
	}
	return strings.Join(n, ", ")
}

// EthUnit returns the description of MAC unit.
func (b *Board) EthUnit(unit int) (Eth, error) {
	for _, e := range b.Eth {
		if e.Unit == unit {
			return e, nil
		}
	}
	return Eth{}, fmt.Errorf("%s: GE%d is not used", b.Name, unit)
}

// ErrInvalid is wrapped by every Validate error.
var ErrInvalid = errors.New("boardfile: invalid board description")

func invalid(b *Board, format string, a ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrInvalid, b.Name, fmt.Sprintf(format, a...))
}

// Validate checks the description's internal consistency.
func (b *Board) Validate() error {
	if b.Name == "" || b.Model == "" {
		return invalid(b, "no name or model")
	}
	if b.RAMMiB < 16 || b.RAMMiB > 256 {
		return invalid(b, "RAM %d MiB (16 to 256)", b.RAMMiB)
	}
	if b.Flash.Size <= 0 || b.Flash.Size&(b.Flash.Size-1) != 0 {
		return invalid(b, "flash size %#x is not a power of two", b.Flash.Size)
	}
	parts := append([]Partition(nil), b.Flash.Parts...)
	sort.Slice(parts, func(i, j int) bool { return parts[i].Offset < parts[j].Offset })
	seen := map[string]bool{}
	for i, p := range parts {
		if p.Size <= 0 || p.Offset < 0 || p.Offset+p.Size > b.Flash.Size {
			return invalid(b, "partition %s [%#x, +%#x) outside the %#x-byte flash", p.Name, p.Offset, p.Size, b.Flash.Size)
		}
		if p.Offset%0x1000 != 0 || p.Size%0x1000 != 0 {
			return invalid(b, "partition %s is not 4 KiB aligned", p.Name)
		}
		if i > 0 && parts[i-1].Offset+parts[i-1].Size > p.Offset {
			return invalid(b, "partitions %s and %s overlap", parts[i-1].Name, p.Name)
		}
		if seen[p.Name] {
			return invalid(b, "two partitions named %s", p.Name)
		}
		seen[p.Name] = true
	}
	for _, need := range []string{PartFirmware, PartConfig} {
		if p, err := b.Part(need); err != nil {
			return invalid(b, "%v", err)
		} else if p.ReadOnly {
			return invalid(b, "partition %s is read-only", need)
		}
	}
	if p, err := b.Part(PartART); err == nil && !p.ReadOnly {
		return invalid(b, "the calibration partition must be read-only")
	}
	if _, err := b.Part(b.MACAddr.Part); err != nil {
		return invalid(b, "MAC address: %v", err)
	}
	units := map[int]Eth{}
	for _, e := range b.Eth {
		if e.Unit != 0 && e.Unit != 1 {
			return invalid(b, "GE%d: the family has GE0 and GE1", e.Unit)
		}
		if _, dup := units[e.Unit]; dup {
			return invalid(b, "GE%d listed twice", e.Unit)
		}
		if (e.PHY < 0) == (e.SwitchPort < 0) {
			return invalid(b, "GE%d: wired to a PHY or to a switch port, exactly one", e.Unit)
		}
		if e.SwitchPort >= 0 && b.Switch == nil {
			return invalid(b, "GE%d: wired to switch port %d, but the board has no switch", e.Unit, e.SwitchPort)
		}
		units[e.Unit] = e
	}
	if b.Switch != nil {
		if _, ok := units[b.Switch.MDIOUnit]; !ok {
			return invalid(b, "switch on GE%d's MDIO, which is not used", b.Switch.MDIOUnit)
		}
		vids := map[uint16]bool{}
		for _, v := range b.Switch.VLANs {
			if v.VID < 1 || v.VID > 4094 || vids[v.VID] {
				return invalid(b, "VLAN %d: bad or duplicate", v.VID)
			}
			vids[v.VID] = true
		}
	}
	if len(b.Ports) == 0 {
		return invalid(b, "no Ethernet ports")
	}
	names := map[string]bool{}
	lanSeen, wanSeen := false, false
	for _, p := range b.Ports {
		if names[p.Name] {
			return invalid(b, "two ports named %s", p.Name)
		}
		names[p.Name] = true
		e, ok := units[p.Unit]
		if !ok {
			return invalid(b, "port %s on GE%d, which is not used", p.Name, p.Unit)
		}
		switch p.Role {
		case board.LAN:
			if wanSeen {
				return invalid(b, "port %s: LAN ports come first", p.Name)
			}
			lanSeen = true
		case board.WAN:
			wanSeen = true
		default:
			return invalid(b, "port %s: role %v", p.Name, p.Role)
		}
		if e.PHY >= 0 {
			if len(p.SwitchPorts) != 0 || p.VID != 0 {
				return invalid(b, "port %s: GE%d has its own PHY; no switch ports or VLAN", p.Name, p.Unit)
			}
			continue
		}
		if len(p.SwitchPorts) == 0 {
			return invalid(b, "port %s: no switch ports", p.Name)
		}
		if p.VID != 0 {
			if !b.vlanHas(p.VID, e.SwitchPort) {
				return invalid(b, "port %s: VLAN %d does not include GE%d's switch port %d", p.Name, p.VID, p.Unit, e.SwitchPort)
			}
			for _, sp := range p.SwitchPorts {
				if !b.vlanHas(p.VID, sp) {
					return invalid(b, "port %s: switch port %d is not in VLAN %d", p.Name, sp, p.VID)
				}
			}
		}
	}
	if !lanSeen {
		return invalid(b, "no LAN port")
	}
	if err := b.validateUSB(); err != nil {
		return err
	}
	if b.Image.Format < UImage || b.Image.Format > RedBoot {
		return invalid(b, "no image format")
	}
	if b.Image.Format == TPLink && b.Image.TPLinkHWID == 0 {
		return invalid(b, "TP-Link image without a hardware ID")
	}
	return nil
}

func (b *Board) vlanHas(vid uint16, port int) bool {
	if b.Switch == nil {
		return false
	}
	for _, v := range b.Switch.VLANs {
		if v.VID == vid {
			for _, p := range v.Ports {
				if p == port {
					return true
				}
			}
		}
	}
	return false
}

// Lookup returns the named board.
func Lookup(name string) (*Board, error) {
	for _, b := range All {
		if b.Name == name {
			return b, nil
		}
	}
	return nil, fmt.Errorf("unknown router board %q (known: %s)", name, strings.Join(Names(), ", "))
}

// Names returns the boards' names, sorted.
func Names() []string {
	var n []string
	for _, b := range All {
		n = append(n, b.Name)
	}
	sort.Strings(n)
	return n
}

// Jack is one socket on the case: a switch port or a MAC's own PHY.
type Jack struct {
	Label string // "lan1", "wan": the port's name, numbered if it has several sockets
	Port  string // the router port it belongs to (Port.Name)
	Unit  int    // the MAC carrying it
	// SwitchPort is the switch port behind the socket, -1 for a MAC's own
	// PHY.
	SwitchPort int
}

// Jacks lists the board's sockets in port order: a port with several
// switch ports has one per switch port, labelled with the port's name and
// a number from 1 ("lan" on switch ports 2-5: lan1 … lan4), as on the
// case.
func (b *Board) Jacks() []Jack {
	var js []Jack
	for _, p := range b.Ports {
		if len(p.SwitchPorts) == 0 {
			js = append(js, Jack{Label: p.Name, Port: p.Name, Unit: p.Unit, SwitchPort: -1})
			continue
		}
		for i, sp := range p.SwitchPorts {
			l := p.Name
			if len(p.SwitchPorts) > 1 {
				l = fmt.Sprintf("%s%d", p.Name, i+1)
			}
			js = append(js, Jack{Label: l, Port: p.Name, Unit: p.Unit, SwitchPort: sp})
		}
	}
	return js
}
