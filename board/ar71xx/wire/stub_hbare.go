// Package wire is the wiring shared by the bare-metal AR71xx router board
// and its sim twin.
//
// THIS FILE IS A PLACEHOLDER kept on branch h-bare until branch h-twin's
// package lands: it declares the API of the shared spec (#17) so that
// board/ar71xx/router compiles against it. Delete it when merging h-twin.
package wire

import (
	"errors"
	"time"

	"github.com/gowrt/gowrt/arswitch"
	"github.com/gowrt/gowrt/barrier"
	"github.com/gowrt/gowrt/board"
	"github.com/gowrt/gowrt/board/ar71xx/boardfile"
	"github.com/gowrt/gowrt/busdma"
	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/soc/ar71xx"
)

// Hardware is what Ports needs of the platform.
type Hardware interface {
	SoC() (*ar71xx.SoC, error)
	MAC(u ar71xx.EthUnit) (barrier.Space, error)
	DMA() busdma.Platform
	Interrupt(u ar71xx.EthUnit, name string, handler func()) error
	Sleep(d time.Duration)
}

// Wired is the brought-up board.
type Wired struct {
	Ports  []board.Port
	Switch *arswitch.Switch
}

// Close stops link polling.
func (w *Wired) Close() error { return nil }

// Ports is not implemented in this placeholder.
func Ports(b *boardfile.Board, hw Hardware, base gnet.MAC) (*Wired, error) {
	return nil, errors.New("wire: placeholder (branch h-twin not merged)")
}
