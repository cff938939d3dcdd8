package firewall_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gowrt/gowrt/config/uci"
	"github.com/gowrt/gowrt/net/firewall"
)

// zones is a minimal valid preamble: lines 1-9.
const zones = `config zone
	option name 'lan'
	option network 'lan'

config zone
	option name 'wan'
	option network 'wan'
	option input 'REJECT'

`

// validationCases are configurations with one problem each (after the
// zones preamble) and the error Load must give.
var validationCases = []struct {
	name, text, want string
}{
	{"unknown zone", "config rule\n\toption src 'dmz'\n\toption target 'ACCEPT'\n",
		"firewall:11: rule @rule[0]: option 'src': unknown zone 'dmz'"},
	{"disabled zone", "config zone\n\toption name 'dmz'\n\toption enabled '0'\n\nconfig forwarding\n\toption src 'lan'\n\toption dest 'dmz'\n",
		"firewall:16: forwarding @forwarding[0]: option 'dest': zone 'dmz' is disabled"},
	{"bad port", "config rule\n\toption name 'x'\n\toption src 'wan'\n\toption dest_port '70000'\n\toption target 'ACCEPT'\n",
		`firewall:13: rule 'x' (@rule[0]): option 'dest_port': invalid port "70000"`},
	{"bad port word", "config rule\n\toption src 'wan'\n\toption dest_port 'ssh'\n\toption target 'ACCEPT'\n",
		`option 'dest_port': invalid port "ssh"`},
	{"backwards range", "config rule\n\toption src 'wan'\n\toption src_port '2000-1000'\n\toption target 'ACCEPT'\n",
		`firewall:12: rule @rule[0]: option 'src_port': invalid port range "2000-1000" (start above end)`},
	{"bad address", "config rule\n\toption src 'wan'\n\toption src_ip '10.0.0.300'\n\toption target 'ACCEPT'\n",
		`firewall:12: rule @rule[0]: option 'src_ip': invalid address "10.0.0.300"`},
	{"bad CIDR", "config rule\n\toption src 'wan'\n\toption dest_ip '10.0.0.0/33'\n\toption target 'ACCEPT'\n",
		`option 'dest_ip': invalid prefix length in "10.0.0.0/33"`},
	{"non-contiguous mask", "config rule\n\toption src 'wan'\n\toption dest_ip '10.0.0.0/255.0.255.0'\n\toption target 'ACCEPT'\n",
		`option 'dest_ip': non-contiguous netmask`},
	{"network name as address", "config rule\n\toption src 'wan'\n\toption dest_ip 'lan'\n\toption target 'ACCEPT'\n",
		`option 'dest_ip': invalid address "lan" (network names are not supported by gowrt)`},
	{"bad target", "config rule\n\toption src 'wan'\n\toption target 'ALLOW'\n",
		`firewall:12: rule @rule[0]: option 'target': invalid target "ALLOW"`},
	{"unsupported target", "config rule\n\toption src 'wan'\n\toption target 'NOTRACK'\n",
		`option 'target': target "NOTRACK" is not supported by gowrt`},
	{"missing target", "config rule\n\toption src 'wan'\n",
		`firewall:10: rule @rule[0]: option 'target': is required`},
	{"bad policy", "config zone\n\toption name 'dmz'\n\toption forward 'maybe'\n",
		`firewall:12: zone 'dmz' (@zone[2]): option 'forward': invalid policy "maybe"`},
	{"duplicate zone", "config zone\n\toption name 'lan'\n",
		"firewall:11: zone 'lan' (@zone[2]): option 'name': duplicate zone name 'lan' (also @zone[0], line 1)"},
	{"zone without name", "config zone\n\toption network 'guest'\n",
		"firewall:10: zone @zone[2]: option 'name': is required"},
	{"network in two zones", "config zone\n\toption name 'guest'\n\toption network 'lan'\n",
		"firewall:10: zone 'guest' (@zone[2]): option 'network': network 'lan' is already in zone 'lan'"},
	{"redirect without dest_ip", "config redirect\n\toption src 'wan'\n\toption src_dport '22001'\n\toption dest_port '22'\n\toption proto 'tcp'\n",
		"firewall:10: redirect @redirect[0]: option 'dest_ip': is required"},
	{"redirect without src", "config redirect\n\toption dest_ip '192.168.1.2'\n",
		"firewall:10: redirect @redirect[0]: option 'src': is required"},
	{"redirect from '*'", "config redirect\n\toption src '*'\n\toption dest_ip '192.168.1.2'\n",
		"firewall:11: redirect @redirect[0]: option 'src': must name a zone, not '*'"},
	{"redirect to a subnet", "config redirect\n\toption src 'wan'\n\toption dest_ip '192.168.1.0/24'\n",
		`option 'dest_ip': must be one address`},
	{"SNAT redirect", "config redirect\n\toption src 'wan'\n\toption dest_ip '192.168.1.2'\n\toption target 'SNAT'\n",
		"option 'target': SNAT redirects are not supported by gowrt"},
	{"redirect port range remap", "config redirect\n\toption src 'wan'\n\toption src_dport '1000-1010'\n\toption dest_ip '192.168.1.2'\n\toption dest_port '2000-2010'\n",
		"firewall:14: redirect @redirect[0]: option 'dest_port': a port range must equal src_dport"},
	{"unknown option", "config rule\n\toption src 'wan'\n\toption dest_prot '22'\n\toption target 'ACCEPT'\n",
		"firewall:12: rule @rule[0]: option 'dest_prot': unknown option"},
	{"unsupported option", "config rule\n\toption src 'wan'\n\toption src_mac '00:11:22:33:44:55'\n\toption target 'DROP'\n",
		"firewall:12: rule @rule[0]: option 'src_mac': not supported by gowrt"},
	{"zone by device", "config zone\n\toption name 'dmz'\n\toption device 'eth2'\n",
		"option 'device': not supported by gowrt"},
	{"bad bool", "config zone\n\toption name 'dmz'\n\toption masq 'maybe'\n",
		`firewall:12: zone 'dmz' (@zone[2]): option 'masq': invalid boolean "maybe"`},
	{"bad family", "config rule\n\toption src 'wan'\n\toption family 'ipx'\n\toption target 'DROP'\n",
		`option 'family': invalid family "ipx"`},
	{"family conflict", "config rule\n\toption src 'wan'\n\toption src_ip '10.0.0.1'\n\toption dest_ip '2001:db8::1'\n\toption target 'DROP'\n",
		"option 'family': source IP is ipv4 only but destination IP is ipv6 only"},
	{"family vs address", "config rule\n\toption src 'wan'\n\toption family 'ipv6'\n\toption src_ip '10.0.0.1'\n\toption target 'DROP'\n",
		"option 'family': is restricted to ipv6 but source IP is ipv4 only"},
	{"bad proto", "config rule\n\toption src 'wan'\n\toption proto 'tcpp'\n\toption target 'DROP'\n",
		`option 'proto': unknown protocol "tcpp"`},
	{"proto number too big", "config rule\n\toption src 'wan'\n\toption proto '256'\n\toption target 'DROP'\n",
		`option 'proto': unknown protocol "256"`},
	{"bad icmp type", "config rule\n\toption src 'wan'\n\toption proto 'icmp'\n\toption icmp_type 'echo-requests'\n\toption target 'DROP'\n",
		`firewall:13: rule @rule[0]: option 'icmp_type': invalid ICMP type "echo-requests"`},
	{"ports with icmp", "config rule\n\toption src 'wan'\n\toption proto 'icmp'\n\toption dest_port '22'\n\toption target 'DROP'\n",
		"firewall:13: rule @rule[0]: option 'dest_port': ports need proto tcp, udp or tcpudp"},
	{"ports with proto all", "config rule\n\toption src 'wan'\n\toption proto 'all'\n\toption dest_port '22'\n\toption target 'DROP'\n",
		"option 'dest_port': ports need proto tcp, udp or tcpudp"},
	{"icmp type with tcp", "config rule\n\toption src 'wan'\n\toption proto 'tcp'\n\toption icmp_type 'echo-request'\n\toption target 'DROP'\n",
		"option 'icmp_type': ICMP types need proto icmp"},
	{"list for a single option", "config rule\n\tlist src 'wan'\n\tlist src 'lan'\n\toption target 'DROP'\n",
		"firewall:11: rule @rule[0]: option 'src': must not be a list"},
	{"forwarding without dest", "config forwarding\n\toption src 'lan'\n",
		"firewall:10: forwarding @forwarding[0]: option 'dest': is required"},
	{"unknown section", "config rules\n\toption src 'wan'\n",
		`firewall:10: rules @rules[0]: unknown section type "rules"`},
	{"nat section", "config nat\n\toption src 'lan'\n",
		"firewall:10: nat @nat[0]: section type nat (SNAT) is not supported by gowrt"},
	{"bad synflood rate", "config defaults\n\toption synflood_rate 'fast'\n",
		`firewall:11: defaults @defaults[0]: option 'synflood_rate': invalid rate "fast"`},
	{"negated network", "config zone\n\toption name 'dmz'\n\toption network '!lan'\n",
		`option 'network': negated network "!lan" is not supported by gowrt`},
}

func TestValidationErrors(t *testing.T) {
	for _, tc := range validationCases {
		t.Run(tc.name, func(t *testing.T) {
			f, err := uci.Parse("firewall", strings.NewReader(zones+tc.text))
			if err != nil {
				t.Fatal(err)
			}
			c, err := firewall.Load(f)
			if err == nil {
				t.Fatalf("loaded: %+v", c)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error:\n%v\nwant it to contain:\n%s", err, tc.want)
			}
			var fe *firewall.Error
			if !errors.As(err, &fe) {
				t.Errorf("error is not a *firewall.Error: %T", err)
			}
		})
	}
}

// Every problem is reported, not just the first.
func TestAllErrorsReported(t *testing.T) {
	f, err := uci.Parse("firewall", strings.NewReader(zones+`config rule
	option src 'dmz'
	option dest_port '0-70000'
	option target 'ALLOW'
	option frobnicate '1'

config redirect
	option src 'wan'
`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = firewall.Load(f)
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		t.Fatalf("error %T is not a joined error", err)
	}
	var lines []string
	for _, e := range joined.Unwrap() {
		lines = append(lines, e.Error())
	}
	want := []string{
		"firewall:11: rule @rule[0]: option 'src': unknown zone 'dmz'",
		`firewall:12: rule @rule[0]: option 'dest_port': invalid port "0-70000" (want a port 0-65535 or a range like 1000-2000)`,
		`firewall:13: rule @rule[0]: option 'target': invalid target "ALLOW" (want ACCEPT, REJECT or DROP)`,
		"firewall:14: rule @rule[0]: option 'frobnicate': unknown option",
		"firewall:16: redirect @redirect[0]: option 'dest_ip': is required (redirects to the router itself are not supported by gowrt)",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}

// fw4 spellings that must load: prefixes and case of policies, boolean
// words, option values split at spaces, family words.
func TestAcceptedSpellings(t *testing.T) {
	r := compile(t, zones+`config defaults
	option input 'rej'
	option output 'Accept'
	option forward 'drop'
	option syn_flood 'yes'
	option synflood_rate '100/sec'

config rule
	option src 'wan'
	option proto 'udp 6'
	option dest_port '22 53'
	option family 'inet'
	option target 'a'
	option enabled 'on'

config rule
	option src 'wan'
	option proto '1'
	option icmp_type 'ping 3/4'
	option target 'accept'
`)
	d := r.Defaults()
	if d.Input != firewall.Reject || d.Output != firewall.Accept || d.Forward != firewall.Drop || !d.SynFlood || d.SynFloodRate != 100 {
		t.Errorf("defaults %+v", d)
	}
	check(t, []verdict{
		{"tcp 53 from wan", r.Input, tcp(wanIf, 0, wanHost, routerWAN, 53), firewall.Accept},
		{"udp 22 from wan", r.Input, udp(wanIf, 0, wanHost, routerWAN, 1, 22), firewall.Accept},
		{"tcp 54 from wan", r.Input, tcp(wanIf, 0, wanHost, routerWAN, 54), firewall.Reject},
		{"ping", r.Input, icmp(wanIf, 0, wanHost, routerWAN, 8, 0), firewall.Accept},
		{"3/4", r.Input, icmp(wanIf, 0, wanHost, routerWAN, 3, 4), firewall.Accept},
		{"3/1", r.Input, icmp(wanIf, 0, wanHost, routerWAN, 3, 1), firewall.Reject},
	})
}
