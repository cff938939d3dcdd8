//go:build linux && !mips && !mipsle

package boottest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gowrt/gowrt/internal/image"
	"github.com/gowrt/gowrt/internal/netns"
	"github.com/gowrt/gowrt/internal/qemu"
)

// wanMAC is the MAC QEMU gives the WAN pcnet: default MACs are numbered
// in creation order, and the on-board NIC (52:54:00:12:34:56) is created
// with the machine, before the -device one (QEMU net/net.c
// qemu_macaddr_default_if_unset).
const wanMAC = "52:54:00:12:34:57"

// TestRouterWANQEMU boots the router (progs/routertest) on both byte
// orders with two pcnets on TAP devices in a test namespace, the on-board
// one as LAN and internal/qemu's WAN one (PCI 00:0c.0, i8259 line 11). It
// checks that the LAN answers ping and serves /status.json, that the page
// lists port "wan" with the WAN NIC's MAC and link up, and that frames the
// host sends into the WAN TAP are counted on the wan port's RX counters
// (and not on the lan port's).
func TestRouterWANQEMU(t *testing.T) {
	for i, board := range boards {
		t.Run(board, func(t *testing.T) { routerWAN(t, board, i, false) })
	}
}

// TestRouterWANSharedLineQEMU is TestRouterWANQEMU on big-endian with the
// WAN pcnet in PCI slot 19 instead, whose INTA the board routes to PIRQB
// like the on-board NIC's: both NICs share i8259 line 10, and the one
// handler board/malta/eth registers for the line must service each.
func TestRouterWANSharedLineQEMU(t *testing.T) {
	routerWAN(t, "malta-be", 2, true)
}

// routerWAN boots routertest with LAN and WAN TAPs and checks both ports;
// sharedLine puts the WAN pcnet in slot 19 (line 10) instead of
// internal/qemu's slot 12 (line 11).
func routerWAN(t *testing.T, board string, i int, sharedLine bool) {
	ns := netns.New(t)
	img := buildImage(t, board, "./board/malta/boottest/progs/routertest")
	lanTap, wanTap := fmt.Sprintf("gwlan%d", i), fmt.Sprintf("gwwan%d", i)
	for _, tap := range []struct{ name, addr string }{{lanTap, "192.168.1.100/24"}, {wanTap, "10.99.0.100/24"}} {
		ns.Must(t, "ip", "tuntap", "add", "dev", tap.name, "mode", "tap")
		ns.Must(t, "ip", "addr", "add", tap.addr, "dev", tap.name)
		ns.Must(t, "ip", "link", "set", tap.name, "up")
	}

	b, _ := image.LookupBoard(board)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	m := qemu.Machine{Board: b, Kernel: img, MemMiB: 32,
		NIC: "tap,ifname=" + lanTap + ",script=no,downscript=no",
		WAN: "tap,ifname=" + wanTap + ",script=no,downscript=no"}
	if sharedLine {
		m.Extra = []string{"-netdev", m.WAN + ",id=wan", "-device", "pcnet,netdev=wan,romfile=,addr=13.0"}
		m.WAN = ""
	}
	cmd := exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", ns.Name, b.QEMU}, m.Args()...)...)
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); pw.Close(); close(exited) }()
	defer func() {
		cancel() // kills QEMU: the router runs until reset
		<-exited
	}()
	var out consoleLog
	up := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		seen := false
		for sc.Scan() {
			l := strings.TrimRight(sc.Text(), "\r")
			out.WriteString(l + "\n")
			// The port lines follow "LAN up"; the wan one is last.
			// Without one, the kernel's first "ram:" report
			// (two seconds on) or a failure ends the wait.
			if !seen && (strings.HasPrefix(l, "router: port wan ") || strings.HasPrefix(l, "ram:") || strings.Contains(l, "FAIL")) {
				seen = true
				close(up)
			}
		}
		if !seen {
			close(up)
		}
	}()
	<-up
	if !strings.Contains(out.String(), "router: port wan wan "+wanMAC) {
		t.Fatalf("router did not come up with a wan port:\n%s", out.String())
	}

	ping := ns.Must(t, "ping", "-c", "3", "-i", "0.2", "-W", "2", "192.168.1.1")
	if !strings.Contains(ping, "3 received") {
		t.Fatalf("LAN ping:\n%s", ping)
	}
	before := routerStatus(t, ns)
	lan0, wan0 := before.port(t, "lan"), before.port(t, "wan")
	if lan0.Role != "lan" || wan0.Role != "wan" || wan0.MAC != wanMAC || !wan0.LinkUp || lan0.MAC == wan0.MAC {
		t.Fatalf("ports on the status page: %+v", before.Ports)
	}

	// Frames into the WAN TAP: ICMP echo requests of 1042-byte
	// frames to an address behind the WAN port's MAC (the router
	// has no WAN address and drops them in its stack, after the
	// driver counted them).
	const frames, frameLen = 20, 14 + 20 + 8 + 1000
	mark := len(out.String())
	ns.Must(t, "ip", "neigh", "replace", "10.99.0.1", "lladdr", wanMAC, "dev", wanTap, "nud", "permanent")
	res, _ := ns.Exec(30*time.Second, "ping", "-c", fmt.Sprint(frames), "-i", "0.05", "-s", "1000", "-W", "1", "10.99.0.1")
	if !strings.Contains(res, fmt.Sprintf("%d packets transmitted", frames)) {
		t.Fatalf("WAN ping:\n%s", res)
	}
	// The counters are read as the driver services its ring: give
	// the last frames a moment.
	var after status
	var wan1, lan1 portCounters
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		after = routerStatus(t, ns)
		lan1, wan1 = after.port(t, "lan"), after.port(t, "wan")
		if wan1.RxFrames-wan0.RxFrames >= frames || time.Now().After(deadline) {
			break
		}
	}
	t.Logf("wan rx %d frames %d bytes, lan rx %d frames %d bytes during the WAN ping",
		wan1.RxFrames-wan0.RxFrames, wan1.RxBytes-wan0.RxBytes, lan1.RxFrames-lan0.RxFrames, lan1.RxBytes-lan0.RxBytes)
	if wan1.RxFrames-wan0.RxFrames < frames || wan1.RxBytes-wan0.RxBytes < frames*frameLen {
		t.Fatalf("wan port counted %d frames, %d bytes; sent %d frames of %d bytes\nconsole:\n%s",
			wan1.RxFrames-wan0.RxFrames, wan1.RxBytes-wan0.RxBytes, frames, frameLen, out.String())
	}
	if lan1.RxBytes-lan0.RxBytes >= frames*frameLen {
		t.Fatalf("the WAN frames were counted on lan too: %d bytes", lan1.RxBytes-lan0.RxBytes)
	}
	// The frames came in through the WAN pcnet's own interrupt
	// (i8259 line 11), not the driver's watchdog, which services
	// a chip whose interrupt got lost and counts that as rescued:
	// the firmware's next "nic wan:" line shows both counts.
	var state string
	var rx, n, rescued int
	for deadline := time.Now().Add(6 * time.Second); rx < frames && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		for _, l := range strings.Split(out.String()[mark:], "\n") {
			if m := nicStateRE.FindStringSubmatch(l); m != nil {
				state = l
				rx, _ = strconv.Atoi(m[1])
				n, _ = strconv.Atoi(m[2])
				rescued, _ = strconv.Atoi(m[3])
			}
		}
	}
	if rx < frames {
		t.Fatalf("no driver state for wan with the WAN ping's frames (last: %q):\n%s", state, out.String())
	}
	t.Log(state)
	if n-rescued < frames/2 {
		t.Fatalf("wan pcnet took %d interrupts (%d serviced by the watchdog) for %d frames", n, rescued, frames)
	}
	// LAN still works after WAN traffic.
	ping = ns.Must(t, "ping", "-c", "3", "-i", "0.2", "-W", "2", "192.168.1.1")
	if !strings.Contains(ping, "3 received") {
		t.Fatalf("LAN ping after WAN traffic:\n%s", ping)
	}
}

// nicStateRE reads pcnet's State line as routertest prints it: frames
// received, interrupts serviced, and how many of those the watchdog did.
var nicStateRE = regexp.MustCompile(`^nic wan: .*; rx (\d+) .* irqs (\d+) rescued (\d+)`)

// status is the part of /status.json this test reads.
type status struct {
	Board string         `json:"board"`
	Ports []portCounters `json:"ports"`
}

type portCounters struct {
	Name     string `json:"name"`
	Role     string `json:"role"`
	MAC      string `json:"mac"`
	LinkUp   bool   `json:"link_up"`
	RxFrames uint64 `json:"rx_frames"`
	RxBytes  uint64 `json:"rx_bytes"`
}

func (s status) port(t *testing.T, name string) portCounters {
	t.Helper()
	for _, p := range s.Ports {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no port %q on the status page: %+v", name, s.Ports)
	return portCounters{}
}

// routerStatus fetches and decodes the router's /status.json from the
// namespace.
func routerStatus(t *testing.T, ns *netns.NS) status {
	t.Helper()
	page := ns.Must(t, "curl", "-sS", "--max-time", "10", "http://192.168.1.1/status.json")
	var s status
	if err := json.Unmarshal([]byte(page), &s); err != nil || s.Board != "malta" {
		t.Fatalf("status page (%v):\n%s", err, page)
	}
	return s
}
