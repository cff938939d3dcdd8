// Package malta is the board package for QEMU's MIPS Malta (big- and
// little-endian). A program becomes Malta firmware by importing it:
//
//	import _ "github.com/gowrt/gowrt/board/malta"
//
// and being built with cmd/gowrt (gowrt build -board malta-be|malta-le).
// Importing it links the bare-metal kernel (package kernel), whose entry
// point the image starts at, and soc/malta, which provides the kernel's
// platform hooks (console, interrupt controller, clock, reset); and it
// registers the board with package board. Its Ethernet port comes with
// board/malta/eth, a separate package so that programs without networking
// do not link the driver.
package malta

import (
	"errors"

	"github.com/gowrt/gowrt/board"
	_ "github.com/gowrt/gowrt/kernel"    // the image's entry point and system calls
	_ "github.com/gowrt/gowrt/soc/malta" // the kernel's platform hooks
)

// Name is the board's name as the kernel reports it.
const Name = "malta"

// Board is QEMU malta as a gowrt board.
type Board struct{}

// Name implements board.Board.
func (Board) Name() string { return Name }

// Ports implements board.Board: the ports board/malta/eth added, if it is
// linked.
func (Board) Ports() ([]board.Port, error) {
	if ports == nil {
		return nil, errNoEth
	}
	return ports()
}

var errNoEth = errors.New(`malta: no Ethernet ports: import _ "github.com/gowrt/gowrt/board/malta/eth" to use the on-board pcnet`)

var ports func() ([]board.Port, error)

// SetPorts installs the function that brings up the board's Ethernet
// ports; board/malta/eth calls it from init.
func SetPorts(f func() ([]board.Port, error)) { ports = f }

func init() { board.Register(Board{}) }
