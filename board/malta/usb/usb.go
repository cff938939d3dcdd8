// Package usb adds USB Ethernet to the malta board (board/malta/eth): it
// runs the PIIX4's UHCI controller (PCI 00:0a.2, 8086:7112, i8259 line 11,
// shared with the WAN pcnet), the USB core's Bus over it with the CDC-ECM
// driver, and makes every CDC-ECM function found at boot (QEMU's
// -device usb-net; internal/qemu's Machine.USBNet) an extra LAN port,
// "usb0", "usb1", ..., which the router puts in br-lan.
//
// Firmware that wants it imports it instead of board/malta/eth:
//
//	import _ "github.com/gowrt/gowrt/board/malta/usb"
//
// Functions plugged in after boot are attached and logged but not added
// to the router (the board's port list is fixed once the router runs);
// one unplugged stops, and the router sees its carrier go.
package usb

import (
	"github.com/gowrt/gowrt/board/malta"
	// eth's init (malta.SetPorts of the pcnet ports) runs before ours.
	_ "github.com/gowrt/gowrt/board/malta/eth"
)

// Board is the malta board with its Ethernet and USB Ethernet ports.
type Board struct{}

// Name implements board.Board.
func (Board) Name() string { return malta.Name }

// eth's port function is replaced by one that adds the USB ports after
// the pcnets.
func init() { malta.SetPorts(Board{}.Ports) }
