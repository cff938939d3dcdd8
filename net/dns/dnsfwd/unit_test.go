package dnsfwd

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// queryBytes packs a client query as dig would send it.
func queryBytes(t testing.TB, name string, qtype uint16, edns bool) []byte {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	m.Id = 0x4242
	if edns {
		m.SetEdns0(1232, false)
	}
	b, err := m.Pack()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// newOffline is a Forwarder that never reaches an upstream (its dialer
// fails), for tests of the paths that must not need one.
func newOffline(t testing.TB) (*Forwarder, *fakeClock) {
	t.Helper()
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	cfg := testConfig()
	cfg.Dial = func(context.Context, string, string) (net.Conn, error) { return nil, errors.New("offline") }
	cfg.Now = clock.Now
	f, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return f, clock
}

// prime stores an upstream answer to (name, qtype) in f's cache as
// forward would.
func prime(t testing.TB, f *Forwarder, name string, qtype uint16, rrs ...dns.RR) {
	t.Helper()
	in := queryBytes(t, name, qtype, true)
	var q query
	if parseQuery(in, &q) != verdictOK {
		t.Fatal("prime: query does not parse")
	}
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	m.Response, m.RecursionAvailable = true, true
	m.Answer = rrs
	m.SetEdns0(1232, false)
	resp, err := m.Pack()
	if err != nil {
		t.Fatal(err)
	}
	a, err := parseAnswer(resp, &q, f.cfg.Now())
	if err != nil || a.ttl == 0 {
		t.Fatalf("prime: %v ttl %d", err, a.ttl)
	}
	f.cache.put(a.e)
}

func rrA(name string, ttl uint32, ip string) dns.RR {
	return &dns.A{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: ttl}, A: net.ParseIP(ip)}
}

func TestCacheBoundsAndLRU(t *testing.T) {
	now := time.Unix(1000, 0)
	mk := func(k string, size int) *entry {
		return &entry{key: k, msg: make([]byte, size), stored: now, expires: now.Add(time.Minute)}
	}
	c := newCache(3, 1<<20)
	for _, k := range []string{"a", "b", "c"} {
		c.put(mk(k, 50))
	}
	if c.get([]byte("a"), now) == nil { // a becomes the most recent
		t.Fatal("a missing")
	}
	c.put(mk("d", 50)) // evicts b, the least recently used
	if c.get([]byte("b"), now) != nil || c.get([]byte("a"), now) == nil || c.get([]byte("d"), now) == nil {
		t.Fatal("LRU evicted the wrong entry")
	}
	if n, _, ev := c.len(); n != 3 || ev != 1 {
		t.Fatalf("len %d evicted %d", n, ev)
	}

	// The byte bound: entries of ~1 KiB in an 8 KiB cache.
	c = newCache(100, 8<<10)
	for i := 0; i < 20; i++ {
		c.put(mk(strconv.Itoa(i), 1024-entryOverhead-2))
	}
	n, bytes, _ := c.len()
	if bytes > 8<<10 || n != 8 {
		t.Fatalf("byte bound: %d entries, %d bytes", n, bytes)
	}
	// One answer over an eighth of the cache is not kept.
	c.put(mk("huge", 2048))
	if c.get([]byte("huge"), now) != nil {
		t.Fatal("oversized entry cached")
	}

	// Expired entries are gone, and their bytes with them.
	c.flush()
	c.put(mk("x", 10))
	if c.get([]byte("x"), now.Add(time.Minute)) != nil {
		t.Fatal("expired entry served")
	}
	if n, bytes, _ := c.len(); n != 0 || bytes != 0 {
		t.Fatalf("after expiry: %d entries %d bytes", n, bytes)
	}
}

func TestFlushEmptiesCache(t *testing.T) {
	f, _ := newOffline(t)
	prime(t, f, "www.example.com.", dns.TypeA, rrA("www.example.com.", 300, "93.184.216.34"))
	if f.Stats().CacheEntries != 1 {
		t.Fatal("not primed")
	}
	f.Flush()
	if st := f.Stats(); st.CacheEntries != 0 || st.CacheBytes != 0 {
		t.Fatalf("after Flush: %+v", st)
	}
}

// answerUnpacks checks an answer with miekg/dns and returns it.
func answerUnpacks(t testing.TB, out []byte) *dns.Msg {
	t.Helper()
	m := new(dns.Msg)
	if err := m.Unpack(out); err != nil {
		t.Fatalf("answer does not unpack: %v (% x)", err, out)
	}
	return m
}

func TestBadQueries(t *testing.T) {
	f, _ := newOffline(t)
	w := &worker{}
	good := queryBytes(t, "www.example.com.", dns.TypeA, false)

	if out, fwd := f.handle(w, good[:7], 0); out != nil || fwd {
		t.Error("short message answered")
	}
	resp := append([]byte(nil), good...)
	resp[2] |= 0x80 // QR
	if out, _ := f.handle(w, resp, 0); out != nil {
		t.Error("a response was answered")
	}

	two := new(dns.Msg)
	two.Question = []dns.Question{{Name: "a.example.", Qtype: dns.TypeA, Qclass: dns.ClassINET}, {Name: "b.example.", Qtype: dns.TypeA, Qclass: dns.ClassINET}}
	b, _ := two.Pack()
	notify := append([]byte(nil), good...)
	notify[2] = byte(dns.OpcodeNotify << 3)
	chaos := new(dns.Msg)
	chaos.SetQuestion("version.bind.", dns.TypeTXT)
	chaos.Question[0].Qclass = dns.ClassCHAOS
	cb, _ := chaos.Pack()
	axfr := queryBytes(t, "example.com.", dns.TypeAXFR, false)
	ptr := append([]byte(nil), good[:headerLen]...) // question name is a pointer
	ptr = append(ptr, 0xC0, 0x00, 0, 1, 0, 1)
	twoOPT := queryBytes(t, "www.example.com.", dns.TypeA, true)
	twoOPT = append(twoOPT, twoOPT[len(twoOPT)-optRRLen:]...)
	binary.BigEndian.PutUint16(twoOPT[10:], 2)
	cut := queryBytes(t, "www.example.com.", dns.TypeA, true)
	cut = cut[:len(cut)-3]

	for _, c := range []struct {
		name  string
		in    []byte
		rcode int
	}{
		{"QDCOUNT 2", b, dns.RcodeFormatError},
		{"NOTIFY", notify, dns.RcodeNotImplemented},
		{"CHAOS", cb, dns.RcodeRefused},
		{"AXFR", axfr, dns.RcodeRefused},
		{"pointer in question", ptr, dns.RcodeFormatError},
		{"two OPT", twoOPT, dns.RcodeFormatError},
		{"cut OPT", cut, dns.RcodeFormatError},
	} {
		out, fwd := f.handle(w, c.in, 0)
		if fwd || out == nil {
			t.Errorf("%s: forward=%v out=%v", c.name, fwd, out)
			continue
		}
		m := answerUnpacks(t, out)
		if m.Rcode != c.rcode || m.Id != binary.BigEndian.Uint16(c.in) || !m.Response {
			t.Errorf("%s: rcode %s id %d, want %s", c.name, dns.RcodeToString[m.Rcode], m.Id, dns.RcodeToString[c.rcode])
		}
	}
	st := f.Stats()
	if st.Malformed != 6 || st.NotImplemented != 1 || st.Refused != 2 {
		t.Errorf("stats %+v", st)
	}
}

// fakeUpstream answers every query with the given function's datagrams.
func fakeUpstream(t *testing.T, answer func(q *dns.Msg) [][]byte) netip.AddrPort {
	t.Helper()
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 2048)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			q := new(dns.Msg)
			if q.Unpack(buf[:n]) != nil {
				continue
			}
			for _, b := range answer(q) {
				pc.WriteTo(b, from)
			}
		}
	}()
	return netip.MustParseAddrPort(pc.LocalAddr().String())
}

func TestFailoverPastSpoofServfailAndSilence(t *testing.T) {
	u := startUpstream(t)
	// First: a spoofed answer (wrong ID) with a rebind address, then SERVFAIL.
	spoofer := fakeUpstream(t, func(q *dns.Msg) [][]byte {
		fake := new(dns.Msg)
		fake.SetReply(q)
		fake.Id ^= 0x5555
		fake.Answer = []dns.RR{rrA(q.Question[0].Name, 86400, "6.6.6.6")}
		sf := new(dns.Msg)
		sf.SetRcode(q, dns.RcodeServerFailure)
		a, _ := fake.Pack()
		b, _ := sf.Pack()
		return [][]byte{a, b}
	})
	// Second: never answers.
	silent := fakeUpstream(t, func(*dns.Msg) [][]byte { return nil })
	cfg := testConfig(spoofer, silent, u.addr)
	cfg.Timeout = 200 * time.Millisecond
	s := serve(t, cfg)

	r := s.dig(t, "www.example.com")
	if r.status != "NOERROR" || len(r.answers) != 1 || r.answers[0].data != "93.184.216.34" {
		t.Fatalf("answer: %+v\n%s", r, r.out)
	}
	st := s.f.Stats()
	if st.UpstreamMismatched != 1 || st.UpstreamErrors != 2 || st.UpstreamQueries != 3 {
		t.Errorf("stats %+v", st)
	}
}

func TestTCPIdleTimeoutAndConnectionLimit(t *testing.T) {
	cfg := testConfig()
	cfg.TCPIdleTimeout = 200 * time.Millisecond
	cfg.MaxTCPConns = 4 // one per source address
	s := serve(t, cfg)
	addr := "127.0.0.1:" + strconv.Itoa(s.port)

	c1, err := net.Dial("tcp4", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close()
	c2, err := net.Dial("tcp4", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	c2.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := c2.Read(make([]byte, 1)); err == nil {
		t.Fatal("second connection from one address was served")
	}
	if st := s.f.Stats(); st.TCPRejected != 1 {
		t.Errorf("TCPRejected = %d", st.TCPRejected)
	}
	// c1 is served, then closed once idle.
	q := queryBytes(t, "gowrt.lan.", dns.TypeA, false)
	frame := binary.BigEndian.AppendUint16(nil, uint16(len(q)))
	c1.Write(append(frame, q...))
	c1.SetReadDeadline(time.Now().Add(2 * time.Second))
	var l [2]byte
	if _, err := io.ReadFull(c1, l[:]); err != nil {
		t.Fatal(err)
	}
	resp := make([]byte, binary.BigEndian.Uint16(l[:]))
	if _, err := io.ReadFull(c1, resp); err != nil {
		t.Fatal(err)
	}
	if m := answerUnpacks(t, resp); len(m.Answer) != 1 {
		t.Fatalf("TCP answer %v", m)
	}
	start := time.Now()
	if _, err := c1.Read(l[:]); err == nil {
		t.Fatal("idle connection not closed")
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("idle connection closed after %v", d)
	}
}

func TestInFlightBound(t *testing.T) {
	silent := fakeUpstream(t, func(*dns.Msg) [][]byte { return nil })
	cfg := testConfig(silent)
	cfg.MaxInFlight = 1
	cfg.Timeout = time.Second
	s := serve(t, cfg)
	c, err := net.Dial("udp4", "127.0.0.1:"+strconv.Itoa(s.port))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := 0; i < 3; i++ {
		c.Write(queryBytes(t, "q"+strconv.Itoa(i)+".example.com.", dns.TypeA, false))
	}
	deadline := time.Now().Add(2 * time.Second)
	for s.f.Stats().InFlightDrops != 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if st := s.f.Stats(); st.InFlightDrops != 2 || st.UpstreamQueries != 1 {
		t.Fatalf("stats %+v", st)
	}
	// The one in flight ends in SERVFAIL once its try times out.
	c.SetReadDeadline(time.Now().Add(3 * time.Second))
	buf := make([]byte, 512)
	n, err := c.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	if m := answerUnpacks(t, buf[:n]); m.Rcode != dns.RcodeServerFailure {
		t.Fatalf("rcode %s", dns.RcodeToString[m.Rcode])
	}
}

func TestCacheHitAllocatesNothing(t *testing.T) {
	f, _ := newOffline(t)
	prime(t, f, "www.example.com.", dns.TypeA, rrA("www.example.com.", 300, "93.184.216.34"))
	in := queryBytes(t, "www.example.com.", dns.TypeA, true)
	w := &worker{out: make([]byte, 0, ednsUDPSize)}
	allocs := testing.AllocsPerRun(1000, func() {
		if out, fwd := f.handle(w, in, 0); fwd || out == nil {
			t.Fatal("not a cache hit")
		}
	})
	if allocs != 0 {
		t.Fatalf("cache hit allocates %.1f times", allocs)
	}
	out, _ := f.handle(w, in, 0)
	if m := answerUnpacks(t, out); len(m.Answer) != 1 || m.Answer[0].(*dns.A).A.String() != "93.184.216.34" {
		t.Fatalf("answer %v", m)
	}
}

func TestParseAnswerKeepsOnlyItsQuestion(t *testing.T) {
	// An answer for another name never matches.
	in := queryBytes(t, "www.example.com.", dns.TypeA, false)
	var q query
	parseQuery(in, &q)
	m := new(dns.Msg)
	m.SetQuestion("evil.example.com.", dns.TypeA)
	m.Response = true
	b, _ := m.Pack()
	if matchAnswer(b, 0, &q) {
		t.Fatal("answer to another question accepted")
	}
	m.SetQuestion("WWW.EXAMPLE.COM.", dns.TypeA)
	m.Id = 7
	b, _ = m.Pack()
	if !matchAnswer(b, 7, &q) || matchAnswer(b, 8, &q) {
		t.Fatal("ID/case matching wrong")
	}
}

// TestSetRouterAddr: after the router's LAN address changes, its name
// answers with the new address and the new address's PTR is its name.
func TestSetRouterAddr(t *testing.T) {
	s := serve(t, testConfig())
	ask := func(name string, typ uint16) *dns.Msg {
		t.Helper()
		m := new(dns.Msg)
		m.SetQuestion(name, typ)
		in, _, err := (&dns.Client{Timeout: 2 * time.Second}).Exchange(m, "127.0.0.1:"+strconv.Itoa(s.port))
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	s.f.SetRouterAddr(netip.MustParseAddr("192.168.7.1"))
	if in := ask("gowrt.lan.", dns.TypeA); len(in.Answer) != 1 || in.Answer[0].(*dns.A).A.String() != "192.168.7.1" {
		t.Fatalf("gowrt.lan after SetRouterAddr: %v", in)
	}
	if in := ask("1.7.168.192.in-addr.arpa.", dns.TypePTR); len(in.Answer) != 1 || in.Answer[0].(*dns.PTR).Ptr != "gowrt.lan." {
		t.Fatalf("PTR of the new address: %v", in)
	}
	if in := ask("1.1.168.192.in-addr.arpa.", dns.TypePTR); len(in.Answer) != 0 {
		t.Fatalf("PTR of the old address still answers: %v", in)
	}
}
