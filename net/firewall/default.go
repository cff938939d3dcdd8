package firewall

import (
	"strings"

	"github.com/gowrt/gowrt/config/uci"
)

// DefaultText is the firewall configuration OpenWrt installs with fw4
// (firewall4's root/etc/config/firewall), written out here from its
// facts: the policies, the lan and wan zones, lan to wan forwarding and
// the IPv4 rules that let DHCP renewals, ping, IGMP and IPsec through.
//
// OpenWrt's file also carries four IPv6 rules (DHCPv6 replies, MLD and
// essential ICMPv6 to the router and through it). gowrt has no IPv6 yet,
// and two of them use a rate limit gowrt does not implement, so they are
// left out until IPv6 comes.
//
// The wan zone's forward policy is DROP as in current fw4; it applies
// only to traffic forwarded from wan back out to wan. Traffic from wan
// to lan that no rule accepts meets the default forward policy, REJECT.
const DefaultText = `config defaults
	option syn_flood '1'
	option input 'REJECT'
	option output 'ACCEPT'
	option forward 'REJECT'

config zone
	option name 'lan'
	list network 'lan'
	option input 'ACCEPT'
	option output 'ACCEPT'
	option forward 'ACCEPT'

config zone
	option name 'wan'
	list network 'wan'
	list network 'wan6'
	option input 'REJECT'
	option output 'ACCEPT'
	option forward 'DROP'
	option masq '1'
	option mtu_fix '1'

config forwarding
	option src 'lan'
	option dest 'wan'

# DHCP servers answer renewals to port 68 without a connection the
# router opened through the firewall.
config rule
	option name 'Allow-DHCP-Renew'
	option src 'wan'
	option proto 'udp'
	option dest_port '68'
	option target 'ACCEPT'
	option family 'ipv4'

config rule
	option name 'Allow-Ping'
	option src 'wan'
	option proto 'icmp'
	option icmp_type 'echo-request'
	option family 'ipv4'
	option target 'ACCEPT'

config rule
	option name 'Allow-IGMP'
	option src 'wan'
	option proto 'igmp'
	option family 'ipv4'
	option target 'ACCEPT'

config rule
	option name 'Allow-IPSec-ESP'
	option src 'wan'
	option dest 'lan'
	option proto 'esp'
	option target 'ACCEPT'

config rule
	option name 'Allow-ISAKMP'
	option src 'wan'
	option dest 'lan'
	option dest_port '500'
	option proto 'udp'
	option target 'ACCEPT'
`

// Default returns DefaultText parsed, named "firewall".
func Default() *uci.File {
	f, err := uci.Parse("firewall", strings.NewReader(DefaultText))
	if err != nil {
		panic("firewall: DefaultText does not parse: " + err.Error()) // a test keeps this from shipping
	}
	return f
}
