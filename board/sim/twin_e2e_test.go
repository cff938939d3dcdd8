//go:build linux && !mips && !mipsle

package sim_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gowrt/gowrt/arswitch/arswitchsim"
	"github.com/gowrt/gowrt/board"
	"github.com/gowrt/gowrt/board/ar71xx/boardfile"
	"github.com/gowrt/gowrt/board/sim"
	"github.com/gowrt/gowrt/internal/netns"
	"github.com/gowrt/gowrt/internal/testrouter"
	"github.com/gowrt/gowrt/internal/wantest"
	"github.com/gowrt/gowrt/net/router"
)

// TestTwin runs the router on each board's sim twin, brought up by
// wire.Ports from the board's description, with real Linux peers:
//
//   - LAN↔WAN: a host on the first LAN socket gets a DHCP lease from the
//     router (dhclient), the router's WAN gets one from the ISP's dnsmasq
//     on the WAN socket, and the host reaches the Internet host through
//     NAT (ping, HTTP; the server sees the router's WAN address);
//   - LAN↔LAN: a second host on the second LAN socket (another switch
//     port) gets a lease, and the two reach each other (ping, an iperf3
//     TCP transfer) through the switch model alone: the two switch ports'
//     MIB counters carry the transfer, the CPU port's and the CPU MAC
//     model's stay (almost) still. Boards with one LAN socket (Carambola2)
//     do LAN↔WAN only.
//
// Every hwsim misuse report and switch model violation fails the test.
func TestTwin(t *testing.T) {
	netns.RequireRoot(t)
	for i, b := range boardfile.All {
		t.Run(b.Name, func(t *testing.T) { runTwin(t, b, i) })
	}
}

func runTwin(t *testing.T, b *boardfile.Board, n int) {
	start := time.Now()
	var lanJacks []boardfile.Jack
	var wanJack *boardfile.Jack
	roles := map[string]board.Role{}
	for _, p := range b.Ports {
		roles[p.Name] = p.Role
	}
	for _, j := range b.Jacks() {
		switch {
		case roles[j.Port] == board.LAN:
			lanJacks = append(lanJacks, j)
		case wanJack == nil:
			wanJack = &j
		}
	}
	if len(lanJacks) == 0 || wanJack == nil {
		t.Fatalf("%s: no LAN or WAN socket: %+v", b.Name, b.Jacks())
	}
	if len(lanJacks) > 2 {
		lanJacks = lanJacks[:2]
	}
	taps := map[string]string{wanJack.Label: fmt.Sprintf("twn%d-%dw", os.Getpid()%100000, n)}
	for i, j := range lanJacks {
		taps[j.Label] = fmt.Sprintf("twn%d-%d%d", os.Getpid()%100000, n, i)
	}
	logs := &logSink{}
	tw, err := sim.NewTwin(b, sim.TwinConfig{TAPs: taps, Seed: 17 + uint64(n), Log: logs.log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tw.Close() }) // after the router's Close
	ports, err := tw.Ports()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := testrouter.Config()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Board = b.Name
	testrouter.AddPorts(&cfg, ports)
	r, err := router.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })

	// LAN↔WAN.
	far := wantest.New(t, taps[wanJack.Label], 2*time.Minute)
	c1 := wantest.NewClient(t, taps[lanJacks[0].Label])
	l1 := c1.DHCP(t, 20*time.Second)
	if !strings.Contains(l1, "router=192.168.1.1") {
		t.Fatalf("lease %q: not from the router", l1)
	}
	wanAddr := wantest.WaitWAN(t, c1, 20*time.Second)
	if !wantest.ISPAddr.Contains(wanAddr) {
		t.Fatalf("WAN address %v is not from the ISP's range", wanAddr)
	}
	host := wantest.HostAddr.Addr().String()
	if out, err := c1.NS.Exec(15*time.Second, "ping", "-c", "2", "-i", "0.2", "-W", "2", host); err != nil {
		t.Fatalf("LAN host → Internet host: %v\n%s", err, out)
	}
	out := c1.NS.Must(t, "curl", "-sS", "--max-time", "10", fmt.Sprintf("http://%s:%d/", host, wantest.HTTPPort))
	if !strings.HasPrefix(out, "peer "+wanAddr.String()+":") {
		t.Fatalf("the Internet host saw %q, want the router's WAN address %v (NAT)", out, wanAddr)
	}
	t.Logf("%s: LAN↔WAN ok after %v (lease %q, WAN %v)", b.Name, time.Since(start).Round(time.Millisecond), l1, wanAddr)
	_ = far

	if len(lanJacks) < 2 {
		t.Logf("%s has one LAN socket: LAN↔LAN through the switch not tested", b.Name)
	} else {
		lanToLAN(t, tw, b, lanJacks, taps, c1, l1)
	}
	// A trunk's drop counters: every frame the CPU MAC delivered had a
	// VLAN that has a router port.
	for unit, tr := range tw.Wired().Trunks {
		if u := tr.Stats.RxUnknownVID.Load() + tr.Stats.RxUntagged.Load() + tr.Stats.RxBadVID.Load(); u != 0 {
			t.Errorf("GE%d trunk dropped %d frames with no VLAN of the router's", unit, u)
		}
	}
	checkClean(t, tw, logs)
	for _, l := range logs.all() {
		if strings.Contains(l, "MISUSE") {
			t.Errorf("model: %s", l)
		}
	}
	if n, err := tw.Wired().LinkErrors(); n != 0 {
		t.Errorf("%d link polls failed, last: %v", n, err)
	}
	t.Logf("%s: done in %v", b.Name, time.Since(start).Round(time.Millisecond))
}

// lanToLAN: two hosts on two switch ports reach each other through the
// switch model, not the CPU.
func lanToLAN(t *testing.T, tw *sim.Twin, b *boardfile.Board, lanJacks []boardfile.Jack, taps map[string]string, c1 *wantest.Client, l1 string) {
	c2 := wantest.NewClient(t, taps[lanJacks[1].Label])
	l2 := c2.DHCP(t, 20*time.Second)
	a1, a2 := wantest.Addr(l1), wantest.Addr(l2)
	if !a2.IsValid() || a1 == a2 {
		t.Fatalf("second lease %q", l2)
	}
	// Learning: both hosts' addresses reach the switch's table.
	if out, err := c1.NS.Exec(15*time.Second, "ping", "-c", "3", "-i", "0.2", "-W", "2", a2.String()); err != nil {
		t.Fatalf("LAN host 1 → LAN host 2: %v\n%s", err, out)
	}
	e, err := b.EthUnit(lanJacks[0].Unit)
	if err != nil {
		t.Fatal(err)
	}
	cpuPort, p1, p2 := e.SwitchPort, lanJacks[0].SwitchPort, lanJacks[1].SwitchPort
	cpuMAC := tw.MAC(lanJacks[0].Unit)
	before := [3]arswitchsim.Counters{tw.Switch.LiveCounters(cpuPort), tw.Switch.LiveCounters(p1), tw.Switch.LiveCounters(p2)}
	macBefore := cpuMAC.Snapshot()

	done := make(chan string, 1)
	go func() {
		out, err := c2.NS.Exec(30*time.Second, "iperf3", "-s", "-1", "-J")
		if err != nil {
			out += err.Error()
		}
		done <- out
	}()
	const bytes = 4 << 20
	var out string
	for try := 0; try < 20; try++ {
		time.Sleep(150 * time.Millisecond)
		out, err = c1.NS.Exec(30*time.Second, "iperf3", "-c", a2.String(), "-n", fmt.Sprint(bytes), "-f", "m")
		if err == nil {
			break
		}
	}
	srv := <-done
	if err != nil {
		t.Fatalf("iperf3 %v → %v: %v\n%s\nserver: %s", a1, a2, err, out, srv)
	}
	after := [3]arswitchsim.Counters{tw.Switch.LiveCounters(cpuPort), tw.Switch.LiveCounters(p1), tw.Switch.LiveCounters(p2)}
	macAfter := cpuMAC.Snapshot()
	minFrames := uint64(bytes / 9000) // whatever the hosts' segment sizes
	inBytes := after[1].RxGoodBytes - before[1].RxGoodBytes
	outBytes := after[2].TxBytes - before[2].TxBytes
	in := after[1].RxUnicast - before[1].RxUnicast
	outp := after[2].TxUnicast - before[2].TxUnicast
	back := after[2].RxUnicast - before[2].RxUnicast
	toCPU := after[0].TxUnicast - before[0].TxUnicast
	cpuRx := macAfter.RXFrames - macBefore.RXFrames
	t.Logf("%s: switch port %d rx %d frames %d bytes, port %d tx %d frames %d bytes (acks back %d); CPU port %d tx %d; CPU MAC rx %d",
		b.Name, p1, in, inBytes, p2, outp, outBytes, back, cpuPort, toCPU, cpuRx)
	// iperf3's server stops counting when the client says it is done,
	// so it reports less than was sent: the switch must have carried at
	// least what the server received (the frames add headers), and sent
	// out of port p2 what came in at p1 (give or take a broadcast from
	// the router).
	var rep struct {
		End struct {
			SumReceived struct {
				Bytes uint64 `json:"bytes"`
			} `json:"sum_received"`
		} `json:"end"`
	}
	if err := json.Unmarshal([]byte(srv), &rep); err != nil {
		t.Fatalf("iperf3 server's report: %v\n%s", err, srv)
	}
	got := rep.End.SumReceived.Bytes
	t.Logf("iperf3: the server received %d of %d bytes", got, bytes)
	if got < 1<<20 {
		t.Errorf("the server received only %d bytes", got)
	}
	if in < minFrames || outp < minFrames || inBytes < got || outBytes+3000 < inBytes || outBytes > inBytes+3000 {
		t.Errorf("the transfer did not cross switch ports %d → %d: %d frames %d bytes in, %d frames %d bytes out, want ≥ %d bytes",
			p1, p2, in, inBytes, outp, outBytes, got)
	}
	// The hosts' own chatter with the router (ARP refreshes, a DHCP
	// renewal) may reach the CPU during the transfer; the transfer
	// itself (thousands of frames each way) must not.
	if toCPU > 20 || cpuRx > 20 {
		t.Errorf("the transfer reached the CPU: switch CPU port sent %d unicast frames, the CPU MAC received %d", toCPU, cpuRx)
	}
}
