package arswitch_test

import (
	"fmt"

	"github.com/gowrt/gowrt/arswitch"
	"github.com/gowrt/gowrt/arswitch/arswitchsim"
)

// The classic router layout on one AR8327: LAN ports 2-5 in VLAN 1, the
// WAN port 1 in VLAN 2, the CPU port tagged in both. Here the switch is the
// model; on a board cfg.Bus is the MAC's MDIO bus.
func Example_lanWAN() {
	m := arswitchsim.New(arswitchsim.AR8327, arswitchsim.Options{})
	// The board's wiring (board/ar71xx/profiles has named ones): the CPU
	// MAC on port 0 over RGMII, port 1 labelled WAN.
	b := arswitch.Board{Name: "example", CPU: []arswitch.CPUPort{{Port: 0, Mode: arswitch.ModeRGMII}},
		Labels: []string{"cpu", "wan", "lan1", "lan2", "lan3", "lan4", ""}}
	sw, err := arswitch.Attach(arswitch.Config{Bus: m, Board: &b, Sleep: m.Clock().Sleep})
	if err != nil {
		fmt.Println(err)
		return
	}
	steps := []error{
		sw.SetVLANMode(arswitch.ModeDot1Q),
		sw.SetVLANGroup(0, arswitch.VLANGroup{VID: 1, Members: arswitch.Ports(0, 2, 3, 4, 5), Untagged: arswitch.Ports(2, 3, 4, 5)}),
		sw.SetVLANGroup(1, arswitch.VLANGroup{VID: 2, Members: arswitch.Ports(0, 1), Untagged: arswitch.Ports(1)}),
		sw.SetPort(1, arswitch.PortConfig{PVID: 2, Flags: arswitch.FlagIngressFilter}),
		// VLAN 0 is not a VLAN: rejected, nothing changes.
		sw.SetVLANGroup(2, arswitch.VLANGroup{VID: 0, Members: arswitch.Ports(6)}),
	}
	for _, err := range steps {
		if err != nil {
			fmt.Println(err)
		}
	}
	vtu, _ := sw.VTU()
	for _, v := range vtu {
		fmt.Printf("VLAN %d members %v untagged %v\n", v.VID, v.Members, v.Untagged)
	}
	p, _ := sw.Port(1)
	fmt.Printf("port 1 (%s) PVID %d\n", p.Label, p.PVID)
	// Output:
	// arswitch: VLAN id out of range 1-4094: group 2 VID 0
	// VLAN 1 members {0,2,3,4,5} untagged {2,3,4,5}
	// VLAN 2 members {0,1} untagged {1}
	// port 1 (wan) PVID 2
}
