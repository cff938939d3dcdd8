//go:build linux

// Package wantest builds the far side of a router under test out of real
// Linux peers in network namespaces, and the LAN clients that use it:
//
//	LAN client ns ──(router LAN port)── router ──(WAN port)── ISP ns ── veth ── Internet ns
//	  dhclient                                                  dnsmasq          HTTP server
//	                                                            (DHCP, DNS)      iperf3 -s
//
// The ISP namespace plays a home router's ISP: dnsmasq leases the router's
// WAN an address in 10.99.0.0/24 (gateway and DNS 10.99.0.1) and answers
// DNS for www.example.test, and it routes to the Internet host
// 203.0.113.80 (RFC 2544's benchmarking range) behind it. The Internet host runs an
// HTTP server that answers with the peer address it sees (so a test can
// check the router's masquerading), an iperf3 server and an SNTP server
// whose clock runs three hours ahead.
//
// Servers that need Go code (the HTTP server, the port scanner) are the
// test binary itself, started again inside a namespace: a package that
// uses wantest calls wantest.Main from its TestMain.
package wantest

import (
	"fmt"
	"github.com/gowrt/gowrt/internal/testutil"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gowrt/gowrt/internal/netns"
	"github.com/gowrt/gowrt/internal/testrouter"
)

// roleEnv names the server role a re-started test binary plays.
const roleEnv = "GOWRT_WANTEST_ROLE"

// Addresses of the far side.
var (
	ISPAddr = netip.MustParsePrefix("10.99.0.1/24")
	// The Internet link is in 198.18.0.0/15 (RFC 2544, benchmarking):
	// not an address range DNS rebind protection refuses, as the
	// RFC 1918 and RFC 5737 documentation ranges are.
	HostAddr = netip.MustParsePrefix("198.18.0.80/24")
	ISPHost  = netip.MustParsePrefix("198.18.0.1/24") // the ISP's side of the Internet link
)

// HostName is the name the ISP's DNS server resolves to HostAddr;
// RebindName resolves to a LAN address (a DNS rebinding attack, which
// the router must refuse to pass on).
const (
	HostName   = "www.example.test"
	RebindName = "rebind.example.test"
	RebindAddr = "192.168.1.66"
)

// HTTPPort is the Internet host's HTTP server port.
const HTTPPort = 8000

// Net is the ISP and the Internet host behind it.
type Net struct {
	ISP, Host *netns.NS
	dir       string
	log       *SyncBuffer
}

// New builds the far side, with link (a network device in the test's own
// namespace: the router's WAN cable end) moved into the ISP namespace.
// leaseTime is dnsmasq's lease for the router (at least 2 minutes, as
// dnsmasq enforces).
func New(t testing.TB, link string, leaseTime time.Duration) *Net {
	t.Helper()
	netns.RequireRoot(t)
	n := &Net{ISP: netns.New(t), Host: netns.New(t), dir: t.TempDir(), log: &SyncBuffer{}}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("far side's log:\n%s", n.log.String())
		}
	})
	n.ISP.Adopt(t, link, ISPAddr.String())
	// The Internet link: a veth pair between the ISP and the host.
	isp, host := fmt.Sprintf("wti%d", os.Getpid()%100000), fmt.Sprintf("wth%d", os.Getpid()%100000)
	n.ISP.Must(t, "ip", "link", "add", isp, "type", "veth", "peer", "name", host)
	n.ISP.Must(t, "ip", "link", "set", host, "netns", n.Host.Name)
	n.ISP.Must(t, "ip", "addr", "add", ISPHost.String(), "dev", isp)
	n.ISP.Must(t, "ip", "link", "set", isp, "up")
	n.Host.Must(t, "ip", "addr", "add", HostAddr.String(), "dev", host)
	n.Host.Must(t, "ip", "link", "set", host, "up")
	n.Host.Must(t, "ip", "route", "add", "default", "via", ISPHost.Addr().String())
	n.ISP.Must(t, "sysctl", "-qw", "net.ipv4.ip_forward=1")

	secs := int(leaseTime / time.Second)
	n.ISP.Start(t, n.log, "dnsmasq", "--no-daemon", "--conf-file=/dev/null", "--no-resolv", "--no-hosts",
		"--interface="+link, "--bind-interfaces", "--except-interface=lo",
		"--log-dhcp", "--log-queries",
		"--dhcp-leasefile="+filepath.Join(n.dir, "isp.leases"), "--pid-file="+filepath.Join(n.dir, "isp.pid"),
		fmt.Sprintf("--dhcp-range=10.99.0.50,10.99.0.99,%d", secs),
		"--dhcp-option=option:router,"+ISPAddr.Addr().String(),
		"--dhcp-option=option:dns-server,"+ISPAddr.Addr().String(),
		"--host-record="+HostName+","+HostAddr.Addr().String(),
		"--host-record="+RebindName+","+RebindAddr,
		"--host-record="+NTPName+","+HostAddr.Addr().String(),
		// The Internet's DNS answers only what it knows.
		"--local=/test/")
	n.Host.Start(t, n.log, "env", fmt.Sprintf("%s=http:%d", roleEnv, HTTPPort), Self(t))
	n.Host.Start(t, n.log, "iperf3", "-s", "-p", fmt.Sprint(IperfPort))
	n.Host.Start(t, n.log, "env", fmt.Sprintf("%s=ntp:%v", roleEnv, NTPAhead), Self(t))
	// The servers start in the background; a router with a static WAN
	// is up at once, and its test must not find them still binding.
	n.ISP.WaitListening(t, "udp", 53)
	n.ISP.WaitListening(t, "udp", 67)
	n.Host.WaitListening(t, "tcp", HTTPPort)
	n.Host.WaitListening(t, "tcp", IperfPort)
	n.Host.WaitListening(t, "udp", 123)
	return n
}

// The Internet host is also a time server, NTPName, whose clock runs
// NTPAhead of the host's: a router that synced to it shows it.
const (
	NTPName  = testrouter.NTPServer
	NTPAhead = 3 * time.Hour
)

// IperfPort is the Internet host's iperf3 server port.
const IperfPort = 5201

// Log returns what the far side's servers printed so far.
func (n *Net) Log() string { return n.log.String() }

// Leases returns dnsmasq's lease file (the router's WAN lease).
func (n *Net) Leases() string {
	b, _ := os.ReadFile(filepath.Join(n.dir, "isp.leases"))
	return string(b)
}

// Self is the running test binary, to be started again in a namespace.
func Self(t testing.TB) string {
	p, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// SyncBuffer collects output written by one goroutine (or process) and
// read by another (testutil.SyncBuffer, kept here for the tests that
// already have a wantest.Net).
type SyncBuffer = testutil.SyncBuffer

// Client is a LAN host that gets its address from the router with
// dhclient (isc-dhcp-client).
type Client struct {
	NS   *netns.NS
	Link string
	dir  string
	log  *SyncBuffer
}

// NewClient makes a LAN host on link (moved into a namespace of its own,
// up, without an address).
func NewClient(t testing.TB, link string) *Client {
	t.Helper()
	c := &Client{NS: netns.New(t), Link: link, dir: t.TempDir(), log: &SyncBuffer{}}
	c.NS.Adopt(t, link, "")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("dhclient on %s:\n%s", link, c.log.String())
		}
	})
	return c
}

// dhclientScript applies a lease the way a host would (address, default
// route) and records it, instead of Debian's dhclient-script, which would
// rewrite the machine's /etc/resolv.conf.
const dhclientScript = `#!/bin/sh
case "$reason" in
BOUND|RENEW|REBIND|REBOOT)
	ip addr replace "$new_ip_address/$new_subnet_mask" dev "$interface"
	[ -n "$new_routers" ] && ip route replace default via "${new_routers%% *}"
	echo "$reason $new_ip_address/$new_subnet_mask router=$new_routers dns=$new_domain_name_servers domain=$new_domain_name" >>"@LEASELOG@"
	;;
EXPIRE|FAIL|RELEASE|STOP)
	[ -n "$old_ip_address" ] && ip addr del "$old_ip_address/$old_subnet_mask" dev "$interface"
	echo "$reason $old_ip_address" >>"@LEASELOG@"
	;;
esac
exit 0
`

// DHCP runs dhclient until it holds a lease (it keeps running, renewing,
// until the test ends) and returns the lease's line:
// "BOUND 192.168.1.123/255.255.255.0 router=… dns=… domain=…".
func (c *Client) DHCP(t testing.TB, timeout time.Duration) string {
	t.Helper()
	script := filepath.Join(c.dir, "dhclient-script")
	leases := filepath.Join(c.dir, "leases.log")
	// dhclient runs its script with an environment of its own making.
	if err := os.WriteFile(script, []byte(strings.ReplaceAll(dhclientScript, "@LEASELOG@", leases)), 0o755); err != nil {
		t.Fatal(err)
	}
	c.NS.Start(t, c.log, "dhclient", "-d", "-v", "-4",
		"-sf", script, "-lf", filepath.Join(c.dir, "dhclient.leases"), "-pf", filepath.Join(c.dir, "dhclient.pid"), c.Link)
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(leases)
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "BOUND ") || strings.HasPrefix(l, "REBOOT ") {
				return l
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("dhclient on %s got no lease in %v", c.Link, timeout)
	return ""
}

// Addr returns the address in a lease line from DHCP.
func Addr(line string) netip.Addr {
	f := strings.Fields(line)
	if len(f) < 2 {
		return netip.Addr{}
	}
	a, _, _ := strings.Cut(f[1], "/")
	ip, _ := netip.ParseAddr(a)
	return ip
}

// Switch puts link (a router's single LAN port) on a switch, a Linux
// bridge in a namespace of its own, and returns two more links of that
// switch, left in the test's namespace for LAN clients: how a board with
// one LAN port serves several hosts.
func Switch(t testing.TB, link string) [2]string {
	t.Helper()
	sw := netns.New(t)
	sw.Adopt(t, link, "")
	sw.Must(t, "ip", "link", "add", "br0", "type", "bridge")
	sw.Must(t, "ip", "link", "set", link, "master", "br0")
	var out [2]string
	for i := range out {
		port, peer := fmt.Sprintf("swp%d", i), fmt.Sprintf("wsw%d-%d", os.Getpid()%100000, i)
		sw.Must(t, "ip", "link", "add", port, "type", "veth", "peer", "name", peer)
		sw.Must(t, "ip", "link", "set", port, "master", "br0")
		sw.Must(t, "ip", "link", "set", port, "up")
		// The peer goes back to the test's namespace (pid 1's).
		sw.Must(t, "ip", "link", "set", peer, "netns", "1")
		out[i] = peer
	}
	sw.Must(t, "ip", "link", "set", "br0", "up")
	return out
}
