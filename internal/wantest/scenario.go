//go:build linux

package wantest

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/gowrt/gowrt/internal/testrouter"
)

// status is what CheckRouter reads from the router's /status.json.
type status struct {
	WAN struct {
		Addr string `json:"addr"`
	} `json:"wan"`
	Leases    []json.RawMessage `json:"dhcp_leases"`
	Conntrack struct {
		Max     int    `json:"max"`
		Created uint64 `json:"created"`
	} `json:"conntrack"`
	Forwarding struct {
		FastPath uint64 `json:"fast_path"`
	} `json:"forwarding"`
	Time struct {
		Now    time.Time `json:"now"`
		Synced bool      `json:"synced"`
	} `json:"time"`
}

// WaitWAN polls the router's status page from ns until its WAN has an
// address, and returns it.
func WaitWAN(t testing.TB, c *Client, timeout time.Duration) netip.Addr {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last string
	for time.Now().Before(deadline) {
		js, err := c.NS.Exec(5*time.Second, "curl", "-sS", "--max-time", "2", "http://192.168.1.1/status.json")
		last = js
		var st status
		if err == nil && json.Unmarshal([]byte(js), &st) == nil && st.WAN.Addr != "" {
			p, err := netip.ParsePrefix(st.WAN.Addr)
			if err != nil {
				t.Fatalf("status.json: WAN address %q: %v", st.WAN.Addr, err)
			}
			return p.Addr()
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("the WAN got no address in %v; status.json: %s", timeout, last)
	return netip.Addr{}
}

// CheckRouter runs the router's whole job against real Linux peers, the
// router being cabled to n (its WAN) and to lan (two LAN links in the
// test's namespace, moved into client namespaces of their own):
//
//   - the WAN gets a lease from the ISP's dnsmasq;
//   - LAN clients get leases with dhclient: the static one, a second one
//     from the pool, with router, DNS and domain "lan";
//   - DNS through the router's forwarder: a name the ISP serves, a
//     client's name in .lan, a rebinding answer refused;
//   - NAT: HTTP to the Internet host, which sees the router's WAN
//     address; ping, also with 3000-byte (fragmented) echoes; UDP (DNS straight to the ISP); ICMP errors from
//     beyond the router (traceroute: the router, the ISP, the host);
//   - from the WAN: a scan of every TCP port and the DNS, DHCP and NTP
//     ports finds only the forwarded port, which reaches the LAN host;
//   - time: the router resolves the far side's SNTP server through its
//     own forwarder once the WAN is up and sets its clock to it (three
//     hours ahead of the host's);
//   - the status page shows the WAN address, both leases, the
//     connection table and fast-path forwarding.
//
// It returns the WAN address and the two clients for further checks.
func (n *Net) CheckRouter(t testing.TB, lan [2]string) (netip.Addr, [2]*Client) {
	t.Helper()
	c1 := NewClient(t, lan[0])
	c1.NS.Must(t, "ip", "link", "set", lan[0], "address", testrouter.StaticMAC)
	l1 := c1.DHCP(t, 30*time.Second)
	if got := Addr(l1).String(); got != testrouter.StaticIP {
		t.Fatalf("static lease: got %q", l1)
	}
	for _, want := range []string{"router=192.168.1.1", "dns=192.168.1.1", "domain=lan", "/255.255.255.0"} {
		if !strings.Contains(l1, want) {
			t.Errorf("lease %q lacks %q", l1, want)
		}
	}
	wanAddr := WaitWAN(t, c1, 60*time.Second)
	if !ISPAddr.Contains(wanAddr) {
		t.Fatalf("WAN address %v is not from the ISP's range", wanAddr)
	}
	c2 := NewClient(t, lan[1])
	l2 := c2.DHCP(t, 30*time.Second)
	a2 := Addr(l2)
	if a2 == Addr(l1) || a2.As4()[3] < 100 || a2.As4()[3] > 249 {
		t.Fatalf("second client's lease %q: want another address in .100-.249", l2)
	}

	// DNS through the router's forwarder: a name the ISP serves, and the
	// DHCP clients' own names in .lan.
	if out := c1.NS.Must(t, "dig", "+time=3", "+tries=2", "@192.168.1.1", HostName); !strings.Contains(out, "\t"+HostAddr.Addr().String()) {
		js, _ := c1.NS.Exec(10*time.Second, "curl", "-sS", "--max-time", "5", "http://192.168.1.1/status.json")
		t.Fatalf("dig %s:\n%s\nstatus: %s", HostName, out, js)
	}
	if out := c2.NS.Must(t, "dig", "+short", "+time=3", "@192.168.1.1", "static.lan"); strings.TrimSpace(out) != testrouter.StaticIP {
		t.Fatalf("dig static.lan: %q", out)
	}
	if out := c2.NS.Must(t, "dig", "+short", "+time=3", "@192.168.1.1", "-x", testrouter.StaticIP); strings.TrimSpace(out) != testrouter.StaticName+".lan." {
		t.Fatalf("dig -x %s: %q", testrouter.StaticIP, out)
	}
	// Rebind protection: a public name resolving to a LAN address.
	if out := c2.NS.Must(t, "dig", "+time=3", "@192.168.1.1", RebindName); !strings.Contains(out, "status: REFUSED") || strings.Contains(out, RebindAddr) {
		t.Fatalf("dig %s (rebind):\n%s", RebindName, out)
	}

	// HTTP through NAT: the server sees the router's WAN address.
	host := HostAddr.Addr().String()
	out := c1.NS.Must(t, "curl", "-sS", "--max-time", "10", fmt.Sprintf("http://%s:%d/", host, HTTPPort))
	if !strings.HasPrefix(out, "peer "+wanAddr.String()+":") {
		t.Fatalf("the Internet host saw %q, want the router's WAN address %v", out, wanAddr)
	}
	if err := pingFrom(c2, host); err != nil {
		t.Fatal(err)
	}
	// Fragments through NAT: a 3000-byte echo leaves and returns in
	// three fragments each way.
	if out, err := c2.NS.Exec(15*time.Second, "ping", "-c", "2", "-i", "0.2", "-W", "2", "-s", "3000", host); err != nil {
		t.Fatalf("fragmented ping %s: %v\n%s", host, err, out)
	}
	// UDP through NAT: ask the ISP's DNS server directly.
	if out := c2.NS.Must(t, "dig", "+short", "+time=3", "@"+ISPAddr.Addr().String(), HostName); strings.TrimSpace(out) != host {
		t.Fatalf("dig @ISP: %q", out)
	}
	// ICMP errors through NAT: hop 1 is the router itself (TTL
	// exceeded), hop 2 the ISP (its time-exceeded translated back), hop 3
	// the host (its port unreachable translated back).
	tr := c1.NS.Must(t, "traceroute", "-n", "-q", "1", "-w", "3", "-m", "4", host)
	hops := traceHops(tr)
	want := []string{"192.168.1.1", ISPAddr.Addr().String(), host}
	if len(hops) != 3 || hops[0] != want[0] || hops[1] != want[1] || hops[2] != want[2] {
		t.Fatalf("traceroute: hops %v, want %v:\n%s", hops, want, tr)
	}

	// From the WAN: nothing answers but the forwarded port.
	c1.NS.Start(t, nil, "env", roleEnv+"=http:8000", Self(t))
	c1.NS.WaitListening(t, "tcp", 8000)
	open := Scan(t, n.ISP, wanAddr.String())
	if len(open) != 1 || open[0] != "tcp 8080" {
		t.Fatalf("from the WAN, open: %v (want only the forwarded tcp 8080)", open)
	}
	out = n.ISP.Must(t, "curl", "-sS", "--max-time", "10", fmt.Sprintf("http://%s:8080/", wanAddr))
	if !strings.HasPrefix(out, "peer "+ISPAddr.Addr().String()+":") {
		t.Fatalf("port forward: the LAN server saw %q", out)
	}

	// The status page shows the WAN, the leases and the connection table.
	js := c1.NS.Must(t, "curl", "-sS", "--max-time", "10", "http://192.168.1.1/status.json")
	var st status
	if err := json.Unmarshal([]byte(js), &st); err != nil {
		t.Fatalf("status.json: %v\n%s", err, js)
	}
	if st.WAN.Addr != wanAddr.String()+"/24" || len(st.Leases) != 2 || st.Conntrack.Max == 0 ||
		st.Conntrack.Created == 0 || st.Forwarding.FastPath == 0 {
		t.Fatalf("status.json: %s", js)
	}
	// Time: after WAN up the router resolved the far side's time server
	// through its own DNS forwarder and set its clock to it.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		js := c1.NS.Must(t, "curl", "-sS", "--max-time", "10", "http://192.168.1.1/status.json")
		if err := json.Unmarshal([]byte(js), &st); err != nil {
			t.Fatalf("status.json: %v\n%s", err, js)
		}
		if st.Time.Synced {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the router's clock did not sync to %s: %s", NTPName, js)
		}
	}
	if d := st.Time.Now.Sub(time.Now().Add(NTPAhead)); d < -time.Minute || d > time.Minute {
		t.Fatalf("the router's clock is %v, want the time server's %v (%v off)", st.Time.Now, time.Now().Add(NTPAhead), d)
	}
	page := c1.NS.Must(t, "curl", "-sS", "--max-time", "10", "http://192.168.1.1/")
	for _, want := range []string{"<td>" + testrouter.StaticName + "</td><td>" + testrouter.StaticIP + "</td>",
		"dhcp " + wanAddr.String() + "/24 via " + ISPAddr.Addr().String(), "on the fast path"} {
		if !strings.Contains(page, want) {
			t.Fatalf("status page lacks %q:\n%s", want, page)
		}
	}
	return wanAddr, [2]*Client{c1, c2}
}

func pingFrom(c *Client, dst string) error {
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
