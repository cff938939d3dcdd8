// Command hello is the smallest gowrt firmware: it greets, prints its memory
// statistics and the board it runs on, and exits 0.
//
//	go run ./cmd/gowrt run -board malta-be ./examples/hello
package main

import (
	"fmt"
	"os"
	"runtime"

	_ "github.com/gowrt/gowrt/board/malta"
	"github.com/gowrt/gowrt/kernel"
)

func main() {
	fmt.Println("Hello from gowrt!")
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Printf("go: heap in use %d KiB, heap from OS %d KiB, total from OS %d KiB, GC cycles %d\n",
		ms.HeapInuse>>10, ms.HeapSys>>10, ms.Sys>>10, ms.NumGC)
	info, err := kernel.ReadInfo()
	if err != nil {
		fmt.Println("kernel:", err)
		os.Exit(1)
	}
	fmt.Printf("board: %s\n", info.BoardName())
	fmt.Printf("clock: CP0 Count at %d Hz\n", info.CountHz)
	fmt.Printf("ram: %d KiB total, %d KiB used (peak %d KiB), %d KiB committed\n",
		info.RAM>>10, info.RAMUsed>>10, info.RAMPeak>>10, info.Committed>>10)
}
