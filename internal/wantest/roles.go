//go:build linux

package wantest

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gowrt/gowrt/internal/netns"
)

// Main runs the tests, or, in a test binary started again by this package
// inside a namespace, the server role it was started for.
func Main(m *testing.M) {
	if code, ok := RunRole(); ok {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// RunRole plays the server role the test binary was started again for,
// if it was, and returns its exit code and true; otherwise false. A
// TestMain that does more than Main calls it first.
func RunRole() (int, bool) {
	role := os.Getenv(roleEnv)
	if role == "" {
		return 0, false
	}
	kind, arg, _ := strings.Cut(role, ":")
	var err error
	switch kind {
	case "http":
		err = serveHTTP(arg)
	case "scan":
		err = scan(arg)
	case "ntp":
		err = serveNTP(arg)
	case "browser":
		err = runBrowser(arg)
	case "udpsink":
		err = udpSink(arg)
	default:
		err = fmt.Errorf("unknown role %q", role)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "wantest:", err)
		return 1, true
	}
	return 0, true
}

// serveNTP is an SNTP server (RFC 4330) on UDP port 123 whose clock runs
// ahead of the host's by the duration arg, so that a client that synced
// to it shows it.
func serveNTP(arg string) error {
	ahead, err := time.ParseDuration(arg)
	if err != nil {
		return err
	}
	c, err := net.ListenPacket("udp4", ":123")
	if err != nil {
		return err
	}
	buf := make([]byte, 512)
	for {
		n, peer, err := c.ReadFrom(buf)
		if err != nil {
			return err
		}
		if n < 48 || buf[0]&7 != 3 { // mode 3: client
			continue
		}
		now := ntpTime(time.Now().Add(ahead))
		var r [48]byte
		r[0] = 0<<6 | 4<<3 | 4 // LI 0, VN 4, mode 4 (server)
		r[1] = 2               // stratum 2
		r[2] = buf[2]          // poll
		r[3] = 0xec            // precision 2^-20
		copy(r[12:16], "GWRT")
		copy(r[24:32], buf[40:48]) // originate = the client's transmit
		binary.BigEndian.PutUint64(r[16:], now)
		binary.BigEndian.PutUint64(r[32:], now)
		binary.BigEndian.PutUint64(r[40:], now)
		_, _ = c.WriteTo(r[:], peer)
	}
}

// ntpTime is t as an NTP timestamp: seconds since 1900 (RFC 5905 6) and
// a 32-bit binary fraction.
func ntpTime(t time.Time) uint64 {
	const unixToNTP = 2208988800 // seconds from 1900 to 1970
	sec := uint64(t.Unix()) + unixToNTP
	frac := uint64(t.Nanosecond()) << 32 / 1e9
	return sec<<32 | frac
}

// udpSink prints every datagram that arrives on UDP port arg, one per
// line (a remote syslog server).
func udpSink(port string) error {
	c, err := net.ListenPacket("udp4", ":"+port)
	if err != nil {
		return err
	}
	buf := make([]byte, 2048)
	for {
		n, _, err := c.ReadFrom(buf)
		if err != nil {
			return err
		}
		fmt.Printf("%s\n", bytes.TrimRight(buf[:n], "\n"))
	}
}

// UDPSink starts a UDP sink on port in ns, and returns once it is bound:
// what arrives is written to w, a datagram a line.
func UDPSink(t testing.TB, ns *netns.NS, port int, w io.Writer) {
	t.Helper()
	ns.Start(t, w, "env", fmt.Sprintf("%s=udpsink:%d", roleEnv, port), Self(t))
	ns.WaitListening(t, "udp", port)
}

// serveHTTP answers every request with the peer address it came from.
func serveHTTP(port string) error {
	return http.ListenAndServe(":"+port, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "peer %s\n", r.RemoteAddr)
	}))
}

// Scan probes every TCP port of addr and the router services' UDP ports
// from inside ns and returns what answered: "tcp PORT" for each port that
// accepted a connection and "udp PORT" for each UDP probe answered.
func Scan(t testing.TB, ns *netns.NS, addr string) []string {
	t.Helper()
	out, err := ns.Exec(3*time.Minute, "env", roleEnv+"=scan:"+addr, Self(t))
	if err != nil {
		t.Fatalf("scan %s: %v\n%s", addr, err, out)
	}
	var open []string
	done := false
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, "tcp "), strings.HasPrefix(l, "udp "):
			open = append(open, l)
		case strings.HasPrefix(l, "scanned "):
			done = true
		}
	}
	if !done {
		t.Fatalf("scan %s did not finish:\n%s", addr, out)
	}
	return open
}

// UDP probes: a DNS query (RFC 1035 4.1.1: id 0x6777, RD, one question
// "gowrt." A IN), a BOOTP request (RFC 2131 2, op 1, Ethernet, magic
// cookie, DHCPDISCOVER), an NTP client request (RFC 5905 7.3: LI 0,
// VN 4, mode 3), an SNMPv1 GetRequest for sysDescr.0 with community
// "public" (RFC 1157 4.1.2, BER) and a UPnP SSDP M-SEARCH (UPnP Device
// Architecture 1.1, 1.3.2).
var udpProbes = map[int][]byte{
	53:   {0x67, 0x77, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 5, 'g', 'o', 'w', 'r', 't', 0, 0, 1, 0, 1},
	67:   bootpDiscover(),
	123:  append([]byte{0x23}, make([]byte, 47)...),
	161:  snmpGet(),
	1900: []byte("M-SEARCH * HTTP/1.1\r\nHOST: 239.255.255.250:1900\r\nMAN: \"ssdp:discover\"\r\nMX: 1\r\nST: ssdp:all\r\n\r\n"),
}

// snmpGet is an SNMPv1 GetRequest-PDU (RFC 1157) for 1.3.6.1.2.1.1.1.0.
func snmpGet() []byte {
	oid := []byte{0x06, 0x08, 0x2b, 6, 1, 2, 1, 1, 1, 0}
	varbind := append([]byte{0x30, byte(len(oid) + 2)}, append(oid, 0x05, 0x00)...)
	list := append([]byte{0x30, byte(len(varbind))}, varbind...)
	pdu := append([]byte{0x02, 1, 1, 0x02, 1, 0, 0x02, 1, 0}, list...) // request-id 1, error 0, index 0
	pdu = append([]byte{0xa0, byte(len(pdu))}, pdu...)
	msg := append([]byte{0x02, 1, 0, 0x04, 6, 'p', 'u', 'b', 'l', 'i', 'c'}, pdu...) // version 1 (0), community
	return append([]byte{0x30, byte(len(msg))}, msg...)
}

func bootpDiscover() []byte {
	b := make([]byte, 244)
	b[0], b[1], b[2] = 1, 1, 6
	copy(b[28:], []byte{2, 0, 0, 0, 0, 1})
	copy(b[236:], []byte{99, 130, 83, 99, 53, 1, 1, 255})
	return b
}

// scan connects to every TCP port with bounded concurrency; a router that
// rejects answers each with a reset at once, one that drops makes each
// wait for its timeout.
func scan(addr string) error {
	ports := make(chan int)
	var mu sync.Mutex
	var open []int
	var wg sync.WaitGroup
	for range 256 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := net.Dialer{Timeout: 2 * time.Second}
			for p := range ports {
				c, err := d.Dial("tcp4", net.JoinHostPort(addr, strconv.Itoa(p)))
				if err == nil {
					c.Close()
					mu.Lock()
					open = append(open, p)
					mu.Unlock()
				}
			}
		}()
	}
	for p := 1; p <= 65535; p++ {
		ports <- p
	}
	close(ports)
	wg.Wait()
	for _, p := range open {
		fmt.Printf("tcp %d\n", p)
	}
	for port, probe := range udpProbes {
		if answered(addr, port, probe) {
			fmt.Printf("udp %d\n", port)
		}
	}
	fmt.Println("scanned 65535 tcp ports and", len(udpProbes), "udp services")
	return nil
}

// answered sends probe to addr:port and reports whether anything but an
// ICMP error came back within a second.
func answered(addr string, port int, probe []byte) bool {
	c, err := net.Dial("udp4", net.JoinHostPort(addr, strconv.Itoa(port)))
	if err != nil {
		return false
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	buf := make([]byte, 1500)
	for ctx.Err() == nil {
		_, _ = c.Write(probe)
		_ = c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		n, err := c.Read(buf)
		if err == nil && n > 0 && !bytes.Equal(buf[:n], probe) {
			return true
		}
		var ne net.Error
		if err != nil && !(errors.As(err, &ne) && ne.Timeout()) {
			// ECONNREFUSED: the ICMP port unreachable a REJECT sends.
			time.Sleep(100 * time.Millisecond)
		}
	}
	return false
}
