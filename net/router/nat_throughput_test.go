//go:build linux && !mips && !mipsle

package router_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gowrt/gowrt/internal/netns"
	"github.com/gowrt/gowrt/internal/testrouter"
	"github.com/gowrt/gowrt/internal/wantest"
	"github.com/gowrt/gowrt/net/router"
)

// NAT throughput against the bound. Run as
//
//	go test -run '^$' -bench NATVsBound -benchtime 1x ./net/router
//
// Each round builds two rigs from scratch, each a LAN host namespace and
// the far side of internal/wantest (the ISP namespace with dnsmasq, the
// Internet host 198.18.0.80 behind it running iperf3 -s):
//
//   - nat: the router (internal/testrouter's configuration: fw4's
//     defaults, masquerading on the WAN) between a TAP device to the LAN
//     host (192.168.1.10/24, default route via the router) and a TAP
//     device to the ISP; its WAN leases 10.99.0.x from dnsmasq first.
//   - bound: the same two TAP devices joined by the bound of
//     throughput_test.go (a frame copier). With no router in between, the
//     LAN host is a host on the ISP's link itself (10.99.0.10/24, default
//     route via the ISP, 10.99.0.1). The packets cross the same devices
//     and namespaces as through the router (LAN host, TAP, Go process,
//     TAP, ISP's Linux routing, veth, Internet host); only the router's
//     work (routing, connection tracking, NAT, firewall) is missing.
//
// On each rig, from the LAN host: iperf3 TCP LAN→WAN and WAN→LAN (-R),
// 10 s each, and small packets: iperf3 UDP with 18-byte payloads (64-byte
// Ethernet frames with the FCS the TAP device does not carry), unlimited
// rate, LAN→WAN, 10 s, counting the datagrams the Internet host received
// per second. The "result" sub-benchmark reports medians over the rounds
// (GOWRT_IPERF_ROUNDS, default 3) and NAT/bound ratios; the goal
// is ≥ 0.8 both ways, reported, not asserted.

// smallPayload is the UDP payload of a 64-byte Ethernet frame: 64 - 4
// (FCS) - 14 (Ethernet) - 20 (IPv4) - 8 (UDP).
const smallPayload = 64 - 4 - 14 - 20 - 8

// natFigures is one rig's measurements.
type natFigures struct {
	up, down      float64 // TCP Mbit/s, LAN→WAN and WAN→LAN
	pps           float64 // small UDP datagrams the Internet host's iperf3 received per second
	wirePPS       float64 // frames the Internet host's link received per second during the small-packet run
	sentPPS       float64 // small UDP datagrams the LAN host's iperf3 sent per second
	load1, load1b float64 // the machine's 1-minute load average before and after
}

// iperfJSON is what the benchmarks read of iperf3 -J's report.
type iperfJSON struct {
	End struct {
		SumSent     iperfSum `json:"sum_sent"`
		SumReceived iperfSum `json:"sum_received"`
	} `json:"end"`
}

type iperfSum struct {
	Seconds       float64 `json:"seconds"`
	Bytes         float64 `json:"bytes"`
	BitsPerSecond float64 `json:"bits_per_second"`
}

// iperfTo runs an iperf3 client in lan against the Internet host's
// server (already listening, or about to) with extra arguments.
func iperfTo(b *testing.B, lan *lanHost, extra ...string) iperfJSON {
	b.Helper()
	args := append([]string{"iperf3", "-c", wantest.HostAddr.Addr().String(), "-p", strconv.Itoa(wantest.IperfPort),
		"-t", strconv.Itoa(iperfSeconds), "-J"}, extra...)
	var out string
	var err error
	for try := 0; try < 20; try++ { // the server may not listen yet
		out, err = lan.ns.Exec((iperfSeconds+20)*time.Second, args...)
		if err == nil || !strings.Contains(out, "connect") {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err != nil {
		b.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	var res iperfJSON
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		b.Fatalf("iperf3 JSON: %v\n%s", err, out)
	}
	if res.End.SumReceived.Seconds == 0 {
		b.Fatalf("iperf3 reported no receiver:\n%s", out)
	}
	return res
}

// loadAvg returns the 1-minute load average.
func loadAvg(b *testing.B) float64 {
	s, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		b.Fatal(err)
	}
	var l float64
	fmt.Sscanf(string(s), "%g", &l)
	return l
}

// rxPackets returns the packets received by the links of ns (all but
// lo), from its /proc/net/dev.
func rxPackets(b *testing.B, ns *netns.NS) float64 {
	out := ns.Must(b, "cat", "/proc/net/dev")
	var sum float64
	for _, l := range strings.Split(out, "\n") {
		name, counters, ok := strings.Cut(l, ":")
		if !ok || strings.TrimSpace(name) == "lo" {
			continue
		}
		f := strings.Fields(counters) // rx bytes, rx packets, ...
		if len(f) < 2 {
			continue
		}
		n, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			b.Fatalf("/proc/net/dev: %q", l)
		}
		sum += n
	}
	return sum
}

// measureFlows runs the three measurements from lan to far's Internet
// host. Small packets are counted twice: by the iperf3 server (its
// process, reading one datagram per system call, may lose some the
// kernel received) and on the Internet host's link.
func measureFlows(b *testing.B, lan *lanHost, far *wantest.Net) natFigures {
	f := natFigures{load1: loadAvg(b)}
	f.up = iperfTo(b, lan).End.SumReceived.BitsPerSecond / 1e6
	f.down = iperfTo(b, lan, "-R").End.SumReceived.BitsPerSecond / 1e6
	before := rxPackets(b, far.Host)
	u := iperfTo(b, lan, "-u", "-b", "0", "-l", strconv.Itoa(smallPayload))
	f.wirePPS = (rxPackets(b, far.Host) - before) / u.End.SumSent.Seconds
	f.pps = u.End.SumReceived.Bytes / smallPayload / u.End.SumReceived.Seconds
	f.sentPPS = u.End.SumSent.Bytes / smallPayload / u.End.SumSent.Seconds
	f.load1b = loadAvg(b)
	return f
}

// measureNAT: the LAN host reaches the Internet host through the router.
func measureNAT(b *testing.B) natFigures {
	lan, wan := newHost(b, 1), newHost(b, 3)
	far := wantest.New(b, wan.dev, 2*time.Minute)
	cfg, err := testrouter.Config()
	if err != nil {
		b.Fatal(err)
	}
	cfg.Board = "bench"
	cfg.LAN = []router.Port{{Name: "lan1", NIC: lan.nic}}
	cfg.WAN = &router.Port{Name: "wan", NIC: wan.nic}
	startRouter(b, cfg)
	lan.plug(b, "192.168.1.10/24")
	lan.ns.Must(b, "ip", "route", "add", "default", "via", "192.168.1.1")
	wantest.WaitWAN(b, &wantest.Client{NS: lan.ns, Link: lan.dev}, 60*time.Second)
	return measureFlows(b, lan, far)
}

// measureNATBound: the LAN host reaches the Internet host through the
// bound, as a host on the ISP's link.
func measureNATBound(b *testing.B) natFigures {
	lan, wan := newHost(b, 1), newHost(b, 3)
	tapForwarder(b, lan.nic.Dev(), wan.nic.Dev())
	far := wantest.New(b, wan.dev, 2*time.Minute)
	lan.plug(b, "10.99.0.10/24")
	lan.ns.Must(b, "ip", "route", "add", "default", "via", wantest.ISPAddr.Addr().String())
	return measureFlows(b, lan, far)
}

func (f natFigures) report(b *testing.B) {
	b.ReportMetric(f.up, "up-Mbit/s")
	b.ReportMetric(f.down, "down-Mbit/s")
	b.ReportMetric(f.pps, "pps")
	b.ReportMetric(f.wirePPS, "wire-pps")
	b.ReportMetric(f.sentPPS, "sent-pps")
	b.ReportMetric(f.load1, "load1")
	b.Logf("load average %.2f before, %.2f after", f.load1, f.load1b)
}

// BenchmarkNATIperf is one NAT measurement.
func BenchmarkNATIperf(b *testing.B) {
	for b.Loop() {
		measureNAT(b).report(b)
	}
}

// BenchmarkNATVsBound alternates NAT and bound rigs for several rounds
// and reports medians and ratios in its "result" sub-benchmark.
func BenchmarkNATVsBound(b *testing.B) {
	rounds := 3
	if n, err := strconv.Atoi(os.Getenv("GOWRT_IPERF_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	var bound, nat []natFigures
	run := func(name string, f func(*testing.B) natFigures, into *[]natFigures) {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				v := f(b)
				*into = append(*into, v)
				v.report(b)
			}
		})
	}
	for r := 1; r <= rounds; r++ {
		run(fmt.Sprintf("bound/%d", r), measureNATBound, &bound)
		run(fmt.Sprintf("nat/%d", r), measureNAT, &nat)
	}
	b.Run("result", func(b *testing.B) {
		for b.Loop() {
		}
		if len(bound) == 0 || len(nat) == 0 {
			b.Fatal("a measurement failed")
		}
		med := func(v []natFigures, get func(natFigures) float64) float64 {
			s := make([]float64, len(v))
			for i := range v {
				s[i] = get(v[i])
			}
			return median(s)
		}
		up := func(f natFigures) float64 { return f.up }
		down := func(f natFigures) float64 { return f.down }
		pps := func(f natFigures) float64 { return f.pps }
		b.ReportMetric(med(bound, up), "bound-up-Mbit/s")
		b.ReportMetric(med(nat, up), "nat-up-Mbit/s")
		b.ReportMetric(med(nat, up)/med(bound, up), "up-nat/bound")
		b.ReportMetric(med(bound, down), "bound-down-Mbit/s")
		b.ReportMetric(med(nat, down), "nat-down-Mbit/s")
		b.ReportMetric(med(nat, down)/med(bound, down), "down-nat/bound")
		b.ReportMetric(med(bound, pps), "bound-pps")
		b.ReportMetric(med(nat, pps), "nat-pps")
		b.ReportMetric(med(nat, pps)/med(bound, pps), "pps-nat/bound")
		wire := func(f natFigures) float64 { return f.wirePPS }
		b.ReportMetric(med(bound, wire), "bound-wire-pps")
		b.ReportMetric(med(nat, wire), "nat-wire-pps")
		b.ReportMetric(med(nat, wire)/med(bound, wire), "wire-pps-nat/bound")
		b.ReportMetric(med(append(bound, nat...), func(f natFigures) float64 { return f.load1 }), "load1")
	})
}
