package forward

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/gowrt/gowrt/config/uci"
	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/net/firewall"
	"github.com/gowrt/gowrt/net/nictest"
)

// sinkNIC is a lower NIC that records what it is asked to transmit,
// synchronously, and lets the test inject received frames.
type sinkNIC struct {
	mac  gnet.MAC
	h    gnet.Handler
	mu   sync.Mutex
	sent [][]byte
	keep bool // record frames (off in benchmarks)
	n    int
	mtu  int // 0: 1500
	// copies advertises net.CapTxCopy (Transmit copies and releases at
	// once, as it does either way): the forwarder then takes its lent
	// fast path.
	copies bool
	// sendsRx advertises net.CapTxRxBuf: a kept receive buffer is
	// sent as it is (this NIC sends every TxBuf the same way).
	sendsRx bool
}

func (s *sinkNIC) MACAddress() gnet.MAC { return s.mac }
func (s *sinkNIC) MTU() int {
	if s.mtu != 0 {
		return s.mtu
	}
	return gnet.DefaultMTU
}
func (s *sinkNIC) Capabilities() gnet.Capabilities {
	var c gnet.Capabilities
	if s.copies {
		c |= gnet.CapTxCopy | gnet.CapScatterGather // Transmit flattens
	}
	if s.sendsRx {
		c |= gnet.CapTxRxBuf
	}
	return c
}
func (s *sinkNIC) Link() gnet.LinkState {
	return gnet.LinkState{Up: true, SpeedMbps: 1000, FullDuplex: true}
}
func (s *sinkNIC) Start(h gnet.Handler) error { s.h = h; return nil }
func (s *sinkNIC) Stop()                      {}
func (s *sinkNIC) Transmit(tb gnet.TxBuf) error {
	s.mu.Lock()
	s.n++
	if s.keep {
		var f []byte
		for _, seg := range tb.Segments() {
			f = append(f, seg...)
		}
		s.sent = append(s.sent, f)
	}
	s.mu.Unlock()
	tb.Release()
	return nil
}

func (s *sinkNIC) take(t testing.TB) []byte {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.sent) != 1 {
		t.Fatalf("%v sent %d frames, want 1", s.mac, len(s.sent))
	}
	f := s.sent[0]
	s.sent = nil
	return f
}

func (s *sinkNIC) none(t testing.TB) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.sent) != 0 {
		t.Fatalf("%v sent %d frames, want none", s.mac, len(s.sent))
	}
}

// stackRecorder stands in for the router's stack above an Iface.
type stackRecorder struct {
	mu     sync.Mutex
	frames [][]byte
}

func (r *stackRecorder) Receive(f []byte) {
	r.mu.Lock()
	r.frames = append(r.frames, append([]byte(nil), f...))
	r.mu.Unlock()
}
func (r *stackRecorder) LinkChanged(gnet.LinkState) {}

func (r *stackRecorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.frames)
}

// fakeResolver knows a fixed set of neighbours.
type fakeResolver map[netip.Addr]gnet.MAC

func (f fakeResolver) Resolve(_ *Iface, addr, _ netip.Addr, done func(gnet.MAC, bool)) {
	m, ok := f[addr]
	done(m, ok)
}

var (
	lanMAC  = gnet.MAC{0x02, 0, 0, 0, 0, 0x01}
	wanMAC  = gnet.MAC{0x02, 0, 0, 0, 0, 0x02}
	hostMAC = gnet.MAC{0x02, 0, 0, 0, 0, 0x10}
	gwMAC   = gnet.MAC{0x02, 0, 0, 0, 0, 0x20}

	lanAddr = netip.MustParsePrefix("192.168.1.1/24")
	wanAddr = netip.MustParsePrefix("10.99.0.50/24")
	gw      = netip.MustParseAddr("10.99.0.1")
	host    = netip.MustParseAddr("192.168.1.100")
	remote  = netip.MustParseAddr("203.0.113.80")
)

type rig struct {
	f            *Forwarder
	lan, wan     *Iface
	lanNIC       *sinkNIC
	wanNIC       *sinkNIC
	lanUp, wanUp *stackRecorder
}

func newRig(t testing.TB) *rig { return newRigMTU(t, 0) }

// copyingNICs makes newRig's NICs advertise net.CapTxCopy (TestLentPath).
var copyingNICs bool

// rxBufNICs makes newRig's NICs advertise net.CapTxRxBuf.
var rxBufNICs bool

// TestLentPath runs the forwarding tests again with lower NICs that copy
// before Transmit returns, so that borrowed frames take processLent (one
// copy into the interface's buffer, no gVisor buffer) and its fallbacks
// (answers, the router's own traffic, "fragmentation needed"). The
// borrowed frames must come through unchanged.
func TestLentPath(t *testing.T) {
	copyingNICs = true
	defer func() { copyingNICs = false }()
	for name, f := range map[string]func(*testing.T){
		"Masquerade": TestMasquerade, "WANInput": TestWANInput, "TTLExceeded": TestTTLExceeded,
		"RouterTrafficTracked": TestRouterTrafficTracked, "LANInputGoesUp": TestLANInputGoesUp,
		"FastPathAllocatesNothing": TestFastPathAllocatesNothing, "InterfaceAddedLater": TestInterfaceAddedLater,
		"NewGatewayReresolved": TestNewGatewayReresolved, "FragmentationNeeded": TestFragmentationNeeded,
	} {
		t.Run(name, f)
	}
	t.Run("HeadersOnly", func(t *testing.T) {
		// Long TCP and UDP packets are rewritten in a copy of their
		// headers, the payload sent from the borrowed frame: the
		// interface's buffer is poisoned first, so a rewrite that read
		// or sent anything beyond the headers shows in the checksums.
		g := newRig(t)
		for i := range g.lan.lent {
			g.lan.lent[i] = 0xee
		}
		out, to := netip.AddrPortFrom(host, 5001), netip.AddrPortFrom(remote, 443)
		syn := frame(lanMAC, hostMAC, out, to, protoTCP, 64, tcpSYN())
		g.lan.Receive(syn)
		verify(t, g.wanNIC.take(t))
		ack := append(make([]byte, 20), bytes.Repeat([]byte{4, 5}, 700)...)
		ack[12], ack[13] = 5<<4, 0x10 // ACK
		// The same with a timestamps option (RFC 7323: NOP, NOP, kind 8,
		// length 10): a 32-byte TCP header.
		ackTS := append(make([]byte, 32), bytes.Repeat([]byte{4, 5}, 700)...)
		ackTS[12], ackTS[13] = 8<<4, 0x10
		copy(ackTS[20:], []byte{1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2})
		for _, c := range []struct {
			proto uint8
			from  netip.AddrPort
			l4    []byte
		}{
			{protoUDP, netip.AddrPortFrom(host, 5002), append(udp(0), bytes.Repeat([]byte{1, 2, 3}, 480)...)},
			{protoTCP, out, ack},
			{protoTCP, out, ackTS},
		} {
			proto := c.proto
			f := frame(lanMAC, hostMAC, c.from, to, proto, 64, c.l4)
			before := g.f.Stats.FastPath.Load()
			g.lan.Receive(f)
			sent := g.wanNIC.take(t)
			verify(t, sent)
			want := 14 + 20 + 8
			if proto == protoTCP {
				want = 14 + 20 + int(c.l4[12]>>4)*4
			}
			if h := rewrittenLen(f); h != want {
				t.Fatalf("proto %d: rewrittenLen %d, want the headers' %d", proto, h, want)
			}
			if len(sent) != len(f) || !bytes.Equal(sent[rewrittenLen(f):], f[rewrittenLen(f):]) {
				t.Fatalf("proto %d: payload changed", proto)
			}
			if proto == protoTCP && g.f.Stats.FastPath.Load() != before+1 {
				t.Fatal("established TCP packet not on the fast path")
			}
		}
	})
	t.Run("BorrowedUnchanged", func(t *testing.T) {
		g := newRig(t)
		if !g.lan.copies || !g.wan.copies {
			t.Fatal("interfaces do not see copying NICs")
		}
		out, to := netip.AddrPortFrom(host, 5000), netip.AddrPortFrom(remote, 53)
		for i := range 3 {
			f := frame(lanMAC, hostMAC, out, to, protoUDP, 64, udp(32))
			lent := append([]byte(nil), f...)
			before := g.f.Stats.FastPath.Load()
			g.lan.Receive(lent)
			if !bytes.Equal(lent, f) {
				t.Fatalf("packet %d: the lent frame was written to", i)
			}
			verify(t, g.wanNIC.take(t))
			if i > 0 && g.f.Stats.FastPath.Load() != before+1 {
				t.Fatalf("packet %d of an established flow not on the fast path", i)
			}
		}
	})
}

// newRigMTU is newRig with the WAN port's MTU (0: 1500).
func newRigMTU(t testing.TB, wanMTU int) *rig {
	t.Helper()
	fw, err := firewall.Load(firewall.Default())
	if err != nil {
		t.Fatal(err)
	}
	rules, err := fw.Compile(map[string]int{"lan": 0, "wan": 1})
	if err != nil {
		t.Fatal(err)
	}
	f, err := New(Config{Rules: rules, Resolver: fakeResolver{host: hostMAC, gw: gwMAC}})
	if err != nil {
		t.Fatal(err)
	}
	g := &rig{f: f, lanNIC: &sinkNIC{mac: lanMAC, keep: true, copies: copyingNICs, sendsRx: rxBufNICs},
		wanNIC: &sinkNIC{mac: wanMAC, keep: true, mtu: wanMTU, copies: copyingNICs, sendsRx: rxBufNICs},
		lanUp:  &stackRecorder{}, wanUp: &stackRecorder{}}
	if g.lan, err = f.AddIface(IfaceConfig{Name: "lan", NIC: g.lanNIC}); err != nil {
		t.Fatal(err)
	}
	if g.wan, err = f.AddIface(IfaceConfig{Name: "wan", NIC: g.wanNIC, Track: true}); err != nil {
		t.Fatal(err)
	}
	g.lan.SetAddress(lanAddr, netip.Addr{})
	g.wan.SetAddress(wanAddr, gw)
	if err := g.lan.Start(g.lanUp); err != nil {
		t.Fatal(err)
	}
	if err := g.wan.Start(g.wanUp); err != nil {
		t.Fatal(err)
	}
	return g
}

// frame builds an Ethernet+IPv4 frame; l4 is the transport header and
// payload with its checksum field zero (it is computed here).
func frame(dst, src gnet.MAC, from, to netip.AddrPort, proto, ttl uint8, l4 []byte) []byte {
	b := make([]byte, 14+20+len(l4))
	copy(b[0:6], dst[:])
	copy(b[6:12], src[:])
	b[12], b[13] = 0x08, 0x00
	ip := b[14:]
	ip[0] = 0x45
	binary.BigEndian.PutUint16(ip[2:], uint16(20+len(l4)))
	ip[8], ip[9] = ttl, proto
	s, d := from.Addr().As4(), to.Addr().As4()
	copy(ip[12:16], s[:])
	copy(ip[16:20], d[:])
	binary.BigEndian.PutUint16(ip[10:], checksum(ip[:20], 0))
	seg := ip[20:]
	copy(seg, l4)
	switch proto {
	case protoTCP, protoUDP:
		binary.BigEndian.PutUint16(seg[0:], from.Port())
		binary.BigEndian.PutUint16(seg[2:], to.Port())
		ck := 16
		if proto == protoUDP {
			ck = 6
			binary.BigEndian.PutUint16(seg[4:], uint16(len(seg)))
		}
		binary.BigEndian.PutUint16(seg[ck:], checksum(seg, pseudo(ip, len(seg))))
	case protoICMP:
		binary.BigEndian.PutUint16(seg[2:], checksum(seg, 0))
	}
	return b
}

func udp(payload int) []byte { return make([]byte, 8+payload) }

func tcpSYN() []byte {
	s := make([]byte, 20)
	s[12] = 5 << 4
	s[13] = 0x02
	binary.BigEndian.PutUint16(s[14:], 65535)
	return s
}

func echoRequest(id uint16) []byte {
	s := make([]byte, 16)
	s[0] = 8
	binary.BigEndian.PutUint16(s[4:], id)
	return s
}

func pseudo(ip []byte, n int) uint32 {
	var sum uint32
	for i := 12; i < 20; i += 2 {
		sum += uint32(ip[i])<<8 | uint32(ip[i+1])
	}
	return sum + uint32(ip[9]) + uint32(n)
}

// checksum is the Internet checksum (RFC 1071) of b plus an initial sum.
func checksum(b []byte, sum uint32) uint16 {
	for i := 0; i+1 < len(b); i += 2 {
		sum += uint32(b[i])<<8 | uint32(b[i+1])
	}
	if len(b)%2 == 1 {
		sum += uint32(b[len(b)-1]) << 8
	}
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}

// verify checks a frame's IPv4 header and transport checksums from scratch.
func verify(t testing.TB, f []byte) {
	t.Helper()
	ip := f[14:]
	if checksum(ip[:20], 0) != 0 {
		t.Fatalf("IP header checksum wrong: % x", ip[:20])
	}
	seg := ip[20:binary.BigEndian.Uint16(ip[2:])]
	switch ip[9] {
	case protoTCP, protoUDP:
		if checksum(seg, pseudo(ip, len(seg))) != 0 {
			t.Fatalf("transport checksum wrong")
		}
	case protoICMP:
		if checksum(seg, 0) != 0 {
			t.Fatalf("ICMP checksum wrong")
		}
	}
}

func addrs(f []byte) (src, dst netip.AddrPort) {
	ip := f[14:]
	s, d := netip.AddrFrom4([4]byte(ip[12:16])), netip.AddrFrom4([4]byte(ip[16:20]))
	var sp, dp uint16
	if ip[9] == protoTCP || ip[9] == protoUDP {
		sp, dp = binary.BigEndian.Uint16(ip[20:]), binary.BigEndian.Uint16(ip[22:])
	}
	return netip.AddrPortFrom(s, sp), netip.AddrPortFrom(d, dp)
}

// TestMasquerade: a LAN host's UDP packet leaves the WAN from the WAN
// address to the gateway's MAC, the reply comes back to the host, and
// from then on both directions take the fast path.
func TestMasquerade(t *testing.T) {
	g := newRig(t)
	out := netip.AddrPortFrom(host, 5000)
	to := netip.AddrPortFrom(remote, 53)
	g.lan.Receive(frame(lanMAC, hostMAC, out, to, protoUDP, 64, udp(32)))
	f := g.wanNIC.take(t)
	verify(t, f)
	src, dst := addrs(f)
	if src.Addr() != wanAddr.Addr() || dst != to {
		t.Fatalf("sent %v → %v, want from %v to %v", src, dst, wanAddr.Addr(), to)
	}
	if [6]byte(f[0:6]) != gwMAC || [6]byte(f[6:12]) != wanMAC || f[14+8] != 63 {
		t.Fatalf("L2/TTL: dst %x src %x ttl %d", f[0:6], f[6:12], f[14+8])
	}
	g.lanNIC.none(t)

	g.wan.Receive(frame(wanMAC, gwMAC, to, src, protoUDP, 60, udp(100)))
	r := g.lanNIC.take(t)
	verify(t, r)
	rs, rd := addrs(r)
	if rs != to || rd != out || [6]byte(r[0:6]) != hostMAC || [6]byte(r[6:12]) != lanMAC {
		t.Fatalf("reply %v → %v (dst MAC %x), want %v → %v to %x", rs, rd, r[0:6], to, out, hostMAC)
	}
	if g.wanUp.count() != 0 {
		t.Fatal("a forwarded reply reached the router's stack")
	}
	before := g.f.Stats.FastPath.Load()
	g.lan.Receive(frame(lanMAC, hostMAC, out, to, protoUDP, 64, udp(32)))
	g.wan.Receive(frame(wanMAC, gwMAC, to, src, protoUDP, 60, udp(100)))
	verify(t, g.wanNIC.take(t))
	verify(t, g.lanNIC.take(t))
	if got := g.f.Stats.FastPath.Load() - before; got != 2 {
		t.Fatalf("fast path took %d of 2 packets of an established flow", got)
	}
}

// TestWANInput: fw4's wan zone rejects input: a TCP SYN to the router
// gets a reset, a UDP datagram a port unreachable, while ping and DHCP
// renewals (the default rules) reach the stack.
func TestWANInput(t *testing.T) {
	g := newRig(t)
	peer := netip.AddrPortFrom(netip.MustParseAddr("10.99.0.7"), 40000)
	me := func(port uint16) netip.AddrPort { return netip.AddrPortFrom(wanAddr.Addr(), port) }

	g.wan.Receive(frame(wanMAC, gwMAC, peer, me(22), protoTCP, 64, tcpSYN()))
	rst := g.wanNIC.take(t)
	verify(t, rst)
	if rst[14+9] != protoTCP || rst[14+20+13]&0x04 == 0 || [6]byte(rst[0:6]) != gwMAC {
		t.Fatalf("no TCP reset to the sender: % x", rst[:14+40])
	}
	g.wan.Receive(frame(wanMAC, gwMAC, peer, me(53), protoUDP, 64, udp(20)))
	icmp := g.wanNIC.take(t)
	verify(t, icmp)
	if icmp[14+9] != protoICMP || icmp[14+20] != icmpDestUnreachable || icmp[14+21] != codePortUnreachable {
		t.Fatalf("no port unreachable: % x", icmp[:14+28])
	}
	if g.wanUp.count() != 0 {
		t.Fatal("rejected packets reached the stack")
	}
	g.wan.Receive(frame(wanMAC, gwMAC, peer, me(0), protoICMP, 64, echoRequest(7)))
	g.wan.Receive(frame(wanMAC, gwMAC, netip.AddrPortFrom(gw, 67), me(68), protoUDP, 64, udp(300)))
	if g.wanUp.count() != 2 {
		t.Fatalf("ping and DHCP renew: %d of 2 reached the stack", g.wanUp.count())
	}
	g.wanNIC.none(t)
}

// TestTTLExceeded: a packet that would leave with TTL 0 is answered with
// ICMP time exceeded from the router's address on the ingress side.
func TestTTLExceeded(t *testing.T) {
	g := newRig(t)
	g.lan.Receive(frame(lanMAC, hostMAC, netip.AddrPortFrom(host, 33434), netip.AddrPortFrom(remote, 33434), protoUDP, 1, udp(16)))
	g.wanNIC.none(t)
	a := g.lanNIC.take(t)
	verify(t, a)
	src, dst := addrs(a)
	if src.Addr() != lanAddr.Addr() || dst.Addr() != host || a[14+20] != icmpTimeExceeded {
		t.Fatalf("answer %v → %v type %d", src, dst, a[14+20])
	}
}

// TestRouterTrafficTracked: the router's own query out of the WAN is
// recorded, so its answer passes the input chain, while the same answer
// unasked is rejected.
func TestRouterTrafficTracked(t *testing.T) {
	g := newRig(t)
	me := netip.AddrPortFrom(wanAddr.Addr(), 41000)
	ntp := netip.AddrPortFrom(remote, 123)
	answer := frame(wanMAC, gwMAC, ntp, me, protoUDP, 60, udp(48))
	g.wan.Receive(answer)
	if g.wanUp.count() != 0 {
		t.Fatal("an unsolicited UDP datagram reached the stack")
	}
	g.wanNIC.take(t) // the port unreachable
	q := frame(gwMAC, wanMAC, me, ntp, protoUDP, 64, udp(48))
	if err := g.wan.Transmit(&bytesTxBuf{q}); err != nil {
		t.Fatal(err)
	}
	g.wanNIC.take(t)
	g.wan.Receive(answer)
	if g.wanUp.count() != 1 {
		t.Fatal("the answer to the router's own query did not reach the stack")
	}
}

// TestLANInputGoesUp: LAN packets for the router go to its stack
// unchanged and do not enter the connection table.
func TestLANInputGoesUp(t *testing.T) {
	g := newRig(t)
	f := frame(lanMAC, hostMAC, netip.AddrPortFrom(host, 40000), netip.AddrPortFrom(lanAddr.Addr(), 80), protoTCP, 64, tcpSYN())
	g.lan.Receive(f)
	if g.lanUp.count() != 1 || g.f.Table().Stats().Conns != 0 {
		t.Fatalf("stack got %d frames, table has %d connections", g.lanUp.count(), g.f.Table().Stats().Conns)
	}
}

// TestLANInputLent: a borrowed frame for the router from the LAN (the lent
// path, processLent) meets the input chain and, accepted, goes up to the
// stack borrowed and unchanged, counted as local; refused, it is dropped
// and counted, and the stack never sees it. The chain's last acceptance
// is remembered per flow and per ruleset: another port, or the same flow
// after the rules changed, is judged again.
func TestLANInputLent(t *testing.T) {
	copyingNICs = true
	g := newRig(t)
	copyingNICs = false
	ruleset := func(extra string) *firewall.Ruleset {
		fw, err := firewall.Load(mustUCI(t, firewall.DefaultText+extra))
		if err != nil {
			t.Fatal(err)
		}
		rules, err := fw.Compile(map[string]int{"lan": 0, "wan": 1})
		if err != nil {
			t.Fatal(err)
		}
		return rules
	}
	const drop = `
config rule
	option src 'lan'
	option proto 'tcp'
	option dest_port '%d'
	option target 'DROP'
`
	noTelnet, noHTTP := ruleset(fmt.Sprintf(drop, 23)), ruleset(fmt.Sprintf(drop, 80))
	from := netip.AddrPortFrom(host, 40000)
	var up, drops uint64
	for i, tc := range []struct {
		rules *firewall.Ruleset
		port  uint16
		taken bool
	}{{noTelnet, 80, true}, {noTelnet, 80, true}, {noTelnet, 23, false}, {noTelnet, 80, true}, {noHTTP, 80, false}, {noHTTP, 23, true}} {
		g.f.SetRules(tc.rules)
		f := frame(lanMAC, hostMAC, from, netip.AddrPortFrom(lanAddr.Addr(), tc.port), protoTCP, 64, tcpSYN())
		lent := bytes.Clone(f)
		if !g.lan.ReceiveLent(lent) {
			t.Fatalf("frame %d: not taken borrowed", i)
		}
		if tc.taken {
			up++
		} else {
			drops++
		}
		if got := uint64(g.lanUp.count()); got != up || g.f.Stats.InputDrop.Load() != drops || g.f.Stats.Local.Load() != up {
			t.Fatalf("frame %d (port %d): stack got %d frames (want %d), input drops %d (want %d), local %d",
				i, tc.port, got, up, g.f.Stats.InputDrop.Load(), drops, g.f.Stats.Local.Load())
		}
		if !bytes.Equal(lent, f) || tc.taken && !bytes.Equal(g.lanUp.frames[up-1], f) {
			t.Fatalf("frame %d: the frame was changed", i)
		}
	}
	// With the driver's buffer offered (br-lan's host port), the frame
	// is counted when the pass ends.
	var rx driverRx
	f := frame(lanMAC, hostMAC, from, netip.AddrPortFrom(lanAddr.Addr(), 23), protoTCP, 64, tcpSYN())
	if !g.lan.ReceiveLentBuf(rx.lend(f), &rx) {
		t.Fatal("frame with its driver's buffer not taken")
	}
	if uint64(g.lanUp.count()) != up+1 || g.f.Stats.Local.Load() != up {
		t.Fatalf("stack got %d frames (want %d), local %d before the pass's end (want %d)", g.lanUp.count(), up+1, g.f.Stats.Local.Load(), up)
	}
	g.lan.ReceiveLentDone()
	if g.f.Stats.Local.Load() != up+1 {
		t.Fatalf("local %d after the pass's end, want %d", g.f.Stats.Local.Load(), up+1)
	}
	if g.f.Table().Stats().Conns != 0 {
		t.Fatal("the router's own traffic from the LAN entered the connection table")
	}
}

type bytesTxBuf struct{ b []byte }

func (b *bytesTxBuf) Segments() [][]byte { return [][]byte{b.b} }
func (b *bytesTxBuf) Len() int           { return len(b.b) }
func (b *bytesTxBuf) Release()           {}

// established returns a rig with one TCP connection through NAT and the
// frames of both directions, as the benchmarks and allocation tests send.
func established(t testing.TB) (*rig, []byte, []byte) {
	g := newRig(t)
	out := netip.AddrPortFrom(host, 50000)
	to := netip.AddrPortFrom(remote, 5201)
	g.lan.Receive(frame(lanMAC, hostMAC, out, to, protoTCP, 64, tcpSYN()))
	syn := g.wanNIC.take(t)
	src, _ := addrs(syn)
	synack := tcpSYN()
	synack[13] = 0x12
	g.wan.Receive(frame(wanMAC, gwMAC, to, src, protoTCP, 60, synack))
	g.lanNIC.take(t)
	ack := make([]byte, 20+1460)
	ack[12], ack[13] = 5<<4, 0x10
	up := frame(lanMAC, hostMAC, out, to, protoTCP, 64, ack)
	down := frame(wanMAC, gwMAC, to, src, protoTCP, 60, ack)
	g.lanNIC.keep, g.wanNIC.keep = false, false
	return g, up, down
}

// TestFastPathAllocatesNothing: an established flow costs no allocation
// in either direction.
func TestFastPathAllocatesNothing(t *testing.T) {
	g, up, down := established(t)
	for range 10 { // warm the pools
		g.lan.Receive(up)
		g.wan.Receive(down)
	}
	if n := testing.AllocsPerRun(1000, func() { g.lan.Receive(up) }); n != 0 && !raceEnabled {
		t.Errorf("LAN→WAN: %v allocations per packet", n)
	}
	if n := testing.AllocsPerRun(1000, func() { g.wan.Receive(down) }); n != 0 && !raceEnabled {
		t.Errorf("WAN→LAN: %v allocations per packet", n)
	}
	if g.wanNIC.n < 1000 || g.lanNIC.n < 1000 {
		t.Fatalf("sent %d / %d", g.wanNIC.n, g.lanNIC.n)
	}
}

// BenchmarkFastPath forwards 1514-byte TCP frames of an established NATed
// flow; BenchmarkCopyFrame, the copy each forwarded frame costs, is the
// baseline to state it against.
func BenchmarkFastPath(b *testing.B) {
	g, up, down := established(b)
	b.Run("lan-to-wan", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(up)))
		for b.Loop() {
			g.lan.Receive(up)
		}
	})
	b.Run("wan-to-lan", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(down)))
		for b.Loop() {
			g.wan.Receive(down)
		}
	})
}

func BenchmarkCopyFrame(b *testing.B) {
	src := make([]byte, 1514)
	dst := make([]byte, 1514)
	b.ReportAllocs()
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		copy(dst, src)
	}
}

// TestInterfaceAddedLater: a zone's network that appears after start (a
// VPN tunnel) is routed and masqueraded as soon as the interface is
// added and the firewall compiled again, without a restart.
func TestInterfaceAddedLater(t *testing.T) {
	g := newRig(t)
	fw, err := firewall.Load(mustUCI(t, firewall.DefaultText+`
config zone
	option name 'vpn'
	list network 'vpn'
	option input 'REJECT'
	option output 'ACCEPT'
	option forward 'REJECT'
	option masq '1'

config forwarding
	option src 'lan'
	option dest 'vpn'
`))
	if err != nil {
		t.Fatal(err)
	}
	rules, err := fw.Compile(map[string]int{"lan": 0, "wan": 1})
	if err != nil {
		t.Fatal(err)
	}
	g.f.SetRules(rules)
	peer := netip.MustParseAddr("10.8.0.2")
	vpnNIC := &sinkNIC{mac: gnet.MAC{0x02, 0, 0, 0, 0, 0x03}, keep: true}
	out := netip.AddrPortFrom(host, 6000)
	to := netip.AddrPortFrom(peer, 7000)
	// Before: 10.8.0.2 is beyond the WAN's default route.
	g.lan.Receive(frame(lanMAC, hostMAC, out, to, protoUDP, 64, udp(8)))
	g.wanNIC.take(t)

	vpn, err := g.f.AddIface(IfaceConfig{Name: "vpn", NIC: vpnNIC, Track: true})
	if err != nil {
		t.Fatal(err)
	}
	vpn.SetAddress(netip.MustParsePrefix("10.8.0.1/24"), netip.Addr{})
	if err := vpn.Start(&stackRecorder{}); err != nil {
		t.Fatal(err)
	}
	if rules, err = fw.Compile(map[string]int{"lan": 0, "wan": 1, "vpn": int(vpn.ID())}); err != nil {
		t.Fatal(err)
	}
	g.f.SetRules(rules)
	g.f.resolver.(fakeResolver)[peer] = gnet.MAC{0x02, 0, 0, 0, 0, 0x30}
	g.lan.Receive(frame(lanMAC, hostMAC, netip.AddrPortFrom(host, 6001), to, protoUDP, 64, udp(8)))
	f := vpnNIC.take(t)
	verify(t, f)
	if src, _ := addrs(f); src.Addr() != netip.MustParseAddr("10.8.0.1") {
		t.Fatalf("through the new interface from %v, want its address", src)
	}
	g.wanNIC.none(t)
}

func mustUCI(t testing.TB, text string) *uci.File {
	t.Helper()
	f, err := uci.Parse("firewall", strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestNewGatewayReresolved: when the WAN's gateway changes (a new lease
// with another router), established connections keep flowing to the new
// gateway's MAC instead of the cached old one.
func TestNewGatewayReresolved(t *testing.T) {
	g, up, _ := established(t)
	g.wanNIC.keep = true
	g.lan.Receive(up)
	if f := g.wanNIC.take(t); [6]byte(f[0:6]) != gwMAC {
		t.Fatalf("to %x, want the gateway %x", f[0:6], gwMAC)
	}
	newGW, newMAC := netip.MustParseAddr("10.99.0.2"), gnet.MAC{0x02, 0, 0, 0, 0, 0x21}
	g.f.resolver.(fakeResolver)[newGW] = newMAC
	g.wan.SetAddress(wanAddr, newGW)
	g.lan.Receive(up)
	f := g.wanNIC.take(t)
	if [6]byte(f[0:6]) != newMAC {
		t.Fatalf("after the gateway changed, to %x, want %x", f[0:6], newMAC)
	}
	verify(t, f)
}

// TestFragmentationNeeded: a packet longer than the WAN's MTU (PPPoE's
// 1492 here) is answered with RFC 1191's "fragmentation needed" carrying
// that MTU and quoting the packet as the LAN host sent it (before NAT),
// when it may not be fragmented; without DF it is dropped (the router
// does not fragment). Packets that fit pass.
func TestFragmentationNeeded(t *testing.T) {
	g := newRigMTU(t, 1492)
	out := netip.AddrPortFrom(host, 5000)
	to := netip.AddrPortFrom(remote, 4500)
	big := frame(lanMAC, hostMAC, out, to, protoUDP, 64, udp(1500-28))
	big[14+6] |= 0x40 // DF
	binary.BigEndian.PutUint16(big[14+10:], 0)
	binary.BigEndian.PutUint16(big[14+10:], checksum(big[14:34], 0))
	g.lan.Receive(big)
	g.wanNIC.none(t)
	a := g.lanNIC.take(t)
	verify(t, a)
	icmp := a[14+20:]
	if icmp[0] != icmpDestUnreachable || icmp[1] != codeFragNeeded || binary.BigEndian.Uint16(icmp[6:]) != 1492 {
		t.Fatalf("answer type %d code %d mtu %d", icmp[0], icmp[1], binary.BigEndian.Uint16(icmp[6:]))
	}
	if q := icmp[8:]; netip.AddrFrom4([4]byte(q[12:16])) != host || [6]byte(a[0:6]) != hostMAC {
		t.Fatalf("quoted source %v (want the LAN host %v), to %x", netip.AddrFrom4([4]byte(q[12:16])), host, a[0:6])
	}
	noDF := frame(lanMAC, hostMAC, out, to, protoUDP, 64, udp(1500-28))
	g.lan.Receive(noDF)
	g.wanNIC.none(t)
	g.lanNIC.none(t)
	if g.f.Stats.TooBig.Load() != 2 {
		t.Fatalf("TooBig %d, want 2", g.f.Stats.TooBig.Load())
	}
	g.lan.Receive(frame(lanMAC, hostMAC, out, to, protoUDP, 64, udp(1492-28)))
	verify(t, g.wanNIC.take(t))
}

// TestIsLocalFollowsAddresses: the router's own addresses and subnet
// broadcasts are local, and follow each change of an interface's
// address (the set isLocal reads is rebuilt on SetAddress).
func TestIsLocalFollowsAddresses(t *testing.T) {
	g := newRig(t)
	mp := netip.MustParseAddr
	for _, c := range []struct {
		a    string
		want bool
	}{{"192.168.1.1", true}, {"192.168.1.255", true}, {"10.99.0.50", true}, {"10.99.0.255", true},
		{"255.255.255.255", true}, {"192.168.1.2", false}, {"10.99.0.1", false}} {
		if got := g.f.isLocal(mp(c.a)); got != c.want {
			t.Errorf("isLocal(%s) = %v, want %v", c.a, got, c.want)
		}
	}
	g.wan.SetAddress(netip.MustParsePrefix("10.99.5.6/30"), netip.Addr{})
	for a, want := range map[string]bool{"10.99.0.50": false, "10.99.0.255": false, "10.99.5.6": true, "10.99.5.7": true, "10.99.5.5": false} {
		if got := g.f.isLocal(mp(a)); got != want {
			t.Errorf("after the WAN address changed: isLocal(%s) = %v, want %v", a, got, want)
		}
	}
	g.wan.SetAddress(netip.Prefix{}, netip.Addr{})
	if g.f.isLocal(mp("10.99.5.6")) || !g.f.isLocal(mp("192.168.1.1")) {
		t.Error("after the WAN address was removed: its address still local, or the LAN's not")
	}
}

// batchSinkNIC is a sinkNIC that batches its doorbells (net.TxBatcher).
type batchSinkNIC struct {
	sinkNIC
	nictest.BatchCounter
}

// TestIfaceRelaysTxBatch: the stack's transmit batch on an interface is
// the lower NIC's, when that batches (net.TxBatcher); over one that does
// not, a batch is nothing.
func TestIfaceRelaysTxBatch(t *testing.T) {
	g := newRig(t)
	lower := &batchSinkNIC{sinkNIC: sinkNIC{mac: lanMAC}}
	i, err := g.f.AddIface(IfaceConfig{Name: "vpn", NIC: lower})
	if err != nil {
		t.Fatal(err)
	}
	nictest.CheckBatchRelay(t, i, &lower.BatchCounter)
	var plain gnet.TxBatcher = g.lan // over a sinkNIC, which does not batch
	plain.TxBatchBegin()
	plain.TxBatchEnd()
}
