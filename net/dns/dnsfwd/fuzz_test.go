package dnsfwd

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// FuzzHandle feeds arbitrary bytes to the path every UDP datagram takes
// (parse, local names, cache). It must never panic, and every answer it
// makes must be a DNS message miekg/dns reads, with the query's ID.
func FuzzHandle(f *testing.F) {
	for _, c := range []struct {
		name string
		t    uint16
		edns bool
	}{
		{"www.example.com.", dns.TypeA, true},
		{"www.example.com.", dns.TypeA, false},
		{"laptop.lan.", dns.TypeA, true},
		{"gowrt.", dns.TypeAAAA, false},
		{"1.1.168.192.in-addr.arpa.", dns.TypePTR, true},
		{"8.8.8.8.in-addr.arpa.", dns.TypePTR, false},
		{"lan.", dns.TypeSOA, false},
		{".", dns.TypeNS, true},
	} {
		f.Add(queryBytes(f, c.name, c.t, c.edns))
	}
	f.Add([]byte{})
	f.Add(make([]byte, headerLen))
	fw, _ := newOffline(f)
	prime(f, fw, "www.example.com.", dns.TypeA, rrA("www.example.com.", 300, "93.184.216.34"))
	w := &worker{out: make([]byte, 0, ednsUDPSize)}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, fwd := fw.handle(w, in, 0)
		if fwd {
			// What goes upstream: the question must be whole.
			if w.q.qEnd > len(in) || len(w.q.key) < keyExtra+1 {
				t.Fatalf("forwarding a broken query: %+v", w.q)
			}
			return
		}
		if out == nil {
			return
		}
		if len(out) > ednsUDPSize {
			t.Fatalf("UDP answer of %d bytes", len(out))
		}
		m := new(dns.Msg)
		if err := m.Unpack(out); err != nil {
			t.Fatalf("answer does not unpack: %v\nin  % x\nout % x", err, in, out)
		}
		if m.Id != binary.BigEndian.Uint16(in) || !m.Response {
			t.Fatalf("answer id %d response %v", m.Id, m.Response)
		}
	})
}

// FuzzParseAnswer feeds arbitrary upstream answers to the code that
// validates them, caches them and serves them from the cache.
func FuzzParseAnswer(f *testing.F) {
	in := queryBytes(f, "www.example.com.", dns.TypeA, true)
	var q query
	parseQuery(in, &q)
	add := func(m *dns.Msg) {
		m.SetQuestion("www.example.com.", dns.TypeA)
		m.Response = true
		b, err := m.Pack()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	m := new(dns.Msg)
	m.Answer = []dns.RR{rrA("www.example.com.", 300, "192.168.1.1")}
	m.SetEdns0(1232, true)
	add(m)
	m = new(dns.Msg)
	m.Rcode = dns.RcodeNameError
	m.Ns = []dns.RR{soa()}
	add(m)
	m = new(dns.Msg)
	m.Truncated = true
	add(m)
	now := time.Unix(1e9, 0)
	f.Fuzz(func(t *testing.T, resp []byte) {
		// No matchAnswer first: parseAnswer must survive anything.
		a, err := parseAnswer(resp, &q, now)
		if err != nil || a.tc {
			return
		}
		out, _ := appendEntry(nil, in, &q, a.e, maxTCPMsg, now.Add(time.Second))
		// An answer miekg/dns reads must stay readable once served.
		if matchAnswer(resp, binary.BigEndian.Uint16(resp), &q) && new(dns.Msg).Unpack(resp) == nil {
			if err := new(dns.Msg).Unpack(out); err != nil {
				t.Fatalf("served answer does not unpack: %v\nresp % x\nout  % x", err, resp, out)
			}
		}
	})
}
