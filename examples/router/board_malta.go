//go:build (mips || mipsle) && !gowrt_ar71xx

package main

// On bare metal the router runs on QEMU malta, its on-board pcnet being the
// LAN port.
import _ "github.com/gowrt/gowrt/board/malta/eth"
