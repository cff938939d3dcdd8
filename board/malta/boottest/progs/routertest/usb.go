//go:build (mips || mipsle) && gowrt_usb

package main

// With -tags gowrt_usb the router also gets board/malta/usb's ports: the
// CDC-ECM functions on the PIIX4's UHCI join br-lan.
import _ "github.com/gowrt/gowrt/board/malta/usb"
