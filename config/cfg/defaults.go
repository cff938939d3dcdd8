package cfg

import (
	"strings"

	"github.com/gowrt/gowrt/config/uci"
	"github.com/gowrt/gowrt/net/firewall"
)

// defaultText is the factory configuration, per package, with OpenWrt's
// values unless noted:
//
//   - network: OpenWrt's package/base-files/files/bin/config_generate
//     (generate_network: loopback 127.0.0.1/8 on lo, lan static
//     192.168.1.1/255.255.255.0, wan proto dhcp). Left out: the globals
//     section (ula_prefix: IPv6), wan6, and the br-lan bridge device
//     section; gowrt's router decides the devices.
//   - dhcp: dnsmasq's package files/dhcp.conf (the dnsmasq section with
//     domain 'lan' and local '/lan/', dhcp lan start 100 limit 150
//     leasetime 12h, dhcp wan ignore 1). Left out: the odhcpd section and
//     the lan's dhcpv6/ra options (no IPv6 in gowrt yet).
//   - firewall: net/firewall's DefaultText (firewall4's firewall.config),
//     with the two zone sections named 'lan' and 'wan' after their name
//     option, so firewall.wan.input addresses them.
//   - system: config_generate's generate_static_system (timezone UTC,
//     ttylogin 0, log_size 64 KiB, urandom_seed 0, timeserver ntp enabled
//     with [0-3].openwrt.pool.ntp.org, enable_server 0). The hostname is
//     gowrt's, 'gowrt' (OpenWrt's is 'OpenWrt').
//   - wireless: what OpenWrt's mac80211.sh detection writes for a 2.4 GHz
//     radio: radio0 type mac80211, band 2g, channel 1, htmode HT20,
//     disabled 1; default_radio0 in mode ap on network lan, encryption
//     none. OpenWrt ships Wi-Fi open but disabled, and so does gowrt; the
//     SSID is 'gowrt' (OpenWrt's is 'OpenWrt').
//   - dropbear: dropbear's package files/dropbear.config (PasswordAuth on,
//     RootPasswordAuth on, Port 22), with Interface 'lan': OpenWrt leaves
//     Interface unset (all interfaces); gowrt serves SSH on the LAN only.
var defaultText = map[string]string{
	"network": `config interface 'loopback'
	option device 'lo'
	option proto 'static'
	option ipaddr '127.0.0.1'
	option netmask '255.0.0.0'

config interface 'lan'
	option proto 'static'
	option ipaddr '192.168.1.1'
	option netmask '255.255.255.0'

config interface 'wan'
	option proto 'dhcp'
`,
	"dhcp": `config dnsmasq
	option domainneeded '1'
	option localise_queries '1'
	option rebind_protection '1'
	option rebind_localhost '1'
	option local '/lan/'
	option domain 'lan'
	option expandhosts '1'
	option cachesize '1000'
	option authoritative '1'
	option readethers '1'
	option leasefile '/tmp/dhcp.leases'
	option localservice '1'
	option ednspacket_max '1232'

config dhcp 'lan'
	option interface 'lan'
	option start '100'
	option limit '150'
	option leasetime '12h'

config dhcp 'wan'
	option interface 'wan'
	option ignore '1'
`,
	"system": `config system
	option hostname 'gowrt'
	option timezone 'UTC'
	option ttylogin '0'
	option log_size '64'
	option urandom_seed '0'

config timeserver 'ntp'
	option enabled '1'
	option enable_server '0'
	list server '0.openwrt.pool.ntp.org'
	list server '1.openwrt.pool.ntp.org'
	list server '2.openwrt.pool.ntp.org'
	list server '3.openwrt.pool.ntp.org'
`,
	"wireless": `config wifi-device 'radio0'
	option type 'mac80211'
	option band '2g'
	option channel '1'
	option htmode 'HT20'
	option disabled '1'

config wifi-iface 'default_radio0'
	option device 'radio0'
	option network 'lan'
	option mode 'ap'
	option ssid 'gowrt'
	option encryption 'none'
`,
	"dropbear": `config dropbear
	option PasswordAuth 'on'
	option RootPasswordAuth 'on'
	option Port '22'
	option Interface 'lan'
`,
}

// defaults returns a fresh copy of the factory configuration.
func defaults() map[string]*uci.File {
	out := make(map[string]*uci.File, len(pkgNames))
	for _, p := range pkgNames {
		var f *uci.File
		if p == "firewall" {
			f = firewall.Default()
			for _, s := range f.Find("zone") {
				if n, ok := s.Get("name"); ok && (n == "lan" || n == "wan") {
					s.Name = n
				}
			}
		} else {
			var err error
			f, err = uci.Parse(p, strings.NewReader(defaultText[p]))
			if err != nil {
				panic("cfg: default " + p + " does not parse: " + err.Error()) // TestDefaults keeps this from shipping
			}
		}
		f.Package = p
		normalize(p, f)
		out[p] = f
	}
	return out
}
