package dnsfwd

import (
	"context"
	"net"
	"net/netip"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// upstream is a real DNS server (miekg/dns) on loopback serving a fixed
// zone and counting the queries it receives, by transport.
type upstream struct {
	addr    netip.AddrPort
	udp     atomic.Int64
	tcp     atomic.Int64
	servers []*dns.Server
}

func (u *upstream) total() int64 { return u.udp.Load() + u.tcp.Load() }

// bigTXT is a TXT answer of about 3000 bytes: more than 1232, so it
// needs TCP.
var bigTXT = func() []string {
	var s []string
	for i := 0; i < 12; i++ {
		s = append(s, strings.Repeat(string(rune('a'+i)), 250))
	}
	return s
}()

func soa() *dns.SOA {
	return &dns.SOA{
		Hdr: dns.RR_Header{Name: "example.com.", Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: 3600},
		Ns:  "ns.example.com.", Mbox: "hostmaster.example.com.",
		Serial: 1, Refresh: 7200, Retry: 900, Expire: 1209600, Minttl: 60,
	}
}

func (u *upstream) ServeDNS(w dns.ResponseWriter, r *dns.Msg) {
	tcp := w.RemoteAddr().Network() == "tcp"
	if tcp {
		u.tcp.Add(1)
	} else {
		u.udp.Add(1)
	}
	m := new(dns.Msg)
	m.SetReply(r)
	m.Authoritative = true
	q := r.Question[0]
	hdr := func(t uint16, ttl uint32) dns.RR_Header {
		return dns.RR_Header{Name: q.Name, Rrtype: t, Class: dns.ClassINET, Ttl: ttl}
	}
	name := strings.ToLower(q.Name)
	switch {
	case name == "www.example.com." && q.Qtype == dns.TypeA:
		m.Answer = append(m.Answer, &dns.A{Hdr: hdr(dns.TypeA, 300), A: net.IPv4(93, 184, 216, 34)})
	case name == "www.example.com.":
		m.Ns = append(m.Ns, soa()) // NODATA
	case name == "big.example.com." && q.Qtype == dns.TypeTXT:
		m.Answer = append(m.Answer, &dns.TXT{Hdr: hdr(dns.TypeTXT, 600), Txt: bigTXT})
	case name == "rebind.example.com.":
		m.Answer = append(m.Answer, &dns.A{Hdr: hdr(dns.TypeA, 300), A: net.IPv4(192, 168, 7, 7)})
	case name == "servfail.example.com.":
		m.Rcode = dns.RcodeServerFailure
	case strings.HasSuffix(name, "example.com."):
		m.Rcode = dns.RcodeNameError
		m.Ns = append(m.Ns, soa())
	default:
		m.Rcode = dns.RcodeRefused
	}
	if opt := r.IsEdns0(); opt != nil {
		m.SetEdns0(1232, opt.Do())
	}
	if !tcp {
		size := dns.MinMsgSize
		if opt := r.IsEdns0(); opt != nil {
			size = int(opt.UDPSize())
		}
		m.Truncate(size)
	}
	w.WriteMsg(m)
}

// listenUDPAndTCP opens a UDP socket and a TCP listener on the same
// loopback port, as a DNS server has. The port the kernel picked for UDP
// may already be held on the TCP side (EADDRINUSE, seen often when the
// tests run big-endian under qemu-user), so a few ports are tried.
func listenUDPAndTCP(t *testing.T) (net.PacketConn, net.Listener, int) {
	t.Helper()
	var lastErr error
	for range 20 {
		pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := pc.LocalAddr().(*net.UDPAddr).Port
		l, err := net.Listen("tcp4", "127.0.0.1:"+strconv.Itoa(port))
		if err == nil {
			return pc, l, port
		}
		pc.Close()
		lastErr = err
	}
	t.Fatal(lastErr)
	return nil, nil, 0
}

func startUpstream(t *testing.T) *upstream {
	t.Helper()
	u := &upstream{}
	pc, l, port := listenUDPAndTCP(t)
	u.addr = netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(port))
	for _, s := range []*dns.Server{{PacketConn: pc, Handler: u}, {Listener: l, Handler: u}} {
		started := make(chan struct{})
		s.NotifyStartedFunc = func() { close(started) }
		go s.ActivateAndServe()
		<-started
		u.servers = append(u.servers, s)
	}
	t.Cleanup(func() {
		for _, s := range u.servers {
			s.Shutdown()
		}
	})
	return u
}

// leases is a fake DHCP server's lease table.
type leases map[string]netip.Addr

func (l leases) Lookup(host string) (netip.Addr, bool) { a, ok := l[host]; return a, ok }
func (l leases) LookupAddr(addr netip.Addr) (string, bool) {
	for h, a := range l {
		if a == addr {
			return h, true
		}
	}
	return "", false
}

// fakeClock is a settable clock for cache lifetimes.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// served is a Forwarder listening on loopback UDP and TCP on one port.
type served struct {
	f     *Forwarder
	port  int
	clock *fakeClock
	pc    net.PacketConn
	l     net.Listener
}

func testConfig(ups ...netip.AddrPort) Config {
	var d net.Dialer
	return Config{
		Domain:           "lan",
		RouterName:       "gowrt",
		RouterAddr:       netip.MustParseAddr("192.168.1.1"),
		Local:            leases{"laptop": netip.MustParseAddr("192.168.1.23")},
		Upstreams:        func() []netip.AddrPort { return ups },
		Dial:             d.DialContext,
		Timeout:          500 * time.Millisecond,
		RebindProtection: true,
	}
}

func serve(t *testing.T, cfg Config) *served {
	t.Helper()
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	if cfg.Now == nil {
		cfg.Now = clock.Now
	}
	f, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	pc, l, port := listenUDPAndTCP(t)
	s := &served{f: f, port: port, clock: clock, pc: pc, l: l}
	errs := make(chan error, 2)
	go func() { errs <- f.ServeUDP(pc) }()
	go func() { errs <- f.ServeTCP(l) }()
	t.Cleanup(func() {
		pc.Close()
		l.Close()
		for i := 0; i < 2; i++ {
			if err := <-errs; err != nil {
				t.Errorf("serve returned %v", err)
			}
		}
	})
	return s
}

// digResult is what the test reads from dig's output.
type digResult struct {
	out       string
	status    string
	flags     string
	answers   []digRR
	authority []digRR
	ednsUDP   int // 0: no OPT pseudosection
}

type digRR struct {
	name string
	ttl  int
	typ  string
	data string
}

var (
	statusRE = regexp.MustCompile(`status: ([A-Z]+)`)
	flagsRE  = regexp.MustCompile(`;; flags: ([a-z ]*);`)
	ednsRE   = regexp.MustCompile(`; EDNS: version: 0, flags:[a-z ]*; udp: (\d+)`)
)

// dig runs the real dig against the forwarder.
func (s *served) dig(t *testing.T, args ...string) digResult {
	t.Helper()
	argv := append([]string{"@127.0.0.1", "-p", strconv.Itoa(s.port), "+time=3", "+tries=1"}, args...)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	b, err := exec.CommandContext(ctx, "dig", argv...).CombinedOutput()
	out := string(b)
	if err != nil {
		t.Fatalf("dig %v: %v\n%s", argv, err, out)
	}
	r := digResult{out: out}
	if m := statusRE.FindStringSubmatch(out); m != nil {
		r.status = m[1]
	}
	if m := flagsRE.FindStringSubmatch(out); m != nil {
		r.flags = m[1]
	}
	if m := ednsRE.FindStringSubmatch(out); m != nil {
		r.ednsUDP, _ = strconv.Atoi(m[1])
	}
	section := ""
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, ";; ANSWER SECTION"):
			section = "an"
			continue
		case strings.HasPrefix(line, ";; AUTHORITY SECTION"):
			section = "ns"
			continue
		case strings.HasPrefix(line, ";") || strings.TrimSpace(line) == "":
			section = ""
			continue
		}
		f := strings.Fields(line)
		if section == "" || len(f) < 5 {
			continue
		}
		ttl, _ := strconv.Atoi(f[1])
		rr := digRR{name: f[0], ttl: ttl, typ: f[3], data: strings.Join(f[4:], " ")}
		if section == "an" {
			r.answers = append(r.answers, rr)
		} else {
			r.authority = append(r.authority, rr)
		}
	}
	return r
}
