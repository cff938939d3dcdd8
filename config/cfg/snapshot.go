package cfg

import (
	"net"
	"net/netip"
	"strconv"
	"time"

	"github.com/gowrt/gowrt/config/uci"
)

// Snapshot is the committed configuration decoded for the services. It
// is immutable: a commit makes a new one.
type Snapshot struct {
	System   System
	LAN      LAN
	WAN      WAN
	DHCP     DHCP
	NTP      NTP
	SSH      SSH
	Wireless Wireless
	Firewall string // the firewall package as UCI text, for net/firewall's Load
}

type System struct {
	Hostname       string
	Timezone       string // POSIX TZ
	LogSize        int    // bytes (log_size is KiB)
	LogIP          netip.Addr
	LogPort        uint16 // 514 when log_ip is set and log_port is not
	AuthorizedKeys []string
	PasswordHash   string
	// Crontab holds cron lines: five schedule fields and a shell command
	// line ("*/5 * * * * logread -l 1").
	Crontab []string
}

type LAN struct {
	Addr netip.Prefix // ipaddr/netmask
}

type WAN struct {
	Proto    string // "dhcp", "static" or "none"
	Addr     netip.Prefix
	Gateway  netip.Addr
	DNS      []netip.Addr
	Hostname string // sent by the DHCP client: network.wan.hostname, else the system hostname
}

type DHCP struct {
	Ignore    bool
	Start     int
	Limit     int           // clamped to the subnet (dnsmasq.init does the same)
	LeaseTime time.Duration // Infinite for 'infinite'
	Domain    string
	Hosts     []Host
}

type Host struct {
	Name string
	MAC  net.HardwareAddr // the first of the host's MACs
	IP   netip.Addr
}

type NTP struct {
	Enabled bool
	Servers []string
}

type SSH struct {
	Port         uint16
	PasswordAuth bool
	Interface    string // "" = all interfaces
}

type Wireless struct {
	Radios []Radio
	Ifaces []WifiIface
}

type Radio struct {
	Name     string
	Band     string // "2g" (the default) or "5g"
	Channel  int    // 0 = auto
	HTMode   string
	Country  string
	Disabled bool
}

type WifiIface struct {
	Name, Device, Network, Mode, SSID, Encryption, Key string
	// Crypto is where CCMP runs: "software" (the default) or "hardware"
	// (the radio's key cache).
	Crypto           string
	Hidden, Disabled bool
}

// Syslog port (RFC 5426 section 3.1).
const syslogPort = 514

// decode builds the Snapshot of a validated configuration; defaults for
// options left unset are OpenWrt's (dnsmasq.init, dropbear.init, log.init).
func decode(files map[string]*uci.File) *Snapshot {
	s := &Snapshot{}
	get := func(sec *uci.Section, name string) string {
		if sec == nil {
			return ""
		}
		v, _ := sec.Get(name)
		return v
	}
	first := func(f *uci.File, typ string) *uci.Section {
		if l := f.Find(typ); len(l) > 0 {
			return l[0]
		}
		return nil
	}

	sys := first(files["system"], "system")
	s.System.Hostname = get(sys, "hostname")
	s.System.Timezone = get(sys, "timezone")
	if s.System.Timezone == "" {
		s.System.Timezone = "UTC"
	}
	s.System.LogSize = 64 << 10
	if sys != nil {
		s.System.LogSize = getUint(sys, "log_size", 64) << 10
		if a, err := parseIPv4(get(sys, "log_ip")); err == nil {
			s.System.LogIP = a
			s.System.LogPort = uint16(getUint(sys, "log_port", syslogPort))
		}
		s.System.AuthorizedKeys = sys.List("authorized_keys")
		s.System.Crontab = sys.List("crontab")
		s.System.PasswordHash = get(sys, "password")
	}

	nw := files["network"]
	if p, ok := subnetOf(nw.Section("lan")); ok {
		s.LAN.Addr = p
	}
	if wan := nw.Section("wan"); wan != nil {
		s.WAN.Proto = get(wan, "proto")
		if p, ok := subnetOf(wan); ok {
			s.WAN.Addr = p
		}
		if a, err := parseIPv4(get(wan, "gateway")); err == nil {
			s.WAN.Gateway = a
		}
		for _, d := range wan.List("dns") {
			if a, err := parseIPv4(d); err == nil {
				s.WAN.DNS = append(s.WAN.DNS, a)
			}
		}
		s.WAN.Hostname = get(wan, "hostname")
	} else {
		s.WAN.Proto = "none"
	}
	if s.WAN.Hostname == "" {
		s.WAN.Hostname = s.System.Hostname
	}

	dh := files["dhcp"]
	s.DHCP.Ignore = true
	for _, sec := range dh.Find("dhcp") {
		ifname, ok := sec.Get("interface")
		if !ok {
			ifname = sec.Name
		}
		if ifname != "lan" {
			continue
		}
		s.DHCP.Ignore = getBool(sec, "ignore", false)
		s.DHCP.Start = getUint(sec, "start", 100)
		s.DHCP.Limit = getUint(sec, "limit", 150)
		if n := nw.Section(ifname); n != nil {
			if p, ok := subnet(n); ok {
				if first, last, ok := pool(p, s.DHCP.Start, s.DHCP.Limit); ok {
					s.DHCP.Limit = int(ipDiff(last, first)) + 1
				}
			}
		}
		s.DHCP.LeaseTime = 12 * time.Hour
		if d, err := parseLease(get(sec, "leasetime")); err == nil {
			s.DHCP.LeaseTime = d
		}
		break
	}
	s.DHCP.Domain = get(first(dh, "dnsmasq"), "domain")
	for _, h := range dh.Find("host") {
		host := Host{Name: get(h, "name")}
		if m := h.List("mac"); len(m) > 0 {
			host.MAC, _ = parseMAC(m[0])
		}
		host.IP, _ = parseIPv4(get(h, "ip"))
		s.DHCP.Hosts = append(s.DHCP.Hosts, host)
	}

	if ntp := files["system"].Section("ntp"); ntp != nil {
		s.NTP.Enabled = getBool(ntp, "enabled", true)
		s.NTP.Servers = ntp.List("server")
	}

	db := first(files["dropbear"], "dropbear")
	s.SSH = SSH{Port: 22, PasswordAuth: true}
	if db != nil {
		s.SSH.Port = uint16(getUint(db, "Port", 22))
		s.SSH.PasswordAuth = getBool(db, "PasswordAuth", true)
		s.SSH.Interface = get(db, "Interface")
	}

	wl := files["wireless"]
	for _, r := range wl.Find("wifi-device") {
		radio := Radio{Name: wl.Ref(r), Band: get(r, "band"), HTMode: get(r, "htmode"), Country: get(r, "country"), Disabled: getBool(r, "disabled", false)}
		if radio.Band == "" {
			radio.Band = "2g"
		}
		if ch, err := strconv.Atoi(get(r, "channel")); err == nil {
			radio.Channel = ch
		}
		s.Wireless.Radios = append(s.Wireless.Radios, radio)
	}
	for _, w := range wl.Find("wifi-iface") {
		wi := WifiIface{
			Name: wl.Ref(w), Device: get(w, "device"), Network: get(w, "network"), Mode: get(w, "mode"),
			SSID: get(w, "ssid"), Encryption: get(w, "encryption"), Key: get(w, "key"), Crypto: get(w, "crypto"),
			Hidden: getBool(w, "hidden", false), Disabled: getBool(w, "disabled", false),
		}
		if wi.Crypto == "" {
			wi.Crypto = "software"
		}
		s.Wireless.Ifaces = append(s.Wireless.Ifaces, wi)
	}

	fw := clone(files["firewall"])
	fw.Package = ""
	s.Firewall = fw.String()
	return s
}

func subnetOf(s *uci.Section) (netip.Prefix, bool) {
	if s == nil {
		return netip.Prefix{}, false
	}
	return subnet(s)
}

func ipDiff(a, b netip.Addr) uint32 {
	x, y := a.As4(), b.As4()
	return (uint32(x[0])<<24 | uint32(x[1])<<16 | uint32(x[2])<<8 | uint32(x[3])) -
		(uint32(y[0])<<24 | uint32(y[1])<<16 | uint32(y[2])<<8 | uint32(y[3]))
}
