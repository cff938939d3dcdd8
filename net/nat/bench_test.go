package nat

import (
	"encoding/binary"
	"sync/atomic"
	"testing"
)

// BenchmarkCopy1500 is the baseline: copying one 1500-byte packet.
func BenchmarkCopy1500(b *testing.B) {
	src, dst := make([]byte, 1500), make([]byte, 1500)
	b.SetBytes(1500)
	for b.Loop() {
		copy(dst, src)
	}
}

// BenchmarkForwardEstablished: a masqueraded TCP flow's 1500-byte
// packets, alternately LAN->WAN and WAN->LAN, on a table of 4096 flows.
func BenchmarkForwardEstablished(b *testing.B) {
	tb, _ := newTable(b, Config{}, homePolicy(1452))
	for i := 0; i < 4095; i++ {
		tb.Forward(udpPkt(ap(hostB, uint16(i+1)), ap(remote, 53), 1), lan)
	}
	tb.Forward(tcpPkt(ap(hostA, 40000), ap(remote, 443), tcpSYN, 1, 0, nil, 0), lan)
	tb.Forward(tcpPkt(ap(remote, 443), ap(wanAddr, 40000), tcpSYN|tcpACK, 1, 2, nil, 0), wan)
	up := tcpPkt(ap(hostA, 40000), ap(remote, 443), tcpACK, 2, 2, nil, 1460)
	down := tcpPkt(ap(remote, 443), ap(wanAddr, 40000), tcpACK, 2, 2, nil, 1460)
	upHdr, downHdr := append([]byte(nil), up[:40]...), append([]byte(nil), down[:40]...)
	b.SetBytes(1500)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		p, in, hdr := up, lan, upHdr
		if i&1 == 1 {
			p, in, hdr = down, wan, downHdr
		}
		i++
		// Forward rewrote the last copy: restore the 40 header bytes
		// (the forward layer gets a fresh packet each time).
		copy(p, hdr)
		if v := tb.Forward(p, in); v.Action != Forward {
			b.Fatal(v)
		}
	}
}

// BenchmarkForwardNew: every packet creates a connection (UDP from ever
// new source ports); the table recycles expired entries.
func BenchmarkForwardNew(b *testing.B) {
	tb, clk := newTable(b, Config{MaxConns: 1 << 16}, homePolicy(1452))
	p := udpPkt(ap(hostA, 1), ap(remote, 53), 40)
	b.ReportAllocs()
	n := uint32(0)
	for b.Loop() {
		n++
		if n%60000 == 0 {
			clk.advance(61e9) // expire the previous batch
		}
		binary.BigEndian.PutUint16(p[20:], uint16(n))
		binary.BigEndian.PutUint16(p[12:], uint16(n>>16)) // another source host every 64Ki flows
		// The TTL back up, and the header checksum over the new
		// source address.
		setTTL(p, 64)
		if v := tb.Forward(p, lan); v.Action != Forward {
			b.Fatal(v)
		}
	}
}

// BenchmarkForwardEstablishedParallel: goroutines forwarding their own
// flows at once (LAN and WAN receive on separate cores), to measure what
// the single table mutex costs under contention.
func BenchmarkForwardEstablishedParallel(b *testing.B) {
	tb, _ := newTable(b, Config{}, homePolicy(1452))
	var next atomic.Uint32
	b.SetBytes(1500)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		port := uint16(next.Add(1))
		tb.Forward(tcpPkt(ap(hostA, port), ap(remote, 443), tcpSYN, 1, 0, nil, 0), lan)
		tb.Forward(tcpPkt(ap(remote, 443), ap(wanAddr, port), tcpSYN|tcpACK, 1, 2, nil, 0), wan)
		up := tcpPkt(ap(hostA, port), ap(remote, 443), tcpACK, 2, 2, nil, 1460)
		hdr := append([]byte(nil), up[:40]...)
		for pb.Next() {
			copy(up, hdr)
			if v := tb.Forward(up, lan); v.Action != Forward {
				b.Fatal(v)
			}
		}
	})
}

// BenchmarkForwardFragment: the middle fragment of a masqueraded UDP
// datagram (1500 bytes), found in the fragment table and rewritten, on a
// table of 4096 flows.
func BenchmarkForwardFragment(b *testing.B) {
	tb, _ := newTable(b, Config{}, homePolicy(0))
	for i := 0; i < 4095; i++ {
		tb.Forward(udpPkt(ap(hostB, uint16(i+1)), ap(remote, 53), 1), lan)
	}
	frags := fragmentIP(udpPkt(ap(hostA, 5000), ap(remote, 53), 3000-udpHeader), 1500, 77)
	if v := tb.Forward(frags[0], lan); v.Action != Forward {
		b.Fatal(v)
	}
	mid := frags[1] // MF set: never completes the datagram, so the entry stays
	hdr := append([]byte(nil), mid[:20]...)
	b.SetBytes(int64(len(mid)))
	b.ReportAllocs()
	for b.Loop() {
		copy(mid, hdr)
		if v := tb.Forward(mid, lan); v.Action != Forward {
			b.Fatal(v)
		}
	}
}
