package firewall_test

import (
	"testing"

	"github.com/gowrt/gowrt/net/firewall"
)

// The evaluation methods run per new connection and per packet to the
// router from the WAN: they must not allocate.
func TestEvaluationDoesNotAllocate(t *testing.T) {
	r := compile(t, firewall.DefaultText+portForward)
	dnat := tcp(wanIf, lanIf, wanHost, webServer, 80)
	dnat.DNAT = true
	packets := []*firewall.Packet{
		tcp(wanIf, 0, wanHost, routerWAN, 22),
		udp(wanIf, 0, wanHost, routerWAN, 67, 68),
		icmp(wanIf, 0, wanHost, routerWAN, 8, 0),
		tcp(wanIf, 0, remoteV6, routerWAN6, 22),
		tcp(lanIf, wanIf, lanHost, wanHost, 443),
		tcp(wanIf, 0, wanHost, routerWAN, 8080),
		dnat,
	}
	var sink firewall.Target
	for name, fn := range map[string]func(){
		"Input": func() {
			for _, p := range packets {
				sink += r.Input(p)
			}
		},
		"Forward": func() {
			for _, p := range packets {
				sink += r.Forward(p)
			}
		},
		"Output": func() {
			for _, p := range packets {
				sink += r.Output(p)
			}
		},
		"Redirect": func() {
			for _, p := range packets {
				if _, ok := r.Redirect(p); ok {
					sink++
				}
			}
		},
	} {
		if n := testing.AllocsPerRun(100, fn); n != 0 {
			t.Errorf("%s: %v allocations per run", name, n)
		}
	}
	_ = sink
}

// BenchmarkInputDefault is the common WAN case: a TCP SYN to a closed
// port walks every wan rule before the zone's REJECT.
func BenchmarkInputDefault(b *testing.B) {
	r := compile(b, firewall.DefaultText)
	p := tcp(wanIf, 0, wanHost, routerWAN, 22)
	b.ReportAllocs()
	for b.Loop() {
		if r.Input(p) != firewall.Reject {
			b.Fatal("not rejected")
		}
	}
}

func BenchmarkInputPing(b *testing.B) {
	r := compile(b, firewall.DefaultText)
	p := icmp(wanIf, 0, wanHost, routerWAN, 8, 0)
	b.ReportAllocs()
	for b.Loop() {
		if r.Input(p) != firewall.Accept {
			b.Fatal("not accepted")
		}
	}
}

func BenchmarkForwardLANToWAN(b *testing.B) {
	r := compile(b, firewall.DefaultText)
	p := tcp(lanIf, wanIf, lanHost, wanHost, 443)
	b.ReportAllocs()
	for b.Loop() {
		if r.Forward(p) != firewall.Accept {
			b.Fatal("not accepted")
		}
	}
}

func BenchmarkRedirect(b *testing.B) {
	r := compile(b, firewall.DefaultText+portForward)
	p := tcp(wanIf, 0, wanHost, routerWAN, 8080)
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := r.Redirect(p); !ok {
			b.Fatal("not redirected")
		}
	}
}
