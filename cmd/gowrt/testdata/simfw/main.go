// Command simfw is a sim-board firmware for cmd/gowrt's tests: it says it
// is ready, waits for a stop signal, reports it and exits 0.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	_ "github.com/gowrt/gowrt/board/sim"
)

func main() {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	fmt.Println("simfw: ready")
	fmt.Printf("simfw: stopped by %v\n", <-sigs)
}
