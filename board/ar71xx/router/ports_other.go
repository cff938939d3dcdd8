//go:build !mips && !mipsle

package router

import (
	"errors"

	"github.com/gowrt/gowrt/board"
	"github.com/gowrt/gowrt/board/ar71xx/boardfile"
	"github.com/gowrt/gowrt/board/ar71xx/boardflash"
)

// ports: the routers' hardware exists only on bare-metal MIPS; on other
// architectures the package builds for vet and docs (the sim twin runs the
// same wiring against models, in board/sim).
func ports(*boardfile.Board) ([]board.Port, error) {
	return nil, errors.New("router: AR71xx hardware exists only on bare-metal MIPS")
}

func radios(*boardfile.Board) ([]board.Radio, error) {
	return nil, errors.New("router: AR71xx hardware exists only on bare-metal MIPS")
}

func openFlash(*boardfile.Board) (*boardflash.Flash, error) {
	return nil, errors.New("router: the SPI flash exists only on bare-metal MIPS")
}
