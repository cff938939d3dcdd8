//go:build linux && !mips && !mipsle

package router_test

import (
	"testing"
	"time"

	"github.com/gowrt/gowrt/internal/testrouter"
	"github.com/gowrt/gowrt/internal/wantest"
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
	startRouter(t, cfg)
	far.CheckRouter(t, [2]string{a.dev, b.dev})
}
