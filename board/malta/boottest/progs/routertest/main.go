// Command routertest runs gowrt's router (net/router: br-lan at
// 192.168.1.1/24, WAN DHCP, NAT, firewall, DHCP and DNS servers, the status
// page, configured as internal/testrouter says) on whatever board is
// linked in; on
// MIPS that is QEMU malta through board/malta/eth (its "wan" port, when
// QEMU has a second pcnet, becomes the router's WAN port), plus the TCP sink and
// source of internal/xfer for bulk transfers. It is what
// examples/router does, kept here so the malta boot test does not depend on
// that example. It runs until the board is reset (the test kills QEMU).
package main

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/gowrt/gowrt/board"
	"github.com/gowrt/gowrt/internal/testrouter"
	"github.com/gowrt/gowrt/internal/xfer"
	"github.com/gowrt/gowrt/kernel"
	"github.com/gowrt/gowrt/net/bridge"
	"github.com/gowrt/gowrt/net/httpd"
	"github.com/gowrt/gowrt/net/router"

	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/adapters/gonet"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv4"
	"gvisor.dev/gvisor/pkg/tcpip/transport/tcp"
)

func main() {
	start := time.Now()
	b, err := board.Current()
	if err != nil {
		fail(err)
	}
	ports, err := b.Ports()
	if err != nil {
		fail(err)
	}
	// The end-to-end tests' configuration: OpenWrt's defaults, a static
	// lease and a port forward (internal/testrouter).
	cfg, err := testrouter.Config()
	if err != nil {
		fail(err)
	}
	cfg.Board = b.Name()
	for _, p := range ports {
		rp := router.Port{Name: p.Name, NIC: p.NIC}
		if p.Role == board.WAN && cfg.WAN == nil {
			cfg.WAN = &rp
		} else {
			cfg.LAN = append(cfg.LAN, rp)
		}
	}
	if st, ok := b.(board.Storage); ok { // malta's flash: leases and time survive a reboot
		cfg.Storage = func(name string) (router.Store, error) { return st.Store(name) }
	}
	r, err := router.New(cfg)
	if err != nil {
		fail(err)
	}
	if err := r.Start(); err != nil {
		fail(err)
	}
	st := r.Status()
	var uptime uint64 // since kernel entry: under QEMU -icount, instructions
	if in, err := kernel.ReadInfo(); err == nil {
		uptime = in.Uptime
	}
	fmt.Printf("router: board %s, LAN up at %s after %d ms in main, uptime %d ns\n", st.Board, st.LANAddr, time.Since(start).Milliseconds(), uptime)
	for _, p := range st.Ports {
		fmt.Printf("router: port %s %s %s\n", p.Name, p.Role, p.MAC)
	}
	// Firmware services for bulk TCP tests: a sink and a source (xfer).
	logf := func(f string, a ...any) { fmt.Printf(f+"\n", a...) }
	for _, svc := range []struct {
		port  uint16
		serve func(net.Listener, func(string, ...any)) error
	}{{xfer.SinkPort, xfer.ServeSink}, {xfer.SourcePort, xfer.ServeSource},
		{xfer.DiscardPort, xfer.ServeDiscard}, {xfer.FillPort, xfer.ServeFill}} {
		ln, err := gonet.ListenTCP(r.Stack(), tcpip.FullAddress{Port: svc.port}, ipv4.ProtocolNumber)
		if err != nil {
			fail(err)
		}
		go svc.serve(ln, logf)
	}
	// A CPU profile over the LAN (runtime/pprof works on the gowrt
	// kernel): go tool pprof routertest.elf http://192.168.1.1:6060/debug/pprof/profile
	// The instruction-count benchmark (XferInstructionsMaltaLE) reads busy
	// time and TCP segment counts around each transfer. Served by
	// net/httpd, as the status page is: net/http would bring crypto/tls
	// into the image the 16 MiB board runs.
	debugMux := httpd.HandlerFunc(func(w httpd.ResponseWriter, req *httpd.Request) {
		switch req.Path {
		case "/debug/gowrt/counters":
			in, err := kernel.ReadInfo()
			if err != nil {
				httpd.Error(w, err.Error(), httpd.StatusInternalServerError)
				return
			}
			// Segments are the LAN link's frames: the stack's own
			// counters count a packet of many segments once (cut
			// by the link when sending, merged when receiving).
			t, ls := r.Stack().Stats().TCP, r.LANLinkStats()
			fmt.Fprintf(w, "uptime_ns=%d busy_ns=%d segs_in=%d segs_out=%d retransmits=%d mallocs=%d interrupts=%d\n",
				in.Uptime, in.Uptime-in.Idle, ls.RxFrames.Load(), ls.TxFrames.Load(), t.Retransmits.Value(), mallocs(), in.Interrupts)
		case "/debug/gowrt/balloon":
			// Memory pressure for TestRouterSmallRAM: the heap is
			// filled towards the runtime's memory limit, each page
			// touched, and dropped again, so the runtime must return
			// pages to the kernel near the limit and may return the
			// rest once a collection has freed them.
			n := int(debug.SetMemoryLimit(-1)*balloonPercent/100) - int(runtimeInUse())
			if n > 0 {
				b := make([]byte, n)
				for i := 0; i < len(b); i += 4096 {
					b[i] = 1
				}
				runtime.KeepAlive(b)
			}
			runtime.GC()
			fmt.Fprintf(w, "balloon %d KiB\n", max(n, 0)>>10)
		case "/debug/pprof/profile":
			cpuProfile(w, req)
		default:
			httpd.NotFound(w, req)
		}
	})
	if ln, err := gonet.ListenTCP(r.Stack(), tcpip.FullAddress{Port: 6060}, ipv4.ProtocolNumber); err == nil {
		srv := &httpd.Server{Handler: debugMux, MaxAnswerBytes: maxProfileBytes, ReadHeaderTimeout: 10 * time.Second}
		go srv.Serve(ln)
	}
	var last kernel.Info
	for {
		time.Sleep(2 * time.Second)
		if in, err := kernel.ReadInfo(); err == nil {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			fmt.Printf("ram: %d KiB total, %d KiB used, peak %d KiB, returned %d KiB, heap limit %d KiB; go: heap %d KiB in use, stacks %d KiB, runtime %d KiB mapped less %d KiB released\n",
				in.RAM>>10, in.RAMUsed>>10, in.RAMPeak>>10, in.Returned>>10, debug.SetMemoryLimit(-1)>>10,
				ms.HeapInuse>>10, ms.StackInuse>>10, ms.Sys>>10, ms.HeapReleased>>10)
			fmt.Printf("kernel: %d syscalls, %d traps, %d interrupts, %d switches, %d page faults\n",
				in.Syscalls-last.Syscalls, in.Traps-last.Traps, in.Interrupts-last.Interrupts,
				in.Switches-last.Switches, in.PageFaults-last.PageFaults)
			last = in
		}
		for _, p := range ports {
			if s, ok := p.NIC.(interface{ State() string }); ok {
				fmt.Printf("nic %s: %s\n", p.Name, s.State())
			}
		}
		printStackStats(r)
	}
}

// printStackStats prints the gVisor TCP counters and the bridge's drops:
// with the driver's state above, enough to tell a stuck ring from a stuck
// TCP connection when a transfer stalls.
func printStackStats(r *router.Router) {
	t := r.Stack().Stats().TCP
	fmt.Printf("tcp: segs in %d out %d, retransmits %d (fast %d, slow start %d), timeouts %d, send errors %d, checksum errors %d\n",
		t.ValidSegmentsReceived.Value(), t.SegmentsSent.Value(), t.Retransmits.Value(), t.FastRetransmit.Value(),
		t.SlowStartRetransmits.Value(), t.Timeouts.Value(), t.SegmentSendErrors.Value(), t.ChecksumErrors.Value())
	for _, te := range r.Stack().RegisteredEndpoints() {
		ep, ok := te.(tcpip.Endpoint)
		if !ok {
			continue
		}
		var ti tcpip.TCPInfoOption
		if ep.GetSockOpt(&ti) != nil || ti.State != tcpip.EndpointState(tcp.StateEstablished) {
			continue
		}
		rq, _ := ep.GetSockOptInt(tcpip.ReceiveQueueSizeOption)
		sq, _ := ep.GetSockOptInt(tcpip.SendQueueSizeOption)
		fmt.Printf("tcp conn: rtt %v rto %v cc state %d cwnd %d ssthresh %d, queued rx %d tx %d\n",
			ti.RTT, ti.RTO, ti.CcState, ti.SndCwnd, ti.SndSsthresh, rq, sq)
	}
	br := r.Bridge()
	drops := ""
	for i := range br.Stats.Drops {
		if n := br.Stats.Drops[i].Load(); n != 0 {
			drops += fmt.Sprintf(" %v=%d", bridge.Reason(i), n)
		}
	}
	fmt.Printf("bridge: forwarded %d flooded %d drops:%s\n", br.Forwarded(), br.Flooded(), drops)
}

// maxProfileBytes bounds a CPU profile's answer (gzipped; a 5 s profile
// of a busy router is tens of KiB).
const maxProfileBytes = 1 << 20

// cpuProfile answers /debug/pprof/profile?seconds=N (default 30, as
// net/http/pprof and go tool pprof use) with a CPU profile in pprof's
// format; hz=N (default 100) samples N times a second of CPU time, for
// profiles of a few seconds that still resolve small functions.
func cpuProfile(w httpd.ResponseWriter, req *httpd.Request) {
	secs, hz := 30, 0
	for _, kv := range strings.Split(req.RawQuery, "&") {
		if v, ok := strings.CutPrefix(kv, "seconds="); ok {
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 || n > 300 {
				httpd.Error(w, "seconds: a number from 1 to 300", httpd.StatusBadRequest)
				return
			}
			secs = n
		}
		if v, ok := strings.CutPrefix(kv, "hz="); ok {
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 || n > 10000 {
				httpd.Error(w, "hz: a number from 1 to 10000", httpd.StatusBadRequest)
				return
			}
			hz = n
		}
	}
	if hz > 0 {
		// Set before StartCPUProfile, which keeps a rate already set
		// (and says so on the console).
		runtime.SetCPUProfileRate(hz)
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	if err := pprof.StartCPUProfile(w); err != nil {
		httpd.Error(w, err.Error(), httpd.StatusInternalServerError)
		return
	}
	time.Sleep(time.Duration(secs) * time.Second)
	pprof.StopCPUProfile()
}

// mallocs is the runtime's count of heap allocations so far.
func mallocs() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.Mallocs
}

func fail(err error) {
	fmt.Println("routertest: FAIL", err)
	os.Exit(1)
}

// balloonPercent is how full of the memory limit /debug/gowrt/balloon
// makes the heap: past the 95% where the runtime starts returning pages
// to stay under the limit (runtime/mgcscavenge.go, reduceExtraPercent).
const balloonPercent = 97

// runtimeInUse is the memory the runtime holds (what its memory limit
// counts) less the free heap it retains, which a new allocation reuses
// before it maps more: the kernel chose the limit from the RAM free after
// boot, so filling up to it leaves the kernel its own.
func runtimeInUse() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.Sys - ms.HeapIdle
}
