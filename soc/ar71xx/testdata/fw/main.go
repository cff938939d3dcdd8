// Command fw is the smallest AR71xx-family firmware: it says which chip
// it runs on and at what clock. Tests build it (kernel/boottest) to show
// that an AR71xx image links with the SoC's platform hooks; QEMU cannot
// boot it.
package main

import (
	"fmt"

	_ "github.com/gowrt/gowrt/board/ar71xx"
	"github.com/gowrt/gowrt/kernel"
)

func main() {
	info, err := kernel.ReadInfo()
	if err != nil {
		fmt.Println("kernel:", err)
		return
	}
	fmt.Printf("gowrt on %s, CP0 Count at %d Hz, %d KiB RAM\n", info.BoardName(), info.CountHz, info.RAM>>10)
}
