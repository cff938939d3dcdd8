//go:build linux && !mips && !mipsle

package dhcpc

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gowrt/gowrt/internal/netns"
	"github.com/gowrt/gowrt/net/dhcp/ethudp"
)

// inNetns runs f on a thread switched into ns; sockets made there stay
// in ns after the thread switches back.
func inNetns(t *testing.T, ns *netns.NS, f func() error) {
	t.Helper()
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			errc <- err
			return
		}
		defer unix.Close(orig)
		target, err := unix.Open("/var/run/netns/"+ns.Name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			errc <- err
			return
		}
		defer unix.Close(target)
		if err := unix.Setns(target, unix.CLONE_NEWNET); err != nil {
			errc <- err
			return
		}
		ferr := f()
		if err := unix.Setns(orig, unix.CLONE_NEWNET); err != nil {
			errc <- err // the thread stays locked and dies with the goroutine
			return
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

// packetLink is the test's stand-in for the firmware's forwarding layer:
// an AF_PACKET socket on one interface, passing every received IPv4/UDP
// frame to port 68 to an ethudp.Conn and sending the Conn's frames.
func packetLink(t *testing.T, ns *netns.NS, ifname string) *ethudp.Conn {
	var fd int
	var ifi *net.Interface
	inNetns(t, ns, func() error {
		var err error
		if ifi, err = net.InterfaceByName(ifname); err != nil {
			return err
		}
		fd, err = unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, int(htons(unix.ETH_P_ALL)))
		if err != nil {
			return err
		}
		return unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: ifi.Index})
	})
	// veth hands frames from the other namespace over with the UDP
	// checksum left for "hardware" to fill in (CHECKSUM_PARTIAL); the
	// auxiliary data says so, and the reader completes it as a NIC would
	// before the frame is on a wire.
	if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_AUXDATA, 1); err != nil {
		t.Fatal(err)
	}
	tv := unix.NsecToTimeval((100 * time.Millisecond).Nanoseconds())
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		t.Fatal(err)
	}
	conn := ethudp.New(ethudp.Config{MAC: [6]byte(ifi.HardwareAddr), Port: 68, Send: func(f []byte) error {
		_, err := unix.Write(fd, f)
		return err
	}})
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 2048)
		oob := make([]byte, 256)
		for !stop.Load() {
			n, oobn, _, from, err := unix.Recvmsg(fd, buf, oob, 0)
			if err != nil {
				continue
			}
			if ll, ok := from.(*unix.SockaddrLinklayer); ok && ll.Pkttype == unix.PACKET_OUTGOING {
				continue
			}
			f := buf[:n]
			if partialChecksum(oob[:oobn]) {
				completeUDPChecksum(f)
			}
			// What the forwarding layer hands the client: IPv4, UDP, port 68.
			if n >= 42 && binary.BigEndian.Uint16(f[12:14]) == 0x0800 && f[23] == 17 {
				ihl := int(f[14]&15) * 4
				if n >= 14+ihl+4 && binary.BigEndian.Uint16(f[14+ihl+2:]) == 68 {
					conn.Deliver(f)
				}
			}
		}
	}()
	t.Cleanup(func() {
		stop.Store(true)
		<-done
		unix.Close(fd)
	})
	return conn
}

// lockedLog collects a child's output while the test reads it.
type lockedLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// partialChecksum reports whether the packet's auxiliary data says its
// checksum is not yet computed (TP_STATUS_CSUMNOTREADY).
func partialChecksum(oob []byte) bool {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return false
	}
	for _, m := range msgs {
		if m.Header.Level == unix.SOL_PACKET && m.Header.Type == unix.PACKET_AUXDATA && len(m.Data) >= 4 {
			status := binary.NativeEndian.Uint32(m.Data[0:4]) // tpacket_auxdata.tp_status
			return status&unix.TP_STATUS_CSUMNOTREADY != 0
		}
	}
	return false
}

// completeUDPChecksum computes the UDP checksum of an Ethernet/IPv4/UDP
// frame (RFC 768), as a NIC's checksum offload would.
func completeUDPChecksum(f []byte) {
	if len(f) < 34 || binary.BigEndian.Uint16(f[12:14]) != 0x0800 || f[23] != 17 {
		return
	}
	ihl := int(f[14]&15) * 4
	if len(f) < 14+ihl+8 {
		return
	}
	udp := f[14+ihl:]
	ulen := int(binary.BigEndian.Uint16(udp[4:6]))
	if ulen < 8 || ulen > len(udp) {
		return
	}
	udp = udp[:ulen]
	udp[6], udp[7] = 0, 0
	var sum uint64
	add := func(b []byte) {
		for i := 0; i+1 < len(b); i += 2 {
			sum += uint64(b[i])<<8 | uint64(b[i+1])
		}
		if len(b)%2 == 1 {
			sum += uint64(b[len(b)-1]) << 8
		}
	}
	add(f[14+12 : 14+20]) // source and destination addresses
	sum += 17 + uint64(ulen)
	add(udp)
	for sum > 0xffff {
		sum = sum>>16 + sum&0xffff
	}
	c := ^uint16(sum)
	if c == 0 {
		c = 0xffff
	}
	binary.BigEndian.PutUint16(udp[6:8], c)
}

// TestInteropDnsmasq runs the client, over ethudp on an AF_PACKET socket,
// against dnsmasq in another namespace: bind, renew at dnsmasq's T1,
// release (dnsmasq's lease file loses the entry).
func TestInteropDnsmasq(t *testing.T) {
	srvNS, cliNS := netns.New(t), netns.New(t)
	srvNS.Must(t, "ip", "link", "add", "vs", "type", "veth", "peer", "name", "vc", "netns", cliNS.Name)
	srvNS.Must(t, "ip", "addr", "add", "192.168.77.1/24", "dev", "vs")
	srvNS.Must(t, "ip", "link", "set", "vs", "up")
	cliNS.Must(t, "ip", "link", "set", "vc", "up")

	dir := t.TempDir()
	leases := filepath.Join(dir, "leases")
	dnsmasq := exec.Command("ip", "netns", "exec", srvNS.Name, "/usr/sbin/dnsmasq", "--no-daemon", "--conf-file=/dev/null",
		"--port=0", "--user=root", "--interface=vs", "--bind-interfaces", "--log-dhcp",
		"--pid-file="+filepath.Join(dir, "pid"), "--dhcp-leasefile="+leases,
		"--dhcp-range=192.168.77.100,192.168.77.150,255.255.255.0,2m",
		"--dhcp-option=option:router,192.168.77.1", "--dhcp-option=option:dns-server,192.168.77.53,192.168.77.54",
		"--dhcp-option=option:domain-name,isp.test",
		"--dhcp-option=option:T1,3", "--dhcp-option=option:T2,100")
	log := &lockedLog{}
	dnsmasq.Stdout, dnsmasq.Stderr = log, log
	if err := dnsmasq.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		dnsmasq.Process.Signal(os.Interrupt)
		dnsmasq.Wait()
		if t.Failed() {
			t.Logf("dnsmasq:\n%s", log.String())
		}
	})

	conn := packetLink(t, cliNS, "vc")
	mac := conn.LocalMAC()
	c, err := New(Config{HWAddr: net.HardwareAddr(mac[:]), Hostname: "gowrt-wan", Conn: conn,
		Timeout: 500 * time.Millisecond, Retries: 3, BackoffMin: time.Second, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	evc := make(chan Event, 10)
	done := make(chan error, 1)
	go func() {
		done <- c.Run(ctx, func(ev Event) {
			// Configure the interface as the firmware's stack would, so
			// the kernel in the client namespace answers ARP for the
			// lease (dnsmasq unicasts renewal ACKs to ciaddr).
			switch ev.Kind {
			case Bound:
				cliNS.Exec(5*time.Second, "ip", "addr", "add", ev.Lease.Addr.String(), "dev", "vc")
			case Lost, Released:
				cliNS.Exec(5*time.Second, "ip", "addr", "flush", "dev", "vc")
			}
			evc <- ev
		})
	}()
	defer func() {
		cancel()
		<-done
	}()
	next := func(want EventKind, within time.Duration) Event {
		t.Helper()
		select {
		case ev := <-evc:
			if ev.Kind != want {
				t.Fatalf("event %v %+v, want %v", ev.Kind, ev.Lease, want)
			}
			return ev
		case <-time.After(within):
			t.Fatalf("no %v event within %v", want, within)
		}
		return Event{}
	}

	defer func() { t.Logf("client conn: %+v", conn.Stats()) }()
	b := next(Bound, 20*time.Second)
	l := b.Lease
	lo, hi := netip.MustParseAddr("192.168.77.100"), netip.MustParseAddr("192.168.77.150")
	if a := l.Addr.Addr(); a.Less(lo) || hi.Less(a) || l.Addr.Bits() != 24 {
		t.Fatalf("address %v outside dnsmasq's range", l.Addr)
	}
	if l.Router != netip.MustParseAddr("192.168.77.1") || l.Server != netip.MustParseAddr("192.168.77.1") ||
		len(l.DNS) != 2 || l.DNS[0] != netip.MustParseAddr("192.168.77.53") || l.DNS[1] != netip.MustParseAddr("192.168.77.54") ||
		l.Domain != "isp.test" || l.Duration != 2*time.Minute || l.T1 != 3*time.Second || l.T2 != 100*time.Second {
		t.Fatalf("lease %+v", l)
	}
	macStr := net.HardwareAddr(mac[:]).String()
	if data, _ := os.ReadFile(leases); !strings.Contains(string(data), macStr) || !strings.Contains(string(data), l.Addr.Addr().String()) {
		t.Fatalf("dnsmasq's lease file lacks %s %v:\n%s", macStr, l.Addr.Addr(), data)
	}

	// dnsmasq's T1 is 3 s: a unicast renewal, same parameters.
	r := next(Renewed, 15*time.Second)
	if r.Lease.Addr != l.Addr || !r.Lease.Obtained.After(l.Obtained) || r.Lease.Obtained.Sub(l.Obtained) < 3*time.Second {
		t.Fatalf("renewed %+v after %+v", r.Lease, l)
	}
	// dnsmasq logs the request before it answers, but its log reaches
	// us through a pipe and a goroutine: allow it a moment.
	if !eventually(5*time.Second, func() bool { return strings.Contains(log.String(), "DHCPREQUEST(vs) "+l.Addr.Addr().String()) }) {
		t.Fatalf("dnsmasq saw no renewal request:\n%s", log.String())
	}

	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v", err)
	}
	done <- nil
	// Drain a renewal that may have raced with the cancel, then Released.
	for ev := range evc {
		if ev.Kind == Released {
			break
		}
		if ev.Kind != Renewed {
			t.Fatalf("event %v before Released", ev.Kind)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		data, _ := os.ReadFile(leases)
		if !strings.Contains(string(data), macStr) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("dnsmasq keeps the lease after DHCPRELEASE:\n%s\nlog:\n%s", data, log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !eventually(5*time.Second, func() bool { return strings.Contains(log.String(), "DHCPRELEASE(vs) "+l.Addr.Addr().String()) }) {
		t.Fatalf("dnsmasq logged no release:\n%s", log.String())
	}
}

// eventually polls cond until it holds or d has passed.
func eventually(d time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(d); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}
