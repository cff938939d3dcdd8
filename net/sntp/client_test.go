package sntp

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gowrt/gowrt/sys/event"
)

// fakeServer is an NTP server on 127.0.0.1 serving time.Now()+offset.
type fakeServer struct {
	t    *testing.T
	conn *net.UDPConn
	// reply builds the datagrams answering req (nil: a correct reply).
	reply    func(req Packet, good Packet) []Packet
	offset   time.Duration
	hold     time.Duration // delay before "receiving" (adds network delay)
	requests atomic.Int64
	mu       sync.Mutex
	lastReq  Packet
}

func newServer(t *testing.T, offset time.Duration) *fakeServer {
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	s := &fakeServer{t: t, conn: c, offset: offset}
	t.Cleanup(func() { c.Close() })
	go s.serve()
	return s
}

func (s *fakeServer) addr() string { return s.conn.LocalAddr().String() }

func (s *fakeServer) serve() {
	buf := make([]byte, 1500)
	for {
		n, from, err := s.conn.ReadFromUDP(buf)
		if err != nil {
			return
		}
		req, err := Decode(buf[:n])
		if err != nil {
			continue
		}
		s.requests.Add(1)
		s.mu.Lock()
		s.lastReq = req
		reply, hold, off := s.reply, s.hold, s.offset
		s.mu.Unlock()
		time.Sleep(hold)
		t2 := time.Now().Add(off)
		good := Packet{Version: 4, Mode: ModeServer, Stratum: 2, Precision: -20,
			RootDelay: 0x0000_0200, RootDispersion: 0x0000_0100, RefID: [4]byte{192, 0, 2, 1},
			Reference: TimestampOf(t2.Add(-30 * time.Second)), Originate: req.Transmit,
			Receive: TimestampOf(t2)}
		good.Transmit = TimestampOf(time.Now().Add(off))
		out := []Packet{good}
		if reply != nil {
			out = reply(req, good)
		}
		for _, p := range out {
			var b [PacketLen]byte
			p.Encode(b[:])
			s.conn.WriteToUDP(b[:], from)
		}
	}
}

func (s *fakeServer) set(f func(*fakeServer)) { s.mu.Lock(); f(s); s.mu.Unlock() }

// testClock is a clock offset from the host's, never the host's itself.
type testClock struct {
	mu     sync.Mutex
	off    time.Duration
	synced bool
	steps  int
	slews  []time.Duration
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return time.Now().Add(c.off) }
func (c *testClock) Step(to time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.off = time.Until(to)
	c.synced = true
	c.steps++
	return nil
}
func (c *testClock) Slew(d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.off += d // applied at once: the slew rate is sys/clock's business
	c.slews = append(c.slews, d)
	c.synced = true
	return nil
}
func (c *testClock) Synced() bool { c.mu.Lock(); defer c.mu.Unlock(); return c.synced }
func (c *testClock) offset() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.off
}

func newClient(t *testing.T, clk Clock, servers ...string) *Client {
	c, err := New(Config{Servers: servers, Clock: clk, Timeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func near(d, want, tol time.Duration) bool { return d >= want-tol && d <= want+tol }

// offsetOK: an offset is exact to within half the round trip (RFC 5905
// §8: the error is bounded by delay/2), plus timestamp granularity.
func offsetOK(s Sample, want time.Duration) bool {
	return near(s.Offset, want, s.Delay/2+2*time.Millisecond)
}

func TestSyncStepsThenSlews(t *testing.T) {
	srv := newServer(t, 3*time.Second)
	clk := &testClock{}
	c := newClient(t, clk, srv.addr())
	r, err := c.Sync(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !offsetOK(r.Sample, 3*time.Second) || r.Delay < 0 || r.Delay > 400*time.Millisecond {
		t.Fatalf("offset %v delay %v", r.Offset, r.Delay)
	}
	if !r.Stepped || clk.steps != 1 || !near(clk.offset(), 3*time.Second, r.Delay/2+2*time.Millisecond) {
		t.Fatalf("stepped %v steps %d clock offset %v", r.Stepped, clk.steps, clk.offset())
	}
	if r.Addr.String() != srv.addr() || r.Stratum != 2 {
		t.Fatalf("result %+v", r)
	}
	// The server moves 40 ms: the synced clock is slewed, not stepped.
	// The offset expected is from where the step actually left the
	// clock: the step lands a little late (the time between the sample
	// and Step), by some milliseconds on a loaded qemu-mips.
	srv.set(func(s *fakeServer) { s.offset += 40 * time.Millisecond })
	want := 3*time.Second + 40*time.Millisecond - clk.offset()
	r, err = c.Sync(context.Background())
	if err != nil || r.Stepped || len(clk.slews) != 1 || clk.slews[0] != r.Offset || !offsetOK(r.Sample, want) {
		t.Fatalf("second sync: %+v %v, slews %v, want offset %v", r, err, clk.slews, want)
	}
	// 5 s off a synced clock: stepped again.
	srv.set(func(s *fakeServer) { s.offset -= 5 * time.Second })
	want = 3*time.Second + 40*time.Millisecond - 5*time.Second - clk.offset()
	if r, err := c.Sync(context.Background()); err != nil || !r.Stepped || !offsetOK(r.Sample, want) {
		t.Fatalf("third sync: %+v %v, want offset %v", r, err, want)
	}
	if st := c.Stats(); st.Syncs != 3 || st.Steps != 2 || st.Queries != 3 || st.Replies != 3 {
		t.Fatalf("stats %+v", st)
	}
	// The request is a proper client request with a random transmit
	// timestamp, not our clock.
	srv.mu.Lock()
	req := srv.lastReq
	srv.mu.Unlock()
	if req.Mode != ModeClient || req.Version != 4 || req.Transmit == 0 || req.Originate != 0 {
		t.Fatalf("request %+v", req)
	}
	if d := req.Transmit.Time().Sub(time.Now()); d > -time.Hour && d < time.Hour {
		// A random 64-bit value lands within an hour of now with a
		// chance of about 2 in a million.
		t.Fatalf("transmit timestamp %v is our clock, not random", req.Transmit.Time())
	}
}

// The lowest-delay sample wins.
func TestSyncPicksLowestDelay(t *testing.T) {
	slow := newServer(t, 10*time.Second)
	slow.set(func(s *fakeServer) { s.hold = 400 * time.Millisecond })
	fast := newServer(t, 2*time.Second)
	clk := &testClock{}
	c, err := New(Config{Servers: []string{slow.addr(), fast.addr()}, Clock: clk, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Sync(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if r.Addr.String() != fast.addr() || !offsetOK(r.Sample, 2*time.Second) {
		t.Fatalf("picked %s offset %v delay %v", r.Addr, r.Offset, r.Delay)
	}
	if slow.requests.Load() != 1 || fast.requests.Load() != 1 {
		t.Fatal("not every server was asked")
	}
	// Its delay is the hold (measured through the server's T2/T3).
	s, err := c.Query(context.Background(), netip.MustParseAddrPort(slow.addr()))
	// At least the hold; more if the loaded test machine oversleeps.
	if err != nil || s.Delay < 395*time.Millisecond || s.Delay > 1500*time.Millisecond {
		t.Fatalf("slow server: delay %v, %v", s.Delay, err)
	}
}

// Time in NTP era 1 (after 2036-02-07).
func TestSyncEra1(t *testing.T) {
	future := time.Date(2040, 3, 1, 12, 0, 0, 0, time.UTC)
	srv := newServer(t, time.Until(future))
	clk := &testClock{}
	c := newClient(t, clk, srv.addr())
	if _, err := c.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if d := clk.Now().Sub(future); d < 0 || d > time.Second {
		t.Fatalf("clock %v after syncing to %v", clk.Now(), future)
	}
}

func TestSpoofedReplies(t *testing.T) {
	srv := newServer(t, time.Second)
	clk := &testClock{}
	c := newClient(t, clk, srv.addr())
	// Only a forged reply (wrong originate): rejected, nothing set.
	srv.set(func(s *fakeServer) {
		s.reply = func(req, good Packet) []Packet {
			good.Originate ^= 1
			good.Receive = TimestampOf(time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC))
			good.Transmit = good.Receive
			return []Packet{good}
		}
	})
	if _, err := c.Sync(context.Background()); !errors.Is(err, ErrSpoofed) {
		t.Fatalf("forged reply: %v", err)
	}
	if clk.steps != 0 || c.Stats().Spoofed != 1 {
		t.Fatalf("steps %d stats %+v", clk.steps, c.Stats())
	}
	// A forgery racing ahead of the real reply does not win, nor cut the
	// exchange short.
	srv.set(func(s *fakeServer) {
		s.reply = func(req, good Packet) []Packet {
			bad := good
			bad.Originate = 0
			bad.Transmit = TimestampOf(time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC))
			return []Packet{bad, good}
		}
	})
	r, err := c.Sync(context.Background())
	if err != nil || !offsetOK(r.Sample, time.Second) {
		t.Fatalf("forgery then reply: %+v %v", r, err)
	}
}

func TestKissOfDeath(t *testing.T) {
	kiss := func(code string) func(req, good Packet) []Packet {
		return func(req, good Packet) []Packet {
			good.Stratum = 0
			copy(good.RefID[:], code)
			return []Packet{good}
		}
	}
	for _, code := range []string{"DENY", "RSTR", "RATE"} {
		t.Run(code, func(t *testing.T) {
			srv := newServer(t, time.Second)
			srv.set(func(s *fakeServer) { s.reply = kiss(code) })
			other := newServer(t, 2*time.Second)
			other.set(func(s *fakeServer) { s.reply = func(Packet, Packet) []Packet { return nil } }) // silent
			clk := &testClock{}
			c := newClient(t, clk, srv.addr(), other.addr())
			_, err := c.Sync(context.Background())
			var k *KissError
			if !errors.As(err, &k) || k.Code != code {
				t.Fatalf("first sync: %v", err)
			}
			// The kissed server is left alone; only the other is asked.
			srv.set(func(s *fakeServer) { s.reply = nil })
			if _, err := c.Sync(context.Background()); err == nil {
				t.Fatal("second sync used the kissed server")
			}
			if n := srv.requests.Load(); n != 1 {
				t.Fatalf("kissed server asked %d times", n)
			}
			if other.requests.Load() != 2 || c.Stats().Kisses != 1 || clk.steps != 0 {
				t.Fatalf("other asked %d times, stats %+v", other.requests.Load(), c.Stats())
			}
		})
	}
	// With the only server kissed, Sync says there is no one to ask.
	srv := newServer(t, 0)
	srv.set(func(s *fakeServer) { s.reply = kiss("DENY") })
	c := newClient(t, &testClock{}, srv.addr())
	c.Sync(context.Background())
	if _, err := c.Sync(context.Background()); !errors.Is(err, ErrNoServers) {
		t.Fatalf("after DENY: %v", err)
	}
}

func TestInvalidRepliesRejected(t *testing.T) {
	for name, edit := range map[string]func(*Packet){
		"leap 3":        func(p *Packet) { p.Leap = LeapNotSync },
		"stratum 16":    func(p *Packet) { p.Stratum = 16 },
		"zero transmit": func(p *Packet) { p.Transmit = 0 },
		"root distance": func(p *Packet) { p.RootDispersion = 2 << 16 },
	} {
		srv := newServer(t, time.Hour)
		srv.set(func(s *fakeServer) {
			s.reply = func(req, good Packet) []Packet { edit(&good); return []Packet{good} }
		})
		clk := &testClock{}
		c := newClient(t, clk, srv.addr())
		if _, err := c.Sync(context.Background()); err == nil || clk.steps != 0 {
			t.Errorf("%s: accepted (%v)", name, err)
		}
	}
}

func TestSilentServerTimesOut(t *testing.T) {
	srv := newServer(t, 0)
	srv.set(func(s *fakeServer) { s.reply = func(Packet, Packet) []Packet { return nil } })
	c := newClient(t, &testClock{}, srv.addr())
	start := time.Now()
	_, err := c.Sync(context.Background())
	if err == nil || time.Since(start) > 2*time.Second {
		t.Fatalf("silent server: %v after %v", err, time.Since(start))
	}
	if c.Stats().Timeouts != 1 || c.Stats().Failures != 1 {
		t.Fatalf("stats %+v", c.Stats())
	}
}

// Names go through Resolve, one address per name in turn.
func TestResolve(t *testing.T) {
	srv := newServer(t, 2*time.Second)
	port := netip.MustParseAddrPort(srv.addr()).Port()
	var asked []string
	var mu sync.Mutex
	c, err := New(Config{
		Servers: []string{"a.example:" + itoa(port), "b.example:" + itoa(port), "broken.example"},
		Clock:   &testClock{},
		Timeout: 500 * time.Millisecond,
		Resolve: func(ctx context.Context, host string) ([]netip.Addr, error) {
			mu.Lock()
			asked = append(asked, host)
			mu.Unlock()
			if host == "broken.example" {
				return nil, errors.New("NXDOMAIN")
			}
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Sync(context.Background())
	if err != nil || !offsetOK(r.Sample, 2*time.Second) {
		t.Fatal(r, err)
	}
	if len(asked) != 3 || srv.requests.Load() != 1 { // one address, asked once
		t.Fatalf("resolved %v, server asked %d times", asked, srv.requests.Load())
	}
	if _, err := New(Config{Servers: []string{"x:0"}, Clock: &testClock{}}); err == nil {
		t.Fatal("port 0 accepted")
	}
}

func itoa(p uint16) string {
	return strings.TrimPrefix(netip.AddrPortFrom(netip.IPv4Unspecified(), p).String(), "0.0.0.0:")
}

// Run: syncs at WAN up, polls, stops while the WAN is down, publishes
// TimeSynced.
func TestRunFollowsWAN(t *testing.T) {
	srv := newServer(t, 7*time.Second)
	bus := event.NewBus()
	clk := &testClock{}
	c, err := New(Config{Servers: []string{srv.addr()}, Clock: clk, Timeout: 500 * time.Millisecond,
		MinPoll: 100 * time.Millisecond, MaxPoll: 200 * time.Millisecond, Synced: bus.Time})
	if err != nil {
		t.Fatal(err)
	}
	synced := bus.Time.Subscribe(0)
	defer synced.Close()
	wan := bus.WAN.Subscribe(0)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- c.Run(ctx, wan.C()) }()

	time.Sleep(200 * time.Millisecond)
	if n := srv.requests.Load(); n != 0 {
		t.Fatalf("%d requests before the WAN came up", n)
	}
	bus.WAN.Publish(event.Up(event.WANUp{Addr: netip.MustParsePrefix("192.0.2.2/24")}))
	tctx, tcancel := context.WithTimeout(ctx, 5*time.Second)
	defer tcancel()
	ev, err := synced.Next(tctx)
	if err != nil || !ev.Stepped || !near(ev.Step, 7*time.Second, 200*time.Millisecond) || ev.Server != srv.addr() {
		t.Fatalf("TimeSynced %+v %v", ev, err)
	}
	// It keeps polling (100 ms, then 200 ms).
	for srv.requests.Load() < 3 && tctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	bus.WAN.Publish(event.Down("lease expired"))
	time.Sleep(100 * time.Millisecond)
	n := srv.requests.Load()
	time.Sleep(500 * time.Millisecond)
	if m := srv.requests.Load(); m != n {
		t.Fatalf("%d requests while the WAN was down", m-n)
	}
	// Up again: at once.
	bus.WAN.Publish(event.Up(event.WANUp{Addr: netip.MustParsePrefix("192.0.2.3/24")}))
	for srv.requests.Load() == n && tctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
	if tctx.Err() != nil {
		t.Fatal("no sync after the WAN came back")
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run returned %v", err)
	}
}

// A late subscriber: Run started after the WAN came up still syncs.
func TestRunLateStart(t *testing.T) {
	srv := newServer(t, time.Second)
	bus := event.NewBus()
	bus.WAN.Publish(event.Up(event.WANUp{Addr: netip.MustParsePrefix("192.0.2.2/24")}))
	clk := &testClock{}
	c, _ := New(Config{Servers: []string{srv.addr()}, Clock: clk, Timeout: 500 * time.Millisecond, Synced: bus.Time})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	wan := bus.WAN.Subscribe(0)
	defer wan.Close()
	go c.Run(ctx, wan.C())
	synced := bus.Time.Subscribe(0)
	defer synced.Close()
	if _, err := synced.Next(ctx); err != nil {
		t.Fatal(err)
	}
}
