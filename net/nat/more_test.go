package nat

import (
	"bytes"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestHopSeqlock: readers never see a hop mixed from two writes.
func TestHopSeqlock(t *testing.T) {
	tb, _ := newTable(t, Config{}, homePolicy(0))
	v := mustForward(t, tb, udpPkt(ap(hostA, 1), ap(remote, 53), 1), lan, wan)
	var stop atomic.Bool
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				k := byte(i*2 + w)
				v.SetHop(Hop{Valid: true, Out: Iface(k), Dst: [6]byte{k, k, k, k, k, k}, Src: [6]byte{k, k, k, k, k, k}})
			}
		}(w)
	}
	eth := make([]byte, 12)
	for i := 0; i < 200000; i++ {
		if v.PutHop(eth) && !bytes.Equal(eth[:6], eth[6:]) {
			stop.Store(true)
			wg.Wait()
			t.Fatalf("torn hop % x", eth)
		}
		h := v.Hop()
		if !h.Valid {
			continue
		}
		k := byte(h.Out)
		if h.Dst != [6]byte{k, k, k, k, k, k} || h.Src != h.Dst {
			stop.Store(true)
			wg.Wait()
			t.Fatalf("torn hop %+v", h)
		}
	}
	stop.Store(true)
	wg.Wait()
}

func TestPolicyRequest(t *testing.T) {
	var got []Request
	p := policyFunc(func(r *Request) Decision {
		got = append(got, *r)
		switch r.Proto {
		case ProtoTCP:
			return Decision{Action: Reject}
		case ProtoUDP:
			return Decision{Action: Drop}
		}
		return Decision{Action: Local}
	})
	tb, _ := newTable(t, Config{}, p)
	if v := tb.Forward(tcpPkt(ap(remote, 1234), ap(wanAddr, 22), tcpSYN, 1, 0, nil, 0), wan); v.Action != Reject || v.Reason != Denied {
		t.Fatalf("%+v", v)
	}
	if v := tb.Forward(udpPkt(ap(remote, 1234), ap(wanAddr, 161), 1), wan); v.Action != Drop || v.Reason != Denied {
		t.Fatalf("%+v", v)
	}
	if v := tb.Forward(echoPkt(remote, wanAddr, icmpEcho, 99, 1), wan); v.Action != Local {
		t.Fatalf("%+v", v)
	}
	want := []Request{
		{In: wan, Proto: ProtoTCP, Src: ap(remote, 1234), Dst: ap(wanAddr, 22)},
		{In: wan, Proto: ProtoUDP, Src: ap(remote, 1234), Dst: ap(wanAddr, 161)},
		{In: wan, Proto: ProtoICMP, Src: ap(remote, 99), Dst: ap(wanAddr, 99), ICMPType: icmpEcho},
	}
	if len(got) != len(want) {
		t.Fatalf("%d requests", len(got))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("request %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if s := tb.Stats(); s.Drops[Denied] != 2 || s.Conns != 0 || s.Policy != 3 {
		t.Fatalf("%+v", s)
	}
}

func TestReplySYNOnClosedConnection(t *testing.T) {
	tb, _ := newTable(t, Config{}, homePolicy(0))
	mustForward(t, tb, tcpPkt(ap(hostA, 40000), ap(remote, 443), tcpSYN, 1, 0, nil, 0), lan, wan)
	mustForward(t, tb, tcpPkt(ap(remote, 443), ap(wanAddr, 40000), tcpRST|tcpACK, 0, 2, nil, 0), wan, lan)
	// The remote side opens a connection on the same ports: not ours.
	if v := tb.Forward(tcpPkt(ap(remote, 443), ap(wanAddr, 40000), tcpSYN, 7, 0, nil, 0), wan); v.Action != Local || v.Conn != nil {
		t.Fatalf("%+v", v)
	}
	if tb.Stats().Conns != 0 {
		t.Fatal("the closed connection survived")
	}
}

func TestICMPErrorTTL(t *testing.T) {
	tb, _ := newTable(t, Config{}, homePolicy(0))
	p := udpPkt(ap(hostA, 1), ap(remote, 53), 1)
	mustForward(t, tb, p, lan, wan)
	e := quoteICMPError(hop, wanAddr, icmpUnreach, 3, p, 28)
	e[8] = 1
	e[10], e[11] = 0, 0
	copy(e[10:], []byte{byte(refChecksum(e[:20]) >> 8), byte(refChecksum(e[:20]))})
	keep := bytes.Clone(e)
	if v := tb.Forward(e, wan); v.Action != Drop || v.Reason != TTLExceeded || !bytes.Equal(e, keep) {
		t.Fatalf("%+v", v)
	}
}

func TestOutputCollision(t *testing.T) {
	tb, _ := newTable(t, Config{}, homePolicy(0))
	mustForward(t, tb, udpPkt(ap(hostA, 5000), ap(remote, 53), 1), lan, wan)
	// The router's stack picks the same port: its replies would be the
	// masqueraded host's, so the router's flow stays untracked.
	if !tb.Output(udpPkt(ap(wanAddr, 5000), ap(remote, 53), 1), wan) {
		t.Fatal("Output failed")
	}
	if n := tb.Stats().Conns; n != 1 {
		t.Fatalf("%d conns", n)
	}
	r := udpPkt(ap(remote, 53), ap(wanAddr, 5000), 1)
	mustForward(t, tb, r, wan, lan)
	if dstOf(r) != hostA {
		t.Fatal("reply stolen")
	}
	// And a host's flow avoids a port the router's stack holds.
	tb.Output(udpPkt(ap(wanAddr, 6000), ap(remote, 53), 1), wan)
	q := udpPkt(ap(hostB, 6000), ap(remote, 53), 1)
	mustForward(t, tb, q, lan, wan)
	if sportOf(q) == 6000 {
		t.Fatal("masqueraded onto the router's own port")
	}
}

func TestTimeoutsConfig(t *testing.T) {
	tb, _ := newTable(t, Config{Timeouts: Timeouts{UDP: 5 * time.Second}}, homePolicy(0))
	mustForward(t, tb, udpPkt(ap(hostA, 1), ap(remote, 53), 1), lan, wan)
	mustForward(t, tb, echoPkt(hostA, remote, icmpEcho, 1, 1), lan, wan)
	for c := range tb.Conns {
		want := 5 * time.Second
		if c.Proto == ProtoICMP {
			want = 30 * time.Second
		}
		if c.Expires != want {
			t.Errorf("%v expires in %v, want %v", c.Proto, c.Expires, want)
		}
	}
}

func TestOtherProtocol(t *testing.T) {
	tb, _ := newTable(t, Config{}, homePolicy(0))
	gre := ipPacket(hostA, remote, 47, 64, []byte{0, 0, 0x88, 0x0b, 1, 2, 3, 4})
	mustForward(t, tb, gre, lan, wan)
	if srcOf(gre) != wanAddr {
		t.Fatalf("GRE left from %v", srcOf(gre))
	}
	back := ipPacket(remote, wanAddr, 47, 64, []byte{0, 0, 0x88, 0x0b, 1, 2, 3, 4})
	mustForward(t, tb, back, wan, lan)
	if dstOf(back) != hostA {
		t.Fatalf("GRE reply went to %v", dstOf(back))
	}
	// A second host to the same remote cannot share the address.
	if v := tb.Forward(ipPacket(hostB, remote, 47, 64, make([]byte, 8)), lan); v.Action != Drop || v.Reason != NoPort {
		t.Fatalf("%+v", v)
	}
}

func TestWrongInterface(t *testing.T) {
	tb, _ := newTable(t, Config{}, homePolicy(0))
	mustForward(t, tb, udpPkt(ap(hostA, 1), ap(remote, 53), 1), lan, wan)
	// A LAN host forging the remote's reply, and a WAN host forging the
	// LAN host's packets.
	if v := tb.Forward(udpPkt(ap(remote, 53), ap(wanAddr, 1), 1), lan); v.Action != Drop || v.Reason != Invalid {
		t.Fatalf("reply from the LAN: %+v", v)
	}
	if v := tb.Forward(udpPkt(ap(hostA, 1), ap(remote, 53), 1), wan); v.Action != Drop || v.Reason != Invalid {
		t.Fatalf("original from the WAN: %+v", v)
	}
	tb.Output(udpPkt(ap(wanAddr, 9), ap(remote, 123), 1), wan)
	if v := tb.Forward(udpPkt(ap(remote, 123), ap(wanAddr, 9), 1), lan); v.Action != Drop || v.Reason != Invalid {
		t.Fatalf("router's reply from the LAN: %+v", v)
	}
}

func TestHairpin(t *testing.T) {
	// A LAN host reaches the port forward by the WAN address: DNAT to
	// the server and SNAT to the router, so the server answers through
	// the router.
	tb, _ := newTable(t, Config{}, policyFunc(func(r *Request) Decision {
		return Decision{Action: Forward, Out: lan, DNAT: ap(server, 80), SNAT: routerLAN}
	}))
	p := tcpPkt(ap(hostA, 1234), ap(wanAddr, 8080), tcpSYN, 1, 0, nil, 0)
	mustForward(t, tb, p, lan, lan)
	if srcOf(p) != routerLAN || sportOf(p) != 1234 || dstOf(p) != server || dportOf(p) != 80 {
		t.Fatalf("%v:%d -> %v:%d", srcOf(p), sportOf(p), dstOf(p), dportOf(p))
	}
	r := tcpPkt(ap(server, 80), ap(routerLAN, 1234), tcpSYN|tcpACK, 1, 2, nil, 0)
	mustForward(t, tb, r, lan, lan)
	if srcOf(r) != wanAddr || sportOf(r) != 8080 || dstOf(r) != hostA || dportOf(r) != 1234 {
		t.Fatalf("%v:%d -> %v:%d", srcOf(r), sportOf(r), dstOf(r), dportOf(r))
	}
}

func TestIPOptions(t *testing.T) {
	// A header with 4 bytes of options (NOPs): transport offsets move.
	tb, _ := newTable(t, Config{}, homePolicy(0))
	u := udpPkt(ap(hostA, 4000), ap(remote, 53), 10)
	p := make([]byte, len(u)+4)
	copy(p, u[:20])
	p[0] = 0x46
	p[20], p[21], p[22], p[23] = 1, 1, 1, 0 // NOP NOP NOP EOL
	copy(p[24:], u[20:])
	p[2], p[3] = byte(len(p)>>8), byte(len(p))
	p[10], p[11] = 0, 0
	c := refChecksum(p[:24])
	p[10], p[11] = byte(c>>8), byte(c)
	v := tb.Forward(p, lan)
	if v.Action != Forward || !ipOK(p) {
		t.Fatalf("%+v", v)
	}
	l4 := p[24:]
	if srcOf(p) != wanAddr || refSum(pseudo(p, len(l4)), l4) != 0xffff || l4[0] != u[20] || l4[1] != u[21] {
		t.Fatal("UDP behind IP options not translated correctly")
	}
	if !bytes.Equal(p[20:24], []byte{1, 1, 1, 0}) {
		t.Fatal("options changed")
	}
}
