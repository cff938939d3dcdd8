//go:build linux && !mips && !mipsle

package sim_test

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gowrt/gowrt/board"
	"github.com/gowrt/gowrt/board/sim"
	"github.com/gowrt/gowrt/internal/netns"
	"github.com/gowrt/gowrt/internal/testrouter"
	"github.com/gowrt/gowrt/internal/wantest"
	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/net/router"
)

func TestMain(m *testing.M) { wantest.Main(m) }

// rig is a sim board with both MACs as LAN ports (or GE1 as the WAN
// port), the router on it, and a Linux host in a namespace on each port's
// TAP device.
type rig struct {
	b     *sim.Board
	r     *router.Router
	hosts [2]*netns.NS
	taps  [2]string
	mu    sync.Mutex
	logs  []string
}

// newRig builds the rig with ports lan1 and lan2, or lan1 and wan.
func newRig(t testing.TB, withWAN ...bool) *rig {
	t.Helper()
	netns.RequireRoot(t)
	g := &rig{}
	taps := [2]string{fmt.Sprintf("gws%d-0", os.Getpid()), fmt.Sprintf("gws%d-1", os.Getpid())}
	g.taps = taps
	second := sim.PortConfig{Name: "lan2", Role: board.LAN, TAP: taps[1], MAC: gnet.MAC{2, 0, 0x67, 0x77, 0x72, 0x11}}
	hostAddr := [2]string{"192.168.1.10/24", "192.168.1.20/24"}
	if len(withWAN) > 0 && withWAN[0] {
		second.Name, second.Role = "wan", board.WAN
		hostAddr[1] = "10.0.0.2/24"
	}
	g.b = sim.New(sim.Config{Seed: 7, Log: func(f string, a ...any) {
		g.mu.Lock()
		g.logs = append(g.logs, fmt.Sprintf(f, a...))
		g.mu.Unlock()
	}, Ports: []sim.PortConfig{
		{Name: "lan1", Role: board.LAN, TAP: taps[0], MAC: gnet.MAC{2, 0, 0x67, 0x77, 0x72, 0x10}},
		second,
	}})
	t.Cleanup(func() { _ = g.b.Close() }) // after the router's Close (cleanups run last first)
	ports, err := g.b.Ports()
	if err != nil {
		t.Fatal(err)
	}
	cfg := router.Config{Board: "sim"}
	testrouter.AddPorts(&cfg, ports)
	if g.r, err = router.New(cfg); err != nil {
		t.Fatal(err)
	}
	if err := g.r.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.r.Close() })
	for i := range g.hosts {
		g.hosts[i] = netns.New(t)
		g.hosts[i].Adopt(t, taps[i], hostAddr[i])
	}
	t.Cleanup(func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		for _, l := range g.logs {
			if strings.Contains(l, "MISUSE") {
				t.Errorf("model: %s", l)
			}
		}
	})
	return g
}

func ping(ns *netns.NS, dst string) error {
	out, err := ns.Exec(20*time.Second, "ping", "-c", "2", "-i", "0.2", "-W", "3", dst)
	if err != nil {
		return fmt.Errorf("ping %s: %v\n%s", dst, err, out)
	}
	return nil
}

// TestSimRouter: Linux hosts reach the router through the arge driver and
// the MAC models, fetch the status page, and reach each other through the
// software bridge (arge0 ↔ arge1).
func TestSimRouter(t *testing.T) {
	g := newRig(t)
	for i, h := range g.hosts {
		if err := ping(h, "192.168.1.1"); err != nil {
			t.Fatalf("host %d → router: %v", i, err)
		}
	}
	out := g.hosts[0].Must(t, "curl", "-sS", "--max-time", "10", "http://192.168.1.1/")
	if !strings.Contains(out, "board sim") || !strings.Contains(out, "lan2") {
		t.Fatalf("status page:\n%s", out)
	}
	before := g.r.Bridge().Forwarded()
	if err := ping(g.hosts[0], "192.168.1.20"); err != nil {
		t.Fatalf("arge0 → arge1 through br-lan: %v", err)
	}
	if g.r.Bridge().Forwarded() == before {
		t.Fatal("host-to-host traffic did not go through the bridge")
	}
	// A larger TCP transfer through both MAC models and the bridge.
	out = g.hosts[1].Must(t, "sh", "-c", "curl -sS --max-time 30 http://192.168.1.1/ | wc -c")
	if strings.TrimSpace(out) == "0" {
		t.Fatal("empty status page over lan2")
	}
}

// TestSimLinkFlap: pulling lan2's cable takes the PHY model's link down,
// the driver sees it through MDIO polling, the bridge stops using the
// port; plugging it back restores traffic.
func TestSimLinkFlap(t *testing.T) {
	g := newRig(t)
	if err := ping(g.hosts[0], "192.168.1.20"); err != nil {
		t.Fatal(err)
	}
	p, err := g.b.Port("lan2")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.SetCarrier(false); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for g.r.Status().Ports[1].LinkUp {
		if time.Now().After(deadline) {
			t.Fatal("the driver never noticed the pulled cable")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := ping(g.hosts[0], "192.168.1.20"); err == nil {
		t.Fatal("ping crossed a port whose cable is pulled")
	}
	if err := p.SetCarrier(true); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(15 * time.Second)
	for {
		err := ping(g.hosts[0], "192.168.1.20")
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no recovery after re-plugging: %v", err)
		}
	}
}

// BenchmarkSimBridgeIperf: iperf3 TCP between the two LAN hosts through
// both arge MAC models, the driver and the software bridge (10 s). The
// bound is net/router's BenchmarkTapForwarderIperf in the same run.
func BenchmarkSimBridgeIperf(b *testing.B) {
	for b.Loop() {
		g := newRig(b)
		done := make(chan struct{})
		go func() {
			_, _ = g.hosts[1].Exec(40*time.Second, "iperf3", "-s", "-1")
			close(done)
		}()
		var out string
		var err error
		for try := 0; try < 20; try++ {
			time.Sleep(150 * time.Millisecond)
			out, err = g.hosts[0].Exec(40*time.Second, "iperf3", "-c", "192.168.1.20", "-t", "10", "-f", "m")
			if err == nil {
				break
			}
		}
		<-done
		if err != nil {
			b.Fatalf("iperf3: %v\n%s", err, out)
		}
		var mbps float64
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, "receiver") {
				f := strings.Fields(l)
				for i := range f {
					if f[i] == "Mbits/sec" && i > 0 {
						fmt.Sscanf(f[i-1], "%g", &mbps)
					}
				}
			}
		}
		b.ReportMetric(mbps, "Mbit/s")
	}
}

// TestSimClose: closing the router and then the board ends the hardware
// clock and the cable goroutines (left running, a cable whose TAP device
// vanished with its namespace spun a CPU and halved the next rig's
// throughput in the same process).
func TestSimClose(t *testing.T) {
	g := newRig(t)
	if err := g.r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := g.b.Close(); err != nil {
		t.Fatal(err)
	}
	// Close has waited for them; a goroutine may still be on its way out
	// of its deferred Done, so give the scheduler a moment.
	buf := make([]byte, 1<<20)
	var left []string
	for try := 0; try < 100; try++ {
		stacks := string(buf[:runtime.Stack(buf, true)])
		left = left[:0]
		for _, fn := range []string{"sim.(*Board).clock", "sim.(*Port).receive", "sim.(*Port).transmit"} {
			if strings.Contains(stacks, fn) {
				left = append(left, fn)
			}
		}
		if len(left) == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("still running a second after Close: %v", left)
}

// status fetches /status.json from the router through host 0.
func (g *rig) status(t *testing.T) router.Status {
	t.Helper()
	js := g.hosts[0].Must(t, "curl", "-sS", "--max-time", "10", "http://192.168.1.1/status.json")
	var st router.Status
	if err := json.Unmarshal([]byte(js), &st); err != nil {
		t.Fatalf("status.json: %v\n%s", err, js)
	}
	return st
}

func portNamed(t *testing.T, st router.Status, name string) router.PortStatus {
	t.Helper()
	for _, p := range st.Ports {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("status has no port %q: %+v", name, st.Ports)
	return router.PortStatus{}
}

// oversizeBurst is a shell function that sends, without waiting, one ICMP
// echo request to the router in a frame of each of 1533 (one byte more
// than MAX_FRAME_LEN lets through), 1600, 2044, 2045 and 9000 bytes
// (IPv4 + ICMP headers and Ethernet header: 42 bytes around the payload).
const oversizeBurst = `big() { for s in 1491 1558 2002 2003 8958; do ping -q -c 1 -s $s -W 1 192.168.1.1 >/dev/null & done; }`

// TestSimOversizeFrames: frames longer than the MAC accepts, from 1533
// bytes to 9000 (a jumbo frame), sent into a LAN port's TAP device are
// dropped at once by the MAC and counted, per port and with their
// reason, on the status page: the port does not stall on them (the sim
// cable used to retry a refused frame for up to a second, as if the MAC's
// FIFO were full), so a ping or a page fetch right after a burst of them
// answers in milliseconds. The largest frame the port accepts (1532 bytes)
// reaches br-lan, which drops it as longer than its MTU, and counts it.
func TestSimOversizeFrames(t *testing.T) {
	g := newRig(t)
	h := g.hosts[0]
	if err := ping(h, "192.168.1.1"); err != nil { // ARP resolved before the burst
		t.Fatal(err)
	}
	h.Must(t, "ip", "link", "set", "dev", g.taps[0], "mtu", "9000")
	before := g.r.Status().Drops["oversize"]
	// The 1532-byte frame gets no answer: br-lan drops it.
	_, _ = h.Exec(10*time.Second, "ping", "-q", "-c", "1", "-s", "1490", "-W", "1", "192.168.1.1")
	out, err := h.Exec(30*time.Second, "sh", "-c", oversizeBurst+`
big; sleep 0.05; curl -sS -o /dev/null -w 'fetch %{time_total}\n' --max-time 5 http://192.168.1.1/
big; sleep 0.05; ping -c 5 -i 0.2 -W 1 192.168.1.1
wait`)
	t.Logf("after oversize bursts:\n%s", out)
	if err != nil {
		t.Fatalf("the LAN port stopped answering after oversize frames: %v\n%s", err, out)
	}
	var fetch, rttMin, rttAvg, rttMax float64
	for _, l := range strings.Split(out, "\n") {
		fmt.Sscanf(l, "fetch %g", &fetch)
		fmt.Sscanf(l, "rtt min/avg/max/mdev = %g/%g/%g", &rttMin, &rttAvg, &rttMax)
	}
	if !strings.Contains(out, " 0% packet loss") || rttMax == 0 || fetch == 0 {
		t.Fatalf("no answer to every ping / no page fetched:\n%s", out)
	}
	if fetch > 0.5 || rttMax > 250 {
		t.Fatalf("the port stalled after oversize frames: page fetched in %.3f s, slowest ping %.1f ms", fetch, rttMax)
	}
	st := g.status(t)
	lan1 := portNamed(t, st, "lan1")
	if got := lan1.Drops["rx-oversize"]; got != 10 {
		t.Fatalf("lan1 counted %d rx-oversize drops, want 10 (two bursts of 5): %+v", got, lan1)
	}
	if len(lan1.Drops) != 1 {
		t.Fatalf("lan1 drops %v, want rx-oversize only", lan1.Drops)
	}
	if got := st.Drops["oversize"] - before; got != 1 {
		t.Fatalf("br-lan counted %d oversize frames, want 1 (the 1532-byte frame)", got)
	}
	page := h.Must(t, "curl", "-sS", "--max-time", "10", "http://192.168.1.1/")
	if !strings.Contains(page, "rx-oversize 10") {
		t.Fatalf("status page does not show the port's drops:\n%s", page)
	}
}

// TestSimWANCounters: frames a host sends into the WAN port's TAP device
// raise the WAN port's receive counters on the status page (they used to
// show 0 whatever arrived). The router has no WAN address yet, so it
// answers nothing there: its WAN transmit counters stay at 0. A frame too
// long for the port and one the port takes but the router's stack finds
// longer than its MTU are counted on the WAN port with their reasons.
func TestSimWANCounters(t *testing.T) {
	g := newRig(t, true)
	wan := g.hosts[1]
	before := portNamed(t, g.status(t), "wan")
	if before.Role != "wan" {
		t.Fatalf("port wan has role %q", before.Role)
	}
	wan.Must(t, "sysctl", "-qw", "net.ipv4.icmp_echo_ignore_broadcasts=0")
	// Five broadcast echo requests: no ARP first, five frames of 98 bytes.
	_, _ = wan.Exec(10*time.Second, "ping", "-b", "-c", "5", "-i", "0.2", "-W", "1", "10.0.0.255")
	deadline := time.Now().Add(5 * time.Second)
	var after router.PortStatus
	for {
		after = portNamed(t, g.status(t), "wan")
		if after.RxFrames-before.RxFrames >= 5 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if after.RxFrames-before.RxFrames < 5 || after.RxBytes-before.RxBytes < 5*98 {
		t.Fatalf("WAN counters rose by %d frames, %d bytes after 5 broadcast pings of 98 bytes",
			after.RxFrames-before.RxFrames, after.RxBytes-before.RxBytes)
	}
	t.Logf("wan: rx %d frames %d bytes, tx %d frames %d bytes", after.RxFrames, after.RxBytes, after.TxFrames, after.TxBytes)
	lan1 := portNamed(t, g.status(t), "lan1")
	if lan1.RxFrames == 0 || lan1.TxFrames == 0 {
		t.Fatalf("lan1 counters %+v after page fetches through it", lan1)
	}

	wan.Must(t, "ip", "link", "set", "dev", g.taps[1], "mtu", "9000")
	for _, s := range []string{"1488", "1558"} { // 1530- and 1600-byte frames
		_, _ = wan.Exec(10*time.Second, "ping", "-b", "-c", "1", "-s", s, "-W", "1", "10.0.0.255")
	}
	deadline = time.Now().Add(5 * time.Second)
	for {
		after = portNamed(t, g.status(t), "wan")
		if len(after.Drops) == 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if after.Drops["rx-oversize"] != 1 || after.Drops["stack-oversize"] != 1 || len(after.Drops) != 2 {
		t.Fatalf("wan drops %v, want rx-oversize 1 (1600 bytes) and stack-oversize 1 (1530 bytes)", after.Drops)
	}
}

// TestSimRouterWAN is the router's whole job (wantest.CheckRouter: WAN
// DHCP, NAT, firewall, DHCP server, DNS forwarder) on the sim board: the
// unmodified arge driver behind its MAC models, GE0 as the WAN port
// cabled to an ISP's dnsmasq, GE1 as the LAN port cabled to a switch
// with two dhclient hosts.
func TestSimRouterWAN(t *testing.T) {
	taps := startSimRouter(t, "gww", 11, func(l string) {
		if strings.Contains(l, "MISUSE") {
			t.Errorf("model: %s", l)
		}
	})
	far := wantest.New(t, taps[0], 2*time.Minute)
	far.CheckRouter(t, wantest.Switch(t, taps[1]))
}

// startSimRouter starts the sim board (GE0 "wan", GE1 "lan" on TAP
// devices named prefix<pid>-0 and -1, models seeded with seed, their
// reports to report) and the router on it with internal/testrouter's
// configuration, and returns the TAP devices' names, WAN first.
func startSimRouter(t testing.TB, prefix string, seed uint64, report func(string)) [2]string {
	netns.RequireRoot(t)
	taps := [2]string{fmt.Sprintf("%s%d-0", prefix, os.Getpid()), fmt.Sprintf("%s%d-1", prefix, os.Getpid())}
	var mu sync.Mutex
	b := sim.New(sim.Config{Seed: seed, Log: func(f string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		report(fmt.Sprintf(f, a...))
	}, Ports: []sim.PortConfig{
		{Name: "wan", Role: board.WAN, TAP: taps[0], MAC: gnet.MAC{2, 0, 0x67, 0x77, 0x72, 0x20}},
		{Name: "lan", Role: board.LAN, TAP: taps[1], MAC: gnet.MAC{2, 0, 0x67, 0x77, 0x72, 0x21}},
	}})
	t.Cleanup(func() { _ = b.Close() })
	ports, err := b.Ports()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := testrouter.Config()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Board = "sim"
	testrouter.AddPorts(&cfg, ports)
	r, err := router.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return taps
}
