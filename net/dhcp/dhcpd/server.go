// Package dhcpd is the router's DHCPv4 server for its LAN (RFC 2131
// section 4.3), with the defaults OpenWrt gives dnsmasq: 192.168.1.1/24,
// a pool of 150 addresses from .100, 12-hour leases, domain "lan".
// Messages are parsed and built by github.com/insomniacslk/dhcp (dhcpv4);
// Handle has the shape of its server4.Handler.
//
// Addresses are chosen, in order: the client's static lease; its current
// or previous binding; the address it asks for, if free; a free pool
// address found by hashing its MAC (so a client tends to get the same
// address even from an empty table). The lease table holds at most one
// entry per pool or static address, so its memory is bounded by
// Limit + len(Static) entries.
package dhcpd

import (
	"fmt"
	"hash/fnv"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
)

// Timers (dnsmasq's values: it holds an offered address briefly and puts
// a declined address aside for ten minutes, DECLINE_BACKOFF in dnsmasq's
// config.h).
const (
	offerHold   = time.Minute
	declineHold = 10 * time.Minute
	clientPort  = 68
	serverPort  = 67
	// maxMessage is the largest DHCP message read (RFC 2131 2: 576-byte
	// minimum; clients may announce more with option 57, up to an MTU).
	maxMessage = 1500
)

type state uint8

const (
	stateOffered  state = iota // reserved by an OFFER, until offerHold passes
	stateBound                 // leased, until expires
	stateReleased              // released or expired: the client's previous binding
	stateDeclined              // a client said the address is in use; set aside until expires
)

type entry struct {
	mac      [6]byte // zero for declined addresses
	ip       netip.Addr
	hostname string
	expires  time.Time
	state    state
}

// busy reports whether the entry keeps its address from other clients.
func (e *entry) busy(now time.Time) bool {
	return e.state != stateReleased && now.Before(e.expires)
}

// Lease is one client's current lease, for the status page.
type Lease struct {
	MAC      net.HardwareAddr
	IP       netip.Addr
	Hostname string
	Expires  time.Time
	Static   bool
}

// Stats counts what the server did.
type Stats struct {
	Malformed     uint64 // unparsable or non-request messages, dropped
	PoolExhausted uint64 // DISCOVERs left unanswered: no free address
	Offers        uint64
	Acks          uint64
	Naks          uint64
	Declines      uint64
	Releases      uint64
	Informs       uint64
	StoreErrors   uint64 // failed Save calls (retried on the next change)
}

// Server hands out LAN leases. It is safe for concurrent use.
type Server struct {
	cfg Config
	p   *pool

	mu       sync.Mutex
	byIP     map[netip.Addr]*entry
	byMAC    map[[6]byte]*entry
	dirty    bool // a change not yet saved
	extended bool // an unsaved renewal that only moved an expiry
	lastSave time.Time
	loadErr  error

	saveMu sync.Mutex // orders Save calls

	malformed, exhausted, offers, acks, naks, declines, releases, informs, storeErrors atomic.Uint64
}

// New validates cfg (zero fields take OpenWrt's defaults) and loads the
// lease table from cfg.Store. A store that cannot be read or holds a
// corrupt or foreign blob does not stop the server: it starts with an
// empty table and LoadError reports why.
func New(cfg Config) (*Server, error) {
	p, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, p: p, byIP: make(map[netip.Addr]*entry), byMAC: make(map[[6]byte]*entry)}
	if cfg.Store != nil {
		s.loadErr = s.load()
		if s.loadErr != nil {
			s.logf("dhcpd: starting with an empty lease table: %v", s.loadErr)
		}
	}
	s.lastSave = cfg.Now()
	return s, nil
}

// LoadError is why the stored lease table was not used (nil if it was).
func (s *Server) LoadError() error { return s.loadErr }

func (s *Server) load() error {
	data, err := s.cfg.Store.Load()
	if err != nil {
		return fmt.Errorf("dhcpd: loading leases: %w", err)
	}
	ls, err := decodeLeases(data)
	if err != nil {
		return err
	}
	for _, l := range ls {
		// Keep only what still fits the configuration; the table's
		// invariants (one entry per address and per MAC, addresses in
		// the pool or static for that MAC) hold whatever the blob says.
		if si, ok := s.p.staticByIP[l.ip]; ok && [6]byte(s.p.static[si].MAC) != l.mac {
			continue
		}
		if _, ok := s.p.staticByIP[l.ip]; !ok && !s.p.inPool(l.ip) || l.ip == s.p.self {
			continue
		}
		if si, ok := s.p.staticMAC[l.mac]; ok && s.p.static[si].IP != l.ip {
			continue
		}
		if s.byIP[l.ip] != nil || s.byMAC[l.mac] != nil {
			continue
		}
		e := &entry{mac: l.mac, ip: l.ip, hostname: l.hostname, expires: l.expires, state: l.state}
		s.byIP[l.ip], s.byMAC[l.mac] = e, e
	}
	return nil
}

// Stats returns the counters.
func (s *Server) Stats() Stats {
	return Stats{
		Malformed: s.malformed.Load(), PoolExhausted: s.exhausted.Load(), Offers: s.offers.Load(),
		Acks: s.acks.Load(), Naks: s.naks.Load(), Declines: s.declines.Load(), Releases: s.releases.Load(),
		Informs: s.informs.Load(), StoreErrors: s.storeErrors.Load(),
	}
}

// Serve answers DHCP messages read from conn until reading fails (conn
// closed), and returns that error. conn is the server's UDP port 67 on
// the LAN; it must be able to send to 255.255.255.255:68 (clients without
// an address) and unicast to a renewing client's address.
func (s *Server) Serve(conn net.PacketConn) error {
	buf := make([]byte, maxMessage)
	for {
		n, peer, err := conn.ReadFrom(buf)
		if err != nil {
			return err
		}
		s.HandlePacket(conn, peer, buf[:n])
	}
}

// HandlePacket parses one datagram and answers it; bad messages are
// counted and dropped.
func (s *Server) HandlePacket(conn net.PacketConn, peer net.Addr, b []byte) {
	m, err := dhcpv4.FromBytes(b)
	if err != nil {
		s.malformed.Add(1)
		return
	}
	s.Handle(conn, peer, m)
}

// Handle answers one parsed message (server4.Handler's shape, so the
// server also runs under server4.NewServer).
func (s *Server) Handle(conn net.PacketConn, _ net.Addr, m *dhcpv4.DHCPv4) {
	reply, to := s.respond(m)
	if reply != nil {
		if _, err := conn.WriteTo(reply.ToBytes(), to); err != nil {
			s.logf("dhcpd: sending %v to %v: %v", reply.MessageType(), to, err)
		}
	}
	s.maybeSave()
}

// respond decides the answer to m and where it goes; nil if none.
func (s *Server) respond(m *dhcpv4.DHCPv4) (*dhcpv4.DHCPv4, *net.UDPAddr) {
	if m.OpCode != dhcpv4.OpcodeBootRequest || len(m.ClientHWAddr) != 6 || m.HWType != 1 {
		s.malformed.Add(1)
		return nil, nil
	}
	mac := [6]byte(m.ClientHWAddr)
	now := s.cfg.Now()
	hostname := sanitizeHostname(m.HostName())
	s.mu.Lock()
	defer s.mu.Unlock()
	switch m.MessageType() {
	case dhcpv4.MessageTypeDiscover:
		ip, ok := s.choose(mac, addrOf(m.RequestedIPAddress()), now)
		if !ok {
			s.exhausted.Add(1)
			return nil, nil
		}
		s.reserve(mac, ip, hostname, now)
		s.offers.Add(1)
		return s.lease(m, dhcpv4.MessageTypeOffer, ip)

	case dhcpv4.MessageTypeRequest:
		// RFC 2131 4.3.2: which state the client is in decides which
		// fields name the address.
		sid, req, ci := addrOf(m.ServerIdentifier()), addrOf(m.RequestedIPAddress()), addrOf(m.ClientIPAddr)
		var ip netip.Addr
		switch {
		case sid.IsValid(): // SELECTING
			if sid != s.p.self {
				// The client took another server's offer: free ours.
				if e := s.byMAC[mac]; e != nil && e.state == stateOffered {
					s.remove(e)
				}
				return nil, nil
			}
			if !req.IsValid() {
				s.malformed.Add(1)
				return nil, nil
			}
			ip = req
		case req.IsValid() && !ci.IsValid(): // INIT-REBOOT
			ip = req
		case ci.IsValid(): // RENEWING (unicast) or REBINDING (broadcast)
			ip = ci
		default:
			s.malformed.Add(1)
			return nil, nil
		}
		if !s.mayBind(mac, ip, now) {
			s.naks.Add(1)
			return s.nak(m)
		}
		s.bind(mac, ip, hostname, now)
		s.acks.Add(1)
		return s.lease(m, dhcpv4.MessageTypeAck, ip)

	case dhcpv4.MessageTypeDecline:
		ip := addrOf(m.RequestedIPAddress())
		if e := s.byMAC[mac]; e != nil && e.ip == ip {
			delete(s.byMAC, mac)
			*e = entry{ip: ip, expires: now.Add(declineHold), state: stateDeclined}
			s.dirty = true
			s.declines.Add(1)
		}
		return nil, nil

	case dhcpv4.MessageTypeRelease:
		ip := addrOf(m.ClientIPAddr)
		if e := s.byMAC[mac]; e != nil && e.ip == ip && e.state == stateBound {
			e.state, e.expires = stateReleased, now
			s.dirty = true
			s.releases.Add(1)
		}
		return nil, nil

	case dhcpv4.MessageTypeInform:
		// RFC 2131 4.3.5: configuration only; no lease, no yiaddr.
		s.informs.Add(1)
		r := s.reply(m, dhcpv4.MessageTypeAck)
		if r == nil {
			return nil, nil
		}
		ci := addrOf(m.ClientIPAddr)
		if !ci.IsValid() {
			return r, s.destination(m, false)
		}
		return r, &net.UDPAddr{IP: ci.AsSlice(), Port: clientPort}
	}
	s.malformed.Add(1)
	return nil, nil
}

func addrOf(ip net.IP) netip.Addr {
	a, ok := netip.AddrFromSlice(ip.To4())
	if !ok || a.IsUnspecified() {
		return netip.Addr{}
	}
	return a
}

// choose picks the address to offer mac (RFC 2131 4.3.1 order).
func (s *Server) choose(mac [6]byte, requested netip.Addr, now time.Time) (netip.Addr, bool) {
	if si, ok := s.p.staticMAC[mac]; ok {
		return s.p.static[si].IP, true
	}
	if e := s.byMAC[mac]; e != nil && s.p.inPool(e.ip) {
		return e.ip, true
	}
	if requested.IsValid() && s.p.inPool(requested) && s.mayBind(mac, requested, now) {
		return requested, true
	}
	h := fnv.New32a()
	h.Write(mac[:])
	start := int(h.Sum32() % uint32(s.p.limit))
	// First an address nobody has held, then the one whose holder is
	// gone (expired, released, declined long ago) — previous bindings
	// are kept as long as there is room, so clients get theirs back.
	var reclaim netip.Addr
	for i := 0; i < s.p.limit; i++ {
		ip := s.p.at((start + i) % s.p.limit)
		if ip == s.p.self {
			continue
		}
		if _, static := s.p.staticByIP[ip]; static {
			continue
		}
		e := s.byIP[ip]
		if e == nil {
			return ip, true
		}
		if !reclaim.IsValid() && !e.busy(now) {
			reclaim = ip
		}
	}
	return reclaim, reclaim.IsValid()
}

// mayBind reports whether mac may hold ip now.
func (s *Server) mayBind(mac [6]byte, ip netip.Addr, now time.Time) bool {
	if si, ok := s.p.staticMAC[mac]; ok {
		return s.p.static[si].IP == ip
	}
	if _, static := s.p.staticByIP[ip]; static || ip == s.p.self || !s.p.inPool(ip) {
		return false
	}
	e := s.byIP[ip]
	return e == nil || e.mac == mac && e.state != stateDeclined || !e.busy(now)
}

// take makes ip mac's one entry and returns it.
func (s *Server) take(mac [6]byte, ip netip.Addr) *entry {
	if e := s.byMAC[mac]; e != nil && e.ip != ip {
		s.remove(e)
	}
	if e := s.byIP[ip]; e != nil && e.mac != mac {
		s.remove(e)
	}
	e := s.byIP[ip]
	if e == nil {
		e = &entry{mac: mac, ip: ip}
		s.byIP[ip], s.byMAC[mac] = e, e
		s.dirty = true
	}
	return e
}

func (s *Server) remove(e *entry) {
	delete(s.byIP, e.ip)
	if s.byMAC[e.mac] == e {
		delete(s.byMAC, e.mac)
	}
}

func (s *Server) reserve(mac [6]byte, ip netip.Addr, hostname string, now time.Time) {
	e := s.take(mac, ip)
	if e.state == stateBound && e.busy(now) {
		return // a bound client re-discovering keeps its lease as it is
	}
	e.state, e.expires = stateOffered, now.Add(offerHold)
	if hostname != "" {
		e.hostname = hostname
	}
}

func (s *Server) bind(mac [6]byte, ip netip.Addr, hostname string, now time.Time) {
	e := s.take(mac, ip)
	if si, ok := s.p.staticMAC[mac]; ok && s.p.static[si].Hostname != "" {
		hostname = s.p.static[si].Hostname
	}
	if hostname == "" {
		hostname = e.hostname
	}
	if e.state != stateBound || e.hostname != hostname {
		s.dirty = true
	} else {
		s.extended = true
	}
	e.state, e.hostname, e.expires = stateBound, hostname, now.Add(s.p.leaseTime)
}

// reply starts a reply with the options every answer carries.
func (s *Server) reply(req *dhcpv4.DHCPv4, typ dhcpv4.MessageType, mods ...dhcpv4.Modifier) *dhcpv4.DHCPv4 {
	mask := net.CIDRMask(s.p.prefix.Bits(), 32)
	r, err := dhcpv4.NewReplyFromRequest(req, append([]dhcpv4.Modifier{
		dhcpv4.WithMessageType(typ),
		dhcpv4.WithOption(dhcpv4.OptServerIdentifier(s.p.self.AsSlice())),
		dhcpv4.WithNetmask(mask),
		dhcpv4.WithRouter(s.p.router.AsSlice()),
		dhcpv4.WithDNS(s.p.dns.AsSlice()),
		dhcpv4.WithOption(dhcpv4.OptDomainName(s.p.domain)),
	}, mods...)...)
	if err != nil { // only when the system's random source fails
		s.logf("dhcpd: building a reply: %v", err)
		return nil
	}
	return r
}

// lease builds an OFFER or ACK for ip with the lease times: T1 and T2 at
// RFC 2131 4.4.5's 0.5 and 0.875.
func (s *Server) lease(req *dhcpv4.DHCPv4, typ dhcpv4.MessageType, ip netip.Addr) (*dhcpv4.DHCPv4, *net.UDPAddr) {
	lt := s.p.leaseTime
	r := s.reply(req, typ,
		dhcpv4.WithYourIP(ip.AsSlice()),
		dhcpv4.WithOption(dhcpv4.OptIPAddressLeaseTime(lt)),
		dhcpv4.WithOption(dhcpv4.OptRenewTimeValue(lt/2)),
		dhcpv4.WithOption(dhcpv4.OptRebindingTimeValue(lt/8*7)))
	if r == nil {
		return nil, nil
	}
	return r, s.destination(req, false)
}

func (s *Server) nak(req *dhcpv4.DHCPv4) (*dhcpv4.DHCPv4, *net.UDPAddr) {
	r, err := dhcpv4.NewReplyFromRequest(req,
		dhcpv4.WithMessageType(dhcpv4.MessageTypeNak),
		dhcpv4.WithOption(dhcpv4.OptServerIdentifier(s.p.self.AsSlice())),
		dhcpv4.WithOption(dhcpv4.OptMessage("address not available")))
	if err != nil {
		s.logf("dhcpd: building a NAK: %v", err)
		return nil, nil
	}
	return r, s.destination(req, true)
}

// destination follows RFC 2131 4.1: to the relay if giaddr is set; a
// NAK is broadcast; to ciaddr if the client has an address; otherwise
// broadcast (a PacketConn cannot unicast to a client that does not yet
// answer ARP, so the broadcast-bit-clear unicast case is broadcast too).
func (s *Server) destination(req *dhcpv4.DHCPv4, nak bool) *net.UDPAddr {
	if gi := addrOf(req.GatewayIPAddr); gi.IsValid() {
		return &net.UDPAddr{IP: gi.AsSlice(), Port: serverPort}
	}
	if ci := addrOf(req.ClientIPAddr); ci.IsValid() && !nak {
		return &net.UDPAddr{IP: ci.AsSlice(), Port: clientPort}
	}
	return &net.UDPAddr{IP: net.IPv4bcast.To4(), Port: clientPort}
}

// Leases lists the current (bound, unexpired) leases by address.
func (s *Server) Leases() []Lease {
	now := s.cfg.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Lease
	for _, e := range s.byIP {
		if e.state == stateBound && now.Before(e.expires) {
			_, static := s.p.staticMAC[e.mac]
			out = append(out, Lease{MAC: append(net.HardwareAddr(nil), e.mac[:]...), IP: e.ip, Hostname: e.hostname, Expires: e.expires, Static: static})
		}
	}
	slices.SortFunc(out, func(a, b Lease) int { return a.IP.Compare(b.IP) })
	return out
}

// Lookup finds the address of a LAN host by the name it gave (option 12)
// or its static lease's name, for the DNS forwarder. name may carry the
// local domain ("laptop.lan"); case does not matter.
func (s *Server) Lookup(name string) (netip.Addr, bool) {
	name = strings.TrimSuffix(name, ".")
	if base, ok := strings.CutSuffix(strings.ToLower(name), "."+strings.ToLower(s.p.domain)); ok {
		name = base
	}
	if name == "" || strings.Contains(name, ".") {
		return netip.Addr{}, false
	}
	for _, st := range s.p.static {
		if st.Hostname != "" && strings.EqualFold(st.Hostname, name) {
			return st.IP, true
		}
	}
	now := s.cfg.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	var best *entry
	for _, e := range s.byIP {
		if e.state == stateBound && now.Before(e.expires) && strings.EqualFold(e.hostname, name) {
			if best == nil || e.expires.After(best.expires) { // the most recent holder of a shared name
				best = e
			}
		}
	}
	if best == nil {
		return netip.Addr{}, false
	}
	return best.ip, true
}

// LookupAddr returns the hostname of the client holding addr (a static
// lease's name, or the name a bound client sent), for the DNS forwarder's
// reverse (PTR) answers.
func (s *Server) LookupAddr(addr netip.Addr) (string, bool) {
	for _, st := range s.p.static {
		if st.IP == addr && st.Hostname != "" {
			return st.Hostname, true
		}
	}
	now := s.cfg.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.byIP[addr]; e != nil && e.state == stateBound && now.Before(e.expires) && e.hostname != "" {
		return e.hostname, true
	}
	return "", false
}

// Flush saves the lease table now if anything is unsaved (for a clean
// shutdown).
func (s *Server) Flush() error {
	if s.cfg.Store == nil {
		return errNoStore
	}
	s.mu.Lock()
	pending := s.dirty || s.extended
	s.mu.Unlock()
	if !pending {
		return nil
	}
	return s.save()
}

// maybeSave saves after a change, or after a pure renewal once
// SaveInterval has passed since the last save.
func (s *Server) maybeSave() {
	if s.cfg.Store == nil {
		return
	}
	s.mu.Lock()
	due := s.dirty || s.extended && s.cfg.Now().Sub(s.lastSave) >= s.cfg.SaveInterval
	s.mu.Unlock()
	if due {
		if err := s.save(); err != nil {
			s.logf("dhcpd: %v", err)
		}
	}
}

func (s *Server) save() error {
	s.saveMu.Lock()
	defer s.saveMu.Unlock()
	s.mu.Lock()
	var ls []storedLease
	for _, e := range s.byIP {
		if e.state == stateBound || e.state == stateReleased {
			ls = append(ls, storedLease{state: e.state, expires: e.expires, mac: e.mac, ip: e.ip, hostname: e.hostname})
		}
	}
	slices.SortFunc(ls, func(a, b storedLease) int { return a.ip.Compare(b.ip) })
	s.dirty, s.extended = false, false
	s.mu.Unlock()
	if err := s.cfg.Store.Save(encodeLeases(ls)); err != nil {
		s.storeErrors.Add(1)
		s.mu.Lock()
		s.dirty = true
		s.mu.Unlock()
		return fmt.Errorf("dhcpd: saving leases: %w", err)
	}
	s.mu.Lock()
	s.lastSave = s.cfg.Now()
	s.mu.Unlock()
	return nil
}

func (s *Server) logf(format string, args ...any) {
	if s.cfg.Logf != nil {
		s.cfg.Logf(format, args...)
	}
}
