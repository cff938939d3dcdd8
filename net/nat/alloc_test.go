//go:build !race

// The race detector makes sync.Pool drop objects at random, so the
// allocation counts only hold without it.

package nat

import (
	"encoding/binary"
	"testing"
)

func TestForwardAllocs(t *testing.T) {
	tb, _ := newTable(t, Config{MaxConns: 1 << 16}, homePolicy(1452))
	out := tcpPkt(ap(hostA, 40000), ap(remote, 443), tcpSYN, 1, 0, nil, 0)
	tb.Forward(out, lan)
	back := tcpPkt(ap(remote, 443), ap(wanAddr, 40000), tcpSYN|tcpACK, 1, 2, nil, 0)
	tb.Forward(back, wan)
	data := tcpPkt(ap(hostA, 40000), ap(remote, 443), tcpACK, 2, 2, nil, 1460)
	orig := append([]byte(nil), data...)
	if n := testing.AllocsPerRun(1000, func() {
		copy(data, orig)
		if v := tb.Forward(data, lan); v.Action != Forward {
			t.Fatal(v)
		}
	}); n != 0 {
		t.Errorf("hit path: %v allocs", n)
	}
	port := uint16(0)
	syn := udpPkt(ap(hostB, 1), ap(remote, 53), 20)
	if n := testing.AllocsPerRun(1000, func() {
		port++
		s := udpPkt0(syn, port)
		if v := tb.Forward(s, lan); v.Action != Forward || !v.New {
			t.Fatal(v)
		}
	}); n != 0 {
		t.Errorf("new-connection path: %v allocs", n)
	}
	o := udpPkt(ap(wanAddr, 1), ap(remote, 123), 48)
	if n := testing.AllocsPerRun(1000, func() {
		port++
		if !tb.Output(udpPkt0(o, port), wan) {
			t.Fatal("full")
		}
	}); n != 0 {
		t.Errorf("Output: %v allocs", n)
	}
	// ICMP error translation: a time exceeded quoting the forwarded packet.
	sent := append([]byte(nil), orig...)
	tb.Forward(sent, lan)
	e := quoteICMPError(hop, wanAddr, icmpTimeExceed, 0, sent, 48)
	eOrig := append([]byte(nil), e...)
	if n := testing.AllocsPerRun(1000, func() {
		copy(e, eOrig)
		if v := tb.Forward(e, wan); v.Action != Forward {
			t.Fatal(v)
		}
	}); n != 0 {
		t.Errorf("ICMP error path: %v allocs", n)
	}
	dst := make([]byte, 600)
	if n := testing.AllocsPerRun(100, func() {
		ICMPError(dst, data, icmpTimeExceed, 0, routerLAN)
		TCPReset(dst, data)
	}); n != 0 {
		t.Errorf("answers: %v allocs", n)
	}
}

// udpPkt0 sets the source port of a UDP packet in place (checksum
// updated), without allocating.
func udpPkt0(p []byte, port uint16) []byte {
	set16(p[20:], 0, port, udpOffCsum, 0)
	binary.BigEndian.PutUint16(p[8:], 64<<8|17) // ttl back to 64 after a forward
	binary.BigEndian.PutUint16(p[10:], ipHeaderChecksum(p[:20]))
	return p
}

// TestFragmentAllocs: a fragmented datagram (first fragment recorded,
// the others following it) allocates nothing.
func TestFragmentAllocs(t *testing.T) {
	tb, _ := newTable(t, Config{}, homePolicy(0))
	_, frags := bigUDP(t, ap(hostA, 5000), ap(remote, 53), 77)
	var orig [3][]byte
	for i, f := range frags {
		orig[i] = append([]byte(nil), f...)
	}
	if n := testing.AllocsPerRun(1000, func() {
		for i, f := range frags {
			copy(f, orig[i])
			if v := tb.Forward(f, lan); v.Action != Forward {
				t.Fatal(v)
			}
		}
	}); n != 0 {
		t.Errorf("fragment path: %v allocs", n)
	}
}
