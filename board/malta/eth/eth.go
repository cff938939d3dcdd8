// Package eth adds the Ethernet ports to the malta board (board/malta): the
// on-board AMD PCnet-PCI II (PCI 00:0b.0, i8259 IRQ 10) as port "lan"
// (board.LAN) and, if QEMU was given a second pcnet (internal/qemu's
// Machine.WAN puts it at 00:0c.0, i8259 IRQ 11), that one as port "wan"
// (board.WAN). With one pcnet the board has the one port "lan".
//
// Firmware that needs networking imports it instead of board/malta:
//
//	import _ "github.com/gowrt/gowrt/board/malta/eth"
//
// It is separate from board/malta so that programs without networking do
// not link the driver and its PCI and DMA set-up.
package eth

import "github.com/gowrt/gowrt/board/malta"

// Board is the malta board with its Ethernet port.
type Board struct{}

// Name implements board.Board.
func (Board) Name() string { return malta.Name }

func init() { malta.SetPorts(Board{}.Ports) }
