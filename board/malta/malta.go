// Package malta is the board package for QEMU's MIPS Malta (big- and
// little-endian). A program becomes Malta firmware by importing it:
//
//	import _ "github.com/gowrt/gowrt/board/malta"
//
// and being built with cmd/gowrt (gowrt build -board malta-be|malta-le).
// Importing it links the bare-metal kernel (package kernel), whose entry
// point the image starts at.
package malta

import (
	_ "github.com/gowrt/gowrt/kernel" // the image's entry point and system calls
)

// Name is the board's name as the kernel reports it.
const Name = "malta"
