package dnsfwd

import (
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestDigAnswerCachedWithDecreasingTTL(t *testing.T) {
	u := startUpstream(t)
	s := serve(t, testConfig(u.addr))

	r := s.dig(t, "www.example.com", "A")
	if r.status != "NOERROR" || len(r.answers) != 1 || r.answers[0].data != "93.184.216.34" || r.answers[0].ttl != 300 {
		t.Fatalf("first answer: %+v\n%s", r, r.out)
	}
	if !strings.Contains(r.flags, "rd") || !strings.Contains(r.flags, "ra") || strings.Contains(r.flags, "aa") {
		t.Errorf("flags %q: want rd ra, not aa", r.flags)
	}
	if got := u.total(); got != 1 {
		t.Fatalf("upstream saw %d queries, want 1", got)
	}

	s.clock.Advance(100 * time.Second)
	r = s.dig(t, "WWW.Example.COM", "A") // the key ignores case; the question keeps the client's
	if len(r.answers) != 1 || r.answers[0].ttl != 200 || !strings.Contains(r.out, ";WWW.Example.COM.") {
		t.Fatalf("cached answer: %+v\n%s", r.answers, r.out)
	}
	if got := u.total(); got != 1 {
		t.Fatalf("cache hit went upstream: %d queries", got)
	}
	if st := s.f.Stats(); st.CacheHits != 1 || st.CacheMisses != 1 {
		t.Errorf("stats %+v", st)
	}

	s.clock.Advance(201 * time.Second) // past the TTL: asked again
	r = s.dig(t, "www.example.com", "A")
	if len(r.answers) != 1 || r.answers[0].ttl != 300 || u.total() != 2 {
		t.Fatalf("after expiry: %+v, upstream %d", r.answers, u.total())
	}
}

func TestDigNegativeAnswersCachedBySOAMinimum(t *testing.T) {
	u := startUpstream(t)
	s := serve(t, testConfig(u.addr))

	r := s.dig(t, "nope.example.com", "A")
	if r.status != "NXDOMAIN" || len(r.authority) != 1 || r.authority[0].typ != "SOA" {
		t.Fatalf("NXDOMAIN: %+v\n%s", r, r.out)
	}
	s.clock.Advance(30 * time.Second)
	r = s.dig(t, "nope.example.com", "A")
	// The SOA's TTL is 3600 and MINIMUM 60: held 60 s, TTL shown 3570.
	if r.status != "NXDOMAIN" || r.authority[0].ttl != 3570 || u.total() != 1 {
		t.Fatalf("cached NXDOMAIN: %+v, upstream %d", r.authority, u.total())
	}
	s.clock.Advance(31 * time.Second)
	s.dig(t, "nope.example.com", "A")
	if u.total() != 2 {
		t.Fatalf("NXDOMAIN held past the SOA minimum: upstream %d", u.total())
	}

	// NODATA (the name exists, not the type) is cached the same way.
	s.dig(t, "www.example.com", "MX")
	r = s.dig(t, "www.example.com", "MX")
	if r.status != "NOERROR" || len(r.answers) != 0 || u.total() != 3 {
		t.Fatalf("NODATA: %+v upstream %d", r, u.total())
	}
}

func TestDigTCPAndEDNS(t *testing.T) {
	u := startUpstream(t)
	s := serve(t, testConfig(u.addr))

	r := s.dig(t, "+tcp", "www.example.com")
	if r.status != "NOERROR" || len(r.answers) != 1 || r.answers[0].data != "93.184.216.34" {
		t.Fatalf("over TCP: %+v\n%s", r, r.out)
	}
	if r.ednsUDP != ednsUDPSize {
		t.Errorf("OPT advertises %d, want %d\n%s", r.ednsUDP, ednsUDPSize, r.out)
	}
	// A client offering more still sees our 1232.
	r = s.dig(t, "+bufsize=4096", "www.example.com")
	if r.ednsUDP != ednsUDPSize {
		t.Errorf("OPT advertises %d, want %d\n%s", r.ednsUDP, ednsUDPSize, r.out)
	}
	// Without EDNS there is no OPT in the answer.
	r = s.dig(t, "+noedns", "www.example.com")
	if r.ednsUDP != 0 || strings.Contains(r.out, "OPT PSEUDOSECTION") || len(r.answers) != 1 {
		t.Errorf("+noedns answer has an OPT:\n%s", r.out)
	}
	// EDNS version 1 gets BADVERS.
	r = s.dig(t, "+edns=1", "+noednsnegotiation", "www.example.com")
	if r.status != "BADVERS" {
		t.Errorf("EDNS version 1: status %q\n%s", r.status, r.out)
	}
}

func TestDigTruncatedAnswerRetriedOverTCP(t *testing.T) {
	u := startUpstream(t)
	s := serve(t, testConfig(u.addr))

	r := s.dig(t, "big.example.com", "TXT")
	if !strings.Contains(r.out, "Truncated, retrying in TCP mode") {
		t.Fatalf("dig did not see TC over UDP:\n%s", r.out)
	}
	if r.status != "NOERROR" || len(r.answers) != 1 {
		t.Fatalf("TXT over TCP: %+v\n%s", r, r.out)
	}
	for _, part := range bigTXT {
		if !strings.Contains(r.answers[0].data, part) {
			t.Fatalf("TXT answer lacks %.10s...", part)
		}
	}
	// The forwarder met the same limit upstream and asked again over TCP.
	if u.udp.Load() != 1 || u.tcp.Load() != 1 {
		t.Errorf("upstream udp=%d tcp=%d, want 1 and 1", u.udp.Load(), u.tcp.Load())
	}
	if st := s.f.Stats(); st.Truncated != 1 || st.CacheHits != 1 {
		t.Errorf("want one truncated UDP answer, then a TCP cache hit: %+v", st)
	}
}

func TestDigLocalNamesNeverForwarded(t *testing.T) {
	u := startUpstream(t)
	s := serve(t, testConfig(u.addr))

	for _, c := range []struct {
		args   []string
		status string
		data   string
	}{
		{[]string{"laptop.lan"}, "NOERROR", "192.168.1.23"},
		{[]string{"LapTop.LAN"}, "NOERROR", "192.168.1.23"},
		{[]string{"gowrt.lan"}, "NOERROR", "192.168.1.1"},
		{[]string{"gowrt"}, "NOERROR", "192.168.1.1"},
		{[]string{"laptop"}, "NOERROR", "192.168.1.23"},
		{[]string{"laptop.lan", "AAAA"}, "NOERROR", ""},
		{[]string{"unknown.lan"}, "NXDOMAIN", ""},
		{[]string{"a.b.lan"}, "NXDOMAIN", ""},
		{[]string{"printer"}, "NXDOMAIN", ""}, // single label: domain-needed
		{[]string{"-x", "192.168.1.1"}, "NOERROR", "gowrt.lan."},
		{[]string{"-x", "192.168.1.23"}, "NOERROR", "laptop.lan."},
		{[]string{"-x", "192.168.1.99"}, "NXDOMAIN", ""},
		{[]string{"-x", "10.1.2.3"}, "NXDOMAIN", ""},
		{[]string{"168.192.in-addr.arpa", "NS"}, "NXDOMAIN", ""},
	} {
		r := s.dig(t, c.args...)
		if r.status != c.status {
			t.Errorf("%v: status %s, want %s\n%s", c.args, r.status, c.status, r.out)
			continue
		}
		if c.data == "" {
			if len(r.answers) != 0 {
				t.Errorf("%v: answers %+v, want none", c.args, r.answers)
			}
			continue
		}
		if len(r.answers) != 1 || r.answers[0].data != c.data || r.answers[0].ttl != localTTL {
			t.Errorf("%v: answers %+v, want %s with TTL %d", c.args, r.answers, c.data, localTTL)
		}
		if !strings.Contains(r.flags, "aa") {
			t.Errorf("%v: local answer not authoritative: %q", c.args, r.flags)
		}
	}
	if n := u.total(); n != 0 {
		t.Errorf("local names reached the upstream %d times", n)
	}
}

func TestDigRebindProtection(t *testing.T) {
	u := startUpstream(t)
	s := serve(t, testConfig(u.addr))
	r := s.dig(t, "rebind.example.com")
	if r.status != "REFUSED" || len(r.answers) != 0 || !strings.Contains(r.out, "EDE: 15 (Blocked)") {
		t.Fatalf("rebind answer passed: %+v\n%s", r, r.out)
	}
	if st := s.f.Stats(); st.RebindBlocked != 1 {
		t.Errorf("RebindBlocked = %d", st.RebindBlocked)
	}

	cfg := testConfig(u.addr)
	cfg.RebindAllow = []string{"rebind.example.com"}
	s2 := serve(t, cfg)
	r = s2.dig(t, "rebind.example.com")
	if r.status != "NOERROR" || len(r.answers) != 1 || r.answers[0].data != "192.168.7.7" {
		t.Fatalf("allow-listed name blocked: %+v\n%s", r, r.out)
	}
}

func TestDigNoUpstreamsServfailsQuickly(t *testing.T) {
	cfg := testConfig()
	cfg.Timeout = 10 * time.Second // "quickly": not after waiting for a try
	s := serve(t, cfg)
	start := time.Now()
	r := s.dig(t, "www.example.com")
	if r.status != "SERVFAIL" {
		t.Fatalf("status %s\n%s", r.status, r.out)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("SERVFAIL took %v", d)
	}
}

func TestDigFailover(t *testing.T) {
	u := startUpstream(t)
	// The first upstream does not exist (nothing listens: the try fails),
	// the second answers.
	dead := netip.MustParseAddrPort("127.0.0.1:9")
	s := serve(t, testConfig(dead, u.addr))
	r := s.dig(t, "www.example.com")
	if r.status != "NOERROR" || len(r.answers) != 1 {
		t.Fatalf("failover: %+v\n%s", r, r.out)
	}
	if st := s.f.Stats(); st.UpstreamErrors != 1 || st.UpstreamQueries != 2 {
		t.Errorf("stats %+v", st)
	}
}
