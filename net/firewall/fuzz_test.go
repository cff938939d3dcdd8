package firewall_test

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/gowrt/gowrt/config/uci"
	"github.com/gowrt/gowrt/net/firewall"
)

// FuzzLoad feeds arbitrary UCI text through Parse, Load and Compile and
// evaluates a few packets: nothing may panic, and Load either returns a
// Config or errors that are all *firewall.Error.
func FuzzLoad(f *testing.F) {
	f.Add(firewall.DefaultText)
	f.Add(firewall.DefaultText + portForward)
	f.Add(zones + "config rule\n\toption src '*'\n\toption dest '*'\n\tlist src_ip '!10.0.0.0/8'\n\tlist src_ip 'fe80::/10'\n\toption proto 'icmp'\n\toption icmp_type '3/4 echo-request'\n\toption target 'REJECT'\n")
	f.Add(zones + "config redirect\n\toption src 'wan'\n\toption src_dport '1000-2000'\n\toption dest_port '1000-2000'\n\toption dest_ip '192.168.1.9'\n")
	f.Add(zones + "config forwarding\n\toption src '*'\n\toption dest 'lan'\nconfig defaults\n\toption synflood_rate '5/minute'\n")
	for _, tc := range validationCases {
		f.Add(zones + tc.text)
	}
	lim := uci.Limits{MaxBytes: 8192, MaxCommand: 1024, MaxSections: 32, MaxOptions: 32, MaxValues: 256}
	packets := []*firewall.Packet{
		tcp(wanIf, lanIf, wanHost, routerWAN, 22),
		udp(lanIf, wanIf, lanHost, wanHost, 68, 67),
		icmp(wanIf, 0, wanHost, routerWAN, 3, 4),
		tcp(otherIf, wanIf, remoteV6, routerWAN6, 443),
		{In: 255, Out: 0, Proto: 255},
		{In: wanIf, Proto: firewall.ProtoTCP, Src: netip.MustParseAddr("::ffff:10.0.0.1"), Dst: routerWAN, DNAT: true},
	}
	f.Fuzz(func(t *testing.T, text string) {
		file, err := uci.ParseLimits("firewall", strings.NewReader(text), lim)
		if err != nil {
			return
		}
		c, err := firewall.Load(file)
		if err != nil {
			joined, ok := err.(interface{ Unwrap() []error })
			if !ok {
				t.Fatalf("error %T", err)
			}
			for _, e := range joined.Unwrap() {
				if _, ok := e.(*firewall.Error); !ok {
					t.Fatalf("error %T: %v", e, e)
				}
			}
			return
		}
		r, err := c.Compile(map[string]int{"lan": lanIf, "wan": wanIf, "wan6": wanIf, "guest": 3})
		if err != nil {
			return
		}
		for _, p := range packets {
			r.Input(p)
			r.Forward(p)
			r.Output(p)
			r.Redirect(p)
			r.Masquerade(p.Out)
			r.MSSClamp(p.In)
		}
	})
}
