// Command natbench runs gowrt's router (net/router, configured as
// internal/testrouter says) on QEMU malta's two pcnets and measures, from
// counters inside the guest, what each frame it forwards costs: the busy
// time of the CPU (the kernel's uptime minus the time its idle loop ran,
// under QEMU -icount shift=0 one nanosecond per instruction) and the heap
// allocations, per frame sent out of the egress port.
//
// With the argument "nat" the second pcnet is the WAN port, with the
// static address 10.99.0.2/24 behind the gateway 10.99.0.1, and the
// measured path is LAN pcnet RX → flow table → NAT rewrite → WAN pcnet TX
// (net/forward's fast path). With "bridge" both pcnets are ports of
// br-lan and the path is pcnet RX → bridge → pcnet TX.
//
// The host decides when traffic flows and opens and closes each window
// with a "start" and a "stop" datagram to UDP ControlPort on the router's
// LAN address; the reply to "stop" is the window's report, also printed
// on the console as a "natbench: mode=" line. Besides the whole window's
// counters, the program samples them every pollInterval of guest time
// and sums apart the intervals in which the CPU never idled (sat_*): the
// cost per frame of a saturated router, which does not depend on how
// the host paced its frames. It runs until the board is reset.
package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/gowrt/gowrt/board"
	"github.com/gowrt/gowrt/internal/testrouter"
	"github.com/gowrt/gowrt/kernel"
	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/net/router"

	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/adapters/gonet"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv4"
)

const (
	// pollInterval is how often the counters are read in a window. Each
	// poll costs a timer wake-up (a few thousand instructions), against
	// the two million instructions of guest time between polls. Short
	// intervals find more stretches in which the host kept the guest
	// busy (a few hundred frames each at a few thousand instructions).
	pollInterval = 2 * time.Millisecond
)

// The WAN side's static configuration (nat mode).
var (
	wanAddr    = netip.MustParsePrefix("10.99.0.2/24")
	wanGateway = netip.MustParseAddr("10.99.0.1")
)

// sample is what one poll reads: nothing here allocates.
type sample struct {
	info     kernel.Info
	tx       gnet.Counters // egress port
	rx       gnet.Counters // ingress port
	bridged  uint64        // frames br-lan forwarded
	fastPath uint64        // frames net/forward sent on its fast path (window edges only: reading it allocates)
}

func main() {
	if len(os.Args) < 2 || (os.Args[1] != "nat" && os.Args[1] != "bridge") {
		fail(fmt.Errorf("usage: natbench nat|bridge"))
	}
	mode := os.Args[1]
	b, err := board.Current()
	if err != nil {
		fail(err)
	}
	ports, err := b.Ports()
	if err != nil {
		fail(err)
	}
	cfg, err := testrouter.Config()
	if err != nil {
		fail(err)
	}
	cfg.Board = b.Name()
	var in, out gnet.CounterReader
	for _, p := range ports {
		rp := router.Port{Name: p.Name, NIC: p.NIC}
		cr, ok := p.NIC.(gnet.CounterReader)
		if !ok {
			fail(fmt.Errorf("port %s keeps no counters", p.Name))
		}
		if p.Role == board.WAN {
			out = cr
			if mode == "nat" {
				cfg.WAN = &rp
				continue
			}
		} else {
			in = cr
		}
		cfg.LAN = append(cfg.LAN, rp)
	}
	if in == nil || out == nil {
		fail(fmt.Errorf("need a LAN and a WAN pcnet, have %d ports", len(ports)))
	}
	if mode == "nat" {
		cfg.Uplink = router.Uplink{Proto: "static", Addr: wanAddr, Gateway: wanGateway}
	}
	r, err := router.New(cfg)
	if err != nil {
		fail(err)
	}
	if err := r.Start(); err != nil {
		fail(err)
	}
	st := r.Status()
	fmt.Printf("natbench: %s router up, LAN %s at %s, WAN %q\n", mode, st.LANAddr, st.BridgeMAC, st.WAN.Addr)
	for _, p := range st.Ports {
		fmt.Printf("natbench: port %s %s %s\n", p.Name, p.Role, p.MAC)
	}

	var prof profile
	if ln, err := gonet.ListenTCP(r.Stack(), tcpip.FullAddress{Port: 6060}, ipv4.ProtocolNumber); err == nil {
		go http.Serve(ln, &prof)
	}

	m := &meter{mode: mode, r: r, in: in, out: out}
	go m.poll()
	ctl, err := gonet.DialUDP(r.Stack(), &tcpip.FullAddress{Port: ControlPort}, nil, ipv4.ProtocolNumber)
	if err != nil {
		fail(err)
	}
	buf := make([]byte, 64)
	for {
		n, from, err := ctl.ReadFrom(buf)
		if err != nil {
			fail(err)
		}
		var reply string
		switch string(buf[:n]) {
		case "start":
			m.start()
			reply = "started"
		case "stop":
			reply = m.stop()
			fmt.Println("natbench: " + reply)
		case "profile-start":
			reply = prof.start()
		case "profile-stop":
			reply = prof.stop()
		default:
			reply = "natbench: unknown command"
		}
		if _, err := ctl.WriteTo([]byte(reply), from); err != nil {
			fail(err)
		}
	}
}

// ControlPort is the UDP port on the router's LAN address the host sends
// "start" and "stop" to, around a burst of frames.
const ControlPort = 5999

// meter measures one window between a start and a stop command.
type meter struct {
	mode    string
	r       *router.Router
	in, out gnet.CounterReader

	mu        sync.Mutex
	measuring bool
	first     sample
	prev      sample
	sat       saturated
	ms        runtime.MemStats
}

// read samples the counters. The frame counters come first and the
// clock last: a frame counted is one whose cost is inside the window.
func (m *meter) read(s *sample) {
	s.tx, s.rx = m.out.Counters(), m.in.Counters()
	s.bridged = m.r.Bridge().Forwarded()
	var err error
	if s.info, err = kernel.ReadInfo(); err != nil {
		fail(err)
	}
}

// start opens a window. The router's Status (which allocates) and the
// allocation count are read before its first sample, and after its last
// one at stop; the polls between allocate nothing, so the count is the
// forwarding's and the firmware's background work's.
func (m *meter) start() {
	m.mu.Lock()
	defer m.mu.Unlock()
	fastPath := m.r.Status().Forward.FastPath
	runtime.ReadMemStats(&m.ms)
	m.read(&m.first)
	m.first.fastPath = fastPath
	m.prev, m.sat, m.measuring = m.first, saturated{}, true
}

// stop closes the window and returns its report.
func (m *meter) stop() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.measuring {
		return "FAIL stop without start"
	}
	var last sample
	m.read(&last)
	mallocs := m.ms.Mallocs
	runtime.ReadMemStats(&m.ms)
	last.fastPath = m.r.Status().Forward.FastPath
	m.measuring = false
	return report(m.mode, &m.first, &last, &m.sat, m.ms.Mallocs-mallocs)
}

// poll samples the counters every pollInterval of guest time and adds
// the intervals in which the CPU never idled to the window's saturated
// figures.
func (m *meter) poll() {
	var cur sample
	for {
		time.Sleep(pollInterval)
		m.mu.Lock()
		if m.measuring {
			m.read(&cur)
			if cur.tx.TxFrames != m.prev.tx.TxFrames {
				m.sat.add(&m.prev, &cur)
			}
			m.prev = cur
		}
		m.mu.Unlock()
	}
}

// saturated sums the poll intervals in which the CPU never idled: the
// guest always had a frame to forward, so their cost per frame is the
// forwarding's alone, without the wake-ups that depend on how the host
// happened to pace its frames.
//
// minPerFrame is the cheapest of those intervals (of at least
// minIntervalFrames frames), in ns per frame: how the host paces its
// frames can only add to the cost (smaller batches per pass over the
// rings), so the cheapest interval is the figure that repeats best.
type saturated struct {
	intervals, frames, busy, interrupts uint64
	minPerFrame                         uint64
}

// minIntervalFrames keeps intervals cut short (the window's first) out of
// the minimum.
const minIntervalFrames = 100

func (s *saturated) add(a, b *sample) {
	if b.info.Idle != a.info.Idle {
		return
	}
	frames := b.tx.TxFrames - a.tx.TxFrames
	busy := b.info.Uptime - a.info.Uptime
	s.intervals++
	s.frames += frames
	s.busy += busy
	s.interrupts += uint64(b.info.Interrupts - a.info.Interrupts)
	if frames >= minIntervalFrames && (s.minPerFrame == 0 || busy/frames < s.minPerFrame) {
		s.minPerFrame = busy / frames
	}
}

// report prints one window as the benchmark parses it: counter deltas,
// busy and idle guest nanoseconds over the whole window, and the
// saturated intervals' share.
func report(mode string, a, b *sample, sat *saturated, mallocs uint64) string {
	frames := b.tx.TxFrames - a.tx.TxFrames
	elapsed := b.info.Uptime - a.info.Uptime
	idle := b.info.Idle - a.info.Idle
	return fmt.Sprintf("mode=%s frames=%d bytes=%d rx_frames=%d rx_drops=%d fast_path=%d bridged=%d "+
		"elapsed_ns=%d idle_ns=%d busy_ns=%d interrupts=%d mallocs=%d "+
		"sat_intervals=%d sat_frames=%d sat_busy_ns=%d sat_interrupts=%d sat_min_ns_per_frame=%d",
		mode, frames, b.tx.TxBytes-a.tx.TxBytes, b.rx.RxFrames-a.rx.RxFrames,
		b.rx.Drops[gnet.DropRxNoRoom]-a.rx.Drops[gnet.DropRxNoRoom],
		b.fastPath-a.fastPath, b.bridged-a.bridged, elapsed, idle, elapsed-idle,
		b.info.Interrupts-a.info.Interrupts, mallocs,
		sat.intervals, sat.frames, sat.busy, sat.interrupts, sat.minPerFrame)
}

// profileHz is the profiling run's sample rate: one sample per million
// instructions under -icount shift=0 (the kernel's shortest
// ITIMER_PROF period).
const profileHz = 1000

// profile is the last CPU profile taken between profile-start and
// profile-stop; it serves it over HTTP.
type profile struct {
	mu      sync.Mutex
	running bool
	buf     bytes.Buffer
}

func (p *profile) start() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.running {
		return "FAIL profile running"
	}
	p.buf.Reset()
	// Set before StartCPUProfile, which keeps a rate already set (and
	// says so on stderr).
	runtime.SetCPUProfileRate(profileHz)
	if err := pprof.StartCPUProfile(&p.buf); err != nil {
		return "FAIL " + err.Error()
	}
	p.running = true
	return "profiling"
}

func (p *profile) stop() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.running {
		return "FAIL no profile running"
	}
	pprof.StopCPUProfile()
	p.running = false
	return fmt.Sprintf("profile of %d bytes", p.buf.Len())
}

func (p *profile) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	w.Write(p.buf.Bytes())
}

func fail(err error) {
	fmt.Println("natbench: FAIL", err)
	os.Exit(1)
}
