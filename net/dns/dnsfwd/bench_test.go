package dnsfwd

import (
	"testing"

	"github.com/miekg/dns"
)

// BenchmarkCacheHit is the whole per-datagram path of a cached answer:
// parse the query, check the local names, look up the cache, write the
// answer with the client's ID and aged TTLs.
func BenchmarkCacheHit(b *testing.B) {
	f, _ := newOffline(b)
	prime(b, f, "www.example.com.", dns.TypeA, rrA("www.example.com.", 300, "93.184.216.34"))
	in := queryBytes(b, "www.example.com.", dns.TypeA, true)
	w := &worker{out: make([]byte, 0, ednsUDPSize)}
	b.ReportAllocs()
	for b.Loop() {
		if _, fwd := f.handle(w, in, 0); fwd {
			b.Fatal("miss")
		}
	}
}

// BenchmarkBaselinePack is only miekg/dns packing the same answer, what a
// dns.Msg-based cache would pay per hit before even unpacking the query.
func BenchmarkBaselinePack(b *testing.B) {
	m := new(dns.Msg)
	m.SetQuestion("www.example.com.", dns.TypeA)
	m.Response, m.RecursionAvailable = true, true
	m.Answer = []dns.RR{rrA("www.example.com.", 300, "93.184.216.34")}
	m.SetEdns0(ednsUDPSize, false)
	buf := make([]byte, 0, ednsUDPSize)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.PackBuffer(buf); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBaselineUnpackPack is what a dns.Msg-based server does per
// cached answer: unpack the query, copy the cached message, pack it.
func BenchmarkBaselineUnpackPack(b *testing.B) {
	in := queryBytes(b, "www.example.com.", dns.TypeA, true)
	cached := new(dns.Msg)
	cached.SetQuestion("www.example.com.", dns.TypeA)
	cached.Response, cached.RecursionAvailable = true, true
	cached.Answer = []dns.RR{rrA("www.example.com.", 300, "93.184.216.34")}
	cached.SetEdns0(ednsUDPSize, false)
	buf := make([]byte, 0, ednsUDPSize)
	b.ReportAllocs()
	for b.Loop() {
		q := new(dns.Msg)
		if err := q.Unpack(in); err != nil {
			b.Fatal(err)
		}
		a := cached.Copy()
		a.Id = q.Id
		if _, err := a.PackBuffer(buf); err != nil {
			b.Fatal(err)
		}
	}
}
