//go:build !mips && !mipsle

package usb

import (
	"errors"

	"github.com/gowrt/gowrt/board"
)

// Ports implements board.Board; malta hardware exists only on MIPS.
func (Board) Ports() ([]board.Port, error) {
	return nil, errors.New("malta: USB exists only on bare-metal MIPS")
}
