// Command firmwaretest is gowrt's router firmware (the firmware package, as
// examples/router runs it) with one more service that panics every time it
// runs, for the management test: the supervisor must back off and park it
// while the router keeps forwarding. It runs until the board is reset (the
// test kills QEMU).
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/gowrt/gowrt/board"
	"github.com/gowrt/gowrt/firmware"
	"github.com/gowrt/gowrt/kernel"
	"github.com/gowrt/gowrt/sys/supervisor"
)

func crashy(context.Context) error { panic("crashy: this service always panics") }

func main() {
	b, err := board.Current()
	if err != nil {
		fmt.Println("firmwaretest: FAIL", err)
		os.Exit(1)
	}
	f, err := firmware.Start(context.Background(), firmware.Options{Board: b, Version: "firmwaretest",
		Services: []supervisor.Service{{Name: "crashy", Restart: supervisor.Always, Run: crashy,
			MinBackoff: 100 * time.Millisecond, MaxBackoff: time.Second, CrashLoop: 5, CrashWindow: time.Minute}}})
	if err != nil {
		fmt.Println("firmwaretest: FAIL", err)
		os.Exit(1)
	}
	for _, p := range f.Router.Status().Ports {
		fmt.Printf("router: port %-5s %s %s\n", p.Name, p.Role, p.MAC)
	}
	// The memory the firmware holds, for the test's log (as routertest
	// reports it, so the two compare).
	for {
		if in, err := kernel.ReadInfo(); err == nil {
			fmt.Printf("ram: %d KiB total, %d KiB used, peak %d KiB\n", in.RAM>>10, in.RAMUsed>>10, in.RAMPeak>>10)
		}
		time.Sleep(5 * time.Second)
	}
}
