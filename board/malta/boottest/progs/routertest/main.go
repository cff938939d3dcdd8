// Command routertest runs gowrt's router (net/router: br-lan at
// 192.168.1.1/24, ICMP, the status page) on whatever board is linked in; on
// MIPS that is QEMU malta through board/malta/eth, plus a TCP echo service
// on port 7 for bulk transfers. It is what
// examples/router does, kept here so the malta boot test does not depend on
// that example. It runs until the board is reset (the test kills QEMU).
package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/gowrt/gowrt/board"
	"github.com/gowrt/gowrt/kernel"
	"github.com/gowrt/gowrt/net/router"

	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/adapters/gonet"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv4"
)

func main() {
	start := time.Now()
	b, err := board.Current()
	if err != nil {
		fail(err)
	}
	ports, err := b.Ports()
	if err != nil {
		fail(err)
	}
	cfg := router.Config{Board: b.Name()}
	for _, p := range ports {
		cfg.LAN = append(cfg.LAN, router.Port{Name: p.Name, NIC: p.NIC})
	}
	r, err := router.New(cfg)
	if err != nil {
		fail(err)
	}
	if err := r.Start(); err != nil {
		fail(err)
	}
	st := r.Status()
	fmt.Printf("router: board %s, LAN up at %s after %d ms in main\n", st.Board, st.LANAddr, time.Since(start).Milliseconds())
	// A firmware service for bulk TCP tests: echo on port 7.
	ln, err := gonet.ListenTCP(r.Stack(), tcpip.FullAddress{Port: 7}, ipv4.ProtocolNumber)
	if err != nil {
		fail(err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				n, err := io.Copy(c, c)
				fmt.Printf("echo: %d bytes (%v)\n", n, err)
			}()
		}
	}()
	for {
		time.Sleep(2 * time.Second)
		if in, err := kernel.ReadInfo(); err == nil {
			fmt.Printf("ram: %d KiB total, %d KiB used, peak %d KiB\n", in.RAM>>10, in.RAMUsed>>10, in.RAMPeak>>10)
		}
		for _, p := range ports {
			if s, ok := p.NIC.(interface{ State() string }); ok {
				fmt.Printf("nic %s: %s\n", p.Name, s.State())
			}
		}
	}
}

func fail(err error) {
	fmt.Println("routertest: FAIL", err)
	os.Exit(1)
}
