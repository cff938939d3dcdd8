//go:build linux && !mips && !mipsle

package boottest

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gowrt/gowrt/internal/wantest"
	"github.com/gowrt/gowrt/internal/xfer"
)

// smallRAMMiB is the RAM TestRouterSmallRAM boots the router in: issue
// 18's 16 MiB board, the RAM of the smallest routers OpenWrt still
// supports (the "4/32" warning's lower neighbour, 8/64 aside).
const smallRAMMiB = 16

// heldConns is how many TCP connections the test keeps open at once
// through the router.
const heldConns = 200

// TestRouterSmallRAM boots the router (progs/routertest) at -m smallRAMMiB
// on both byte orders, cabled to an ISP (dnsmasq) and an Internet host on
// its WAN, and checks that it does its job there:
//   - a LAN host gets a DHCP lease (dhclient), the status page, and an
//     answer from the router's DNS forwarder (dig) for a name the ISP
//     serves;
//   - 50 MB each way through the router's own TCP stack (its sink and
//     source, SHA-256 checked);
//   - heldConns connections from the LAN host to the Internet host,
//     through NAT, open at once (each sends 1 KiB and gets its SHA-256
//     back at the end), with the status page still answering and showing
//     them in the connection table.
//
// Then it fills the router's heap to its memory limit and drops the
// filling (routertest's /debug/gowrt/balloon): the load alone no longer
// reaches the limit on every run, since the stack's segment offload and
// coalescing hold less memory per transfer. It checks that the kernel got
// heap pages back from the runtime after that peak (Info.Returned) and
// that RAM in use fell below the peak. It logs RAM in use at idle and at
// peak.
//
// Connections through the router are what a router holds by the hundred;
// its own services take few, each behind connection limits
// (router.HTTPLimits), so the many held connections go through NAT.
func TestRouterSmallRAM(t *testing.T) {
	for i, board := range boards {
		t.Run(board, func(t *testing.T) { routerSmallRAM(t, board, 20+i) })
	}
}

func routerSmallRAM(t *testing.T, board string, i int) {
	lanTap, wanTap, out := bootOnTAPsMem(t, board, i, "./board/malta/boottest/progs/routertest", smallRAMMiB)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	far := wantest.New(t, wanTap, 2*time.Minute)
	sinkLog := &wantest.SyncBuffer{}
	far.Host.Start(t, sinkLog, "env", "GOWRT_SINK_LISTEN="+net.JoinHostPort("", strconv.Itoa(xfer.SinkPort)), exe)
	far.Host.WaitListening(t, "tcp", xfer.SinkPort)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("Internet host's sink:\n%s", sinkLog.String())
		}
	})
	lan := wantest.Switch(t, lanTap)
	c := wantest.NewClient(t, lan[0])
	lease := c.DHCP(t, 30*time.Second)
	t.Logf("lease: %s", lease)
	if !wantest.Addr(lease).IsValid() {
		t.Fatalf("no address in the lease %q", lease)
	}
	page := c.NS.Must(t, "curl", "-sS", "--max-time", "10", "http://192.168.1.1/status.json")
	if !strings.Contains(page, `"board":"malta"`) && !strings.Contains(page, `"board": "malta"`) {
		t.Fatalf("status page:\n%s", page)
	}
	wan := wantest.WaitWAN(t, c, 60*time.Second)
	t.Logf("WAN address %s", wan)
	// DNS through the router's forwarder: a name only the ISP knows.
	if out := c.NS.Must(t, "dig", "+short", "+time=3", "+tries=2", "@192.168.1.1", wantest.HostName); strings.TrimSpace(out) != wantest.HostAddr.Addr().String() {
		t.Fatalf("dig %s through the router: %q", wantest.HostName, out)
	}
	idle := waitRAM(t, out, 1)
	t.Logf("%s at -m %d, idle after boot: %s", board, smallRAMMiB, idle.line)

	res, err := c.NS.Exec(150*time.Second, "env", "GOWRT_XFER_HOST=192.168.1.1",
		fmt.Sprintf("GOWRT_XFER_BYTES=%d", xferBytes), exe)
	if err != nil || !strings.Contains(res, "xfer ok") {
		t.Fatalf("transfer client: %v\n%s", err, res)
	}
	t.Log(strings.TrimSpace(res))
	res, err = c.NS.Exec(120*time.Second, "env", "GOWRT_CONNS_HOST="+wantest.HostAddr.Addr().String(),
		"GOWRT_CONNS_ROUTER=192.168.1.1", fmt.Sprintf("GOWRT_CONNS_N=%d", heldConns), exe)
	if err != nil || !strings.Contains(res, "conns ok") {
		t.Fatalf("connections client: %v\n%s", err, res)
	}
	t.Log(strings.TrimSpace(res))

	if out := c.NS.Must(t, "curl", "-sS", "--max-time", "60", "http://192.168.1.1:6060/debug/gowrt/balloon"); !strings.HasPrefix(out, "balloon ") {
		t.Fatalf("balloon: %q", out)
	} else {
		t.Log(strings.TrimSpace(out))
	}

	// After the load: the peak, then (the router idle again) RAM given
	// back. The runtime's scavenger returns pages in the background, down
	// to a margin over the heap goal the last collection set. A load that
	// stayed under the memory limit may leave that goal high until the
	// next collection, which an idle program gets from the runtime's
	// forced collection every two minutes (forcegcperiod, runtime/proc.go):
	// so wait up to 150 s.
	n := len(ramReports(out.String()))
	after := waitRAM(t, out, n+1)
	deadline := time.Now().Add(150 * time.Second)
	for (after.returned <= idle.returned || after.used >= after.peak) && time.Now().Before(deadline) {
		n = len(ramReports(out.String()))
		after = waitRAM(t, out, n+1)
	}
	t.Logf("%s at -m %d, after the load: %s", board, smallRAMMiB, after.line)
	t.Logf("%s RAM in use: idle %d KiB, peak %d KiB, idle after the load %d KiB; returned to the kernel %d KiB",
		board, idle.used, after.peak, after.used, after.returned)
	if after.returned <= idle.returned {
		t.Errorf("the kernel got no pages back under the load: %s", after.line)
	}
	if after.used >= after.peak {
		t.Errorf("RAM in use stayed at the peak: %s", after.line)
	}
	page = c.NS.Must(t, "curl", "-sS", "--max-time", "10", "http://192.168.1.1/status.json")
	if !strings.Contains(page, "malta") {
		t.Fatalf("status page after the load:\n%s", page)
	}
}

// ramReport is one of routertest's "ram:" lines (sizes in KiB).
type ramReport struct {
	line                        string
	total, used, peak, returned int
}

var ramLine = regexp.MustCompile(`^ram: (\d+) KiB total, (\d+) KiB used, peak (\d+) KiB, returned (\d+) KiB`)

func ramReports(console string) []ramReport {
	var rs []ramReport
	for _, l := range strings.Split(console, "\n") {
		m := ramLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		r := ramReport{line: l}
		r.total, _ = strconv.Atoi(m[1])
		r.used, _ = strconv.Atoi(m[2])
		r.peak, _ = strconv.Atoi(m[3])
		r.returned, _ = strconv.Atoi(m[4])
		rs = append(rs, r)
	}
	return rs
}

// waitRAM waits for the n-th "ram:" report (routertest prints one every
// 2 s) and returns it.
func waitRAM(t *testing.T, out *consoleLog, n int) ramReport {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if rs := ramReports(out.String()); len(rs) >= n {
			return rs[n-1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no RAM report %d from the router", n)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// connsClient is the helper the small-RAM test runs in its LAN host:
// GOWRT_CONNS_N connections to the sink at GOWRT_CONNS_HOST, all open at
// once, each having sent 1 KiB; with all of them held, the router's status
// page (at GOWRT_CONNS_ROUTER) must answer and count at least that many
// connections in its table; then each is half-closed and must get the
// SHA-256 of what it sent, as the sink answers every connection.
func connsClient() (int, bool) {
	host := os.Getenv("GOWRT_CONNS_HOST")
	if host == "" {
		return 0, false
	}
	n, _ := strconv.Atoi(os.Getenv("GOWRT_CONNS_N"))
	if err := holdConns(host, os.Getenv("GOWRT_CONNS_ROUTER"), n); err != nil {
		fmt.Println("conns:", err)
		return 1, true
	}
	return 0, true
}

func holdConns(host, router string, n int) error {
	payload := make([]byte, 1024)
	if _, err := io.ReadFull(xfer.Stream(), payload); err != nil {
		return err
	}
	sum := sha256.Sum256(payload)
	want := sum[:]
	conns := make([]*net.TCPConn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	addr := net.JoinHostPort(host, strconv.Itoa(xfer.SinkPort))
	for i := 0; i < n; i++ {
		c, err := net.DialTimeout("tcp", addr, 10*time.Second)
		if err != nil {
			return fmt.Errorf("connection %d: %w", i, err)
		}
		conns = append(conns, c.(*net.TCPConn))
		c.SetDeadline(time.Now().Add(60 * time.Second))
		if _, err := c.Write(payload); err != nil {
			return fmt.Errorf("connection %d: write: %w", i, err)
		}
	}
	hc := &http.Client{Timeout: 10 * time.Second}
	resp, err := hc.Get("http://" + router + "/status.json")
	if err != nil {
		return fmt.Errorf("status page with %d connections open: %w", n, err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status page with %d connections open: %s, %v", n, resp.Status, err)
	}
	var st struct {
		Conntrack struct {
			Conns int `json:"conns"`
		} `json:"conntrack"`
	}
	if err := json.Unmarshal(body, &st); err != nil {
		return fmt.Errorf("status page: %w", err)
	}
	if st.Conntrack.Conns < n {
		return fmt.Errorf("the router tracks %d connections with %d open through it", st.Conntrack.Conns, n)
	}
	for i, c := range conns {
		if err := c.CloseWrite(); err != nil {
			return fmt.Errorf("connection %d: half-close: %w", i, err)
		}
	}
	for i, c := range conns {
		got, err := io.ReadAll(c)
		if err != nil {
			return fmt.Errorf("connection %d: reading the sink's hash: %w", i, err)
		}
		if string(got) != string(want) {
			return fmt.Errorf("connection %d: sink hash %x, want %x", i, got, want)
		}
	}
	fmt.Printf("conns ok: %d connections held at once through the router, which tracked %d; status page %d bytes with all open\n",
		n, st.Conntrack.Conns, len(body))
	return nil
}

// sinkServer is the helper the small-RAM test runs on its Internet host:
// internal/xfer's sink on GOWRT_SINK_LISTEN, until the test ends.
func sinkServer() (int, bool) {
	addr := os.Getenv("GOWRT_SINK_LISTEN")
	if addr == "" {
		return 0, false
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Println("sink:", err)
		return 1, true
	}
	fmt.Println("sink: listening on", ln.Addr())
	err = xfer.ServeSink(ln, func(string, ...any) {})
	fmt.Println("sink:", err)
	return 1, true
}
