//go:build linux && !mips && !mipsle

package sim_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gowrt/gowrt/internal/netns"
	"github.com/gowrt/gowrt/internal/wantest"
)

// BenchmarkSimNATIperf: iperf3 TCP from a LAN host to the Internet host
// of internal/wantest and back (-R), 10 s each, through the router's NAT
// on the sim board: the arge driver behind both MAC models, GE0 the WAN
// port cabled to the ISP, GE1 the LAN port cabled to the host
// (192.168.1.10/24, default route via the router). For reference next to
// net/router's BenchmarkNATVsBound (TAP NICs, no MAC models):
//
//	go test -run '^$' -bench SimNATIperf -benchtime 1x ./board/sim
func BenchmarkSimNATIperf(b *testing.B) {
	for b.Loop() {
		lan := simNATRig(b)
		load := loadAvg()
		up := simIperf(b, lan)
		down := simIperf(b, lan, "-R")
		b.ReportMetric(up, "up-Mbit/s")
		b.ReportMetric(down, "down-Mbit/s")
		b.ReportMetric(load, "load1")
		b.Logf("load average %.2f before, %.2f after", load, loadAvg())
	}
}

// loadAvg returns the machine's 1-minute load average (0 if unknown).
func loadAvg() float64 {
	var l float64
	if s, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Sscanf(string(s), "%g", &l)
	}
	return l
}

// simNATRig starts the sim board and the router with internal/testrouter's
// configuration, the far side on its WAN port and a LAN host on its LAN
// port, and waits for the WAN's lease.
func simNATRig(b *testing.B) *netns.NS {
	taps := startSimRouter(b, "gwn", 13, func(string) {})
	wantest.New(b, taps[0], 2*time.Minute)
	lan := netns.New(b)
	lan.Adopt(b, taps[1], "192.168.1.10/24")
	lan.Must(b, "ip", "route", "add", "default", "via", "192.168.1.1")
	wantest.WaitWAN(b, &wantest.Client{NS: lan, Link: taps[1]}, 60*time.Second)
	return lan
}

// simIperf runs iperf3 -c against the Internet host from lan and returns
// the receiver's Mbit/s.
func simIperf(b *testing.B, lan *netns.NS, extra ...string) float64 {
	b.Helper()
	args := append([]string{"iperf3", "-c", wantest.HostAddr.Addr().String(), "-p", strconv.Itoa(wantest.IperfPort),
		"-t", "10", "-J"}, extra...)
	var out string
	var err error
	for try := 0; try < 20; try++ { // the server may not listen yet
		out, err = lan.Exec(40*time.Second, args...)
		if err == nil || !strings.Contains(out, "connect") {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err != nil {
		b.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	var res struct {
		End struct {
			SumReceived struct {
				BitsPerSecond float64 `json:"bits_per_second"`
			} `json:"sum_received"`
		} `json:"end"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		b.Fatalf("iperf3 JSON: %v\n%s", err, out)
	}
	if res.End.SumReceived.BitsPerSecond == 0 {
		b.Fatalf("iperf3 measured nothing:\n%s", out)
	}
	return res.End.SumReceived.BitsPerSecond / 1e6
}
