//go:build linux && !mips && !mipsle

package boottest

import (
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gowrt/gowrt/internal/image"
	"github.com/gowrt/gowrt/internal/netns"
	"github.com/gowrt/gowrt/internal/qemu"
)

// maxWindowTries bounds the windows one measurement may take to find
// enough saturated intervals.
const maxWindowTries = 6

// natbenchControlPort is progs/natbench's ControlPort.
const natbenchControlPort = 5999

// Frame sizes the benchmark forwards (FCS excluded): a full-size
// Ethernet frame and a minimum one.
var benchFrameSizes = []int{1514, 60}

// benchFrames is how many frames one burst sends; the firmware measures
// all but the first poll interval's worth of them.
const benchFrames = 20000

// tapQueue is the TAPs' queue length (txqueuelen, which sizes the ring
// of frames waiting for QEMU in Linux drivers/net/tun.c; 500 by default).
const tapQueue = 10000

// inFlight bounds the frames sent into the ingress TAP and not yet seen
// on the egress one: far more than the pcnet RX ring (128) holds, so the
// guest does not run dry when the host's sender is descheduled for a
// while (2000 frames are some 25 million instructions, tens of
// milliseconds of QEMU), and fewer than tapQueue, so the host drops none.
const inFlight = 2000

// Addresses of the NAT setup: the LAN host, the router's static WAN
// address and the gateway (the WAN TAP), and a destination beyond the
// gateway that the namespace drops (it does not forward).
var (
	benchLANHost = net.IPv4(192, 168, 1, 100).To4()
	benchDst     = net.IPv4(203, 0, 113, 1).To4()
)

// BenchmarkNATInstructions measures, on QEMU malta under -icount
// shift=0,sleep=off (qemu.Deterministic: one guest nanosecond per
// instruction), the instructions the firmware spends per frame it
// forwards, for UDP frames of benchFrameSizes:
//
//   - nat: LAN pcnet RX → br-lan → net/forward's flow table → NAT rewrite
//     → WAN pcnet TX (the router of progs/natbench with a static WAN
//     address, the WAN TAP as its gateway);
//   - bridge: pcnet RX → br-lan → pcnet TX, both pcnets ports of br-lan,
//     frames between the two TAPs' MACs.
//
// After a flow set-up and an unmeasured warm-up burst, the host opens a
// window (a "start" datagram to the firmware), injects benchFrames
// frames with a packet socket on the ingress TAP, at most inFlight ahead
// of what the egress TAP has seen, and closes the window ("stop"). The
// firmware counts the frames its egress pcnet sent and the kernel's busy
// time (uptime minus the idle loop's time: interrupts, the kernel and
// every goroutine included). Metrics:
//
//   - instructions/frame: busy instructions per frame over the poll
//     intervals (2 ms of guest time) in which the guest never idled,
//     i.e. forwarding at full load;
//   - min-instructions/frame: the cheapest such interval;
//   - window-instructions/frame: over the whole window, with the wake-ups
//     of the partly idle intervals (it depends on the host's pacing);
//   - mallocs/frame: runtime.MemStats.Mallocs over the whole window
//     (the control datagrams and the firmware's background work
//     included) per frame;
//   - interrupts/frame (saturated intervals), idle-% (whole window) and
//     saturated-% (the frames the first figure covers).
//
// Run it as
//
//	go test ./board/malta/boottest -run '^$' -bench NATInstructions -benchtime 1x
func BenchmarkNATInstructions(b *testing.B) {
	for i, board := range boards {
		for _, mode := range []string{"nat", "bridge"} {
			b.Run(board+"/"+mode, func(b *testing.B) { natBench(b, board, i, mode) })
		}
	}
}

func natBench(b *testing.B, board string, i int, mode string) {
	ns := netns.New(b)
	// No IPv6 on the TAPs: the namespace would send router and
	// neighbour solicitations into the measurement.
	ns.Must(b, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1")
	img, err := images.Build(board, "./board/malta/boottest/progs/natbench")
	if err != nil {
		b.Fatal(err)
	}
	lanTap, wanTap := fmt.Sprintf("gnbl%d", i), fmt.Sprintf("gnbw%d", i)
	for _, tap := range []string{lanTap, wanTap} {
		ns.Must(b, "ip", "tuntap", "add", "dev", tap, "mode", "tap")
		ns.Must(b, "ip", "link", "set", tap, "txqueuelen", strconv.Itoa(tapQueue), "up")
	}
	// The LAN host's address carries the control datagrams; in nat
	// mode the WAN TAP is the gateway.
	ns.Must(b, "ip", "addr", "add", "192.168.1.100/24", "dev", lanTap)
	if mode == "nat" {
		ns.Must(b, "ip", "addr", "add", "10.99.0.1/24", "dev", wanTap)
	}
	bd, _ := image.LookupBoard(board)
	v := startVM(b, ns, "natbench: port wan ", qemu.Machine{Board: bd, Kernel: img, MemMiB: 32, Deterministic: true,
		Append: mode,
		NIC:    "tap,ifname=" + lanTap + ",script=no,downscript=no",
		WAN:    "tap,ifname=" + wanTap + ",script=no,downscript=no"})
	defer v.stop()
	m := natbenchUpRE.FindStringSubmatch(v.console.String())
	if m == nil {
		b.Fatalf("no router-up line:\n%s", v.console.String())
	}
	routerMAC, err := net.ParseMAC(m[1])
	if err != nil {
		b.Fatal(err)
	}

	s := newInjector(b, ns, lanTap, wanTap)
	defer s.close()
	dstMAC := routerMAC
	if mode == "bridge" {
		// br-lan learns the far TAP's MAC from a frame it sends.
		dstMAC = s.egressMAC
		s.announce(b)
	}
	// The first frames set up the flow (conntrack, the gateway's ARP,
	// frames held meanwhile), one at a time; then a burst warms the
	// caches, unmeasured.
	frame := udpFrame(benchFrameSizes[0], dstMAC, s.ingressMAC)
	for range 10 {
		s.burst(b, frame, 1)
		time.Sleep(20 * time.Millisecond)
	}
	s.burst(b, frame, benchFrames/10)
	if dir := os.Getenv("GOWRT_NATBENCH_PROFILE"); dir != "" {
		// GOWRT_NATBENCH_PROFILE_SIZE picks the frame size (default 1514).
		pf := frame
		if n, err := strconv.Atoi(os.Getenv("GOWRT_NATBENCH_PROFILE_SIZE")); err == nil && n >= 60 && n <= 1514 {
			pf = udpFrame(n, dstMAC, s.ingressMAC)
		}
		natProfile(b, ns, s, filepath.Join(dir, fmt.Sprintf("%s-%s-%d.pprof", board, mode, len(pf))), pf)
	}
	for _, size := range benchFrameSizes {
		b.Run(strconv.Itoa(size), func(b *testing.B) {
			var sum natReport
			for range b.N {
				var r natReport
				// A host busy with other work may fail to keep a fast
				// guest saturated for a whole window: try again.
				for try := 0; ; try++ {
					s.control(b, "start")
					start := time.Now()
					s.burst(b, udpFrame(size, dstMAC, s.ingressMAC), benchFrames)
					r = parseReport(b, s.control(b, "stop"))
					b.Logf("%s: %d frames in %v: %s", mode, benchFrames, time.Since(start).Round(time.Millisecond), r.line)
					if r.satFrames >= benchFrames/10 || try == maxWindowTries-1 {
						break
					}
				}
				if r.bytes != r.frames*uint64(size) {
					b.Fatalf("egress frames of %d bytes on average, sent %d", r.bytes/max(r.frames, 1), size)
				}
				// Counters read a moment apart differ by the frames
				// in flight between them.
				counted := r.bridged
				if mode == "nat" {
					counted = r.fastPath
				}
				if diff := max(counted, r.frames) - min(counted, r.frames); diff > r.frames/100 {
					b.Fatalf("%d frames sent out, %d of them through the %s path", r.frames, counted, mode)
				}
				// Frames beyond the pcnet's RX ring are dropped by
				// QEMU while the guest is behind, so the window holds
				// fewer than were sent; the figures need enough of
				// them at full load.
				if r.satFrames < benchFrames/10 {
					b.Fatalf("window holds %d of %d frames, %d of them in intervals without idle: the host did not keep the guest busy",
						r.frames, benchFrames, r.satFrames)
				}
				sum.add(r)
			}
			f := float64(sum.frames)
			b.ReportMetric(float64(sum.satBusy)/float64(sum.satFrames), "instructions/frame")
			b.ReportMetric(float64(sum.satMin), "min-instructions/frame")
			b.ReportMetric(float64(sum.busy)/f, "window-instructions/frame")
			b.ReportMetric(float64(sum.mallocs)/f, "mallocs/frame")
			b.ReportMetric(float64(sum.satInterrupts)/float64(sum.satFrames), "interrupts/frame")
			b.ReportMetric(100*float64(sum.idle)/float64(sum.elapsed), "idle-%")
			b.ReportMetric(100*float64(sum.satFrames)/f, "saturated-%")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// natProfile takes a CPU profile of the firmware (progs/natbench's
// profile-start and profile-stop) over profileBursts bursts of frame
// (GOWRT_NATBENCH_PROFILE_BURSTS, default 5: some 350 samples), and
// fetches it over the LAN into file: with -icount its samples count
// instructions. The profiler's signals cost instructions of their own,
// so the profiling run is separate from the measured windows.
func natProfile(b *testing.B, ns *netns.NS, s *injector, file string, frame []byte) {
	profileBursts := 5
	if n, err := strconv.Atoi(os.Getenv("GOWRT_NATBENCH_PROFILE_BURSTS")); err == nil && n > 0 {
		profileBursts = n
	}
	if r := s.control(b, "profile-start"); r != "profiling" {
		b.Fatalf("profile-start: %s", r)
	}
	for range profileBursts {
		s.burst(b, frame, benchFrames)
	}
	b.Logf("profile-stop: %s", s.control(b, "profile-stop"))
	ns.Must(b, "curl", "-sS", "--max-time", "60", "-o", file, "http://192.168.1.1:6060/natbench.pprof")
	b.Logf("profile in %s", file)
}

var (
	natbenchUpRE     = regexp.MustCompile(`natbench: \w+ router up, LAN \S+ at (\S+),`)
	natbenchReportRE = regexp.MustCompile(`^mode=\w+ frames=(\d+) bytes=(\d+) rx_frames=\d+ rx_drops=\d+ fast_path=(\d+) bridged=(\d+) elapsed_ns=(\d+) idle_ns=(\d+) busy_ns=(\d+) interrupts=(\d+) mallocs=(\d+) sat_intervals=\d+ sat_frames=(\d+) sat_busy_ns=(\d+) sat_interrupts=(\d+) sat_min_ns_per_frame=(\d+)`)
)

// natReport is one "natbench: mode=" line.
type natReport struct {
	line                                     string
	frames, bytes, fastPath, bridged         uint64
	elapsed, idle, busy, interrupts, mallocs uint64
	satFrames, satBusy, satInterrupts        uint64 // poll intervals without idle
	satMin                                   uint64 // the cheapest of them, per frame
}

func (s *natReport) add(r natReport) {
	s.frames += r.frames
	s.elapsed += r.elapsed
	s.idle += r.idle
	s.busy += r.busy
	s.interrupts += r.interrupts
	s.mallocs += r.mallocs
	s.satFrames += r.satFrames
	s.satBusy += r.satBusy
	s.satInterrupts += r.satInterrupts
	if s.satMin == 0 || r.satMin < s.satMin {
		s.satMin = r.satMin
	}
}

// parseReport parses the firmware's report of a window.
func parseReport(b *testing.B, line string) natReport {
	b.Helper()
	m := natbenchReportRE.FindStringSubmatch(line)
	if m == nil {
		b.Fatalf("firmware report: %q", line)
	}
	var n [13]uint64
	for i := range n {
		n[i], _ = strconv.ParseUint(m[i+1], 10, 64)
	}
	return natReport{line: m[0], frames: n[0], bytes: n[1], fastPath: n[2], bridged: n[3],
		elapsed: n[4], idle: n[5], busy: n[6], interrupts: n[7], mallocs: n[8],
		satFrames: n[9], satBusy: n[10], satInterrupts: n[11], satMin: n[12]}
}

// injector sends frames into the ingress TAP and counts the frames on
// the egress one, with packet sockets opened inside the namespace, and
// talks to the firmware's control port.
type injector struct {
	in, out               int // packet sockets
	ctl                   net.PacketConn
	inIdx, outIdx         int
	ingressMAC, egressMAC net.HardwareAddr
}

func newInjector(b *testing.B, ns *netns.NS, ingress, egress string) *injector {
	s := &injector{}
	errc := make(chan error, 1)
	// Sockets belong to the namespace of the thread that opens them; the
	// thread is left locked, so it ends with the goroutine instead of
	// going back to the runtime in the namespace.
	go func() {
		runtime.LockOSThread()
		errc <- s.open(ns, ingress, egress)
	}()
	if err := <-errc; err != nil {
		b.Fatal(err)
	}
	return s
}

func (s *injector) open(ns *netns.NS, ingress, egress string) error {
	f, err := os.Open("/run/netns/" + ns.Name)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("setns: %w", err)
	}
	inIf, err := net.InterfaceByName(ingress)
	if err != nil {
		return err
	}
	outIf, err := net.InterfaceByName(egress)
	if err != nil {
		return err
	}
	s.inIdx, s.outIdx, s.ingressMAC, s.egressMAC = inIf.Index, outIf.Index, inIf.HardwareAddr, outIf.HardwareAddr
	// Protocol 0: the sending socket receives nothing. It bypasses the
	// TAP's qdisc (Linux net/packet/af_packet.c packet_direct_xmit),
	// which halves the host's cost per frame: a guest that forwards in
	// a few thousand instructions outruns a slower sender and idles.
	if s.in, err = unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, 0); err != nil {
		return err
	}
	if err := unix.SetsockoptInt(s.in, unix.SOL_PACKET, unix.PACKET_QDISC_BYPASS, 1); err != nil {
		return err
	}
	// The counting socket sees every frame on the egress TAP; its
	// PACKET_STATISTICS count frames whether or not its small buffer
	// kept them (Linux net/packet/af_packet.c packet_getsockopt).
	if s.out, err = unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, int(htons(unix.ETH_P_ALL))); err != nil {
		return err
	}
	if err := unix.Bind(s.out, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: outIf.Index}); err != nil {
		return err
	}
	if err := unix.SetsockoptInt(s.out, unix.SOL_SOCKET, unix.SO_RCVBUF, 4096); err != nil {
		return err
	}
	s.seen() // reset
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM, 0)
	if err != nil {
		return err
	}
	if err := unix.Bind(fd, &unix.SockaddrInet4{}); err != nil {
		unix.Close(fd)
		return err
	}
	ctlFile := os.NewFile(uintptr(fd), "control")
	defer ctlFile.Close()
	s.ctl, err = net.FilePacketConn(ctlFile)
	return err
}

// control sends a command to the firmware and returns its reply.
func (s *injector) control(b *testing.B, cmd string) string {
	b.Helper()
	to := &net.UDPAddr{IP: net.IPv4(192, 168, 1, 1), Port: natbenchControlPort}
	buf := make([]byte, 1024)
	for try := 0; try < 10; try++ {
		if _, err := s.ctl.WriteTo([]byte(cmd), to); err != nil {
			b.Fatal(err)
		}
		s.ctl.SetReadDeadline(time.Now().Add(2 * time.Second))
		n, _, err := s.ctl.ReadFrom(buf)
		if err == nil {
			return string(buf[:n])
		}
	}
	b.Fatalf("no reply to %q from the firmware", cmd)
	return ""
}

func (s *injector) close() {
	s.ctl.Close()
	unix.Close(s.in)
	unix.Close(s.out)
}

// seen returns the frames the egress TAP carried since the last call.
func (s *injector) seen() uint64 {
	st, err := unix.GetsockoptTpacketStats(s.out, unix.SOL_PACKET, unix.PACKET_STATISTICS)
	if err != nil {
		return 0
	}
	return uint64(st.Packets) // received plus dropped
}

func (s *injector) send(b *testing.B, ifIdx int, frame []byte) {
	to := &unix.SockaddrLinklayer{Ifindex: ifIdx, Halen: 6}
	copy(to.Addr[:], frame[:6])
	for {
		err := unix.Sendto(s.in, frame, 0, to)
		if err == nil {
			return
		}
		if err != unix.ENOBUFS && err != unix.EAGAIN {
			b.Fatalf("sending into the TAP: %v", err)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// burst sends n copies of frame into the ingress TAP, never more than
// inFlight ahead of the egress TAP, and waits until they came out (or
// stopped coming: frames the router dropped are the report's business).
// It sends sendBatch frames per system call (sendmmsg) and looks at the
// egress count once per batch: a sender that made two system calls per
// frame managed some 65 k frames a second on a fast host, fewer than
// QEMU forwards, and the guest idled through every measurement window.
func (s *injector) burst(b *testing.B, frame []byte, n int) {
	b.Helper()
	var sent, out uint64
	stalled := time.Now()
	for sent < uint64(n) {
		if o := s.seen(); o != 0 {
			out += o
			stalled = time.Now()
		}
		room := inFlight - int(sent-min(out, sent))
		if room < sendBatch {
			if time.Since(stalled) > 100*time.Millisecond {
				// Nothing came out for a while: frames were lost
				// (the pcnet's ring overflowed); stop waiting for
				// them.
				out, stalled = sent-inFlight/2, time.Now()
			}
			time.Sleep(50 * time.Microsecond)
			continue
		}
		sent += uint64(s.sendMany(b, frame, min(sendBatch, n-int(sent))))
	}
	for last, idle := out, 0; out < sent && idle < 10; time.Sleep(5 * time.Millisecond) {
		out += s.seen()
		if out == last {
			idle++
		}
		last = out
	}
}

// sendBatch is how many frames burst hands the kernel per sendmmsg.
const sendBatch = 32

// sendMany sends up to k copies of frame into the ingress TAP with one
// sendmmsg(2) and returns how many the kernel took (at least one: it
// waits while the TAP's queue is full).
func (s *injector) sendMany(b *testing.B, frame []byte, k int) int {
	to := unix.RawSockaddrLinklayer{Family: unix.AF_PACKET, Ifindex: int32(s.inIdx), Halen: 6}
	copy(to.Addr[:], frame[:6])
	iov := unix.Iovec{Base: &frame[0]}
	iov.SetLen(len(frame))
	var msgs [sendBatch]unix.Mmsghdr
	for i := range msgs[:k] {
		h := &msgs[i].Hdr
		h.Name, h.Namelen = (*byte)(unsafe.Pointer(&to)), unix.SizeofSockaddrLinklayer
		h.Iov = &iov
		h.SetIovlen(1)
	}
	for {
		r, _, e := unix.Syscall6(unix.SYS_SENDMMSG, uintptr(s.in), uintptr(unsafe.Pointer(&msgs[0])), uintptr(k), 0, 0, 0)
		if e == 0 && r > 0 {
			return int(r)
		}
		if e != unix.ENOBUFS && e != unix.EAGAIN && e != 0 {
			b.Fatalf("sending into the TAP: %v", e)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// announce sends one frame from the egress TAP so that br-lan learns its
// MAC: a broadcast of the IEEE local experimental EtherType (IEEE
// 802-2014 §9.2.2).
func (s *injector) announce(b *testing.B) {
	frame := make([]byte, 60)
	copy(frame, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	copy(frame[6:], s.egressMAC)
	binary.BigEndian.PutUint16(frame[12:], 0x88b5)
	s.send(b, s.outIdx, frame)
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// udpFrame builds an Ethernet frame of size bytes (FCS excluded) carrying
// a UDP datagram from the LAN host to benchDst, with valid IPv4 and UDP
// checksums (RFC 791, RFC 768).
func udpFrame(size int, dst, src net.HardwareAddr) []byte {
	const ethLen, ipLen, udpLen = 14, 20, 8
	f := make([]byte, size)
	copy(f[0:], dst)
	copy(f[6:], src)
	binary.BigEndian.PutUint16(f[12:], 0x0800)
	ip := f[ethLen:]
	total := size - ethLen
	ip[0] = 0x45
	binary.BigEndian.PutUint16(ip[2:], uint16(total))
	ip[8] = 64 // TTL
	ip[9] = 17 // UDP
	copy(ip[12:], benchLANHost)
	copy(ip[16:], benchDst)
	binary.BigEndian.PutUint16(ip[10:], ^onesSum(0, ip[:ipLen]))
	udp := ip[ipLen:total]
	binary.BigEndian.PutUint16(udp[0:], 40000)
	binary.BigEndian.PutUint16(udp[2:], 9) // discard
	binary.BigEndian.PutUint16(udp[4:], uint16(len(udp)))
	for i := udpLen; i < len(udp); i++ {
		udp[i] = byte(i)
	}
	// Pseudo-header: addresses, protocol, UDP length.
	sum := onesSum(0, ip[12:20])
	sum = onesSum(sum, []byte{0, 17, byte(len(udp) >> 8), byte(len(udp))})
	c := ^onesSum(sum, udp)
	if c == 0 {
		c = 0xffff
	}
	binary.BigEndian.PutUint16(udp[6:], c)
	return f
}

// onesSum adds b to the ones' complement sum (RFC 1071).
func onesSum(sum uint16, b []byte) uint16 {
	s := uint32(sum)
	for i := 0; i+1 < len(b); i += 2 {
		s += uint32(b[i])<<8 | uint32(b[i+1])
	}
	if len(b)%2 == 1 {
		s += uint32(b[len(b)-1]) << 8
	}
	for s > 0xffff {
		s = s&0xffff + s>>16
	}
	return uint16(s)
}
