// Package ar71xx is the board package for AR71xx-family routers (AR7130
// to QCA9558), as far as gowrt supports them so far: the kernel with the
// SoC's platform hooks (soc/ar71xx/baremetal) and the board's
// registration with package board. A program becomes AR71xx firmware by
// importing it:
//
//	import _ "github.com/gowrt/gowrt/board/ar71xx"
//
// and being built with gowrt build -board ar71xx. QEMU emulates no such
// SoC, so its images are built and not booted by gowrt; U-Boot loads the
// ELF with bootelf. The board has no Ethernet ports yet: a board package
// for a particular router would wire the arge MACs, the switch and the
// PHYs of that router.
package ar71xx

import (
	"errors"

	"github.com/gowrt/gowrt/board"
	_ "github.com/gowrt/gowrt/kernel"               // the image's entry point and system calls
	_ "github.com/gowrt/gowrt/soc/ar71xx/baremetal" // the kernel's platform hooks
)

// Name is the board's name.
const Name = "ar71xx"

// Board is a generic AR71xx-family board.
type Board struct{}

// Name implements board.Board.
func (Board) Name() string { return Name }

// Ports implements board.Board: none yet.
func (Board) Ports() ([]board.Port, error) {
	return nil, errors.New("ar71xx: no Ethernet ports: the generic AR71xx board wires no MACs")
}

func init() { board.Register(Board{}) }
