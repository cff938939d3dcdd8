package router

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// dnsPeer runs a miekg/dns server on a loopback UDP socket with handler
// h and returns a UDP socket connected to it.
func dnsPeer(t *testing.T, h dns.HandlerFunc) net.Conn {
	t.Helper()
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	srv := &dns.Server{PacketConn: pc, Handler: h, NotifyStartedFunc: func() { close(started) }}
	go srv.ActivateAndServe()
	<-started
	t.Cleanup(func() { srv.Shutdown() })
	conn, err := net.Dial("udp4", pc.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func rrs(t *testing.T, s ...string) []dns.RR {
	t.Helper()
	var out []dns.RR
	for _, x := range s {
		rr, err := dns.NewRR(x)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rr)
	}
	return out
}

// reply answers r with rcode and the answer records.
func reply(w dns.ResponseWriter, r *dns.Msg, rcode int, answer []dns.RR, edit func(*dns.Msg)) {
	m := new(dns.Msg)
	m.SetRcode(r, rcode)
	m.RecursionAvailable = true
	m.Answer = answer
	if edit != nil {
		edit(m)
	}
	w.WriteMsg(m)
}

func TestLookupA(t *testing.T) {
	answer := rrs(t,
		"pool.ntp.org. 300 IN CNAME ntp.example.net.",
		"ntp.example.net. 300 IN A 192.0.2.10",
		"ntp.example.net. 300 IN AAAA 2001:db8::1",
		"ntp.example.net. 300 IN A 198.51.100.7",
	)
	seenc := make(chan *dns.Msg, 1)
	conn := dnsPeer(t, func(w dns.ResponseWriter, r *dns.Msg) {
		seenc <- r.Copy()
		reply(w, r, dns.RcodeSuccess, answer, nil)
	})
	got, err := lookupA(context.Background(), conn, "pool.ntp.org")
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.Addr{netip.MustParseAddr("192.0.2.10"), netip.MustParseAddr("198.51.100.7")}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	// The query as the server parsed it: one A/IN question, RD set.
	seen := <-seenc
	if len(seen.Question) != 1 || seen.Question[0].Name != "pool.ntp.org." ||
		seen.Question[0].Qtype != dns.TypeA || seen.Question[0].Qclass != dns.ClassINET ||
		!seen.RecursionDesired || seen.Response || seen.Opcode != dns.OpcodeQuery {
		t.Fatalf("server saw query %v", seen)
	}
}

// TestLookupAQuestionCase: the question echo is compared without regard
// to ASCII case (RFC 4343), as servers may change it.
func TestLookupAQuestionCase(t *testing.T) {
	answer := rrs(t, "Time.Example. 60 IN A 203.0.113.5")
	conn := dnsPeer(t, func(w dns.ResponseWriter, r *dns.Msg) {
		reply(w, r, dns.RcodeSuccess, answer, func(m *dns.Msg) {
			m.Question[0].Name = strings.ToUpper(m.Question[0].Name)
		})
	})
	got, err := lookupA(context.Background(), conn, "Time.Example.")
	if err != nil || len(got) != 1 || got[0] != netip.MustParseAddr("203.0.113.5") {
		t.Fatalf("got %v, %v", got, err)
	}
}

func TestLookupAErrors(t *testing.T) {
	// Records are made here: handlers run on the server's goroutines,
	// where t.Fatal may not be called.
	a, b, aaaa := rrs(t, "a.example. 60 IN A 192.0.2.1"), rrs(t, "b.example. 60 IN A 192.0.2.1"), rrs(t, "a.example. 60 IN AAAA 2001:db8::2")
	for _, c := range []struct {
		name    string
		h       dns.HandlerFunc
		want    error
		wantMsg string
	}{
		{"wrong ID", func(w dns.ResponseWriter, r *dns.Msg) {
			reply(w, r, dns.RcodeSuccess, a, func(m *dns.Msg) { m.Id ^= 0x5a5a })
		}, errAnswerID, ""},
		{"NXDOMAIN", func(w dns.ResponseWriter, r *dns.Msg) {
			reply(w, r, dns.RcodeNameError, nil, nil)
		}, errRcode, "NXDOMAIN"},
		{"SERVFAIL", func(w dns.ResponseWriter, r *dns.Msg) {
			reply(w, r, dns.RcodeServerFailure, nil, nil)
		}, errRcode, "SERVFAIL"},
		{"BADVERS in the OPT RR", func(w dns.ResponseWriter, r *dns.Msg) {
			reply(w, r, dns.RcodeBadVers, a, func(m *dns.Msg) { m.SetEdns0(512, false) })
		}, errRcode, "BADVERS"},
		{"A record of 2 bytes", func(w dns.ResponseWriter, r *dns.Msg) {
			m := new(dns.Msg)
			m.SetReply(r)
			m.Answer = a
			b, _ := m.Pack()
			b[len(b)-5] = 2 // RDLENGTH 2; the last two address bytes stay as trailing bytes
			w.Write(b)
		}, nil, "A record of 2 bytes"},
		{"truncated", func(w dns.ResponseWriter, r *dns.Msg) {
			reply(w, r, dns.RcodeSuccess, nil, func(m *dns.Msg) { m.Truncated = true })
		}, errTruncated, "TC"},
		{"no A records", func(w dns.ResponseWriter, r *dns.Msg) {
			reply(w, r, dns.RcodeSuccess, aaaa, nil)
		}, errNoIPv4, ""},
		{"NODATA", func(w dns.ResponseWriter, r *dns.Msg) {
			reply(w, r, dns.RcodeSuccess, nil, nil)
		}, errNoIPv4, ""},
		{"other question", func(w dns.ResponseWriter, r *dns.Msg) {
			reply(w, r, dns.RcodeSuccess, b, func(m *dns.Msg) { m.Question[0].Name = "b.example." })
		}, errAnswerQuestion, ""},
		{"other qtype", func(w dns.ResponseWriter, r *dns.Msg) {
			reply(w, r, dns.RcodeSuccess, a, func(m *dns.Msg) { m.Question[0].Qtype = dns.TypeAAAA })
		}, errAnswerQuestion, ""},
		{"no question", func(w dns.ResponseWriter, r *dns.Msg) {
			reply(w, r, dns.RcodeSuccess, a, func(m *dns.Msg) { m.Question = nil })
		}, errAnswerQuestion, ""},
		{"query echoed back", func(w dns.ResponseWriter, r *dns.Msg) {
			w.WriteMsg(r)
		}, errNotAnswer, ""},
		{"garbage", func(w dns.ResponseWriter, r *dns.Msg) {
			b, _ := r.Pack()
			b[2] |= 0x80                           // QR, so only the body is wrong
			b = append(b[:12+5], 0xc0, 0xff, 0xff) // question cut inside its name, then a wild pointer
			w.Write(b)
		}, nil, "malformed answer"},
		{"short header", func(w dns.ResponseWriter, r *dns.Msg) {
			w.Write([]byte{byte(r.Id >> 8), byte(r.Id), 0x81})
		}, nil, "malformed answer"},
		{"answer record cut short", func(w dns.ResponseWriter, r *dns.Msg) {
			m := new(dns.Msg)
			m.SetReply(r)
			m.Answer = a
			b, _ := m.Pack()
			w.Write(b[:len(b)-2])
		}, nil, "malformed answer"},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn := dnsPeer(t, c.h)
			got, err := lookupA(context.Background(), conn, "a.example")
			if err == nil {
				t.Fatalf("got %v, want an error", got)
			}
			if c.want != nil && !errors.Is(err, c.want) {
				t.Errorf("error %q, want %q", err, c.want)
			}
			if !strings.Contains(err.Error(), c.wantMsg) || !strings.HasPrefix(err.Error(), "resolve a.example: ") {
				t.Errorf("error %q, want it to name the host and say %q", err, c.wantMsg)
			}
		})
	}
}

// TestLookupAWaits: a server that never answers costs the caller its
// context's deadline, and a cancelled context ends the wait at once.
func TestLookupAWaits(t *testing.T) {
	conn := dnsPeer(t, func(dns.ResponseWriter, *dns.Msg) {})
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := lookupA(ctx, conn, "a.example"); !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, net.ErrClosed) {
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Fatalf("error %v, want a timeout", err)
		}
	}
	if d := time.Since(start); d < 100*time.Millisecond || d > 2*time.Second {
		t.Fatalf("waited %v for a 150 ms deadline", d)
	}

	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start = time.Now()
	if _, err := lookupA(ctx, conn, "a.example"); !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("cancel took %v to end the wait", d)
	}
}

func TestLookupABadHost(t *testing.T) {
	conn := dnsPeer(t, func(w dns.ResponseWriter, r *dns.Msg) { reply(w, r, dns.RcodeSuccess, nil, nil) })
	for _, h := range []string{"", ".", "a..b", strings.Repeat("x", 64) + ".example", strings.Repeat("abcdefg.", 40)} {
		if got, err := lookupA(context.Background(), conn, h); err == nil {
			t.Errorf("lookupA(%q) = %v, want an error", h, got)
		}
	}
}

// fuzzQuestion is the question FuzzLookupAAnswer's answers reply to.
const fuzzID, fuzzHost = 0x1234, "pool.ntp.org."

// FuzzLookupAAnswer feeds parseAAnswer arbitrary answers. It must never
// panic, and whatever it accepts must be a real answer: miekg/dns must
// unpack it too, to the same ID and A records.
func FuzzLookupAAnswer(f *testing.F) {
	pack := func(rcode int, answer []string, edit func(*dns.Msg)) {
		q := new(dns.Msg)
		q.SetQuestion(fuzzHost, dns.TypeA)
		q.Id = fuzzID
		m := new(dns.Msg)
		m.SetRcode(q, rcode)
		for _, s := range answer {
			rr, err := dns.NewRR(s)
			if err != nil {
				f.Fatal(err)
			}
			m.Answer = append(m.Answer, rr)
		}
		if edit != nil {
			edit(m)
		}
		b, err := m.Pack()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	pack(dns.RcodeSuccess, []string{"pool.ntp.org. 60 IN A 192.0.2.1", "pool.ntp.org. 60 IN A 192.0.2.2"}, nil)
	pack(dns.RcodeSuccess, []string{"pool.ntp.org. 60 IN CNAME a.example.", "a.example. 60 IN A 192.0.2.3"}, nil)
	pack(dns.RcodeSuccess, []string{"pool.ntp.org. 60 IN AAAA 2001:db8::1"}, nil)
	pack(dns.RcodeNameError, nil, func(m *dns.Msg) {
		m.Ns = append(m.Ns, &dns.SOA{Hdr: dns.RR_Header{Name: "org.", Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: 60},
			Ns: "a0.org.", Mbox: "noc.org.", Serial: 1, Refresh: 2, Retry: 3, Expire: 4, Minttl: 5})
	})
	pack(dns.RcodeSuccess, nil, func(m *dns.Msg) { m.Truncated = true })
	pack(dns.RcodeSuccess, []string{"pool.ntp.org. 60 IN A 192.0.2.1"}, func(m *dns.Msg) { m.SetEdns0(1232, true) })
	pack(dns.RcodeSuccess, []string{"pool.ntp.org. 60 IN A 192.0.2.1"}, func(m *dns.Msg) { m.Compress = true })

	q, err := questionA(fuzzHost)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		addrs, err := parseAAnswer(msg, fuzzID, q)
		if err != nil {
			return
		}
		if len(addrs) == 0 {
			t.Fatal("accepted an answer without an address")
		}
		var m dns.Msg
		if err := m.Unpack(msg); err != nil {
			// miekg/dns is stricter about some record data (e.g. of
			// types it knows and dnsmessage skips); the header, question
			// and A records must still be what parseAAnswer read.
			return
		}
		if m.Id != fuzzID || !m.Response || m.Rcode != dns.RcodeSuccess || m.Truncated {
			t.Fatalf("accepted %v", &m)
		}
		var want []netip.Addr
		for _, rr := range m.Answer {
			if a, ok := rr.(*dns.A); ok && a.Hdr.Class == dns.ClassINET {
				ip, _ := netip.AddrFromSlice(a.A.To4())
				want = append(want, ip)
			}
		}
		if !slices.Equal(addrs, want) {
			t.Fatalf("read %v, miekg/dns reads %v", addrs, want)
		}
	})
}
