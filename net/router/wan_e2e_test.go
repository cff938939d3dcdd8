//go:build linux && !mips && !mipsle

package router_test

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/gowrt/gowrt/config/uci"
	"github.com/gowrt/gowrt/internal/testrouter"
	"github.com/gowrt/gowrt/internal/wantest"
	"github.com/gowrt/gowrt/net/firewall"
	"github.com/gowrt/gowrt/net/router"
)

func TestMain(m *testing.M) { wantest.Main(m) }

// TestRouterWAN: the router's WAN gets a lease from an ISP's dnsmasq; LAN
// hosts get leases from the router with dhclient, resolve names through
// its DNS forwarder, and reach an Internet host through NAT: HTTP (the
// server sees the router's WAN address), ping, UDP, and ICMP errors from
// hops beyond the router (traceroute). From the WAN side no port of the
// router answers, but a forwarded port does.
func TestRouterWAN(t *testing.T) {
	a, b, w := newHost(t, 1), newHost(t, 2), newHost(t, 3)
	far := wantest.New(t, w.dev, 2*time.Minute)
	cfg, err := testrouter.Config()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Board = "test"
	cfg.LAN = []router.Port{{Name: "lan1", NIC: a.nic}, {Name: "lan2", NIC: b.nic}}
	cfg.WAN = &router.Port{Name: "wan", NIC: w.nic}
	r := startRouter(t, cfg)
	far.CheckRouter(t, [2]string{a.dev, b.dev})

	// Release on stop: the ISP's dnsmasq forgets the router's lease.
	mac := w.nic.MACAddress().String()
	if !strings.Contains(far.Leases(), mac) {
		t.Fatalf("dnsmasq's leases lack the router's WAN MAC %s:\n%s", mac, far.Leases())
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); strings.Contains(far.Leases(), mac); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the router stopped without releasing its lease:\n%s", far.Leases())
		}
	}
}

// TestRouterAddInterface: an interface added while the router runs (a VPN
// tunnel's, here a TAP) is masqueraded by its zone at once: the peer
// behind it has no route back to the LAN, so the LAN host's ping only
// comes back if the router rewrote its source.
func TestRouterAddInterface(t *testing.T) {
	a, w, v := newHost(t, 1), newHost(t, 2), newHost(t, 3)
	cfg, err := testrouter.Config()
	if err != nil {
		t.Fatal(err)
	}
	f, err := uci.Parse("firewall", strings.NewReader(firewall.DefaultText+`
config zone
	option name 'vpn'
	list network 'vpn'
	option input 'REJECT'
	option output 'ACCEPT'
	option forward 'REJECT'
	option masq '1'

config forwarding
	option src 'lan'
	option dest 'vpn'
`))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Firewall, err = firewall.Load(f); err != nil {
		t.Fatal(err)
	}
	cfg.LAN = []router.Port{{Name: "lan1", NIC: a.nic}}
	cfg.WAN = &router.Port{Name: "wan", NIC: w.nic}
	r := startRouter(t, cfg)
	a.plug(t, "192.168.1.10/24")
	a.ns.Must(t, "ip", "route", "add", "default", "via", "192.168.1.1")
	w.plug(t, "")
	v.plug(t, "10.8.0.2/24")
	up := r.Events().InterfaceUp.Subscribe(1)
	defer up.Close()
	if err := r.AddInterface("vpn", v.nic, netip.MustParsePrefix("10.8.0.1/24")); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-up.C():
		if ev.Name != "vpn" {
			t.Fatalf("InterfaceUp %q", ev.Name)
		}
	case <-time.After(time.Second):
		t.Fatal("no InterfaceUp event")
	}
	if err := a.ping("10.8.0.2"); err != nil {
		t.Fatalf("LAN → vpn peer through the new interface: %v", err)
	}
	if err := r.AddInterface("vpn", v.nic, netip.MustParsePrefix("10.9.0.1/24")); err == nil {
		t.Fatal("a second interface named vpn was accepted")
	}
}

// TestRouterStaticWAN: with a static WAN address the router routes and
// masquerades at once, without asking the ISP for a lease.
func TestRouterStaticWAN(t *testing.T) {
	a, w := newHost(t, 1), newHost(t, 2)
	far := wantest.New(t, w.dev, 2*time.Minute)
	cfg, err := testrouter.Config()
	if err != nil {
		t.Fatal(err)
	}
	cfg.LAN = []router.Port{{Name: "lan1", NIC: a.nic}}
	cfg.WAN = &router.Port{Name: "wan", NIC: w.nic}
	static := netip.MustParsePrefix("10.99.0.200/24")
	cfg.Uplink = router.Uplink{Proto: "static", Addr: static, Gateway: wantest.ISPAddr.Addr(), DNS: []netip.Addr{wantest.ISPAddr.Addr()}}
	r := startRouter(t, cfg)
	if got := r.WANAddr(); got != static {
		t.Fatalf("WAN address %v, want %v at once", got, static)
	}
	a.plug(t, "192.168.1.10/24")
	a.ns.Must(t, "ip", "route", "add", "default", "via", "192.168.1.1")
	out := a.ns.Must(t, "curl", "-sS", "--max-time", "10", fmt.Sprintf("http://%s:%d/", wantest.HostAddr.Addr(), wantest.HTTPPort))
	if !strings.HasPrefix(out, "peer "+static.Addr().String()+":") {
		t.Fatalf("the Internet host saw %q, want %v", out, static.Addr())
	}
	if out := a.ns.Must(t, "dig", "+short", "+time=3", "@192.168.1.1", wantest.HostName); strings.TrimSpace(out) != wantest.HostAddr.Addr().String() {
		t.Fatalf("dig through the static WAN's DNS: %q", out)
	}
	if l := far.Leases(); strings.Contains(l, w.nic.MACAddress().String()) {
		t.Fatalf("a static WAN asked for a lease:\n%s", l)
	}
}
