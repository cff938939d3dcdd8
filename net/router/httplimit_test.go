package router_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/net/nictest"
	"github.com/gowrt/gowrt/net/router"

	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/adapters/gonet"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv4"
	"gvisor.dev/gvisor/pkg/tcpip/stack"
)

// lanClients is a gVisor host on the router's LAN port with addresses
// 192.168.1.50 and up, one per client "machine".
type lanClients struct {
	s *stack.Stack
}

func newLANClients(t *testing.T, limits router.HTTPLimits, sources int) (*router.Router, *lanClients) {
	t.Helper()
	lan, far := nictest.Pair(nictest.Config{MAC: gnet.MAC{2, 0x67, 0x77, 0, 0, 1}},
		nictest.Config{MAC: gnet.MAC{2, 0x67, 0x77, 0, 1, 1}})
	r := startRouter(t, router.Config{Board: "test", LAN: []router.Port{{Name: "lan1", NIC: lan}}, HTTP: limits})
	s, _ := nictest.NewStack(t, far, tcpip.AddrFrom4([4]byte{192, 168, 1, 50}))
	for i := 1; i < sources; i++ {
		if e := s.AddProtocolAddress(1, tcpip.ProtocolAddress{Protocol: ipv4.ProtocolNumber,
			AddressWithPrefix: tcpip.AddressWithPrefix{Address: tcpip.AddrFrom4([4]byte{192, 168, 1, byte(50 + i)}), PrefixLen: 24}},
			stack.AddressProperties{}); e != nil {
			t.Fatal(e)
		}
	}
	return r, &lanClients{s: s}
}

// dial connects to the status page from source 192.168.1.(50+src).
func (c *lanClients) dial(src int) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return gonet.DialTCPWithBind(ctx, c.s,
		tcpip.FullAddress{NIC: 1, Addr: tcpip.AddrFrom4([4]byte{192, 168, 1, byte(50 + src)})},
		tcpip.FullAddress{NIC: 1, Addr: tcpip.AddrFrom4([4]byte{192, 168, 1, 1}), Port: 80}, ipv4.ProtocolNumber)
}

// get sends one keep-alive request for /status.json on conn and reads the
// answer, leaving the connection open.
func get(conn net.Conn) error {
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	defer conn.SetDeadline(time.Time{})
	if _, err := io.WriteString(conn, "GET /status.json HTTP/1.1\r\nHost: 192.168.1.1\r\n\r\n"); err != nil {
		return err
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"board":"test"`) {
		return fmt.Errorf("%s: %s", resp.Status, body)
	}
	return nil
}

// closedByRouter reports whether the router has closed conn.
func closedByRouter(conn net.Conn, wait time.Duration) bool {
	_ = conn.SetReadDeadline(time.Now().Add(wait))
	_, err := conn.Read(make([]byte, 1))
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

type memory struct {
	goroutines int
	heap       uint64
}

func memNow() memory {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return memory{runtime.NumGoroutine(), ms.HeapInuse}
}

// TestHTTPConnectionLimits: two LAN hosts open 400 keep-alive connections
// to the status page, one request each, and hold them. The router keeps
// 8 per host (the default per-source limit) and closes the rest as soon
// as they are accepted, counting them; a third host still gets the page,
// and the router's goroutines and heap grow by what 16 connections cost,
// not 400 (once, every such connection stayed open for good: 2000 of them
// cost 38 to 51 MB). Two more hosts then fill the total limit (32): the
// next connection from anywhere is refused.
func TestHTTPConnectionLimits(t *testing.T) {
	r, c := newLANClients(t, router.HTTPLimits{}, 6)
	if err := withConn(c, 0, get); err != nil { // warm up: ARP, first handshake
		t.Fatal(err)
	}
	base := memNow()
	var held []net.Conn
	defer func() {
		for _, h := range held {
			h.Close()
		}
	}()
	refused := 0
	for i := 0; i < 400; i++ {
		conn, err := c.dial(i % 2)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		if err := get(conn); err != nil {
			conn.Close()
			refused++
			continue
		}
		held = append(held, conn)
	}
	per := router.DefaultHTTPLimits.MaxConnsPerSource
	if len(held) != 2*per || refused != 400-2*per {
		t.Fatalf("%d connections served and held, %d refused; want %d and %d", len(held), refused, 2*per, 400-2*per)
	}
	if err := withConn(c, 2, get); err != nil {
		t.Fatalf("a third host did not get the page: %v", err)
	}
	after := memNow()
	t.Logf("400 connections tried, %d held: goroutines %d → %d, heap in use %d → %d KiB",
		len(held), base.goroutines, after.goroutines, base.heap>>10, after.heap>>10)
	if g := after.goroutines - base.goroutines; g > 2*per+10 {
		t.Fatalf("%d more goroutines with %d connections held", g, len(held))
	}
	if h := int64(after.heap) - int64(base.heap); h > 4<<20 {
		t.Fatalf("heap in use grew by %d KiB with %d connections held", h>>10, len(held))
	}
	// The third host's connection is closed on the client side; the
	// server counts it closed once its read sees the FIN, a moment later.
	st := r.Status()
	for deadline := time.Now().Add(5 * time.Second); st.HTTPConns != 2*per && time.Now().Before(deadline); st = r.Status() {
		time.Sleep(10 * time.Millisecond)
	}
	if st.HTTPConns != 2*per || st.HTTPRejected != uint64(refused) {
		t.Fatalf("status: %d connections open, %d rejected; want %d, %d", st.HTTPConns, st.HTTPRejected, 2*per, refused)
	}
	page := ""
	if err := withConn(c, 2, func(conn net.Conn) error {
		_, _ = io.WriteString(conn, "GET / HTTP/1.1\r\nHost: 192.168.1.1\r\nConnection: close\r\n\r\n")
		b, err := io.ReadAll(conn)
		page = string(b)
		return err
	}); err != nil || !strings.Contains(page, fmt.Sprintf("%d refused", refused)) {
		t.Fatalf("the page does not show the refused connections (%v):\n%s", err, page)
	}

	// Two more hosts fill the total limit; then nobody gets in.
	total := router.DefaultHTTPLimits.MaxConns
	for src := 3; src <= 4; src++ {
		for i := 0; i < per; i++ {
			conn, err := c.dial(src)
			if err != nil {
				t.Fatal(err)
			}
			held = append(held, conn)
			if err := get(conn); err != nil {
				t.Fatalf("host %d connection %d: %v", src, i, err)
			}
		}
	}
	if len(held) != total {
		t.Fatalf("%d held, want the total limit %d", len(held), total)
	}
	if err := withConn(c, 5, get); err == nil {
		t.Fatal("a connection over the total limit was served")
	}
	if st := r.Status(); st.HTTPConns != total || st.HTTPRejected != uint64(refused+1) {
		t.Fatalf("status: %d open, %d rejected; want %d, %d", st.HTTPConns, st.HTTPRejected, total, refused+1)
	}
}

func withConn(c *lanClients, src int, f func(net.Conn) error) error {
	conn, err := c.dial(src)
	if err != nil {
		return err
	}
	defer conn.Close()
	return f(conn)
}

// TestHTTPTimeouts: the router closes a keep-alive connection idle for
// IdleTimeout, and one that never finishes its request headers after
// ReadHeaderTimeout (slowloris); their slots and goroutines come back.
func TestHTTPTimeouts(t *testing.T) {
	const idle, header = 400 * time.Millisecond, 300 * time.Millisecond
	r, c := newLANClients(t, router.HTTPLimits{IdleTimeout: idle, ReadHeaderTimeout: header}, 1)
	if err := withConn(c, 0, get); err != nil {
		t.Fatal(err)
	}
	base := memNow()
	var conns []net.Conn
	for i := 0; i < 4; i++ {
		conn, err := c.dial(0)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conns = append(conns, conn)
		if i == 3 {
			_, _ = io.WriteString(conn, "GET / HTTP/1.1\r\nHost: 192.1") // and nothing more
			continue
		}
		if err := get(conn); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	for r.Status().HTTPConns != 4 {
		if time.Since(start) > header/2 {
			t.Fatalf("%d connections open, want 4", r.Status().HTTPConns)
		}
		time.Sleep(5 * time.Millisecond)
	}
	for i, conn := range conns {
		if !closedByRouter(conn, 10*idle) {
			t.Fatalf("connection %d still open %v after its last request", i, time.Since(start))
		}
	}
	if d := time.Since(start); d < header/2 {
		t.Fatalf("connections closed after %v, before any timeout", d)
	}
	deadline := time.Now().Add(5 * time.Second)
	for r.Status().HTTPConns != 0 || memNow().goroutines > base.goroutines+2 {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections, %d goroutines (%d before) after the timeouts",
				r.Status().HTTPConns, memNow().goroutines, base.goroutines)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if st := r.Status(); st.HTTPRejected != 0 {
		t.Fatalf("%d connections refused: the timeouts are not limits", st.HTTPRejected)
	}
}

func TestHTTPLimitsConfig(t *testing.T) {
	nic := &nullNIC{}
	for name, h := range map[string]router.HTTPLimits{
		"negative timeout": {IdleTimeout: -time.Second},
		"negative limit":   {MaxConns: -1},
	} {
		if _, err := router.New(router.Config{LAN: []router.Port{{Name: "lan1", NIC: nic}}, HTTP: h}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
