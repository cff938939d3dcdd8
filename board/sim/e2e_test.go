//go:build linux && !mips && !mipsle

package sim_test

import (
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
	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/net/router"
)

// rig is a sim board with both MACs as LAN ports, the router on it, and a
// Linux host in a namespace on each port's TAP device.
type rig struct {
	b     *sim.Board
	r     *router.Router
	hosts [2]*netns.NS
	mu    sync.Mutex
	logs  []string
}

func newRig(t testing.TB) *rig {
	t.Helper()
	netns.RequireRoot(t)
	g := &rig{}
	taps := [2]string{fmt.Sprintf("gws%d-0", os.Getpid()), fmt.Sprintf("gws%d-1", os.Getpid())}
	g.b = sim.New(sim.Config{Seed: 7, Log: func(f string, a ...any) {
		g.mu.Lock()
		g.logs = append(g.logs, fmt.Sprintf(f, a...))
		g.mu.Unlock()
	}, Ports: []sim.PortConfig{
		{Name: "lan1", Role: board.LAN, TAP: taps[0], MAC: gnet.MAC{2, 0, 0x67, 0x77, 0x72, 0x10}},
		{Name: "lan2", Role: board.LAN, TAP: taps[1], MAC: gnet.MAC{2, 0, 0x67, 0x77, 0x72, 0x11}},
	}})
	t.Cleanup(func() { _ = g.b.Close() }) // after the router's Close (cleanups run last first)
	ports, err := g.b.Ports()
	if err != nil {
		t.Fatal(err)
	}
	cfg := router.Config{Board: "sim"}
	for _, p := range ports {
		cfg.LAN = append(cfg.LAN, router.Port{Name: p.Name, NIC: p.NIC})
	}
	if g.r, err = router.New(cfg); err != nil {
		t.Fatal(err)
	}
	if err := g.r.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.r.Close() })
	for i := range g.hosts {
		g.hosts[i] = netns.New(t)
		g.hosts[i].Adopt(t, taps[i], fmt.Sprintf("192.168.1.%d/24", 10*(i+1)))
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
