// Package testrouter is the router configuration the end-to-end tests
// expect (internal/wantest checks it against real Linux peers): OpenWrt's
// defaults plus a static DHCP lease and a port forward. Firmware built for
// a boot test (board/malta/boottest/progs/routertest) and routers started
// inside a test process use the same values.
package testrouter

import (
	"net"
	"net/netip"
	"strings"

	"github.com/gowrt/gowrt/board"
	"github.com/gowrt/gowrt/config/uci"
	"github.com/gowrt/gowrt/net/dhcp/dhcpd"
	"github.com/gowrt/gowrt/net/firewall"
	"github.com/gowrt/gowrt/net/router"
)

// The first LAN client's static lease.
const (
	StaticMAC  = "02:67:77:00:01:50"
	StaticIP   = "192.168.1.150"
	StaticName = "static"
)

// PortForward opens TCP 8080 on the WAN to the static host's port 8000
// (UCI, appended to fw4's defaults).
const PortForward = `
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

// NTPServer is the time server the tests' far side runs (a name its DNS
// server resolves).
const NTPServer = "ntp.example.test"

// Config returns the configuration, ports still to be filled in: the
// static lease, fw4's defaults with PortForward, and the far side's time
// server.
func Config() (router.Config, error) {
	mac, err := net.ParseMAC(StaticMAC)
	if err != nil {
		return router.Config{}, err
	}
	f, err := uci.Parse("firewall", strings.NewReader(firewall.DefaultText+PortForward))
	if err != nil {
		return router.Config{}, err
	}
	fw, err := firewall.Load(f)
	if err != nil {
		return router.Config{}, err
	}
	return router.Config{
		Firewall:   fw,
		DHCP:       router.DHCPServer{Static: []dhcpd.StaticLease{{MAC: mac, IP: netip.MustParseAddr(StaticIP), Hostname: StaticName}}},
		NTPServers: []string{NTPServer},
	}, nil
}

// AddPorts adds a board's ports to cfg: its WAN port as the WAN, the
// others as br-lan's ports.
func AddPorts(cfg *router.Config, ports []board.Port) {
	for _, p := range ports {
		rp := router.Port{Name: p.Name, NIC: p.NIC}
		if p.Role == board.WAN {
			cfg.WAN = &rp
			continue
		}
		cfg.LAN = append(cfg.LAN, rp)
	}
}
