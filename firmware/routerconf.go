package firmware

import (
	"fmt"
	"strings"
	"time"

	"github.com/gowrt/gowrt/config/cfg"
	"github.com/gowrt/gowrt/config/uci"
	"github.com/gowrt/gowrt/net/dhcp/dhcpd"
	"github.com/gowrt/gowrt/net/firewall"
	"github.com/gowrt/gowrt/net/router"
)

// The router's settings come from the configuration: one configuration,
// the typed UCI packages of config/cfg, read here into router.Config.

// applyConfig fills the configured parts of rc from the snapshot s.
func applyConfig(rc *router.Config, s *cfg.Snapshot) error {
	rc.Hostname = s.System.Hostname
	rc.LANAddr = s.LAN.Addr
	rc.DHCP = dhcpConfig(s)
	switch s.WAN.Proto {
	case "static":
		rc.Uplink = router.Uplink{Proto: "static", Addr: s.WAN.Addr, Gateway: s.WAN.Gateway, DNS: s.WAN.DNS}
	default:
		rc.Uplink = router.Uplink{Proto: "dhcp", DNS: s.WAN.DNS}
	}
	if s.NTP.Enabled {
		rc.NTPServers = s.NTP.Servers
		if rc.NTPServers == nil {
			rc.NTPServers = []string{} // enabled without servers: nothing to ask
		}
	} else {
		rc.NTPServers = []string{}
	}
	fw, err := firewallConfig(s)
	if err != nil {
		return err
	}
	rc.Firewall = fw
	return nil
}

const infiniteLease = 365 * 24 * time.Hour

// dhcpConfig is the LAN DHCP server's part of the snapshot.
func dhcpConfig(s *cfg.Snapshot) router.DHCPServer {
	d := router.DHCPServer{Disabled: s.DHCP.Ignore, Start: s.DHCP.Start, Limit: s.DHCP.Limit,
		LeaseTime: s.DHCP.LeaseTime, Domain: s.DHCP.Domain}
	if d.LeaseTime == cfg.Infinite {
		// net/dhcp/dhcpd grants finite leases only; a year is
		// indistinguishable for a LAN host, which renews at half of it.
		d.LeaseTime = infiniteLease
	}
	for _, h := range s.DHCP.Hosts {
		if h.MAC == nil || !h.IP.IsValid() {
			continue // a name-only host section gives DNS names, no lease
		}
		d.Static = append(d.Static, dhcpd.StaticLease{MAC: h.MAC, IP: h.IP, Hostname: h.Name})
	}
	return d
}

// firewallConfig loads the firewall package (config/cfg checked at commit
// that it loads).
func firewallConfig(s *cfg.Snapshot) (*firewall.Config, error) {
	f, err := uci.Parse("firewall", strings.NewReader(s.Firewall))
	if err != nil {
		return nil, fmt.Errorf("firewall: %w", err)
	}
	fw, err := firewall.Load(f)
	if err != nil {
		return nil, fmt.Errorf("firewall: %w", err)
	}
	return fw, nil
}
