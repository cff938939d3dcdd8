package dhcpc

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/gowrt/gowrt/net/dhcp/ethudp"
	"github.com/insomniacslk/dhcp/dhcpv4"
)

// fakeClock drives T1/T2/expiry and backoff; exchanges' retransmission
// timers run on real time (short in these tests).
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []waiter
	asked   []time.Duration // every After(d) call, in order
}

type waiter struct {
	at time.Time
	ch chan time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (f *fakeClock) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fakeClock) After(d time.Duration) <-chan time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, d)
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- f.now
		return ch
	}
	f.waiters = append(f.waiters, waiter{f.now.Add(d), ch})
	return ch
}

func (f *fakeClock) AdvanceTo(t time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if t.After(f.now) {
		f.now = t
	}
	kept := f.waiters[:0]
	for _, w := range f.waiters {
		if !w.at.After(f.now) {
			w.ch <- f.now
		} else {
			kept = append(kept, w)
		}
	}
	f.waiters = kept
}

func (f *fakeClock) Advance(d time.Duration) { f.AdvanceTo(f.Now().Add(d)) }

// earliest is the first time a waiter wakes.
func (f *fakeClock) earliest() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	var t time.Time
	for _, w := range f.waiters {
		if t.IsZero() || w.at.Before(t) {
			t = w.at
		}
	}
	return t
}

// settle lets exchanges in flight (real-time retransmissions: 20 ms,
// 40 ms) finish, so the client sleeps on the fake clock before it moves.
func settle() { time.Sleep(150 * time.Millisecond) }

func (f *fakeClock) pendingWaiters() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.waiters)
}

// wire is one direction of a cable between two ethudp.Conns, with
// asynchronous delivery (so neither side's WriteTo runs the other's
// Deliver on its own goroutine) and a filter to lose frames.
func wire(t *testing.T, deliver func(frame []byte)) func([]byte) error {
	ch := make(chan []byte, 64)
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	go func() {
		for {
			select {
			case f := <-ch:
				deliver(f)
			case <-done:
				return
			}
		}
	}()
	return func(f []byte) error {
		ch <- append([]byte(nil), f...)
		return nil
	}
}

var (
	clientMAC = net.HardwareAddr{0x02, 0x00, 0x00, 0x00, 0x00, 0x68}
	serverIP  = netip.MustParseAddr("10.0.0.1")
	leasedIP  = netip.MustParseAddr("10.0.0.50")
)

type seenMsg struct {
	typ       dhcpv4.MessageType
	ciaddr    net.IP
	unicast   bool // sent to the server's address, not broadcast
	serverID  net.IP
	requested net.IP
	hostname  string
	clientID  []byte
}

// testServer is a minimal DHCP server built from dhcpv4 messages.
type testServer struct {
	conn *ethudp.Conn

	mu            sync.Mutex
	silent        bool // answers nothing
	ignoreUnicast bool // loses frames sent to its own address
	nak           bool // NAKs every REQUEST
	leaseTime     time.Duration
	t1, t2        time.Duration // 0: option omitted
	dns           []net.IP
	seen          []seenMsg
	got           chan seenMsg
	dsts          chan netip.Addr // IP destination of each datagram in the server's queue, in order
}

func newPair(t *testing.T) (*testServer, *ethudp.Conn) {
	s := &testServer{leaseTime: time.Hour, dns: []net.IP{net.IPv4(10, 0, 0, 53)}, got: make(chan seenMsg, 100), dsts: make(chan netip.Addr, 100)}
	var client *ethudp.Conn
	smac := [6]byte{0x02, 0, 0, 0, 0, 0x67}
	s.conn = ethudp.New(ethudp.Config{MAC: smac, Port: 67, Send: wire(t, func(f []byte) { client.Deliver(f) })})
	s.conn.SetAddr(serverIP)
	client = ethudp.New(ethudp.Config{MAC: [6]byte(clientMAC), Port: 68, Send: wire(t, func(f []byte) {
		dst := netip.AddrFrom4([4]byte(f[30:34])) // IPv4 destination: 14 + 16
		s.mu.Lock()
		lose := s.ignoreUnicast && dst == serverIP
		s.mu.Unlock()
		if !lose && s.conn.Deliver(f) {
			s.dsts <- dst
		}
	})})
	go s.serve()
	t.Cleanup(func() { s.conn.Close() })
	return s, client
}

func (s *testServer) set(f func(s *testServer)) {
	s.mu.Lock()
	f(s)
	s.mu.Unlock()
}

func (s *testServer) serve() {
	buf := make([]byte, 1500)
	for {
		n, _, err := s.conn.ReadFrom(buf)
		if err != nil {
			return
		}
		dst := <-s.dsts
		m, err := dhcpv4.FromBytes(buf[:n])
		if err != nil {
			continue
		}
		s.mu.Lock()
		seen := seenMsg{typ: m.MessageType(), ciaddr: m.ClientIPAddr, serverID: m.ServerIdentifier(),
			requested: m.RequestedIPAddress(), hostname: m.HostName(), clientID: m.Options.Get(dhcpv4.OptionClientIdentifier)}
		seen.unicast = dst == serverIP
		s.seen = append(s.seen, seen)
		silent, nak := s.silent, s.nak
		opts := []dhcpv4.Modifier{
			dhcpv4.WithYourIP(leasedIP.AsSlice()),
			dhcpv4.WithServerIP(serverIP.AsSlice()),
			dhcpv4.WithOption(dhcpv4.OptServerIdentifier(serverIP.AsSlice())),
			dhcpv4.WithNetmask(net.CIDRMask(24, 32)),
			dhcpv4.WithRouter(net.IPv4(10, 0, 0, 1)),
			dhcpv4.WithDNS(s.dns...),
			dhcpv4.WithOption(dhcpv4.OptDomainName("isp.example")),
			dhcpv4.WithOption(dhcpv4.OptIPAddressLeaseTime(s.leaseTime)),
			dhcpv4.WithGeneric(dhcpv4.OptionInterfaceMTU, []byte{0x05, 0xd4}), // 1492
		}
		if s.t1 > 0 {
			opts = append(opts, dhcpv4.WithOption(dhcpv4.OptRenewTimeValue(s.t1)))
		}
		if s.t2 > 0 {
			opts = append(opts, dhcpv4.WithOption(dhcpv4.OptRebindingTimeValue(s.t2)))
		}
		s.mu.Unlock()
		s.got <- seen
		if silent {
			continue
		}
		var reply *dhcpv4.DHCPv4
		switch m.MessageType() {
		case dhcpv4.MessageTypeDiscover:
			reply, _ = dhcpv4.NewReplyFromRequest(m, append(opts, dhcpv4.WithMessageType(dhcpv4.MessageTypeOffer))...)
		case dhcpv4.MessageTypeRequest:
			if nak {
				reply, _ = dhcpv4.NewReplyFromRequest(m, dhcpv4.WithMessageType(dhcpv4.MessageTypeNak),
					dhcpv4.WithOption(dhcpv4.OptServerIdentifier(serverIP.AsSlice())))
			} else {
				reply, _ = dhcpv4.NewReplyFromRequest(m, append(opts, dhcpv4.WithMessageType(dhcpv4.MessageTypeAck))...)
			}
		default:
			continue
		}
		to := &net.UDPAddr{IP: net.IPv4bcast, Port: 68}
		if !m.ClientIPAddr.IsUnspecified() && reply.MessageType() == dhcpv4.MessageTypeAck {
			to.IP = m.ClientIPAddr
		}
		s.conn.WriteTo(reply.ToBytes(), to)
	}
}

type events struct {
	ch chan Event
}

func (e *events) handle(ev Event) { e.ch <- ev }

func (e *events) next(t *testing.T, want EventKind) Event {
	t.Helper()
	select {
	case ev := <-e.ch:
		if ev.Kind != want {
			t.Fatalf("event %v (lease %v), want %v", ev.Kind, ev.Lease.Addr, want)
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatalf("no %v event", want)
	}
	return Event{}
}

func startClient(t *testing.T, conn net.PacketConn, clk *fakeClock, mod func(*Config)) (*events, context.CancelFunc, chan error) {
	cfg := Config{HWAddr: clientMAC, Hostname: "gowrt", ClientID: []byte{1, 2, 0, 0, 0, 0, 0x68}, Conn: conn,
		Now: clk.Now, After: clk.After, Timeout: 20 * time.Millisecond, Retries: 2, Logf: t.Logf}
	if mod != nil {
		mod(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ev := &events{ch: make(chan Event, 16)}
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, ev.handle) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Error("Run did not return after cancel")
		}
	})
	return ev, cancel, done
}

// waitIdle waits until the client sleeps on the fake clock (n waiters).
func waitIdle(t *testing.T, clk *fakeClock) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for clk.pendingWaiters() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("client never waited on the clock")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestBoundRenewRebindRelease(t *testing.T) {
	srv, conn := newPair(t)
	clk := newFakeClock()
	// Exchanges time out on the real clock: 20 ms could be too short for
	// the rebind's answer under qemu-mips on a loaded machine, and a
	// rebind that times out sleeps past T2, where the test does not go.
	// The renewals the server ignores then take up to 3 s.
	ev, cancel, done := startClient(t, conn, clk, func(c *Config) { c.Timeout = time.Second })

	b := ev.next(t, Bound)
	l := b.Lease
	if l.Addr != netip.MustParsePrefix("10.0.0.50/24") || l.Router != serverIP || l.Server != serverIP ||
		len(l.DNS) != 1 || l.DNS[0] != netip.MustParseAddr("10.0.0.53") || l.Domain != "isp.example" || l.MTU != 1492 {
		t.Fatalf("lease %+v", l)
	}
	if l.Duration != time.Hour || l.T1 != 30*time.Minute || l.T2 != 52*time.Minute+30*time.Second {
		t.Fatalf("times: %v %v %v (want the RFC 2131 4.4.5 defaults)", l.Duration, l.T1, l.T2)
	}
	if !l.Obtained.Equal(clk.Now()) || b.Old != nil {
		t.Fatalf("obtained %v old %v", l.Obtained, b.Old)
	}
	if conn.Addr() != leasedIP {
		t.Fatalf("conn address %v, want the lease's", conn.Addr())
	}
	// The library retransmits a DISCOVER whose offer takes longer than
	// the test's 20 ms timeout (a loaded machine): skip the repeats.
	d := <-srv.got
	r := <-srv.got
	for r.typ == dhcpv4.MessageTypeDiscover {
		r = <-srv.got
	}
	if d.typ != dhcpv4.MessageTypeDiscover || r.typ != dhcpv4.MessageTypeRequest || !r.serverID.Equal(serverIP.AsSlice()) ||
		!r.requested.Equal(leasedIP.AsSlice()) || d.hostname != "gowrt" || len(d.clientID) != 7 {
		t.Fatalf("DORA: %+v %+v", d, r)
	}

	// Nothing happens before T1.
	waitIdle(t, clk)
	clk.Advance(l.T1 - time.Second)
	time.Sleep(50 * time.Millisecond)
	for len(srv.got) != 0 {
		// Only late copies of the broadcast DORA messages may still be
		// queued (retransmitted before the answer came, see above).
		if m := <-srv.got; m.unicast || !m.ciaddr.IsUnspecified() {
			t.Fatalf("message before T1: %+v", m)
		}
	}
	// T1: RENEWING, unicast to the server, ciaddr set, no server id.
	clk.AdvanceTo(l.Obtained.Add(l.T1))
	rn := ev.next(t, Renewed)
	m := <-srv.got
	if m.typ != dhcpv4.MessageTypeRequest || !m.ciaddr.Equal(leasedIP.AsSlice()) || m.serverID != nil || m.requested != nil || !m.unicast {
		t.Fatalf("renew request %+v", m)
	}
	if !rn.Lease.Obtained.Equal(l.Obtained.Add(l.T1)) || rn.Old == nil || rn.Old.Obtained != l.Obtained {
		t.Fatalf("renewed lease %+v", rn)
	}

	// The server stops hearing unicast: the renewal fails until T2, then
	// the client rebinds by broadcast, and the server's new DNS shows as
	// Changed.
	srv.set(func(s *testServer) { s.ignoreUnicast = true; s.dns = []net.IP{net.IPv4(10, 0, 0, 54)} })
	l = rn.Lease
	waitIdle(t, clk)
	clk.AdvanceTo(l.Obtained.Add(l.T1))
	// The renewal fails (the server loses unicast; each try waits out
	// the exchange timeout on the real clock), then the client sleeps
	// until a retry no later than T2: wait for that sleep, then set the
	// clock to T2, again and again until an event comes, which wakes the
	// client into REBINDING however the real time falls. (Setting it
	// once, at the moment the client seemed to sleep, raced with a slow
	// machine: CI's qemu-mips stage.)
	waitIdle(t, clk)
	// A rebinding try whose answer comes too late on that machine makes
	// the client sleep past T2 (half the time left to expiry): follow its
	// sleeps then, short of expiry, so it tries again.
	var ch Event
	target := l.Obtained.Add(l.T2)
	deadline := time.Now().Add(30 * time.Second)
	for waiting := true; waiting; {
		clk.AdvanceTo(target)
		select {
		case ch = <-ev.ch:
			waiting = false
		case <-time.After(20 * time.Millisecond):
			if time.Now().After(deadline) {
				t.Fatal("no event after T2")
			}
			if e := clk.earliest(); e.After(target) && e.Before(l.Expires()) {
				target = e
			}
		}
	}
	if ch.Kind != Changed {
		t.Fatalf("event %v after T2, want %v", ch.Kind, Changed)
	}
	if ch.Lease.DNS[0] != netip.MustParseAddr("10.0.0.54") || ch.Old.DNS[0] != netip.MustParseAddr("10.0.0.53") {
		t.Fatalf("changed %+v", ch)
	}
	var rebind seenMsg
	for len(srv.got) > 0 {
		rebind = <-srv.got
	}
	if rebind.typ != dhcpv4.MessageTypeRequest || rebind.unicast || !rebind.ciaddr.Equal(leasedIP.AsSlice()) || rebind.serverID != nil {
		t.Fatalf("rebind request %+v", rebind)
	}

	// Stop while bound: DHCPRELEASE to the server, Released, Run returns.
	srv.set(func(s *testServer) { s.ignoreUnicast = false })
	cancel()
	rel := ev.next(t, Released)
	if rel.Lease.Addr.Addr() != leasedIP {
		t.Fatalf("released %+v", rel)
	}
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v", err)
	}
	done <- nil // for the cleanup
	m = <-srv.got
	if m.typ != dhcpv4.MessageTypeRelease || !m.ciaddr.Equal(leasedIP.AsSlice()) || !m.serverID.Equal(serverIP.AsSlice()) || !m.unicast {
		t.Fatalf("release %+v", m)
	}
	if conn.Addr().IsValid() && !conn.Addr().IsUnspecified() {
		t.Fatalf("conn keeps address %v after release", conn.Addr())
	}
}

func TestExpiryAndBackoff(t *testing.T) {
	srv, conn := newPair(t)
	clk := newFakeClock()
	ev, _, _ := startClient(t, conn, clk, nil)
	l := ev.next(t, Bound).Lease

	srv.set(func(s *testServer) { s.silent = true })
	waitIdle(t, clk)
	// Walk the clock to expiry in steps, letting each failed attempt end.
	for i := 0; clk.Now().Before(l.Expires()); i++ {
		waitIdle(t, clk)
		settle()
		clk.AdvanceTo(clk.earliest())
		if i > 100 {
			t.Fatal("too many renewal attempts")
		}
	}
	lost := ev.next(t, Lost)
	if lost.Lease.Addr != l.Addr {
		t.Fatalf("lost %+v", lost)
	}
	if conn.Addr() != netip.IPv4Unspecified() {
		t.Fatalf("conn keeps %v after expiry", conn.Addr())
	}
	// Count what the client sent while the server was silent: renewals
	// spaced by half the remaining time (at least 60 s), then rebinds.
	var renewals, rebinds int
	for len(srv.got) > 0 {
		m := <-srv.got
		if m.typ == dhcpv4.MessageTypeRequest && m.unicast {
			renewals++
		} else if m.typ == dhcpv4.MessageTypeRequest && !m.ciaddr.IsUnspecified() {
			rebinds++ // (a late DORA REQUEST copy has no ciaddr)
		}
	}
	// T1=30m, T2=52.5m: renewals at 30, 41.25, 46.9, 49.7, 51.1, 52.1 min
	// (each Retries=2 transmissions); rebinding from 52.5 to 60 min at
	// 52.5, 56.25, 58.1, 59.1 (then 60 s minimum capped at expiry).
	if renewals < 8 || renewals > 14 || rebinds < 6 || rebinds > 12 {
		t.Fatalf("renewal transmissions %d, rebind transmissions %d", renewals, rebinds)
	}

	// Back in INIT with the server silent: rounds back off 4, 8, 16, 32,
	// 64, 64 s, each ±1 s, measured on the client's clock.
	clk.mu.Lock()
	clk.asked = nil
	clk.mu.Unlock()
	for i := 0; i < 6; i++ {
		waitIdle(t, clk)
		settle()
		clk.AdvanceTo(clk.earliest())
	}
	clk.mu.Lock()
	asked := append([]time.Duration(nil), clk.asked...)
	clk.mu.Unlock()
	var backoffs []time.Duration
	for _, d := range asked {
		if d >= 2*time.Second { // withDeadline timers are not backoffs
			backoffs = append(backoffs, d)
		}
	}
	want := []time.Duration{4, 8, 16, 32, 64, 64}
	if len(backoffs) < len(want) {
		t.Fatalf("backoffs %v", backoffs)
	}
	for i, w := range want {
		w *= time.Second
		if backoffs[i] < w-time.Second || backoffs[i] > w+time.Second {
			t.Fatalf("backoff %d = %v, want %v ± 1s (all: %v)", i, backoffs[i], w, backoffs)
		}
	}
	// The server comes back: Bound again, asking for the old address.
	for len(srv.got) > 0 {
		<-srv.got
	}
	srv.set(func(s *testServer) { s.silent = false })
	waitIdle(t, clk)
	clk.Advance(65 * time.Second)
	b := ev.next(t, Bound)
	if b.Old == nil || b.Old.Addr != l.Addr {
		t.Fatalf("bound again without the old lease: %+v", b)
	}
	if m := <-srv.got; m.typ != dhcpv4.MessageTypeDiscover || !m.requested.Equal(leasedIP.AsSlice()) {
		t.Fatalf("discover after loss %+v", m)
	}
}

func TestNakRestarts(t *testing.T) {
	srv, conn := newPair(t)
	clk := newFakeClock()
	ev, _, _ := startClient(t, conn, clk, nil)
	l := ev.next(t, Bound).Lease
	srv.set(func(s *testServer) { s.nak = true })
	waitIdle(t, clk)
	clk.AdvanceTo(l.Obtained.Add(l.T1))
	lost := ev.next(t, Lost)
	if lost.Lease.Addr != l.Addr {
		t.Fatalf("lost %+v", lost)
	}
	// INIT: the REQUEST is NAKed too, so rounds back off instead of spinning.
	waitIdle(t, clk)
	time.Sleep(100 * time.Millisecond)
	n := len(srv.got)
	time.Sleep(100 * time.Millisecond)
	if len(srv.got) != n {
		t.Fatal("client keeps sending while it should back off")
	}
	srv.set(func(s *testServer) { s.nak = false })
	clk.Advance(5 * time.Second)
	ev.next(t, Bound)
}

func TestServerTimes(t *testing.T) {
	// T1/T2 from the server are used when sane.
	srv, conn := newPair(t)
	srv.set(func(s *testServer) {
		s.leaseTime = 120 * time.Second
		s.t1 = 10 * time.Second
		s.t2 = 100 * time.Second
	})
	clk := newFakeClock()
	ev, _, _ := startClient(t, conn, clk, nil)
	l := ev.next(t, Bound).Lease
	if l.Duration != 120*time.Second || l.T1 != 10*time.Second || l.T2 != 100*time.Second {
		t.Fatalf("times %v %v %v", l.Duration, l.T1, l.T2)
	}
}

func TestLeaseTimesSanitized(t *testing.T) {
	h := time.Hour
	cases := []struct{ lease, t1, t2, wl, w1, w2 time.Duration }{
		{h, 0, 0, h, h / 2, h / 8 * 7},
		{h, 10 * time.Minute, 20 * time.Minute, h, 10 * time.Minute, 20 * time.Minute},
		{0, 0, 0, MinLease, MinLease / 2, MinLease / 8 * 7},                     // lease 0
		{time.Second, 0, 0, MinLease, MinLease / 2, MinLease / 8 * 7},           // absurdly short
		{h, 2 * h, 3 * h, h, h / 2, h / 8 * 7},                                  // T1 > T2 > lease
		{h, 50 * time.Minute, 40 * time.Minute, h, h / 2, 40 * time.Minute},     // T1 > T2
		{h, 0, 10 * time.Minute, h, 10 * time.Minute / 7 * 4, 10 * time.Minute}, // T2 before the T1 default
		{infiniteLease, 0, 0, infiniteLease, infiniteLease / 2, infiniteLease / 8 * 7},
	}
	for _, c := range cases {
		l, t1, t2 := leaseTimes(c.lease, c.t1, c.t2)
		if l != c.wl || t1 != c.w1 || t2 != c.w2 {
			t.Errorf("leaseTimes(%v,%v,%v) = %v,%v,%v want %v,%v,%v", c.lease, c.t1, c.t2, l, t1, t2, c.wl, c.w1, c.w2)
		}
		if !(0 < t1 && t1 < t2 && t2 < l) {
			t.Errorf("leaseTimes(%v,%v,%v): order broken", c.lease, c.t1, c.t2)
		}
	}
}

func TestLeaseFromAckRejects(t *testing.T) {
	ack, _ := dhcpv4.New(dhcpv4.WithMessageType(dhcpv4.MessageTypeAck))
	if _, err := leaseFromAck(ack, time.Now()); !errors.Is(err, errNoAddress) {
		t.Fatalf("no yiaddr: %v", err)
	}
	ack.YourIPAddr = net.IPv4(10, 1, 2, 3)
	if _, err := leaseFromAck(ack, time.Now()); !errors.Is(err, errNoServerID) {
		t.Fatalf("no server id: %v", err)
	}
	ack.UpdateOption(dhcpv4.OptServerIdentifier(net.IPv4(10, 0, 0, 1)))
	l, err := leaseFromAck(ack, time.Now())
	if err != nil || l.Addr.Bits() != 8 || l.Duration != MinLease {
		t.Fatalf("classful default, min lease: %+v %v", l, err)
	}
}

func TestNewValidates(t *testing.T) {
	_, conn := newPair(t)
	for _, cfg := range []Config{
		{HWAddr: net.HardwareAddr{1, 2, 3}, Conn: conn},
		{HWAddr: clientMAC},
		{HWAddr: clientMAC, Conn: conn, ClientID: []byte{1}},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) accepted", cfg)
		}
	}
}
