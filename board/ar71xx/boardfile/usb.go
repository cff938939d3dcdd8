package boardfile

import (
	"fmt"

	"github.com/gowrt/gowrt/soc/ar71xx"
)

// USBPort is one root port of one of the SoC's EHCIs that the board
// brings out to the case.
type USBPort struct {
	// Label names the socket(s): "usb", "usb1" (the board's LED names).
	Label string
	// Unit is the SoC's EHCI (soc/ar71xx USBUnit.Unit), Port its root
	// port, from 1.
	Unit, Port int
	// HubPorts: an on-board hub sits on the root port and feeds this
	// many sockets; 0 when the socket is the root port's own. The USB
	// core's hub driver (usbnet/usb hub.go) reaches the devices behind it.
	HubPorts int
}

// Root-port and hub-port bounds: EHCI HCSPARAMS N_PORTS is 4 bits, 1-15
// (EHCI §2.2.3); a hub's bNbrPorts is 1-255 (USB 2.0 §11.23.2.1), on-board
// ones have a few.
const (
	maxRootPorts = 15
	maxHubPorts  = 255
)

// The boards' USB wiring (OpenWrt ath79 device trees):
//   - TL-WDR4300 (ar9344_tplink_tl-wdr4300.dtsi): the AR9344's one EHCI,
//     root port 1 carries an on-board hub whose ports 1 and 2 are the
//     sockets (the usb1/usb2 LEDs' trigger-sources hub_port1/hub_port2,
//     the power GPIOs 22 and 21). The TL-WDR3600 shares that board and
//     dtsi (UNVERIFIED: its .dts was not read).
//   - Archer C7 v2 (qca9558_tplink_archer-c7.dtsi): both QCA9558 EHCIs,
//     root port 1 of each; the usb1 LED follows usb1's port (EHCI 1), the
//     usb2 LED usb0's (EHCI 0).
//   - Carambola2 (ar9331_8dev_carambola2.dts): the AR9331's EHCI in host
//     mode (dr_mode), one root port.
//   - RouterStation Pro (ar7161_ubnt_routerstation.dtsi): the AR7161's
//     EHCI (usb2, port@1); its OHCI companion (usb1) takes full- and
//     low-speed devices, which gowrt does not drive.
//   - AP135: none described (UNVERIFIED).
var (
	wdr43xxUSB    = []USBPort{{Label: "usb", Unit: 0, Port: 1, HubPorts: 2}}
	archerC7USB   = []USBPort{{Label: "usb1", Unit: 1, Port: 1}, {Label: "usb2", Unit: 0, Port: 1}}
	carambola2USB = []USBPort{{Label: "usb", Unit: 0, Port: 1}}
	rsproUSB      = []USBPort{{Label: "usb", Unit: 0, Port: 1}}
)

// validateUSB checks the USB ports against the SoC's EHCIs.
func (b *Board) validateUSB() error {
	if len(b.USB) == 0 {
		return nil
	}
	info, err := ar71xx.Identify(b.Rev)
	if err != nil {
		return invalid(b, "USB: %v", err)
	}
	units := map[int]bool{}
	for _, u := range info.USB().Units {
		units[u.Unit] = true
	}
	labels := map[string]bool{}
	ports := map[[2]int]bool{}
	for _, p := range b.USB {
		switch {
		case p.Label == "" || labels[p.Label]:
			return invalid(b, "USB port %q: no label, or two with it", p.Label)
		case !units[p.Unit]:
			return invalid(b, "USB port %s on EHCI %d: the %s has %d EHCI(s)", p.Label, p.Unit, info.Name, len(units))
		case p.Port < 1 || p.Port > maxRootPorts:
			return invalid(b, "USB port %s: root port %d (1 to %d)", p.Label, p.Port, maxRootPorts)
		case ports[[2]int{p.Unit, p.Port}]:
			return invalid(b, "USB port %s: EHCI %d root port %d listed twice", p.Label, p.Unit, p.Port)
		case p.HubPorts < 0 || p.HubPorts > maxHubPorts:
			return invalid(b, "USB port %s: hub with %d ports", p.Label, p.HubPorts)
		}
		labels[p.Label] = true
		ports[[2]int{p.Unit, p.Port}] = true
	}
	return nil
}

// USBRootPorts returns how many root ports of EHCI unit the board uses
// at most (the highest Port on it; 0 if none).
func (b *Board) USBRootPorts(unit int) int {
	n := 0
	for _, p := range b.USB {
		if p.Unit == unit && p.Port > n {
			n = p.Port
		}
	}
	return n
}

func (p USBPort) String() string {
	s := fmt.Sprintf("%s (EHCI %d port %d)", p.Label, p.Unit, p.Port)
	if p.HubPorts > 0 {
		s += fmt.Sprintf(" behind a %d-port hub", p.HubPorts)
	}
	return s
}
