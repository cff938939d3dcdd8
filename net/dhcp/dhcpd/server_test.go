package dhcpd

import (
	"errors"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
)

type clock struct{ t time.Time }

func (c *clock) Now() time.Time          { return c.t }
func (c *clock) Advance(d time.Duration) { c.t = c.t.Add(d) }

type memStore struct {
	mu    sync.Mutex
	data  []byte
	saves int
	fail  error
}

func (m *memStore) Load() ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]byte(nil), m.data...), nil
}

func (m *memStore) Save(b []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return m.fail
	}
	m.data = append([]byte(nil), b...)
	m.saves++
	return nil
}

func newServer(t *testing.T, mod func(*Config)) (*Server, *clock) {
	t.Helper()
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	cfg := Config{Now: clk.Now}
	if mod != nil {
		mod(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s, clk
}

func mac(i byte) net.HardwareAddr { return net.HardwareAddr{0x02, 0, 0, 0, 0, i} }

func msg(t *testing.T, typ dhcpv4.MessageType, m net.HardwareAddr, mods ...dhcpv4.Modifier) *dhcpv4.DHCPv4 {
	t.Helper()
	d, err := dhcpv4.New(append([]dhcpv4.Modifier{dhcpv4.WithHwAddr(m), dhcpv4.WithMessageType(typ)}, mods...)...)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// dora runs DISCOVER/OFFER/REQUEST/ACK and returns the ACK.
func dora(t *testing.T, s *Server, m net.HardwareAddr, mods ...dhcpv4.Modifier) *dhcpv4.DHCPv4 {
	t.Helper()
	offer, to := s.respond(msg(t, dhcpv4.MessageTypeDiscover, m, mods...))
	if offer == nil || offer.MessageType() != dhcpv4.MessageTypeOffer {
		t.Fatalf("no offer for %v", m)
	}
	if !to.IP.Equal(net.IPv4bcast) || to.Port != 68 {
		t.Fatalf("offer to %v", to)
	}
	req := msg(t, dhcpv4.MessageTypeRequest, m, append(mods,
		dhcpv4.WithOption(dhcpv4.OptRequestedIPAddress(offer.YourIPAddr)),
		dhcpv4.WithOption(dhcpv4.OptServerIdentifier(offer.ServerIdentifier())))...)
	ack, _ := s.respond(req)
	s.maybeSave()
	if ack == nil || ack.MessageType() != dhcpv4.MessageTypeAck || !ack.YourIPAddr.Equal(offer.YourIPAddr) {
		t.Fatalf("request for %v: %v", offer.YourIPAddr, ack)
	}
	return ack
}

func ip(a net.IP) netip.Addr { x, _ := netip.AddrFromSlice(a.To4()); return x }

func TestDefaultsAndOptions(t *testing.T) {
	s, clk := newServer(t, nil)
	ack := dora(t, s, mac(1), dhcpv4.WithOption(dhcpv4.OptHostName("Laptop.example.com")))
	a := ip(ack.YourIPAddr)
	if a.Less(netip.MustParseAddr("192.168.1.100")) || netip.MustParseAddr("192.168.1.249").Less(a) {
		t.Fatalf("address %v outside 100..249", a)
	}
	if !ack.ServerIdentifier().Equal(net.IPv4(192, 168, 1, 1)) || ack.SubnetMask().String() != "ffffff00" ||
		!ack.Router()[0].Equal(net.IPv4(192, 168, 1, 1)) || !ack.DNS()[0].Equal(net.IPv4(192, 168, 1, 1)) ||
		ack.DomainName() != "lan" || ack.IPAddressLeaseTime(0) != 12*time.Hour ||
		ack.IPAddressRenewalTime(0) != 6*time.Hour || ack.IPAddressRebindingTime(0) != 10*time.Hour+30*time.Minute {
		t.Fatalf("options: %s", ack.Summary())
	}
	ls := s.Leases()
	if len(ls) != 1 || ls[0].IP != a || ls[0].Hostname != "Laptop" || !ls[0].Expires.Equal(clk.t.Add(12*time.Hour)) {
		t.Fatalf("leases %+v", ls)
	}
	if got, ok := s.Lookup("laptop.lan."); !ok || got != a {
		t.Fatalf("Lookup: %v %v", got, ok)
	}
	if _, ok := s.Lookup("laptop.example"); ok {
		t.Fatal("Lookup answered for a foreign domain")
	}
	if name, ok := s.LookupAddr(a); !ok || name != "Laptop" {
		t.Fatalf("LookupAddr(%v): %q %v", a, name, ok)
	}
	if _, ok := s.LookupAddr(netip.MustParseAddr("192.168.1.99")); ok {
		t.Fatal("LookupAddr answered for an address nobody holds")
	}
	// Same MAC → same address from the MAC hash, even on a fresh server.
	s2, _ := newServer(t, nil)
	if b := ip(dora(t, s2, mac(1)).YourIPAddr); b != a {
		t.Fatalf("hash gives %v then %v", a, b)
	}
	// A second client gets another address.
	if b := ip(dora(t, s, mac(2)).YourIPAddr); b == a {
		t.Fatal("two clients share an address")
	}
}

func TestHostnameSanitizing(t *testing.T) {
	for in, want := range map[string]string{
		"laptop": "laptop", "my-pc.home": "my-pc", "bad_name": "", "-x": "", "x-": "", "": "",
		strings.Repeat("a", 64): "", strings.Repeat("a", 63): strings.Repeat("a", 63), "name\x00": "name", "ünï": "",
	} {
		if got := sanitizeHostname(in); got != want {
			t.Errorf("sanitizeHostname(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRequestStates(t *testing.T) {
	s, clk := newServer(t, nil)
	ack := dora(t, s, mac(1))
	a := ack.YourIPAddr
	self := dhcpv4.WithOption(dhcpv4.OptServerIdentifier(net.IPv4(192, 168, 1, 1)))

	// RENEWING: ciaddr, unicast reply to it, lease extended.
	clk.Advance(6 * time.Hour)
	r, to := s.respond(msg(t, dhcpv4.MessageTypeRequest, mac(1), dhcpv4.WithClientIP(a)))
	if r.MessageType() != dhcpv4.MessageTypeAck || !to.IP.Equal(a) || to.Port != 68 {
		t.Fatalf("renew: %v to %v", r.MessageType(), to)
	}
	if s.Leases()[0].Expires != clk.t.Add(12*time.Hour) {
		t.Fatal("renewal did not extend the lease")
	}
	// Renewing someone else's address: NAK, broadcast.
	r, to = s.respond(msg(t, dhcpv4.MessageTypeRequest, mac(2), dhcpv4.WithClientIP(a)))
	if r.MessageType() != dhcpv4.MessageTypeNak || !to.IP.Equal(net.IPv4bcast) {
		t.Fatalf("foreign renew: %v to %v", r.MessageType(), to)
	}
	// INIT-REBOOT with the right address: ACK; with a wrong one: NAK.
	r, _ = s.respond(msg(t, dhcpv4.MessageTypeRequest, mac(1), dhcpv4.WithOption(dhcpv4.OptRequestedIPAddress(a))))
	if r.MessageType() != dhcpv4.MessageTypeAck {
		t.Fatal("init-reboot refused")
	}
	for _, wrong := range []net.IP{net.IPv4(10, 0, 0, 5), net.IPv4(192, 168, 1, 1), net.IPv4(192, 168, 1, 20)} {
		r, _ = s.respond(msg(t, dhcpv4.MessageTypeRequest, mac(3), dhcpv4.WithOption(dhcpv4.OptRequestedIPAddress(wrong))))
		if r.MessageType() != dhcpv4.MessageTypeNak {
			t.Fatalf("init-reboot for %v: %v", wrong, r.MessageType())
		}
	}
	// SELECTING another server: no answer, and our offer is freed.
	offer, _ := s.respond(msg(t, dhcpv4.MessageTypeDiscover, mac(4)))
	r, _ = s.respond(msg(t, dhcpv4.MessageTypeRequest, mac(4), dhcpv4.WithOption(dhcpv4.OptServerIdentifier(net.IPv4(192, 168, 1, 2))),
		dhcpv4.WithOption(dhcpv4.OptRequestedIPAddress(net.IPv4(192, 168, 1, 50)))))
	if r != nil || s.byIP[ip(offer.YourIPAddr)] != nil {
		t.Fatal("request to another server answered or offer kept")
	}
	// SELECTING us for an address someone holds: NAK.
	r, _ = s.respond(msg(t, dhcpv4.MessageTypeRequest, mac(5), self, dhcpv4.WithOption(dhcpv4.OptRequestedIPAddress(a))))
	if r.MessageType() != dhcpv4.MessageTypeNak {
		t.Fatal("selecting a held address")
	}
	if st := s.Stats(); st.Naks != 5 || st.Acks != 3 {
		t.Fatalf("stats %+v", st)
	}
}

func TestReleaseDeclineExpiry(t *testing.T) {
	s, clk := newServer(t, func(c *Config) { c.Limit = 2; c.LeaseTime = time.Hour })
	a := dora(t, s, mac(1)).YourIPAddr
	b := dora(t, s, mac(2)).YourIPAddr
	// Pool of 2 is full: a third client gets nothing, counted.
	if r, _ := s.respond(msg(t, dhcpv4.MessageTypeDiscover, mac(3))); r != nil {
		t.Fatal("offer from a full pool")
	}
	if s.Stats().PoolExhausted != 1 {
		t.Fatal("exhaustion not counted")
	}
	// Release: the lease is gone from Leases, but the client gets the
	// same address back while nobody needs it.
	s.respond(msg(t, dhcpv4.MessageTypeRelease, mac(1), dhcpv4.WithClientIP(a)))
	if len(s.Leases()) != 1 {
		t.Fatalf("leases after release %+v", s.Leases())
	}
	if got := dora(t, s, mac(1)).YourIPAddr; !got.Equal(a) {
		t.Fatalf("released client got %v, had %v", got, a)
	}
	// Decline: the address is set aside for 10 minutes; the client gets the other one once free.
	s.respond(msg(t, dhcpv4.MessageTypeDecline, mac(2), dhcpv4.WithOption(dhcpv4.OptRequestedIPAddress(b))))
	if r, _ := s.respond(msg(t, dhcpv4.MessageTypeDiscover, mac(2))); r != nil {
		t.Fatalf("offered %v right after a decline with the pool otherwise full", r.YourIPAddr)
	}
	clk.Advance(11 * time.Minute)
	if r, _ := s.respond(msg(t, dhcpv4.MessageTypeDiscover, mac(2))); r == nil || !r.YourIPAddr.Equal(b) {
		t.Fatal("declined address not reusable after its hold")
	}
	// Expiry: after the lease time a third client may take an expired address.
	clk.Advance(2 * time.Hour)
	if c := dora(t, s, mac(3)).YourIPAddr; !c.Equal(a) && !c.Equal(b) {
		t.Fatalf("third client got %v", c)
	}
	if n := len(s.byIP); n > 2 {
		t.Fatalf("table holds %d entries for a pool of 2", n)
	}
}

func TestStaticAndRequested(t *testing.T) {
	st := netip.MustParseAddr("192.168.1.10")
	s, _ := newServer(t, func(c *Config) {
		c.Static = []StaticLease{{MAC: mac(9), IP: st, Hostname: "nas"}}
	})
	ack := dora(t, s, mac(9), dhcpv4.WithOption(dhcpv4.OptHostName("ignored")))
	if ip(ack.YourIPAddr) != st {
		t.Fatalf("static client got %v", ack.YourIPAddr)
	}
	if a, ok := s.Lookup("NAS"); !ok || a != st {
		t.Fatal("static name not found")
	}
	if name, ok := s.LookupAddr(st); !ok || name != "nas" {
		t.Fatalf("LookupAddr of the static lease: %q %v", name, ok)
	}
	// A client asking for a free pool address gets it.
	want := net.IPv4(192, 168, 1, 200)
	if got := dora(t, s, mac(1), dhcpv4.WithOption(dhcpv4.OptRequestedIPAddress(want))).YourIPAddr; !got.Equal(want) {
		t.Fatalf("requested %v, got %v", want, got)
	}
	// Nobody else may take the static address.
	r, _ := s.respond(msg(t, dhcpv4.MessageTypeRequest, mac(2), dhcpv4.WithOption(dhcpv4.OptRequestedIPAddress(st.AsSlice()))))
	if r.MessageType() != dhcpv4.MessageTypeNak {
		t.Fatal("static address given to another MAC")
	}
	// INFORM: options, no lease, to ciaddr.
	r, to := s.respond(msg(t, dhcpv4.MessageTypeInform, mac(7), dhcpv4.WithClientIP(net.IPv4(192, 168, 1, 7))))
	if r.MessageType() != dhcpv4.MessageTypeAck || r.Options.Has(dhcpv4.OptionIPAddressLeaseTime) || !to.IP.Equal(net.IPv4(192, 168, 1, 7)) {
		t.Fatalf("inform: %s to %v", r.Summary(), to)
	}
}

func TestConfigErrors(t *testing.T) {
	p := netip.MustParsePrefix
	cases := map[string]Config{
		"range outside":    {Start: 200, Limit: 100},
		"lease too short":  {LeaseTime: time.Minute},
		"static outside":   {Static: []StaticLease{{MAC: mac(1), IP: netip.MustParseAddr("10.0.0.1")}}},
		"static duplicate": {Static: []StaticLease{{MAC: mac(1), IP: netip.MustParseAddr("192.168.1.5")}, {MAC: mac(2), IP: netip.MustParseAddr("192.168.1.5")}}},
		"static dup mac":   {Static: []StaticLease{{MAC: mac(1), IP: netip.MustParseAddr("192.168.1.5")}, {MAC: mac(1), IP: netip.MustParseAddr("192.168.1.6")}}},
		"static is router": {Static: []StaticLease{{MAC: mac(1), IP: netip.MustParseAddr("192.168.1.1")}}},
		"static bad name":  {Static: []StaticLease{{MAC: mac(1), IP: netip.MustParseAddr("192.168.1.5"), Hostname: "a b"}}},
		"ipv6":             {Addr: p("fd00::1/64")},
		"network address":  {Addr: p("192.168.1.0/24")},
		"negative start":   {Start: -1},
		"bad domain":       {Domain: "a..b"},
		"bad mac":          {Static: []StaticLease{{MAC: net.HardwareAddr{1}, IP: netip.MustParseAddr("192.168.1.5")}}},
	}
	for name, cfg := range cases {
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: accepted", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
	if _, err := New(Config{}); err != nil {
		t.Fatalf("defaults: %v", err)
	}
}

func TestPersistence(t *testing.T) {
	store := &memStore{}
	s, clk := newServer(t, func(c *Config) { c.Store = store })
	a := dora(t, s, mac(1), dhcpv4.WithOption(dhcpv4.OptHostName("tv"))).YourIPAddr
	saves := store.saves
	if saves == 0 {
		t.Fatal("new lease not saved")
	}
	// Renewals that only extend are not written each time...
	for i := 0; i < 5; i++ {
		clk.Advance(time.Minute)
		s.Handle(discard{}, nil, msg(t, dhcpv4.MessageTypeRequest, mac(1), dhcpv4.WithClientIP(a)))
	}
	if store.saves != saves {
		t.Fatalf("renewals wrote %d times", store.saves-saves)
	}
	// ...but once SaveInterval has passed.
	clk.Advance(DefaultSaveInterval)
	s.Handle(discard{}, nil, msg(t, dhcpv4.MessageTypeRequest, mac(1), dhcpv4.WithClientIP(a)))
	if store.saves != saves+1 {
		t.Fatalf("saves %d, want %d", store.saves, saves+1)
	}
	clk.Advance(time.Minute)
	s.Handle(discard{}, nil, msg(t, dhcpv4.MessageTypeRequest, mac(1), dhcpv4.WithClientIP(a)))
	if err := s.Flush(); err != nil || store.saves != saves+2 {
		t.Fatalf("Flush: %v, saves %d", err, store.saves)
	}
	// A new server on the same store knows the lease.
	s2, _ := newServer(t, func(c *Config) { c.Store = store; c.Now = clk.Now })
	if s2.LoadError() != nil {
		t.Fatal(s2.LoadError())
	}
	ls := s2.Leases()
	if len(ls) != 1 || ls[0].IP != ip(a) || ls[0].Hostname != "tv" {
		t.Fatalf("leases after restart %+v", ls)
	}
	if got := dora(t, s2, mac(1)).YourIPAddr; !got.Equal(a) {
		t.Fatalf("after restart %v, before %v", got, a)
	}
	// Store failures are counted and retried on the next change.
	store.fail = errors.New("flash full")
	dora(t, s2, mac(2))
	if s2.Stats().StoreErrors == 0 {
		t.Fatal("store error not counted")
	}
	store.fail = nil
	if err := s2.Flush(); err != nil || !strings.Contains(string(store.data), mac(2).String()) {
		t.Fatalf("retry after failure: %v\n%s", err, store.data)
	}
}

func TestCorruptStore(t *testing.T) {
	for name, blob := range map[string]string{
		"foreign":   "1700000000 02:00:00:00:00:01 192.168.1.100 host *\n",
		"version":   "gowrt-dhcpd-leases 2\n",
		"bad line":  "gowrt-dhcpd-leases 1\nb 12 02:00:00:00:00:01 192.168.1.300 x\n",
		"bad state": "gowrt-dhcpd-leases 1\nq 12 02:00:00:00:00:01 192.168.1.100 x\n",
		"bad name":  "gowrt-dhcpd-leases 1\nb 12 02:00:00:00:00:01 192.168.1.100 a_b\n",
	} {
		s, _ := newServer(t, func(c *Config) { c.Store = &memStore{data: []byte(blob)} })
		if err := s.LoadError(); !errors.Is(err, ErrStoreFormat) {
			t.Errorf("%s: LoadError %v", name, err)
		}
		if len(s.byIP) != 0 {
			t.Errorf("%s: table not empty", name)
		}
	}
	// Entries that no longer fit the configuration are dropped on load.
	blob := encodeLeases([]storedLease{
		{state: stateBound, expires: time.Unix(1<<31, 0), mac: [6]byte(mac(1)), ip: netip.MustParseAddr("192.168.1.100")},
		{state: stateBound, expires: time.Unix(1<<31, 0), mac: [6]byte(mac(2)), ip: netip.MustParseAddr("192.168.1.100")}, // same address
		{state: stateBound, expires: time.Unix(1<<31, 0), mac: [6]byte(mac(3)), ip: netip.MustParseAddr("10.1.1.1")},      // other subnet
		{state: stateReleased, expires: time.Unix(1, 0), mac: [6]byte(mac(4)), ip: netip.MustParseAddr("192.168.1.120")},
	})
	s, _ := newServer(t, func(c *Config) { c.Store = &memStore{data: blob} })
	if s.LoadError() != nil || len(s.byIP) != 2 {
		t.Fatalf("load: %v, %d entries", s.LoadError(), len(s.byIP))
	}
}

type discard struct{ net.PacketConn }

func (discard) WriteTo(p []byte, a net.Addr) (int, error) { return len(p), nil }

func FuzzDecodeLeases(f *testing.F) {
	f.Add(encodeLeases([]storedLease{{state: stateBound, expires: time.Unix(1e9, 0), mac: [6]byte(mac(1)), ip: netip.MustParseAddr("192.168.1.100"), hostname: "x"}}))
	f.Add([]byte("gowrt-dhcpd-leases 1\n"))
	f.Add([]byte("garbage"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ls, err := decodeLeases(data)
		if err != nil {
			if !errors.Is(err, ErrStoreFormat) {
				t.Fatalf("error not wrapping ErrStoreFormat: %v", err)
			}
			return
		}
		// What decodes re-encodes to something that decodes the same.
		again, err := decodeLeases(encodeLeases(ls))
		if err != nil || len(again) != len(ls) {
			t.Fatalf("round trip: %v", err)
		}
		for i := range ls {
			if again[i] != ls[i] {
				t.Fatalf("round trip %d: %+v vs %+v", i, again[i], ls[i])
			}
		}
		// And a server loads it without trouble.
		s, err := New(Config{Store: &memStore{data: data}})
		if err != nil || len(s.byIP) > DefaultLimit {
			t.Fatalf("load: %v, %d", err, len(s.byIP))
		}
	})
}

func FuzzHandlePacket(f *testing.F) {
	d, _ := dhcpv4.NewDiscovery(mac(1), dhcpv4.WithOption(dhcpv4.OptHostName("h")))
	f.Add(d.ToBytes())
	r, _ := dhcpv4.New(dhcpv4.WithHwAddr(mac(1)), dhcpv4.WithMessageType(dhcpv4.MessageTypeRequest),
		dhcpv4.WithOption(dhcpv4.OptRequestedIPAddress(net.IPv4(192, 168, 1, 100))))
	f.Add(r.ToBytes())
	f.Add([]byte{1, 1, 6, 0})
	s, err := New(Config{Limit: 4})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s.HandlePacket(discard{}, nil, b)
		if n := len(s.byIP); n > 4 {
			t.Fatalf("table grew to %d entries with a pool of 4", n)
		}
	})
}
