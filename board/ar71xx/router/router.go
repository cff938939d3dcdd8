// Package router is the bare-metal board package for the AR71xx-family
// routers described in board/ar71xx/boardfile (TL-WDR4300, TL-WDR3600,
// Archer C7 v2, Carambola2, RouterStation Pro, AP135). One package serves
// them all: which router an image is for is linked in by gowrt build,
//
//	gowrt build -board tl-wdr4300 -o fw.bin ./examples/router
//
// which passes -X github.com/gowrt/gowrt/board/ar71xx/router.boardName=tl-wdr4300
// and the build tag gowrt_ar71xx (examples/router's board_ar71xx.go
// imports this package under that tag). Importing it links the kernel and
// the SoC's platform hooks (soc/ar71xx/baremetal) and registers the board.
//
// Ports brings the Ethernet ports up with board/ar71xx/wire, the wiring
// the sim twin shares, over a kernel-backed wire.Hardware: register blocks
// through kseg1, interrupts on the kernel's root controller (the CPU pins
// IP2-IP5 are its lines ar71xx.LineIP2+0..3), DMA from the kernel's
// physical memory (busdma/mipsdma). The base MAC address is read from the
// memory-mapped flash at the board's MACAddr location and checked (BaseMAC).
package router

import (
	"errors"

	"github.com/gowrt/gowrt/board"
	"github.com/gowrt/gowrt/board/ar71xx/boardfile"
	_ "github.com/gowrt/gowrt/kernel"               // the image's entry point and system calls
	_ "github.com/gowrt/gowrt/soc/ar71xx/baremetal" // the kernel's platform hooks
)

// boardName is the boardfile name of the router this image is for, set
// by gowrt build with -ldflags -X (a variable, not a constant, so the
// linker can set it).
var boardName string

// genericName is the board's name when the image was linked without a
// router name (plain go build): it boots, but has no ports.
const genericName = "ar71xx-router"

// ErrNoName is Ports' error in an image linked without a router name.
var ErrNoName = errors.New("router: no router name linked into this image: build it with gowrt build -board NAME " +
	"(which sets -X github.com/gowrt/gowrt/board/ar71xx/router.boardName=NAME)")

// Board is the router named at link time.
type Board struct{}

// Name implements board.Board: the boardfile name ("tl-wdr4300").
func (Board) Name() string {
	if boardName == "" {
		return genericName
	}
	return boardName
}

// Description returns the boardfile description of the linked-in router.
func Description() (*boardfile.Board, error) {
	if boardName == "" {
		return nil, ErrNoName
	}
	return boardfile.Lookup(boardName)
}

// Ports implements board.Board: the router's ports in boardfile order
// (LAN first), brought up once.
func (Board) Ports() ([]board.Port, error) {
	b, err := Description()
	if err != nil {
		return nil, err
	}
	return ports(b)
}

// Radios implements board.Wireless: the router's radio on the SoC's WMAC
// (board/ar71xx/wire Radios), held awake from Start to Stop. The MAC is
// driven; the baseband and radio are not initialised (see package
// ath/ar9300), so on a real chip nothing reaches the air yet.
func (Board) Radios() ([]board.Radio, error) {
	b, err := Description()
	if err != nil {
		return nil, err
	}
	return radios(b)
}

// Store implements board.Storage: the configuration store in the
// description's config partition of the SPI flash (board/ar71xx/boardflash).
func (Board) Store(name string) (board.Store, error) {
	b, err := Description()
	if err != nil {
		return nil, err
	}
	f, err := openFlash(b)
	if err != nil {
		return nil, err
	}
	return f.Store(name)
}

// FirmwareFlash implements board.Upgradable: the description's firmware
// and config partitions, for sysupgrade.
func (Board) FirmwareFlash() (board.FirmwareFlash, error) {
	b, err := Description()
	if err != nil {
		return board.FirmwareFlash{}, err
	}
	f, err := openFlash(b)
	if err != nil {
		return board.FirmwareFlash{}, err
	}
	return f.FirmwareFlash()
}

var (
	_ board.Storage    = Board{}
	_ board.Upgradable = Board{}
	_ board.Wireless   = Board{}
)

func init() { board.Register(Board{}) }
