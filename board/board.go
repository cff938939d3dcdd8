// Package board is the contract between firmware main packages and board
// packages. A program becomes firmware for a board by importing the board's
// package for its side effect, as TamaGo programs import theirs:
//
//	import _ "github.com/gowrt/gowrt/board/malta" // bare metal, QEMU malta
//	import _ "github.com/gowrt/gowrt/board/sim"   // sim mode: models + TAP wires
//
// The board package registers itself here; board-independent firmware (the
// router) asks Current for the board's name and its Ethernet ports, and so
// runs unchanged on every board.
package board

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gowrt/gowrt/flash"
	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/wlan/radio"
)

// Role is what an Ethernet port is for in the default configuration.
type Role uint8

const (
	LAN Role = iota + 1
	WAN
)

func (r Role) String() string {
	switch r {
	case LAN:
		return "lan"
	case WAN:
		return "wan"
	}
	return fmt.Sprintf("Role(%d)", uint8(r))
}

// Port is one external Ethernet port with its driver.
type Port struct {
	Name string // "lan1", "wan" …: the label on the case
	Role Role
	NIC  gnet.NIC
}

// Board is what a board package provides.
type Board interface {
	// Name identifies the board ("malta", "sim").
	Name() string
	// Ports brings up the board's Ethernet hardware and returns its
	// external ports, LAN ports first.
	Ports() ([]Port, error)
}

// Radio is one 802.11 radio of the board, brought up and ready for the
// MAC layer (wlan/ap) to Start: its driver behind the radio.Radio
// contract. The board keeps the radio's chip awake from the radio's Start
// to its Stop (a beaconing AP must not let its MAC network-sleep).
type Radio struct {
	// Name is the radio's name in the wireless configuration's
	// wifi-device sections: "radio0", "radio1" … in the board's order.
	Name string
	// Band5G: the radio is a 5 GHz one (else 2.4 GHz).
	Band5G bool
	Radio  radio.Radio
}

// Wireless is implemented by boards with Wi-Fi radios (board/ar71xx: the
// WMAC built into AR934x/QCA955x SoCs; the sim twin of such a board: the
// WMAC's model on a simulated medium). Firmware asks for it with a type
// assertion and runs an access point on each radio the configuration
// enables, as a port of br-lan.
type Wireless interface {
	// Radios brings the board's radios up, once, and returns them.
	Radios() ([]Radio, error)
}

// Store is one named item of a board's persistent storage, in the shape
// the services that keep state take (the DHCP server's lease table, the
// last known time): Load returns nil, nil until the first Save.
type Store interface {
	Load() ([]byte, error)
	Save([]byte) error
}

// Storage is implemented by boards that can keep services' state across
// reboots (board/malta: the configuration store in its boot flash).
// Firmware asks for it with a type assertion and runs without persistence
// where the board has none.
type Storage interface {
	// Store returns the item called name; all items share the board's
	// storage, and each Save writes it (see the board's documentation for
	// what a save costs).
	Store(name string) (Store, error)
}

// Upgradable is implemented by boards whose firmware the running firmware
// can replace (sysupgrade): the boot flash with its firmware and
// configuration partitions. Firmware serves upgrades only on such boards.
type Upgradable interface {
	FirmwareFlash() (FirmwareFlash, error)
}

// FirmwareFlash locates the firmware and configuration partitions (byte
// offsets and lengths, whole erase blocks) on the boot flash.
type FirmwareFlash struct {
	Flash                    flash.Device
	FirmwareOff, FirmwareLen int64
	ConfigOff, ConfigLen     int64
}

// Watchdog is implemented by boards with a hardware watchdog that resets
// the board unless it is petted in time (board/ar71xx: the SoC's reset
// block watchdog, soc/ar71xx.WatchdogTimer). Firmware asks for it with a
// type assertion; package firmware's "watchdog" service arms it and pets
// it while the supervisor and the firmware's critical services are
// healthy.
type Watchdog interface {
	// Arm starts the watchdog with the reset action: unless petted within
	// timeout, the board resets. A timeout longer than the hardware can
	// count is clamped; Arm returns the timeout armed.
	Arm(timeout time.Duration) (time.Duration, error)
	// Pet restarts the armed timeout.
	Pet()
	// Disarm stops the watchdog.
	Disarm()
}

var (
	mu      sync.Mutex
	current Board
)

// ErrNoBoard is returned by Current when no board package is linked in.
var ErrNoBoard = errors.New("board: no board package imported (import _ \"github.com/gowrt/gowrt/board/malta\" or \"github.com/gowrt/gowrt/board/sim\")")

// Register makes b the program's board. Board packages call it from init;
// linking two board packages into one program is a build mistake, reported
// by panicking at start-up with both names.
func Register(b Board) {
	mu.Lock()
	defer mu.Unlock()
	if current != nil {
		panic(fmt.Sprintf("board: two board packages linked in: %q and %q", current.Name(), b.Name()))
	}
	current = b
}

// Current returns the registered board.
func Current() (Board, error) {
	mu.Lock()
	defer mu.Unlock()
	if current == nil {
		return nil, ErrNoBoard
	}
	return current, nil
}
