//go:build linux && !mips && !mipsle

package boottest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gowrt/gowrt/internal/image"
	"github.com/gowrt/gowrt/internal/netns"
	"github.com/gowrt/gowrt/internal/qemu"
	"github.com/gowrt/gowrt/internal/wantest"
)

// TestRouterNATQEMU is the router's whole job (wantest.CheckRouter: WAN
// DHCP from an ISP's dnsmasq, NAT, the firewall seen from the WAN, the
// DHCP server and DNS forwarder seen by dhclient and dig hosts) on QEMU
// malta, both byte orders, at -m 32: the LAN pcnet cabled to a switch
// with two hosts, the WAN pcnet to the ISP.
func TestRouterNATQEMU(t *testing.T) {
	for i, board := range boards {
		t.Run(board, func(t *testing.T) { routerNAT(t, board, i) })
	}
}

func routerNAT(t *testing.T, board string, i int) {
	lanTap, wanTap, _ := bootOnTAPs(t, board, i, "./board/malta/boottest/progs/routertest")
	far := wantest.New(t, wanTap, 2*time.Minute)
	far.CheckRouter(t, wantest.Switch(t, lanTap))
}

// bootOnTAPs boots prog at -m 32 with its LAN and WAN pcnets on two new
// TAP devices and waits until it prints its WAN port. QEMU runs until the
// test ends; the console is in out (and in the log if the test fails).
func bootOnTAPs(t *testing.T, board string, i int, prog string) (lanTap, wanTap string, out *consoleLog) {
	return bootOnTAPsMem(t, board, i, prog, 32)
}

// bootOnTAPsMem is bootOnTAPs with memMiB of RAM.
func bootOnTAPsMem(t *testing.T, board string, i int, prog string, memMiB int) (lanTap, wanTap string, out *consoleLog) {
	netns.RequireRoot(t)
	img := buildImage(t, board, prog)
	lanTap, wanTap = fmt.Sprintf("gnl%d-%d", os.Getpid()%100000, i), fmt.Sprintf("gnw%d-%d", os.Getpid()%100000, i)
	for _, tap := range []string{lanTap, wanTap} {
		if out, err := exec.Command("ip", "tuntap", "add", "dev", tap, "mode", "tap").CombinedOutput(); err != nil {
			t.Fatalf("ip tuntap add %s: %v: %s", tap, err, out)
		}
		t.Cleanup(func() { _ = exec.Command("ip", "link", "del", tap).Run() })
	}
	b, _ := image.LookupBoard(board)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	m := qemu.Machine{Board: b, Kernel: img, MemMiB: memMiB,
		NIC: "tap,ifname=" + lanTap + ",script=no,downscript=no",
		WAN: "tap,ifname=" + wanTap + ",script=no,downscript=no"}
	cmd := exec.CommandContext(ctx, b.QEMU, m.Args()...)
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	out = &consoleLog{}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); pw.Close(); close(exited) }()
	t.Cleanup(func() {
		cancel() // kills QEMU: the router runs until reset
		<-exited
		if t.Failed() {
			t.Logf("console:\n%s", out.String())
		}
		// The firmware's memory: first and last report (at idle after
		// boot, and after the test's load).
		var ram []string
		for _, l := range strings.Split(out.String(), "\n") {
			if strings.HasPrefix(l, "ram: ") {
				ram = append(ram, l)
			}
		}
		if len(ram) > 0 {
			t.Logf("%s: first %s; last %s", board, ram[0], ram[len(ram)-1])
		}
	})
	up := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		seen := false
		for sc.Scan() {
			l := strings.TrimRight(sc.Text(), "\r")
			out.WriteString(l + "\n")
			if !seen && (strings.HasPrefix(l, "router: port wan ") || strings.Contains(l, "FAIL")) {
				seen = true
				close(up)
			}
		}
		if !seen {
			close(up)
		}
	}()
	select {
	case <-up:
	case <-time.After(90 * time.Second):
		t.Fatal("router did not come up in 90 s")
	}
	// QEMU holds both TAP devices open: they can move to the test's
	// namespaces now.
	return lanTap, wanTap, out
}
