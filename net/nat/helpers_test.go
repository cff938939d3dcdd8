package nat

import (
	"encoding/binary"
	"net/netip"
	"sync/atomic"
	"testing"
)

// The test network: a LAN behind the router, the router's WAN address,
// hosts on the internet.
const (
	lan Iface = 0
	wan Iface = 1
)

var (
	routerLAN = netip.MustParseAddr("192.168.1.1")
	hostA     = netip.MustParseAddr("192.168.1.100")
	hostB     = netip.MustParseAddr("192.168.1.101")
	server    = netip.MustParseAddr("192.168.1.10") // port forward target
	wanAddr   = netip.MustParseAddr("203.0.113.5")
	remote    = netip.MustParseAddr("198.51.100.7")
	hop       = netip.MustParseAddr("10.9.9.9") // a router on the path
)

type policyFunc func(*Request) Decision

func (f policyFunc) Decide(r *Request) Decision { return f(r) }

// homePolicy is an OpenWrt default: LAN may go anywhere (masqueraded),
// the WAN reaches only a port forward (tcp/udp 8080 -> server:80).
func homePolicy(mss uint16) Policy {
	return policyFunc(func(r *Request) Decision {
		switch {
		case r.Dst.Addr() == routerLAN || (r.In == wan && r.Dst.Addr() == wanAddr && r.Dst.Port() != 8080):
			return Decision{Action: Local}
		case r.In == lan:
			return Decision{Action: Forward, Out: wan, SNAT: wanAddr, MSS: mss}
		case r.In == wan && r.Dst.Addr() == wanAddr && r.Dst.Port() == 8080:
			return Decision{Action: Forward, Out: lan, DNAT: netip.AddrPortFrom(server, 80), MSS: mss}
		}
		return Decision{Action: Drop}
	})
}

// fakeClock is a settable monotonic clock.
type fakeClock struct{ ns atomic.Int64 }

func (c *fakeClock) now() int64 { return c.ns.Load() }
func (c *fakeClock) advance(d int64) {
	c.ns.Add(d)
}

func newTable(t testing.TB, cfg Config, p Policy) (*Table, *fakeClock) {
	t.Helper()
	clk := &fakeClock{}
	clk.ns.Store(1e9)
	if cfg.Now == nil {
		cfg.Now = clk.now
	}
	tb, err := New(cfg, p)
	if err != nil {
		t.Fatal(err)
	}
	return tb, clk
}

// refSum is the test's own one's complement sum (RFC 1071), written
// independently of the package: sum into 64 bits, fold at the end.
func refSum(parts ...[]byte) uint16 {
	var s uint64
	var odd bool
	var carry byte
	for _, b := range parts {
		for _, x := range b {
			if !odd {
				carry = x
			} else {
				s += uint64(carry)<<8 | uint64(x)
			}
			odd = !odd
		}
	}
	if odd {
		s += uint64(carry) << 8
	}
	for s > 0xffff {
		s = s>>16 + s&0xffff
	}
	return uint16(s)
}

func refChecksum(parts ...[]byte) uint16 { return ^refSum(parts...) }

func pseudo(ip []byte, l4len int) []byte {
	ph := make([]byte, 12)
	copy(ph[0:8], ip[12:20])
	ph[9] = ip[9]
	binary.BigEndian.PutUint16(ph[10:], uint16(l4len))
	return ph
}

// ipOK reports whether the IPv4 header checksum verifies.
func ipOK(p []byte) bool {
	ihl := int(p[0]&0xf) * 4
	return refSum(p[:ihl]) == 0xffff
}

// l4OK reports whether the transport checksum of an unfragmented packet
// verifies (UDP checksum 0 counts as fine).
func l4OK(p []byte) bool {
	ihl := int(p[0]&0xf) * 4
	tot := int(binary.BigEndian.Uint16(p[2:]))
	l4 := p[ihl:tot]
	switch p[9] {
	case 6:
		return refSum(pseudo(p, len(l4)), l4) == 0xffff
	case 17:
		if binary.BigEndian.Uint16(l4[6:]) == 0 {
			return true
		}
		return refSum(pseudo(p, len(l4)), l4) == 0xffff
	case 1:
		return refSum(l4) == 0xffff
	}
	return true
}

func ipPacket(src, dst netip.Addr, proto uint8, ttl uint8, l4 []byte) []byte {
	p := make([]byte, 20+len(l4))
	p[0] = 0x45
	binary.BigEndian.PutUint16(p[2:], uint16(len(p)))
	binary.BigEndian.PutUint16(p[4:], 0x1234)
	p[6] = 0x40 // DF
	p[8], p[9] = ttl, proto
	s, d := src.As4(), dst.As4()
	copy(p[12:], s[:])
	copy(p[16:], d[:])
	binary.BigEndian.PutUint16(p[10:], refChecksum(p[:20]))
	copy(p[20:], l4)
	return p
}

// setTTL sets the TTL of IPv4 packet p and makes its header checksum
// right again (Forward drops a header whose checksum is wrong).
func setTTL(p []byte, ttl uint8) {
	p[8] = ttl
	fixIPChecksum(p)
}

// fixIPChecksum recomputes the header checksum of IPv4 packet p.
func fixIPChecksum(p []byte) {
	ihl := int(p[0]&0x0f) * 4
	p[10], p[11] = 0, 0
	binary.BigEndian.PutUint16(p[10:], refChecksum(p[:ihl]))
}

func fixL4(p []byte) []byte {
	l4 := p[20:]
	switch p[9] {
	case 6:
		l4[16], l4[17] = 0, 0
		binary.BigEndian.PutUint16(l4[16:], refChecksum(pseudo(p, len(l4)), l4))
	case 17:
		l4[6], l4[7] = 0, 0
		c := refChecksum(pseudo(p, len(l4)), l4)
		if c == 0 {
			c = 0xffff
		}
		binary.BigEndian.PutUint16(l4[6:], c)
	case 1:
		l4[2], l4[3] = 0, 0
		binary.BigEndian.PutUint16(l4[2:], refChecksum(l4))
	}
	return p
}

func tcpPkt(src, dst netip.AddrPort, flags uint8, seq, ack uint32, opts []byte, payload int) []byte {
	h := make([]byte, 20+len(opts)+payload)
	binary.BigEndian.PutUint16(h[0:], src.Port())
	binary.BigEndian.PutUint16(h[2:], dst.Port())
	binary.BigEndian.PutUint32(h[4:], seq)
	binary.BigEndian.PutUint32(h[8:], ack)
	h[12] = byte((20+len(opts))/4) << 4
	h[13] = flags
	binary.BigEndian.PutUint16(h[14:], 65535)
	copy(h[20:], opts)
	for i := 20 + len(opts); i < len(h); i++ {
		h[i] = byte(i * 7)
	}
	return fixL4(ipPacket(src.Addr(), dst.Addr(), 6, 64, h))
}

func udpPkt(src, dst netip.AddrPort, payload int) []byte {
	h := make([]byte, 8+payload)
	binary.BigEndian.PutUint16(h[0:], src.Port())
	binary.BigEndian.PutUint16(h[2:], dst.Port())
	binary.BigEndian.PutUint16(h[4:], uint16(len(h)))
	for i := 8; i < len(h); i++ {
		h[i] = byte(i * 13)
	}
	return fixL4(ipPacket(src.Addr(), dst.Addr(), 17, 64, h))
}

func echoPkt(src, dst netip.Addr, typ uint8, id, seq uint16) []byte {
	h := make([]byte, 8+32)
	h[0] = typ
	binary.BigEndian.PutUint16(h[4:], id)
	binary.BigEndian.PutUint16(h[6:], seq)
	for i := 8; i < len(h); i++ {
		h[i] = byte(i)
	}
	return fixL4(ipPacket(src, dst, 1, 64, h))
}

func ap(a netip.Addr, port uint16) netip.AddrPort { return netip.AddrPortFrom(a, port) }

func srcOf(p []byte) netip.Addr { return netip.AddrFrom4([4]byte(p[12:16])) }
func dstOf(p []byte) netip.Addr { return netip.AddrFrom4([4]byte(p[16:20])) }
func sportOf(p []byte) uint16   { return binary.BigEndian.Uint16(p[20:]) }
func dportOf(p []byte) uint16   { return binary.BigEndian.Uint16(p[22:]) }

// mustForward runs Forward and checks the verdict and every checksum.
func mustForward(t *testing.T, tb *Table, p []byte, in, out Iface) Verdict {
	t.Helper()
	v := tb.Forward(p, in)
	if v.Action != Forward || v.Out != out {
		t.Fatalf("verdict %v out %d reason %v, want forward out %d", v.Action, v.Out, v.Reason, out)
	}
	if !ipOK(p) || !l4OK(p) {
		t.Fatalf("checksums do not verify after rewrite: ip %v l4 %v", ipOK(p), l4OK(p))
	}
	return v
}
