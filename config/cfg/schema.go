package cfg

// The schema: for every package, its section types and for every type its
// options. It is closed: a package, section type or option not listed is
// an error naming the key. Option names and meanings are OpenWrt's
// (openwrt.org's UCI documentation for each package); gowrt keeps the
// subset its services read, plus a few that OpenWrt writes by default
// and gowrt accepts and ignores (so an exported OpenWrt file loads).
//
// Packages: network, dhcp (dnsmasq's), firewall (fw4's), system (with
// NTP in system.ntp, as OpenWrt keeps it) and wireless, and dropbear for
// the SSH server's settings, as OpenWrt names them (dropbear.config).

type sectionSchema map[string]optType

type pkgSchema map[string]sectionSchema

// pkgNames is every package, in export order (sorted).
var pkgNames = []string{"dhcp", "dropbear", "firewall", "network", "system", "wireless"}

var schema = map[string]pkgSchema{
	"network": {
		"interface": {
			"proto":    enum("static", "dhcp", "none"),
			"device":   str(),
			"ipaddr":   of(kIPv4),
			"netmask":  of(kNetmask),
			"gateway":  of(kIPv4),
			"dns":      listOf(of(kIPv4)),
			"hostname": of(kHostname), // DHCP client: the name sent
			"macaddr":  of(kMAC),
			"mtu":      uintRange(68, 9000),
			"metric":   uintRange(0, 65535),
			"peerdns":  boolean(),
			"auto":     boolean(),
			"disabled": boolean(),
		},
		"route": {
			"interface": of(kName),
			"target":    of(kPrefix),
			"netmask":   of(kNetmask),
			"gateway":   of(kIPv4),
			"metric":    uintRange(0, 65535),
		},
	},
	"dhcp": {
		"dnsmasq": {
			"domainneeded":      boolean(),
			"boguspriv":         boolean(),
			"filterwin2k":       boolean(),
			"localise_queries":  boolean(),
			"rebind_protection": boolean(),
			"rebind_localhost":  boolean(),
			"local":             str(),
			"domain":            of(kHostname),
			"expandhosts":       boolean(),
			"nonegcache":        boolean(),
			"cachesize":         uintRange(0, 10000),
			"authoritative":     boolean(),
			"readethers":        boolean(),
			"leasefile":         str(),
			"resolvfile":        str(),
			"nonwildcard":       boolean(),
			"localservice":      boolean(),
			"ednspacket_max":    uintRange(512, 4096),
			"filter_aaaa":       boolean(),
			"filter_a":          boolean(),
			"server":            wholeListOf(str()),
		},
		"dhcp": {
			"interface":   of(kName),
			"start":       uintRange(1, 254),
			"limit":       uintRange(1, 254),
			"leasetime":   of(kDuration),
			"ignore":      boolean(),
			"force":       boolean(),
			"dhcpv4":      enum("server", "disabled"),
			"dhcp_option": wholeListOf(str()),
		},
		"host": {
			"name":      of(kHostname),
			"mac":       listOf(of(kMAC)),
			"ip":        of(kIPv4),
			"leasetime": of(kDuration),
			"dns":       boolean(),
		},
	},
	"system": {
		"system": {
			"hostname":        of(kHostname),
			"description":     str(),
			"timezone":        str(), // POSIX TZ string
			"zonename":        str(),
			"ttylogin":        boolean(),
			"log_size":        uintRange(1, 1024), // KiB
			"log_ip":          of(kIPv4),
			"log_port":        of(kPort),
			"log_proto":       enum("udp", "tcp"),
			"conloglevel":     uintRange(1, 8),
			"cronloglevel":    uintRange(0, 9),
			"urandom_seed":    str(),
			"authorized_keys": wholeListOf(of(kSSHKey)),  // gowrt: OpenWrt keeps these in /etc/dropbear
			"password":        of(kBcrypt),               // gowrt: the administrator's bcrypt hash
			"crontab":         wholeListOf(of(kCrontab)), // gowrt: OpenWrt keeps these in /etc/crontabs/root
		},
		"timeserver": {
			"enabled":       boolean(),
			"enable_server": boolean(),
			"server":        listOf(of(kHostname)),
			"interface":     of(kName),
		},
	},
	"wireless": {
		"wifi-device": {
			"type":         str(),
			"path":         str(),
			"band":         enum("2g", "5g", "6g", "60g"),
			"channel":      of(kChannel),
			"htmode":       enum("NOHT", "HT20", "HT40", "HT40-", "HT40+", "VHT20", "VHT40", "VHT80", "VHT160", "HE20", "HE40", "HE80", "HE160"),
			"country":      str(),
			"txpower":      uintRange(0, 30),
			"cell_density": uintRange(0, 3),
			"disabled":     boolean(),
		},
		"wifi-iface": {
			"device":     of(kName),
			"network":    of(kName),
			"mode":       enum("ap", "sta", "adhoc", "mesh", "monitor"),
			"ssid":       str(),
			"encryption": enum("none", "psk", "psk2", "psk-mixed", "sae", "sae-mixed", "owe"),
			"key":        str(),
			"hidden":     boolean(),
			"isolate":    boolean(),
			"disabled":   boolean(),
			// gowrt: where CCMP runs, as ath10k's cryptmode module
			// parameter chooses (software on raw frames, or the
			// radio's key cache); OpenWrt has no such option.
			"crypto": enum("software", "hardware"),
		},
	},
	"dropbear": {
		"dropbear": {
			"enable":           boolean(),
			"Port":             of(kPort),
			"PasswordAuth":     boolean(),
			"RootPasswordAuth": boolean(),
			"RootLogin":        boolean(),
			"Interface":        of(kName),
			"GatewayPorts":     boolean(),
		},
	},
	// firewall: the option names net/firewall's Load reads or ignores
	// (its load.go lists); the values are checked by Load at Commit.
	// Options Load refuses are left out so Set rejects them at once.
	"firewall": {
		"defaults": fwOpts("input", "output", "forward", "syn_flood", "synflood_protect", "synflood_rate", "synflood_burst", "drop_invalid",
			"tcp_reject_code", "any_reject_code", "tcp_syncookies", "tcp_ecn", "tcp_window_scaling", "accept_redirects", "accept_source_route", "auto_helper", "custom_chains", "disable_ipv6", "flow_offloading", "flow_offloading_hw", "auto_includes"),
		"zone": fwOpts("name", "network", "input", "output", "forward", "masq", "mtu_fix", "family", "enabled",
			"masq_allow_invalid", "masq6", "log", "log_limit", "counter", "auto_helper", "helper", "custom_chains", "extra", "extra_src", "extra_dest"),
		"forwarding": fwOpts("name", "src", "dest", "family", "enabled"),
		"rule": fwOpts("name", "src", "dest", "proto", "src_ip", "dest_ip", "src_port", "dest_port", "icmp_type", "family", "target", "enabled",
			"_name", "counter", "log", "extra", "utc_time"),
		"redirect": fwOpts("name", "src", "dest", "proto", "src_ip", "src_port", "src_dip", "src_dport", "dest_ip", "dest_port", "family", "target", "enabled",
			"_name", "counter", "log", "extra", "utc_time", "reflection", "reflection_src", "reflection_zone"),
	},
}

func fwOpts(names ...string) sectionSchema {
	s := make(sectionSchema, len(names))
	for _, n := range names {
		s[n] = optType{kind: kString, any: true}
	}
	return s
}
