//go:build linux && !mips && !mipsle

package boottest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gowrt/gowrt/internal/image"
	"github.com/gowrt/gowrt/internal/netns"
	"github.com/gowrt/gowrt/internal/qemu"
)

// icountXferBytes is each measured transfer: some 11 k full-size
// segments, enough that connection set-up and the counter reads are noise.
const icountXferBytes = 16 << 20

// BenchmarkXferInstructionsMaltaLE measures what gowrt's TCP costs per
// data segment, in instructions: progs/routertest on QEMU malta-le under
// -icount (qemu.Deterministic: one emulated ns per instruction), the
// router test's transfer client in a test namespace sending
// icountXferBytes to the sink ("up") or reading as many from the source
// ("down"), and the same through the bulk services ("bulk-up",
// "bulk-down": iperf3-style, no hashing or stream generation). The
// firmware's busy time (kernel uptime less idle) over the transfer,
// divided by the data segments its stack received (up) or sent (down), is
// instructions/segment. The checked transfers include the service's own
// work (SHA-256 of what it receives, the ChaCha8 stream it sends), as
// Linux's figures in XferMaltaLE do; the bulk ones are mostly the TCP
// path. Unlike XferMaltaLE's rates these do not depend on the load of the
// host, so they compare changes; a download's figure varies by some 10%
// between runs with the number of ACKs the host's TCP sends.
//
// GOWRT_TCPBENCH_PROFILE=dir also takes a CPU profile of an upload and a
// download (samples count instructions) into dir/tcp-up.pprof and
// dir/tcp-down.pprof; GOWRT_TCPBENCH_PROFILE_MODE=bulk profiles bulk
// transfers instead.
//
//	go test -run '^$' -bench XferInstructionsMaltaLE -benchtime 3x ./board/malta/boottest
func BenchmarkXferInstructionsMaltaLE(b *testing.B) {
	ns := netns.New(b)
	const tap = "gwtcpic0"
	ns.Must(b, "ip", "tuntap", "add", "dev", tap, "mode", "tap")
	ns.Must(b, "ip", "addr", "add", "192.168.1.100/24", "dev", tap)
	ns.Must(b, "ip", "link", "set", tap, "up")
	bd, _ := image.LookupBoard("malta-le")
	img, err := images.Build("malta-le", "./board/malta/boottest/progs/routertest")
	if err != nil {
		b.Fatal(err)
	}
	// GOWRT_TCPBENCH_REALTIME=1 runs without -icount: the figures then
	// include the host's load, and busy-% says how much of the transfer's
	// time the firmware's CPU was busy (below 100, something other than
	// its CPU held the transfer back).
	deterministic := os.Getenv("GOWRT_TCPBENCH_REALTIME") == ""
	v := startVM(b, ns, "router: board malta, LAN up", qemu.Machine{Board: bd, Kernel: img, MemMiB: benchRAM,
		NIC: "tap,ifname=" + tap + ",script=no,downscript=no", Deterministic: deterministic})
	defer v.stop()
	xfer := func(dir string, n int) {
		b.Helper()
		mode := ""
		if bulk, ok := strings.CutPrefix(dir, "bulk-"); ok {
			dir, mode = bulk, "bulk"
		}
		res, err := icountXfer(ns, dir, mode, n)
		if err != nil {
			b.Fatalf("transfer client (%s): %v\n%s\nconsole:\n%s", dir, err, res, v.console.String())
		}
	}
	// Warm up: ARP, the heap's growth, buffer pools.
	xfer("up", 1<<20)
	xfer("down", 1<<20)
	if pdir := os.Getenv("GOWRT_TCPBENCH_PROFILE"); pdir != "" {
		for _, dir := range []string{"up", "down"} {
			file := filepath.Join(pdir, "tcp-"+dir+".pprof")
			done := make(chan error, 1)
			go func() {
				_, err := icountXfer(ns, dir, os.Getenv("GOWRT_TCPBENCH_PROFILE_MODE"), 4*icountXferBytes)
				done <- err
			}()
			time.Sleep(500 * time.Millisecond) // into the bulk of the transfer
			// seconds are the guest's: a billion instructions each.
			ns.Must(b, "curl", "-sS", "--max-time", "120", "-o", file, "http://192.168.1.1:6060/debug/pprof/profile?seconds=5")
			if err := <-done; err != nil {
				b.Fatalf("profiled transfer (%s): %v", dir, err)
			}
			b.Logf("profile in %s", file)
		}
	}
	for _, dir := range []string{"up", "down", "bulk-up", "bulk-down"} {
		b.Run(dir, func(b *testing.B) {
			var up, busy, segs, bytes, retrans, mallocs uint64
			for range b.N {
				c0 := readCounters(b, ns)
				xfer(dir, icountXferBytes)
				c1 := readCounters(b, ns)
				d := c1.sub(c0)
				s := d.segsOut
				if strings.HasSuffix(dir, "up") {
					s = d.segsIn
				}
				b.Logf("%s: %d instructions, %d segments in, %d out, %d retransmits, %d mallocs",
					dir, d.busy, d.segsIn, d.segsOut, d.retransmits, d.mallocs)
				busy += d.busy
				up += d.uptime
				segs += s
				bytes += icountXferBytes
				retrans += d.retransmits
				mallocs += d.mallocs
			}
			// The firmware's last report: TCP counters, the bridge's drops,
			// the driver's state.
			last := map[string]string{}
			for _, l := range strings.Split(v.console.String(), "\n") {
				for _, p := range []string{"tcp: ", "bridge: ", "nic "} {
					if strings.HasPrefix(l, p) {
						last[p] = l
					}
				}
			}
			b.Logf("firmware: %s | %s | %s", last["tcp: "], last["bridge: "], last["nic "])
			b.Logf("host: %s", strings.Join(strings.Fields(ns.Must(b, "nstat", "-az", "TcpExtTCPOFOQueue", "TcpExtTCPDSACKRecv", "TcpExtTCPDSACKOldSent", "TcpExtTCPBacklogDrop", "TcpExtTCPRcvQDrop", "TcpExtTCPZeroWindowDrop")), " "))
			b.ReportMetric(0, "ns/op")
			b.ReportMetric(float64(busy)/float64(segs), "instructions/segment")
			b.ReportMetric(float64(busy)/float64(bytes), "instructions/byte")
			b.ReportMetric(float64(bytes)/float64(segs), "bytes/segment")
			b.ReportMetric(float64(retrans)/float64(b.N), "retransmits/op")
			b.ReportMetric(float64(mallocs)/float64(segs), "mallocs/segment")
			if !deterministic {
				b.ReportMetric(100*float64(busy)/float64(up), "busy-%")
				b.ReportMetric(float64(bytes)*8/(float64(up)/1e9)/1e6, "Mbit/s")
			}
		})
	}
}

// icountXfer runs the transfer client in ns for n bytes in one direction,
// mode "bulk" through the bulk services.
func icountXfer(ns *netns.NS, dir, mode string, n int) (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	res, err := ns.Exec(300*time.Second, "env", "GOWRT_XFER_HOST=192.168.1.1", "GOWRT_XFER_ONLY="+dir, "GOWRT_XFER_MODE="+mode,
		fmt.Sprintf("GOWRT_XFER_BYTES=%d", n), exe)
	if err == nil && !strings.Contains(res, "xfer ok") {
		err = fmt.Errorf("no \"xfer ok\"")
	}
	return res, err
}

// tcpCounters is routertest's /debug/gowrt/counters.
type tcpCounters struct {
	uptime, busy, segsIn, segsOut, retransmits, mallocs uint64
}

func (c tcpCounters) sub(o tcpCounters) tcpCounters {
	return tcpCounters{c.uptime - o.uptime, c.busy - o.busy, c.segsIn - o.segsIn, c.segsOut - o.segsOut,
		c.retransmits - o.retransmits, c.mallocs - o.mallocs}
}

func readCounters(b *testing.B, ns *netns.NS) tcpCounters {
	b.Helper()
	out := ns.Must(b, "curl", "-sS", "--max-time", "30", "http://192.168.1.1:6060/debug/gowrt/counters")
	var c tcpCounters
	if _, err := fmt.Sscanf(strings.TrimSpace(out), "uptime_ns=%d busy_ns=%d segs_in=%d segs_out=%d retransmits=%d mallocs=%d",
		&c.uptime, &c.busy, &c.segsIn, &c.segsOut, &c.retransmits, &c.mallocs); err != nil {
		b.Fatalf("counters %q: %v", out, err)
	}
	return c
}
