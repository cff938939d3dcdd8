//go:build linux && !mips && !mipsle

package router_test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/gowrt/gowrt/config/uci"
	"github.com/gowrt/gowrt/internal/wantest"
	"github.com/gowrt/gowrt/net/dhcp/dhcpd"
	"github.com/gowrt/gowrt/net/firewall"
	"github.com/gowrt/gowrt/net/router"
)

func TestMain(m *testing.M) { wantest.Main(m) }

// portForward opens TCP 8080 on the WAN to the LAN host with the static
// lease, port 8000 (where a test HTTP server listens).
const portForward = `
config redirect
	option name 'Test-Forward'
	option src 'wan'
	option src_dport '8080'
	option dest 'lan'
	option dest_ip '192.168.1.150'
	option dest_port '8000'
	option proto 'tcp'
	option target 'DNAT'
`

// firewallWithForward is fw4's defaults plus portForward.
func firewallWithForward(t testing.TB) *firewall.Config {
	t.Helper()
	f, err := uci.Parse("firewall", strings.NewReader(firewall.DefaultText+portForward))
	if err != nil {
		t.Fatal(err)
	}
	c, err := firewall.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// staticMAC is the first LAN client's MAC, which has a static lease.
const staticMAC = "02:67:77:00:01:50"

// TestRouterWAN: the router's WAN gets a lease from an ISP's dnsmasq; LAN
// hosts get leases from the router with dhclient, resolve names through
// its DNS forwarder, and reach an Internet host through NAT: HTTP (the
// server sees the router's WAN address), ping, UDP, and ICMP errors from
// hops beyond the router (traceroute). From the WAN side no port of the
// router answers, but a forwarded port does.
func TestRouterWAN(t *testing.T) {
	a, b, w := newHost(t, 1), newHost(t, 2), newHost(t, 3)
	far := wantest.New(t, w.dev, 2*time.Minute)
	mac, err := net.ParseMAC(staticMAC)
	if err != nil {
		t.Fatal(err)
	}
	r := startRouter(t, router.Config{Board: "test",
		LAN:        []router.Port{{Name: "lan1", NIC: a.nic}, {Name: "lan2", NIC: b.nic}},
		WAN:        &router.Port{Name: "wan", NIC: w.nic},
		Firewall:   firewallWithForward(t),
		DHCP:       router.DHCPServer{Static: []dhcpd.StaticLease{{MAC: mac, IP: netip.MustParseAddr("192.168.1.150"), Hostname: "static"}}},
		NTPServers: []string{},
	})
	wanAddr := waitWAN(t, r, 30*time.Second)
	if !wantest.ISPAddr.Contains(wanAddr) {
		t.Fatalf("WAN address %v is not from the ISP's range", wanAddr)
	}

	c1 := wantest.NewClient(t, a.dev)
	c1.NS.Must(t, "ip", "link", "set", a.dev, "address", staticMAC)
	l1 := c1.DHCP(t, 30*time.Second)
	if got := wantest.Addr(l1).String(); got != "192.168.1.150" {
		t.Fatalf("static lease: got %q", l1)
	}
	for _, want := range []string{"router=192.168.1.1", "dns=192.168.1.1", "domain=lan", "/255.255.255.0"} {
		if !strings.Contains(l1, want) {
			t.Errorf("lease %q lacks %q", l1, want)
		}
	}
	c2 := wantest.NewClient(t, b.dev)
	l2 := c2.DHCP(t, 30*time.Second)
	a2 := wantest.Addr(l2)
	if a2 == wantest.Addr(l1) || a2.As4()[3] < 100 || a2.As4()[3] > 249 {
		t.Fatalf("second client's lease %q: want another address in .100-.249", l2)
	}

	// DNS through the router's forwarder: a name the ISP serves, and the
	// DHCP clients' own names in .lan.
	if out := c1.NS.Must(t, "dig", "+time=3", "+tries=2", "@192.168.1.1", wantest.HostName); !strings.Contains(out, "\t"+wantest.HostAddr.Addr().String()) {
		js, _ := json.MarshalIndent(r.Status(), "", "  ")
		t.Fatalf("dig %s:\n%s\nstatus: %s", wantest.HostName, out, js)
	}
	if out := c2.NS.Must(t, "dig", "+short", "+time=3", "@192.168.1.1", "static.lan"); strings.TrimSpace(out) != "192.168.1.150" {
		t.Fatalf("dig static.lan: %q", out)
	}
	// Rebind protection: a public name resolving to a LAN address.
	if out := c2.NS.Must(t, "dig", "+time=3", "@192.168.1.1", wantest.RebindName); !strings.Contains(out, "status: REFUSED") || strings.Contains(out, wantest.RebindAddr) {
		t.Fatalf("dig %s (rebind):\n%s", wantest.RebindName, out)
	}

	// HTTP through NAT: the server sees the router's WAN address.
	host := wantest.HostAddr.Addr().String()
	out := c1.NS.Must(t, "curl", "-sS", "--max-time", "10", fmt.Sprintf("http://%s:%d/", host, wantest.HTTPPort))
	if !strings.HasPrefix(out, "peer "+wanAddr.String()+":") {
		t.Fatalf("the Internet host saw %q, want the router's WAN address %v", out, wanAddr)
	}
	if err := pingFrom(c2, host); err != nil {
		t.Fatal(err)
	}
	// UDP through NAT: ask the ISP's DNS server directly.
	if out := c2.NS.Must(t, "dig", "+short", "+time=3", "@"+wantest.ISPAddr.Addr().String(), wantest.HostName); strings.TrimSpace(out) != host {
		t.Fatalf("dig @ISP: %q", out)
	}
	// ICMP errors through NAT: hop 1 is the router itself (TTL
	// exceeded), hop 2 the ISP (its time-exceeded translated back), hop 3
	// the host (its port unreachable translated back).
	tr := c1.NS.Must(t, "traceroute", "-n", "-q", "1", "-w", "3", "-m", "4", host)
	hops := traceHops(tr)
	want := []string{"192.168.1.1", wantest.ISPAddr.Addr().String(), host}
	if len(hops) != 3 || hops[0] != want[0] || hops[1] != want[1] || hops[2] != want[2] {
		t.Fatalf("traceroute: hops %v, want %v:\n%s", hops, want, tr)
	}

	// From the WAN: nothing answers but the forwarded port.
	c1.NS.Start(t, nil, "env", "GOWRT_WANTEST_ROLE=http:8000", wantest.Self(t))
	time.Sleep(300 * time.Millisecond)
	open := wantest.Scan(t, far.ISP, wanAddr.String())
	if len(open) != 1 || open[0] != "tcp 8080" {
		t.Fatalf("from the WAN, open: %v (want only the forwarded tcp 8080)", open)
	}
	out = far.ISP.Must(t, "curl", "-sS", "--max-time", "10", fmt.Sprintf("http://%s:8080/", wanAddr))
	if !strings.HasPrefix(out, "peer "+wantest.ISPAddr.Addr().String()+":") {
		t.Fatalf("port forward: the LAN server saw %q", out)
	}

	// The status page shows the WAN, the leases and the connection table.
	js := c1.NS.Must(t, "curl", "-sS", "--max-time", "10", "http://192.168.1.1/status.json")
	var st router.Status
	if err := json.Unmarshal([]byte(js), &st); err != nil {
		t.Fatalf("status.json: %v\n%s", err, js)
	}
	if st.WAN.Addr != wanAddr.String()+"/24" || len(st.Leases) != 2 || st.Conntrack.Max == 0 || st.Conntrack.Created == 0 {
		t.Fatalf("status.json: %s", js)
	}
}

// waitWAN waits until the router's WAN has an address.
func waitWAN(t testing.TB, r *router.Router, timeout time.Duration) netip.Addr {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if a := r.WANAddr(); a.IsValid() {
			return a.Addr()
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the WAN got no address in %v", timeout)
	return netip.Addr{}
}

func pingFrom(c *wantest.Client, dst string) error {
	out, err := c.NS.Exec(15*time.Second, "ping", "-c", "2", "-i", "0.2", "-W", "2", dst)
	if err != nil {
		return fmt.Errorf("ping %s: %v\n%s", dst, err, out)
	}
	return nil
}

// traceHops returns the address answering each hop of traceroute -n -q 1.
func traceHops(out string) []string {
	var hops []string
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && f[0] != "traceroute" {
			hops = append(hops, f[1])
		}
	}
	return hops
}
