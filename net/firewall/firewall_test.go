package firewall_test

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/gowrt/gowrt/config/uci"
	"github.com/gowrt/gowrt/net/firewall"
)

// Interface numbers the tests give the networks.
const (
	lanIf   = 1
	wanIf   = 2
	otherIf = 9 // in no zone
)

var networks = map[string]int{"lan": lanIf, "wan": wanIf}

var (
	wanHost    = netip.MustParseAddr("203.0.113.7")
	routerWAN  = netip.MustParseAddr("198.51.100.2")
	lanHost    = netip.MustParseAddr("192.168.1.20")
	routerLAN  = netip.MustParseAddr("192.168.1.1")
	webServer  = netip.MustParseAddr("192.168.1.10")
	remoteV6   = netip.MustParseAddr("2001:db8::7")
	routerWAN6 = netip.MustParseAddr("2001:db8::1")
)

func compile(t testing.TB, text string) *firewall.Ruleset {
	t.Helper()
	f, err := uci.Parse("firewall", strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	c, err := firewall.Load(f)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	r, err := c.Compile(networks)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	return r
}

func tcp(in, out uint8, src, dst netip.Addr, dport uint16) *firewall.Packet {
	return &firewall.Packet{In: in, Out: out, Proto: firewall.ProtoTCP, Src: src, Dst: dst, SrcPort: 40000, DstPort: dport}
}

func udp(in, out uint8, src, dst netip.Addr, sport, dport uint16) *firewall.Packet {
	return &firewall.Packet{In: in, Out: out, Proto: firewall.ProtoUDP, Src: src, Dst: dst, SrcPort: sport, DstPort: dport}
}

func icmp(in, out uint8, src, dst netip.Addr, typ, code uint8) *firewall.Packet {
	return &firewall.Packet{In: in, Out: out, Proto: firewall.ProtoICMP, Src: src, Dst: dst, ICMPType: typ, ICMPCode: code}
}

func proto(in, out uint8, src, dst netip.Addr, p uint8) *firewall.Packet {
	return &firewall.Packet{In: in, Out: out, Proto: p, Src: src, Dst: dst}
}

type verdict struct {
	what string
	fn   func(*firewall.Packet) firewall.Target
	p    *firewall.Packet
	want firewall.Target
}

func check(t *testing.T, cases []verdict) {
	t.Helper()
	for _, c := range cases {
		if got := c.fn(c.p); got != c.want {
			t.Errorf("%s: %v, want %v", c.what, got, c.want)
		}
	}
}

// A port forward of wan tcp 8080 to the LAN web server, added to the
// defaults for the DNAT cases.
const portForward = `
config redirect
	option name 'Web'
	option src 'wan'
	option src_dport '8080'
	option dest 'lan'
	option dest_ip '192.168.1.10'
	option dest_port '80'
	option proto 'tcp'
`

func TestDefaults(t *testing.T) {
	r := compile(t, firewall.DefaultText+portForward)
	in, fwd, out := r.Input, r.Forward, r.Output
	var cases []verdict
	for _, port := range []uint16{22, 53, 68, 80, 443, 8080, 65535} {
		cases = append(cases, verdict{"wan tcp to router port " + itoa(port), in, tcp(wanIf, 0, wanHost, routerWAN, port), firewall.Reject})
	}
	cases = append(cases,
		verdict{"wan udp 68 (Allow-DHCP-Renew)", in, udp(wanIf, 0, wanHost, routerWAN, 67, 68), firewall.Accept},
		verdict{"wan udp 67", in, udp(wanIf, 0, wanHost, routerWAN, 68, 67), firewall.Reject},
		verdict{"wan udp 53", in, udp(wanIf, 0, wanHost, routerWAN, 5353, 53), firewall.Reject},
		verdict{"wan echo-request (Allow-Ping)", in, icmp(wanIf, 0, wanHost, routerWAN, 8, 0), firewall.Accept},
		verdict{"wan echo-reply", in, icmp(wanIf, 0, wanHost, routerWAN, 0, 0), firewall.Reject},
		verdict{"wan destination-unreachable", in, icmp(wanIf, 0, wanHost, routerWAN, 3, 3), firewall.Reject},
		verdict{"wan timestamp-request", in, icmp(wanIf, 0, wanHost, routerWAN, 13, 0), firewall.Reject},
		verdict{"wan igmp (Allow-IGMP)", in, proto(wanIf, 0, wanHost, routerWAN, firewall.ProtoIGMP), firewall.Accept},
		verdict{"wan gre", in, proto(wanIf, 0, wanHost, routerWAN, firewall.ProtoGRE), firewall.Reject},
		// Allow-Ping is IPv4 only.
		verdict{"wan ICMPv6 echo-request", in, &firewall.Packet{In: wanIf, Proto: firewall.ProtoICMPv6, Src: remoteV6, Dst: routerWAN6, ICMPType: 128}, firewall.Reject},
		verdict{"wan udp 68 over IPv6 (rule is ipv4)", in, udp(wanIf, 0, remoteV6, routerWAN6, 547, 68), firewall.Reject},
		verdict{"wan udp 68 from a v4-mapped address", in, udp(wanIf, 0, netip.AddrFrom16(wanHost.As16()), routerWAN, 67, 68), firewall.Accept},

		verdict{"lan tcp to router", in, tcp(lanIf, 0, lanHost, routerLAN, 22), firewall.Accept},
		verdict{"lan udp to router", in, udp(lanIf, 0, lanHost, routerLAN, 5353, 53), firewall.Accept},
		verdict{"lan icmp to router", in, icmp(lanIf, 0, lanHost, routerLAN, 0, 0), firewall.Accept},
		verdict{"lan gre to router", in, proto(lanIf, 0, lanHost, routerLAN, firewall.ProtoGRE), firewall.Accept},

		verdict{"forward lan to wan tcp", fwd, tcp(lanIf, wanIf, lanHost, wanHost, 443), firewall.Accept},
		verdict{"forward lan to wan icmp", fwd, icmp(lanIf, wanIf, lanHost, wanHost, 8, 0), firewall.Accept},
		verdict{"forward lan to lan", fwd, tcp(lanIf, lanIf, lanHost, webServer, 80), firewall.Accept},
		verdict{"forward wan to lan tcp", fwd, tcp(wanIf, lanIf, wanHost, webServer, 80), firewall.Reject},
		verdict{"forward wan to lan udp", fwd, udp(wanIf, lanIf, wanHost, webServer, 1, 53), firewall.Reject},
		verdict{"forward wan to lan DNATed", fwd, func() *firewall.Packet {
			p := tcp(wanIf, lanIf, wanHost, webServer, 80)
			p.DNAT = true
			return p
		}(), firewall.Accept},
		verdict{"forward wan to lan udp 500 (Allow-ISAKMP)", fwd, udp(wanIf, lanIf, wanHost, webServer, 500, 500), firewall.Accept},
		verdict{"forward wan to lan esp (Allow-IPSec-ESP)", fwd, proto(wanIf, lanIf, wanHost, webServer, firewall.ProtoESP), firewall.Accept},
		// The wan zone's forward policy covers wan to wan only.
		verdict{"forward wan to wan", fwd, tcp(wanIf, wanIf, wanHost, wanHost, 80), firewall.Drop},
		verdict{"forward lan to unzoned", fwd, tcp(lanIf, otherIf, lanHost, wanHost, 80), firewall.Reject},
		verdict{"forward unzoned to lan", fwd, tcp(otherIf, lanIf, wanHost, lanHost, 80), firewall.Reject},

		verdict{"output to wan", out, tcp(0, wanIf, routerWAN, wanHost, 443), firewall.Accept},
		verdict{"output to lan", out, udp(0, lanIf, routerLAN, lanHost, 67, 68), firewall.Accept},
		verdict{"input from unzoned", in, tcp(otherIf, 0, wanHost, routerWAN, 22), firewall.Reject},
		verdict{"output to unzoned", out, tcp(0, otherIf, routerWAN, wanHost, 22), firewall.Accept},
	)
	check(t, cases)

	if !r.Masquerade(wanIf) || r.Masquerade(lanIf) || r.Masquerade(otherIf) {
		t.Error("masquerade should be on for wan only")
	}
	if !r.MSSClamp(wanIf) || r.MSSClamp(lanIf) {
		t.Error("MSS clamping should be on for wan only")
	}
	if z, ok := r.Zone(wanIf); !ok || z != "wan" {
		t.Errorf("Zone(wan) = %q %v", z, ok)
	}
	if _, ok := r.Zone(otherIf); ok {
		t.Error("unzoned interface has a zone")
	}
	d := r.Defaults()
	if !d.SynFlood || d.SynFloodRate != 25 || d.SynFloodBurst != 50 || d.Input != firewall.Reject {
		t.Errorf("defaults = %+v", d)
	}

	dst, ok := r.Redirect(tcp(wanIf, 0, wanHost, routerWAN, 8080))
	if !ok || dst != netip.AddrPortFrom(webServer, 80) {
		t.Errorf("Redirect(wan tcp 8080) = %v %v", dst, ok)
	}
	for _, p := range []*firewall.Packet{
		tcp(wanIf, 0, wanHost, routerWAN, 8081),
		udp(wanIf, 0, wanHost, routerWAN, 1, 8080),
		tcp(lanIf, 0, lanHost, routerLAN, 8080),
		tcp(wanIf, 0, remoteV6, routerWAN6, 8080),
	} {
		if dst, ok := r.Redirect(p); ok {
			t.Errorf("Redirect(%+v) = %v", p, dst)
		}
	}
}

func TestDefaultIsOpenWrts(t *testing.T) {
	c, err := firewall.Load(firewall.Default())
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Warnings) != 0 {
		t.Errorf("warnings on the default: %q", c.Warnings)
	}
	if c.Defaults.Input != firewall.Reject || c.Defaults.Output != firewall.Accept || c.Defaults.Forward != firewall.Reject || !c.Defaults.SynFlood {
		t.Errorf("defaults %+v", c.Defaults)
	}
	lan, wan := c.Zone("lan"), c.Zone("wan")
	if lan == nil || lan.Input != firewall.Accept || lan.Output != firewall.Accept || lan.Forward != firewall.Accept || lan.Masq {
		t.Errorf("lan %+v", lan)
	}
	if wan == nil || wan.Input != firewall.Reject || wan.Output != firewall.Accept || wan.Forward != firewall.Drop ||
		!wan.Masq || !wan.MTUFix || strings.Join(wan.Networks, " ") != "wan wan6" {
		t.Errorf("wan %+v", wan)
	}
	if len(c.Forwardings) != 1 || c.Forwardings[0].Src != "lan" || c.Forwardings[0].Dest != "wan" {
		t.Errorf("forwardings %+v", c.Forwardings)
	}
	var names []string
	for _, r := range c.Rules {
		names = append(names, r.Name)
	}
	if got := strings.Join(names, " "); got != "Allow-DHCP-Renew Allow-Ping Allow-IGMP Allow-IPSec-ESP Allow-ISAKMP" {
		t.Errorf("rules %s", got)
	}
}

func TestCustomSSHRule(t *testing.T) {
	r := compile(t, firewall.DefaultText+`
config rule
	option name 'Allow-SSH'
	option src 'wan'
	option proto 'tcp'
	option dest_port '22'
	option target 'ACCEPT'
`)
	check(t, []verdict{
		{"wan tcp 22", r.Input, tcp(wanIf, 0, wanHost, routerWAN, 22), firewall.Accept},
		{"wan tcp 22 over IPv6", r.Input, tcp(wanIf, 0, remoteV6, routerWAN6, 22), firewall.Accept},
		{"wan tcp 23", r.Input, tcp(wanIf, 0, wanHost, routerWAN, 23), firewall.Reject},
		{"wan udp 22", r.Input, udp(wanIf, 0, wanHost, routerWAN, 1, 22), firewall.Reject},
		{"forward wan to lan tcp 22", r.Forward, tcp(wanIf, lanIf, wanHost, lanHost, 22), firewall.Reject},
	})
}

func TestMatching(t *testing.T) {
	r := compile(t, firewall.DefaultText+`
config rule
	option name 'first-wins-drop'
	option src 'wan'
	option proto 'tcp'
	option dest_port '2000'
	option target 'DROP'

config rule
	option name 'range-and-list'
	option src 'wan'
	option dest_port '1000-2000 3000:3001'
	option target 'ACCEPT'

config rule
	option name 'any-zone-before-zone-rules'
	option src '*'
	option proto 'udp'
	option dest_port '4000'
	option target 'DROP'

config rule
	option name 'but-not-from'
	option src 'wan'
	option proto 'tcp'
	list src_ip '10.0.0.0/8'
	list src_ip '!10.0.0.5'
	list src_ip '172.16.0.1-172.16.0.9'
	option dest_port '5000'
	option target 'ACCEPT'

config rule
	option name 'netmask'
	option src 'wan'
	option proto 'tcp'
	option dest_ip '198.51.100.0/255.255.255.0'
	option src_port '!1-1023'
	option dest_port '5001'
	option target 'ACCEPT'

config rule
	option name 'frag-needed-and-time-exceeded'
	option src 'wan'
	option proto 'icmp'
	list icmp_type 'fragmentation-needed'
	list icmp_type '11'
	option target 'ACCEPT'

config rule
	option name 'udp-4000-from-wan'
	option src 'wan'
	option proto 'udp'
	option dest_port '4000'
	option target 'ACCEPT'

config rule
	option name 'block-lan-host-to-wan'
	option src 'lan'
	option dest 'wan'
	option src_ip '192.168.1.66'
	option proto 'all'
	option target 'REJECT'

config rule
	option name 'no-dns-out-of-lan'
	option dest 'lan'
	option proto 'tcpudp'
	option dest_port '53'
	option target 'DROP'

config rule
	option name 'disabled'
	option src 'wan'
	option proto 'tcp'
	option dest_port '6000'
	option target 'ACCEPT'
	option enabled '0'

config forwarding
	option src 'wan'
	option dest '*'
	option enabled 'no'
`)
	in := r.Input
	check(t, []verdict{
		{"first match drops 2000", in, tcp(wanIf, 0, wanHost, routerWAN, 2000), firewall.Drop},
		{"range 1000-2000 tcp", in, tcp(wanIf, 0, wanHost, routerWAN, 1000), firewall.Accept},
		{"range 1000-2000 udp (tcpudp default)", in, udp(wanIf, 0, wanHost, routerWAN, 1, 1999), firewall.Accept},
		{"range end 2001", in, tcp(wanIf, 0, wanHost, routerWAN, 2001), firewall.Reject},
		{"colon range 3001", in, tcp(wanIf, 0, wanHost, routerWAN, 3001), firewall.Accept},
		{"colon range 3002", in, tcp(wanIf, 0, wanHost, routerWAN, 3002), firewall.Reject},
		{"'*' rule before the zone's", in, udp(wanIf, 0, wanHost, routerWAN, 1, 4000), firewall.Drop},
		{"'*' rule from lan too", in, udp(lanIf, 0, lanHost, routerLAN, 1, 4000), firewall.Drop},
		{"src in 10/8", in, tcp(wanIf, 0, netip.MustParseAddr("10.1.2.3"), routerWAN, 5000), firewall.Accept},
		{"src negated 10.0.0.5", in, tcp(wanIf, 0, netip.MustParseAddr("10.0.0.5"), routerWAN, 5000), firewall.Reject},
		{"src in range", in, tcp(wanIf, 0, netip.MustParseAddr("172.16.0.9"), routerWAN, 5000), firewall.Accept},
		{"src after range", in, tcp(wanIf, 0, netip.MustParseAddr("172.16.0.10"), routerWAN, 5000), firewall.Reject},
		{"IPv6 source, IPv4-only rule", in, tcp(wanIf, 0, remoteV6, routerWAN6, 5000), firewall.Reject},
		{"netmask and high src port", in, tcp(wanIf, 0, wanHost, routerWAN, 5001), firewall.Accept},
		{"negated src port range", in, &firewall.Packet{In: wanIf, Proto: firewall.ProtoTCP, Src: wanHost, Dst: routerWAN, SrcPort: 80, DstPort: 5001}, firewall.Reject},
		{"dest outside netmask", in, tcp(wanIf, 0, wanHost, netip.MustParseAddr("198.51.101.2"), 5001), firewall.Reject},
		{"icmp fragmentation-needed (3/4)", in, icmp(wanIf, 0, wanHost, routerWAN, 3, 4), firewall.Accept},
		{"icmp port-unreachable (3/3)", in, icmp(wanIf, 0, wanHost, routerWAN, 3, 3), firewall.Reject},
		{"icmp 11 any code", in, icmp(wanIf, 0, wanHost, routerWAN, 11, 1), firewall.Accept},
		{"disabled rule", in, tcp(wanIf, 0, wanHost, routerWAN, 6000), firewall.Reject},
		{"lan host blocked to wan", r.Forward, icmp(lanIf, wanIf, netip.MustParseAddr("192.168.1.66"), wanHost, 8, 0), firewall.Reject},
		{"other lan host to wan", r.Forward, icmp(lanIf, wanIf, lanHost, wanHost, 8, 0), firewall.Accept},
		{"disabled forwarding", r.Forward, tcp(wanIf, lanIf, wanHost, lanHost, 80), firewall.Reject},
		{"output dns to lan dropped", r.Output, udp(0, lanIf, routerLAN, lanHost, 53, 53), firewall.Drop},
		{"output dns to wan", r.Output, udp(0, wanIf, routerWAN, wanHost, 5353, 53), firewall.Accept},
	})
}

func TestForwardingToAnyAndRuleToAny(t *testing.T) {
	r := compile(t, `
config defaults
	option input 'DROP'
	option output 'ACCEPT'
	option forward 'DROP'

config zone
	option name 'lan'
	option network 'lan'
	option forward 'REJECT'

config zone
	option name 'wan'
	option network 'wan'

config forwarding
	option src 'lan'
	option dest '*'

config rule
	option src 'wan'
	option dest '*'
	option proto 'icmp'
	option target 'ACCEPT'
`)
	check(t, []verdict{
		{"lan to wan via dest '*'", r.Forward, tcp(lanIf, wanIf, lanHost, wanHost, 80), firewall.Accept},
		{"lan to unzoned via dest '*'", r.Forward, tcp(lanIf, otherIf, lanHost, wanHost, 80), firewall.Accept},
		{"wan icmp to anywhere", r.Forward, icmp(wanIf, lanIf, wanHost, lanHost, 8, 0), firewall.Accept},
		{"wan tcp to lan: default DROP", r.Forward, tcp(wanIf, lanIf, wanHost, lanHost, 80), firewall.Drop},
		// zone input policy defaults to the defaults' (DROP)
		{"lan input inherits DROP", r.Input, tcp(lanIf, 0, lanHost, routerLAN, 80), firewall.Drop},
	})
}

func TestNoDefaultsSectionDropsEverything(t *testing.T) {
	r := compile(t, "config zone\n\toption name 'lan'\n\toption network 'lan'\n")
	for _, fn := range []func(*firewall.Packet) firewall.Target{r.Input, r.Forward, r.Output} {
		if got := fn(tcp(lanIf, lanIf, lanHost, routerLAN, 80)); got != firewall.Drop {
			t.Errorf("got %v, want DROP", got)
		}
	}
}

func TestRedirects(t *testing.T) {
	r := compile(t, firewall.DefaultText+`
config redirect
	option name 'range-kept'
	option src 'wan'
	option src_dport '6000-6010'
	option dest_ip '192.168.1.30'
	option dest_port '6000-6010'

config redirect
	option name 'only-from-partner'
	option src 'wan'
	option src_ip '203.0.113.0/24'
	option src_dip '198.51.100.2'
	option src_dport '2222'
	option dest_ip '192.168.1.31'
	option dest_port '22'
	option proto 'tcp'

config redirect
	option name 'gre-to-host'
	option src 'wan'
	option proto 'gre'
	option dest_ip '192.168.1.32'
`)
	for _, c := range []struct {
		p    *firewall.Packet
		want string
	}{
		{udp(wanIf, 0, wanHost, routerWAN, 1, 6005), "192.168.1.30:6005"},
		{tcp(wanIf, 0, wanHost, routerWAN, 6010), "192.168.1.30:6010"},
		{tcp(wanIf, 0, wanHost, routerWAN, 6011), ""},
		{tcp(wanIf, 0, wanHost, routerWAN, 2222), "192.168.1.31:22"},
		{tcp(wanIf, 0, netip.MustParseAddr("192.0.2.1"), routerWAN, 2222), ""},
		{tcp(wanIf, 0, wanHost, netip.MustParseAddr("198.51.100.3"), 2222), ""},
		{proto(wanIf, 0, wanHost, routerWAN, firewall.ProtoGRE), "192.168.1.32:0"},
	} {
		got, ok := c.p, ""
		if dst, found := r.Redirect(got); found {
			ok = dst.String()
		}
		if ok != c.want {
			t.Errorf("Redirect(%v port %d) = %q, want %q", c.p.Src, c.p.DstPort, ok, c.want)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	f, _ := uci.Parse("firewall", strings.NewReader(firewall.DefaultText))
	c, err := firewall.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Compile(map[string]int{"lan": 1, "wan": 300}); err == nil {
		t.Error("interface number 300 accepted")
	}
	if _, err := c.Compile(map[string]int{"lan": 1, "wan": 1}); err == nil {
		t.Error("one interface in two zones accepted")
	}
	c.Rules = append(c.Rules, firewall.Rule{Name: "x", Src: "dmz", Enabled: true})
	if _, err := c.Compile(networks); err == nil {
		t.Error("rule with an unknown zone compiled")
	}
}

func itoa(n uint16) string {
	return netip.AddrPortFrom(netip.IPv4Unspecified(), n).String()[len("0.0.0.0:"):]
}

func TestWarnings(t *testing.T) {
	f, _ := uci.Parse("firewall", strings.NewReader(firewall.DefaultText+`
config rule
	option name 'logged'
	option src 'wan'
	option proto 'tcp'
	option dest_port '22'
	option log '1'
	option target 'ACCEPT'

config include
	option path '/etc/firewall.user'
`))
	c, err := firewall.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"firewall:73: rule 'logged' (@rule[5]): option 'log': not supported by gowrt, ignored",
		"firewall:76: include @include[0]: section type include is not supported by gowrt and is ignored",
	}
	if strings.Join(c.Warnings, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(c.Warnings, "\n"), strings.Join(want, "\n"))
	}
}

func TestErrorIsStructured(t *testing.T) {
	f, _ := uci.Parse("firewall", strings.NewReader("config zone\n\toption name 'lan'\n\toption input 'ALLOW'\n"))
	_, err := firewall.Load(f)
	var fe *firewall.Error
	if !errors.As(err, &fe) || fe.Line != 3 || fe.Option != "input" || fe.Section != "zone 'lan' (@zone[0])" {
		t.Fatalf("error %#v", fe)
	}
}
