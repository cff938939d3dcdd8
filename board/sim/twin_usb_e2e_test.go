//go:build linux && !mips && !mipsle

package sim_test

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gowrt/gowrt/board"
	"github.com/gowrt/gowrt/board/ar71xx/boardfile"
	"github.com/gowrt/gowrt/board/sim"
	"github.com/gowrt/gowrt/internal/netns"
	"github.com/gowrt/gowrt/internal/testrouter"
	"github.com/gowrt/gowrt/internal/wantest"
	"github.com/gowrt/gowrt/net/router"
	"github.com/gowrt/gowrt/usbnet/axge"
)

// TestTwinUSB runs the router on the twins of a board with one EHCI
// (TL-WDR4300: the AR9344's ChipIdea core with its integrated TT) and of
// the AR7161 (RouterStation Pro: the USB control block bring-up, an OHCI
// companion, the Synopsys async-advance defect), each with an AX88179
// model in its first USB socket (behind the on-board hub model on the
// TL-WDR4300, as on the real board) whose Ethernet side is a TAP device, all
// brought up by usbport.Start, the bare-metal code. A Linux host on that
// TAP gets a DHCP lease from the router through the AX88179 port in
// br-lan, pings the router and fetches its status page, and exchanges an
// iperf3 TCP transfer with a host on a LAN socket (USB ↔ bridge ↔ arge).
// Unplugging the AX88179 (ehcisim detach) takes the port's carrier away
// and detaches it, while the LAN socket's host still reaches the router.
// RTT and throughput are logged: they measure the models, not hardware.
func TestTwinUSB(t *testing.T) {
	netns.RequireRoot(t)
	for i, b := range []*boardfile.Board{boardfile.TLWDR4300, boardfile.RSPro} {
		t.Run(b.Name, func(t *testing.T) { twinUSB(t, b, i) })
	}
}

var rttRe = regexp.MustCompile(`= ([0-9.]+)/([0-9.]+)/([0-9.]+)/([0-9.]+) ms`)

func twinUSB(t *testing.T, b *boardfile.Board, n int) {
	start := time.Now()
	var lanJack string
	for _, j := range b.Jacks() {
		for _, p := range b.Ports {
			if p.Name == j.Port && p.Role == board.LAN && lanJack == "" {
				lanJack = j.Label
			}
		}
	}
	pid := os.Getpid() % 100000
	tapLAN, tapUSB := fmt.Sprintf("twu%d-%dl", pid, n), fmt.Sprintf("twu%d-%du", pid, n)
	logs := &logSink{}
	tw, err := sim.NewTwin(b, sim.TwinConfig{TAPs: map[string]string{lanJack: tapLAN}, USB: tapUSB,
		Seed: 31 + uint64(n), Log: logs.log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tw.Close() }) // after the router's Close
	ports, err := tw.Ports()
	if err != nil {
		t.Fatal(err)
	}
	if err := tw.USBError(); err != nil {
		t.Fatalf("USB bring-up: %v", err)
	}
	var usbPort *board.Port
	for i, p := range ports {
		if strings.HasPrefix(p.Name, "axge") {
			usbPort = &ports[i]
		}
	}
	if usbPort == nil || usbPort.Role != board.LAN {
		t.Fatalf("no AX88179 LAN port among %v", names(ports))
	}
	if fladj, cfg := tw.USBControl(); b == boardfile.RSPro && (fladj != 0x20c00 || cfg != 0xf0000) {
		t.Errorf("AR71xx USB control block FLADJ %#x CONFIG %#x", fladj, cfg)
	}
	t.Logf("%s: ports %v up after %v", b.Name, names(ports), time.Since(start).Round(time.Millisecond))
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

	cu := wantest.NewClient(t, tapUSB)
	lu := cu.DHCP(t, 30*time.Second)
	if !strings.Contains(lu, "router=192.168.1.1") {
		t.Fatalf("lease over USB %q: not from the router", lu)
	}
	out, err := cu.NS.Exec(30*time.Second, "ping", "-c", "50", "-i", "0.02", "-W", "2", "192.168.1.1")
	if err != nil {
		t.Fatalf("USB host → router: %v\n%s", err, out)
	}
	rtt := rttRe.FindString(out)
	page := cu.NS.Must(t, "curl", "-sS", "--max-time", "10", "http://192.168.1.1/")
	if !strings.Contains(page, usbPort.Name) {
		t.Errorf("the status page does not list %s:\n%s", usbPort.Name, page)
	}
	cl := wantest.NewClient(t, tapLAN)
	ll := cl.DHCP(t, 30*time.Second)
	au, al := wantest.Addr(lu), wantest.Addr(ll)
	if !al.IsValid() || au == al {
		t.Fatalf("leases %q and %q", lu, ll)
	}
	up := iperf(t, cl, cu, al.String())
	down := iperf(t, cu, cl, au.String())
	chip := tw.AX88179().Stats()
	t.Logf("%s: through the AX88179 model: ping router rtt min/avg/max/mdev %s; iperf3 TCP USB host → LAN %s host %.1f Mbit/s, back %.1f Mbit/s; chip rx %d frames (%d FIFO drops) in %d bulk-in transfers, tx %d (%d padded, %d wedges)",
		b.Name, rtt, lanJack, up, down, chip.RxFrames, chip.RxFIFODrops, chip.BulkInXfers, chip.TxFrames, chip.TxPadded, chip.TxWedges)
	if ax, ok := usbPort.NIC.(*axge.Port); ok {
		st := &ax.NIC.Stats
		t.Logf("%s NIC: rx %d, tx %d frames; %d refused TxFull, %d TX transfer errors, %d RX transfer errors",
			ax.Name, st.RxFrames.Load(), st.TxFrames.Load(), st.TxFull.Load(), st.TxXferErrors.Load(), st.RxXferErrors.Load())
	}
	if chip.TxWedges != 0 || chip.TxBadHeaders != 0 {
		t.Errorf("AX88179 model: %d TX wedges, %d bad headers", chip.TxWedges, chip.TxBadHeaders)
	}

	// Unplug: the port loses carrier and detaches; the rest goes on.
	if err := tw.SetUSBPlugged(false); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for usbPort.NIC.Link().Up {
		if time.Now().After(deadline) {
			t.Fatalf("%s still has carrier 15 s after unplug", usbPort.Name)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if out, err := cl.NS.Exec(15*time.Second, "ping", "-c", "3", "-i", "0.2", "-W", "2", "192.168.1.1"); err != nil {
		t.Fatalf("LAN host → router after the USB unplug: %v\n%s", err, out)
	}
	if out, err := cu.NS.Exec(10*time.Second, "ping", "-c", "2", "-i", "0.2", "-W", "1", "192.168.1.1"); err == nil {
		t.Errorf("the unplugged USB host still reaches the router:\n%s", out)
	}
	checkClean(t, tw, logs)
	for _, l := range logs.all() {
		if strings.Contains(l, "MISUSE") {
			t.Errorf("model: %s", l)
		}
	}
	t.Logf("%s: done in %v", b.Name, time.Since(start).Round(time.Millisecond))
}

// iperf runs a 3 s iperf3 TCP transfer from client to server's address
// and returns the receiver's rate in Mbit/s.
// iperfMinBytes is the least an iperf3 run through the USB port must
// deliver.
const iperfMinBytes = 128 << 10

func iperf(t *testing.T, server, client *wantest.Client, addr string) float64 {
	t.Helper()
	done := make(chan string, 1)
	go func() {
		out, err := server.NS.Exec(60*time.Second, "iperf3", "-s", "-1", "-J")
		if err != nil {
			out += err.Error()
		}
		done <- out
	}()
	var out string
	var err error
	for try := 0; try < 20; try++ {
		time.Sleep(150 * time.Millisecond)
		out, err = client.NS.Exec(60*time.Second, "iperf3", "-c", addr, "-t", "3", "-f", "m")
		if err == nil {
			break
		}
	}
	srv := <-done
	if err != nil {
		t.Fatalf("iperf3 → %s: %v\n%s\nserver: %s", addr, err, out, srv)
	}
	var rep struct {
		End struct {
			SumReceived struct {
				Bytes         uint64  `json:"bytes"`
				BitsPerSecond float64 `json:"bits_per_second"`
			} `json:"sum_received"`
		} `json:"end"`
	}
	if err := json.Unmarshal([]byte(srv), &rep); err != nil {
		t.Fatalf("iperf3 server's report: %v\n%s", err, srv)
	}
	// A floor that shows TCP flowed (many windows' worth), not a speed:
	// the models run under -race beside other tests, and a loaded host
	// has carried as little as 0.6 MB in the 3 s.
	if rep.End.SumReceived.Bytes < iperfMinBytes {
		t.Errorf("iperf3: the server received only %d bytes in 3 s", rep.End.SumReceived.Bytes)
	}
	return rep.End.SumReceived.BitsPerSecond / 1e6
}
