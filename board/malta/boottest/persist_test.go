//go:build linux && !mips && !mipsle

package boottest

import (
	"bufio"
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gowrt/gowrt/flash/confstore"
	"github.com/gowrt/gowrt/internal/image"
	"github.com/gowrt/gowrt/internal/netns"
	"github.com/gowrt/gowrt/internal/qemu"
	"github.com/gowrt/gowrt/internal/wantest"
)

// TestLeasesPersistQEMU: the router (progs/routertest) keeps its DHCP
// leases in malta's boot flash (board.Storage → flash/confstore) across a
// power cut, both byte orders.
//
// Boot 1, blank flash: LAN client X gets a lease, then client Y, whose MAC
// the server's hash starts on X's address (dhcpd: FNV-1a of the MAC
// modulo the pool), so Y gets another address. The lease table reaches
// the flash file. QEMU is killed (no clean shutdown).
// Boot 2, same flash file: the console reports the two leases loaded, and
// Y — a fresh dhclient, no lease file, so it asks for no address — gets
// the address it had. From an empty table it would have got X's.
func TestLeasesPersistQEMU(t *testing.T) {
	for i, board := range boards {
		t.Run(board, func(t *testing.T) { leasesPersist(t, board, i) })
	}
}

// Pool of the router's DHCP server (internal/testrouter keeps dnsmasq's
// OpenWrt defaults: start 100, limit 150).
const poolLimit = 150

func poolStart(mac net.HardwareAddr) uint32 {
	h := fnv.New32a()
	h.Write(mac)
	return h.Sum32() % poolLimit
}

// collidingMACs returns two locally administered MACs the server's hash
// starts on the same pool address.
func collidingMACs(t *testing.T, i int) (x, y net.HardwareAddr) {
	x = net.HardwareAddr{0x02, 0x67, 0x77, 0x50, byte(i), 0x01}
	for n := 2; n < 1<<16; n++ {
		y = net.HardwareAddr{0x02, 0x67, 0x77, 0x51 + byte(i), byte(n >> 8), byte(n)}
		if poolStart(y) == poolStart(x) {
			return x, y
		}
	}
	t.Fatal("no colliding MAC")
	return nil, nil
}

func leasesPersist(t *testing.T, board string, i int) {
	netns.RequireRoot(t)
	img := buildImage(t, board, "./board/malta/boottest/progs/routertest")
	fl := filepath.Join(t.TempDir(), "flash.img")
	if err := os.WriteFile(fl, blankFlash(), 0o644); err != nil {
		t.Fatal(err)
	}
	// The LAN: a switch namespace holding QEMU's TAP (QEMU runs there, so
	// each boot opens the same TAP by name) on a bridge, and veth links to
	// the clients.
	sw := netns.New(t)
	const tap = "gwp0"
	sw.Must(t, "ip", "tuntap", "add", "dev", tap, "mode", "tap")
	sw.Must(t, "ip", "link", "add", "br0", "type", "bridge")
	sw.Must(t, "ip", "link", "set", tap, "master", "br0")
	sw.Must(t, "ip", "link", "set", tap, "up")
	sw.Must(t, "ip", "link", "set", "br0", "up")
	port := 0
	client := func(mac net.HardwareAddr) *wantest.Client {
		swp, peer := fmt.Sprintf("swp%d", port), fmt.Sprintf("wpc%d-%d-%d", os.Getpid()%100000, i, port)
		port++
		sw.Must(t, "ip", "link", "add", swp, "type", "veth", "peer", "name", peer)
		sw.Must(t, "ip", "link", "set", swp, "master", "br0")
		sw.Must(t, "ip", "link", "set", swp, "up")
		sw.Must(t, "ip", "link", "set", peer, "address", mac.String())
		sw.Must(t, "ip", "link", "set", peer, "netns", "1")
		return wantest.NewClient(t, peer)
	}
	macX, macY := collidingMACs(t, i)

	// Boot 1.
	out, stop := bootRouter(t, sw, board, img, tap, fl)
	addrX := wantest.Addr(client(macX).DHCP(t, 30*time.Second))
	cy := client(macY)
	addrY := wantest.Addr(cy.DHCP(t, 30*time.Second))
	t.Logf("boot 1: X %v → %v, Y %v → %v", macX, addrX, macY, addrY)
	if !addrX.IsValid() || !addrY.IsValid() || addrX == addrY {
		t.Fatalf("boot 1 leases: X %v, Y %v", addrX, addrY)
	}
	// The server saves after sending the ACK: wait for the table to be in
	// the flash file (QEMU writes pflash programming through to it).
	var seq uint32
	var v confstore.Values
	deadline := time.Now().Add(20 * time.Second)
	for {
		seq, v = readConfig(t, fl)
		if strings.Contains(v["dhcp.leases"], macY.String()) || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.Contains(v["dhcp.leases"], macX.String()) || !strings.Contains(v["dhcp.leases"], macY.String()) {
		t.Fatalf("flash file after two leases (seq %d): %q", seq, v["dhcp.leases"])
	}
	t.Logf("flash after two lease creations: seq %d (one erase per save), lease table %d bytes:\n%s", seq, len(v["dhcp.leases"]), v["dhcp.leases"])
	// One save per lease (the ACK), plus one at the very first OFFER:
	// dhcpd marks its table dirty when an offer creates an entry, though
	// offered entries are not stored; the table it saves then is what the
	// flash holds, and confstore.Shared writes nothing — except on blank
	// flash, where the key did not exist yet.
	if seq != 3 {
		t.Errorf("two lease creations took %d saves, want 3 (2 ACKs + the first OFFER)", seq)
	}
	mustContain(t, out.String(), "router: DHCP leases: 0 loaded")
	stop() // kill QEMU: a power cut
	// Y's cable comes out before the next boot, so only the new client
	// with Y's MAC is on the LAN.
	cy.NS.Must(t, "ip", "link", "del", cy.Link)

	// Boot 2, same flash.
	out, stop = bootRouter(t, sw, board, img, tap, fl)
	defer stop()
	got := wantest.Addr(client(macY).DHCP(t, 30*time.Second))
	t.Logf("boot 2: Y %v → %v", macY, got)
	if got != addrY {
		t.Errorf("after the reboot Y got %v, had %v", got, addrY)
	}
	mustContain(t, out.String(), "router: DHCP leases: 2 loaded")
	if t.Failed() {
		t.Logf("console:\n%s", out.String())
	}
}

func blankFlash() []byte {
	b := make([]byte, flashSize)
	for i := range b {
		b[i] = 0xff
	}
	return b
}

// readConfig decodes the newest valid configuration copy in the flash
// file (sequence numbers compared as confstore does, serially).
func readConfig(t *testing.T, fl string) (uint32, confstore.Values) {
	raw, err := os.ReadFile(fl)
	if err != nil {
		t.Fatal(err)
	}
	var best confstore.Values
	var bestSeq uint32
	for _, off := range []int{confA, confB} {
		seq, v, err := confstore.Decode(raw[off : off+0x10000])
		if err == nil && (best == nil || int32(seq-bestSeq) > 0) {
			best, bestSeq = v, seq
		}
	}
	return bestSeq, best
}

// bootRouter starts routertest on QEMU inside ns with the LAN pcnet on
// tap and fl as the boot flash, and waits for the LAN to be up. stop
// kills QEMU and waits for it.
func bootRouter(t *testing.T, ns *netns.NS, board, img, tap, fl string) (*consoleLog, func()) {
	t.Helper()
	b, _ := image.LookupBoard(board)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	m := qemu.Machine{Board: b, Kernel: img, MemMiB: 32, Flash: fl,
		NIC: "tap,ifname=" + tap + ",script=no,downscript=no"}
	cmd := exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", ns.Name, b.QEMU}, m.Args()...)...)
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); pw.Close(); close(exited) }()
	out := &consoleLog{}
	up := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		seen := false
		for sc.Scan() {
			l := strings.TrimRight(sc.Text(), "\r")
			out.WriteString(l + "\n")
			if !seen && strings.HasPrefix(l, "router: board malta, LAN up") {
				seen = true
				up <- true
			}
		}
		if !seen {
			up <- false
		}
	}()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			<-exited
		}
	}
	select {
	case ok := <-up:
		if !ok {
			stop()
			t.Fatalf("router never came up:\n%s", out.String())
		}
	case <-time.After(60 * time.Second):
		stop()
		t.Fatalf("router not up in 60 s:\n%s", out.String())
	}
	t.Cleanup(stop)
	return out, stop
}
