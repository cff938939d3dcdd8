//go:build mips || mipsle

// Command boardtest exercises the Malta board support on QEMU: it checks
// that importing board/malta registered the board (without board/malta/eth
// it has no ports), enumerates PCI through the GT-64120 (assigning BARs),
// probes the CFI
// boot flash, and opens the configuration store in flash. Arguments (from
// QEMU's -append) then act on the configuration:
//
//	set:KEY:VALUE   set KEY and save the configuration
//	get:KEY         print KEY's value
//
// (The kernel turns command-line words containing '=' into environment
// variables, as Linux does, hence the colons.)
//
// A configuration region with no valid copy is reported and the program
// continues with defaults, as firmware must.
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/gowrt/gowrt/board"
	"github.com/gowrt/gowrt/board/malta"
	"github.com/gowrt/gowrt/soc/malta/pci"
)

const defaultLAN = "192.168.1.1"

func main() {
	failed := false
	b, err := board.Current()
	if err != nil || b.Name() != malta.Name {
		fmt.Println("board: FAIL", b, err)
		os.Exit(1)
	}
	if _, err := b.Ports(); err == nil {
		fmt.Println("board: FAIL: ports without board/malta/eth")
		os.Exit(1)
	}
	fmt.Println("board: registered", b.Name())

	gt, devs, err := malta.PCI()
	if err != nil {
		fmt.Println("pci: FAIL", err)
		os.Exit(1)
	}
	for _, d := range devs {
		cmd := gt.Read32(d.Addr, pci.RegCommand) & 0xffff
		bar0 := gt.Read32(d.Addr, pci.RegBAR0)
		fmt.Printf("pci: %v cmd %#x reg-bar0 %#x\n", d, cmd, bar0)
	}

	chip, err := malta.Flash()
	if err != nil {
		fmt.Println("flash: FAIL probe:", err)
		os.Exit(1)
	}
	g := chip.Geometry()
	fmt.Printf("flash: CFI cmdset %#04x, %d KiB, %d blocks of %d KiB, interleave %d\n",
		g.CmdSet, g.Size>>10, g.Blocks, g.BlockSize>>10, g.Interleave)

	st, vals, err := malta.ConfigStore()
	if err != nil {
		fmt.Printf("config: ERROR: %v\nconfig: using defaults\n", err)
	} else {
		fmt.Printf("config: loaded seq %d (%d keys)\n", st.Seq(), len(vals))
	}
	if _, ok := vals["lan.ipaddr"]; !ok {
		vals["lan.ipaddr"] = defaultLAN
	}
	dirty := false
	for _, a := range os.Args[1:] {
		switch {
		case strings.HasPrefix(a, "set:"):
			k, v, _ := strings.Cut(strings.TrimPrefix(a, "set:"), ":")
			vals[k] = v
			dirty = true
		case strings.HasPrefix(a, "get:"):
			k := strings.TrimPrefix(a, "get:")
			fmt.Printf("config: %s=%s\n", k, vals[k])
		}
	}
	if dirty {
		before := chip.Stats
		if err := st.Save(vals); err != nil {
			fmt.Println("config: FAIL save:", err)
			failed = true
		} else {
			fmt.Printf("config: saved seq %d: %d erase, %d word programs, %d polls\n", st.Seq(),
				chip.Stats.Erases-before.Erases, chip.Stats.Programs-before.Programs, chip.Stats.Polls-before.Polls)
		}
	}
	if failed {
		os.Exit(1)
	}
	fmt.Println("boardtest: ok")
}
