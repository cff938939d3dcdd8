//go:build mips || mipsle

package router

import (
	"fmt"

	"github.com/gowrt/gowrt/barrier"
	"github.com/gowrt/gowrt/board"
	"github.com/gowrt/gowrt/board/ar71xx/boardfile"
	"github.com/gowrt/gowrt/board/ar71xx/usbport"
	"github.com/gowrt/gowrt/soc/ar71xx"
)

// usbCtrlSize is the USB control block's window: FLADJ and CONFIG
// (soc/ar71xx USBCtrl*).
const usbCtrlSize = 0x10

// upUSB keeps the USB buses for the life of the image.
var upUSB *usbport.USB

// usbPorts brings up the board's USB Ethernet (board/ar71xx/usbport) and
// returns the functions found at boot as LAN ports. A failure is logged:
// the Ethernet ports work without it.
func usbPorts(b *boardfile.Board, hw *hardware) []board.Port {
	if len(b.USB) == 0 {
		return nil
	}
	u, err := usbport.Start(b, hw, usbport.Config{Log: func(format string, a ...any) { fmt.Printf(format+"\n", a...) }})
	if err != nil {
		fmt.Printf("router: %s: USB: %v; no USB ports\n", b.Name, err)
		return nil
	}
	upUSB = u
	return u.Ports
}

// USBControl implements usbport.Hardware: the AR71xx's USB control block.
func (h *hardware) USBControl() (barrier.Space, error) {
	return mmio("usb-ctrl", ar71xx.PhysUSB, usbCtrlSize)
}

// EHCI implements usbport.Hardware: the capability registers of unit u
// through kseg1, in the unit's register order.
func (h *hardware) EHCI(u ar71xx.USBUnit) (barrier.Space, error) {
	if u.CapOffset >= u.Size {
		return nil, fmt.Errorf("router: EHCI %d: capability offset %#x outside its %#x-byte block", u.Unit, u.CapOffset, u.Size)
	}
	return barrier.NewMMIO(fmt.Sprintf("ehci%d", u.Unit), kseg1|uintptr(u.Base+u.CapOffset), u.Size-u.CapOffset, u.RegOrder)
}

// USBInterrupt implements usbport.Hardware: CPU pin IP2+cpuLine is root
// controller line ar71xx.LineIP2+cpuLine (the USB's IP3 is LineIP2+1);
// the handler already flushes the USB's DDR channel.
func (h *hardware) USBInterrupt(cpuLine int, name string, handler func()) error {
	return h.disp.Register(ar71xx.LineIP2+cpuLine, name, handler)
}

var _ usbport.Hardware = (*hardware)(nil)
