// Command router is gowrt's router firmware: br-lan over the board's LAN
// ports at 192.168.1.1/24, the WAN port, ICMP, and a status page at
// http://192.168.1.1/.
//
// It runs on any board: the board package linked in (board_*.go, chosen by
// build constraints) supplies the Ethernet ports.
//
//	go run ./cmd/gowrt run ./examples/router            # sim mode (needs root for TAP devices)
//	go run ./cmd/gowrt run -board malta-be ./examples/router
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/gowrt/gowrt/board"
	"github.com/gowrt/gowrt/net/router"
)

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
	ports, err := b.Ports()
	if err != nil {
		return err
	}
	cfg := router.Config{Board: b.Name()}
	for _, p := range ports {
		rp := router.Port{Name: p.Name, NIC: p.NIC}
		switch {
		case p.Role == board.WAN && cfg.WAN == nil:
			cfg.WAN = &rp
		default:
			cfg.LAN = append(cfg.LAN, rp)
		}
	}
	if st, ok := b.(board.Storage); ok { // malta's flash: leases and time survive a reboot
		cfg.Storage = func(name string) (router.Store, error) { return st.Store(name) }
	}
	r, err := router.New(cfg)
	if err != nil {
		return err
	}
	if err := r.Start(); err != nil {
		return err
	}
	defer r.Close()
	st := r.Status()
	fmt.Printf("router: board %s, LAN up at %s (br-lan %s)\n", st.Board, st.LANAddr, st.BridgeMAC)
	for _, p := range st.Ports {
		fmt.Printf("router: port %-5s %s %s\n", p.Name, p.Role, p.MAC)
	}
	fmt.Printf("router: status page at http://%s/\n", router.DefaultLANAddr.Addr())

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
