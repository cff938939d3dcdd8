// Command router is gowrt's router firmware: br-lan over the board's LAN
// ports at 192.168.1.1/24, the WAN port with NAT and fw4's firewall, DHCP,
// DNS and SNTP, managed through SSH, the serial console's shell and a web
// UI at http://192.168.1.1/, all configured by the typed configuration in
// the board's storage (firmware package).
//
// It runs on any board: the board package linked in (board_*.go, chosen by
// build constraints) supplies the Ethernet ports.
//
//	go run ./cmd/gowrt run ./examples/router            # sim mode (needs root for TAP devices)
//	go run ./cmd/gowrt run -board malta-be ./examples/router
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/gowrt/gowrt/board"
	"github.com/gowrt/gowrt/firmware"
	"github.com/gowrt/gowrt/kernel"
	"github.com/gowrt/gowrt/sysupgrade"

	"golang.org/x/sys/unix"
)

// version is the firmware's version, set at build time with
// -ldflags "-X main.version=...".
var version = "dev"

// upgradeKey is the base64 ed25519 public key that sysupgrade images must
// be signed with, set at build time by gowrt build -sign KEY (-ldflags
// "-X main.upgradeKey=..."); without it the firmware refuses upgrades.
var upgradeKey string

func main() {
	runFor := flag.Duration("run-for", 0, "stop after this long (0: run until interrupted)")
	flag.Parse()
	if err := run(*runFor); err != nil {
		fmt.Fprintln(os.Stderr, "router:", err)
		os.Exit(1)
	}
}

func run(runFor time.Duration) error {
	b, err := board.Current()
	if err != nil {
		return err
	}
	key, err := sysupgrade.ParseBuiltinKey(upgradeKey)
	if err != nil {
		fmt.Fprintln(os.Stderr, "router:", err, "(upgrades refused)")
	}
	f, err := firmware.Start(context.Background(), firmware.Options{Board: b, Version: version, ConsoleIn: consoleIn(),
		UpgradeKey: key})
	if err != nil {
		return err
	}
	defer f.Stop()
	st := f.Router.Status()
	fmt.Printf("router: board %s, LAN up at %s (br-lan %s)\n", st.Board, st.LANAddr, st.BridgeMAC)
	for _, p := range st.Ports {
		fmt.Printf("router: port %-5s %s %s\n", p.Name, p.Role, p.MAC)
	}
	fmt.Printf("router: web UI at http://%s/, SSH on port 22\n", f.Router.LANAddr().Addr())

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	var stop <-chan time.Time
	if runFor > 0 {
		stop = time.After(runFor)
	}
	select {
	case s := <-sig:
		fmt.Printf("router: %v, shutting down\n", s)
	case <-stop:
		fmt.Println("router: run time over, shutting down")
	}
	return nil
}

// consoleIn is where the console shell reads: the serial console on the
// device, the terminal in sim mode (none when stdin is not a terminal).
func consoleIn() io.Reader {
	if kernel.Running() {
		return os.Stdin
	}
	if _, err := unix.IoctlGetTermios(int(os.Stdin.Fd()), unix.TCGETS); err == nil {
		return os.Stdin
	}
	return nil
}
