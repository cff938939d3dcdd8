package router

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gowrt/gowrt/net/dhcp/dhcpd"
	"github.com/gowrt/gowrt/net/dns/dnsfwd"
	"github.com/gowrt/gowrt/net/sntp"
	"github.com/gowrt/gowrt/sys/clock"
	"github.com/gowrt/gowrt/sys/event"

	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/adapters/gonet"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv4"
	"gvisor.dev/gvisor/pkg/tcpip/transport/udp"
	"gvisor.dev/gvisor/pkg/waiter"
)

// services are the router's own servers on br-lan and their clients on
// the WAN, and the event bus that orders them.
type services struct {
	bus *event.Bus
	// dhcp is the LAN's DHCP server; SetDHCP replaces it while dhcpConn's
	// read loop keeps running (nil: disabled).
	dhcp     atomic.Pointer[dhcpd.Server]
	dhcpMu   sync.Mutex // serialises SetDHCP
	dhcpConn net.PacketConn
	dns      *dnsfwd.Forwarder
	dnsUDP   net.PacketConn
	dnsTCP   net.Listener
	ntp      *sntp.Client
	clock    *clock.System
}

// Events returns the router's event bus: WAN up and down (after the
// address, routes and NAT address are in place), time synced.
func (r *Router) Events() *event.Bus { return r.svc.bus }

// Ports of the services (RFC 2131 4.1, RFC 1035 4.2).
const (
	dhcpServerPort = 67
	dnsPort        = 53
)

func (r *Router) startServices() error {
	sv := &r.svc
	sv.bus = r.cfg.Bus
	if sv.bus == nil {
		sv.bus = event.NewBus()
	}
	r.openStorage()
	if r.cfg.LeaseStore == nil {
		// Leases kept in RAM still outlive a DHCP server replaced by
		// SetDHCP.
		r.cfg.LeaseStore = &memStore{}
	}
	sv.clock = r.cfg.Clock
	if sv.clock == nil {
		sv.clock = clock.NewSystem()
	}
	if st := r.cfg.TimeStore; st != nil {
		switch t, err := sv.clock.Restore(st); {
		case errors.Is(err, clock.ErrNoRecord):
			r.logf(slog.LevelInfo, "no time saved yet")
		case err != nil:
			r.logf(slog.LevelWarn, "last known time: %v", err)
		default:
			r.logf(slog.LevelInfo, "last known time %s: the clock starts no earlier", t.UTC().Format(time.RFC3339))
		}
	}
	lan := r.cfg.LANAddr
	if !r.cfg.DHCP.Disabled {
		srv, err := r.newDHCPServer(r.cfg.DHCP)
		if err != nil {
			return err
		}
		if err := srv.LoadError(); err != nil {
			r.logf(slog.LevelWarn, "DHCP leases: %v (starting with none)", err)
		} else if _, ram := r.cfg.LeaseStore.(*memStore); !ram {
			r.logf(slog.LevelInfo, "DHCP leases: %d loaded", len(srv.Leases()))
		}
		conn, err := r.listenUDP(nicLAN, netip.Addr{}, dhcpServerPort, true)
		if err != nil {
			return fmt.Errorf("router: DHCP server: %w", err)
		}
		sv.dhcp.Store(srv)
		sv.dhcpConn = conn
		r.wg.Add(1)
		go func() { defer r.wg.Done(); r.serveDHCP(conn) }()
	}
	var local dnsfwd.LocalNames
	if sv.dhcp.Load() != nil {
		local = dhcpNames{&sv.dhcp}
	}
	f, err := dnsfwd.New(dnsfwd.Config{Domain: "lan", RouterName: r.cfg.Hostname, RouterAddr: lan.Addr(),
		Local: local, Upstreams: r.upstreams, Dial: r.dial, RebindProtection: true,
		CacheBytes: dnsCacheBytesFor(boardRAM())})
	if err != nil {
		return fmt.Errorf("router: DNS forwarder: %w", err)
	}
	sv.dns = f
	// Bound to br-lan, not to its address: a new LAN address
	// (SetLANAddr) needs no new sockets.
	if sv.dnsUDP, err = r.listenUDP(nicLAN, netip.Addr{}, dnsPort, false); err != nil {
		return fmt.Errorf("router: DNS: %w", err)
	}
	if sv.dnsTCP, err = gonet.ListenTCP(r.s, tcpip.FullAddress{NIC: nicLAN, Port: dnsPort}, ipv4.ProtocolNumber); err != nil {
		return fmt.Errorf("router: DNS over TCP: %w", err)
	}
	r.wg.Add(2)
	go func() { defer r.wg.Done(); _ = f.ServeUDP(sv.dnsUDP) }()
	go func() { defer r.wg.Done(); _ = f.ServeTCP(sv.dnsTCP) }()

	if r.cfg.NTPServers == nil || len(r.cfg.NTPServers) > 0 {
		c, err := sntp.New(sntp.Config{Servers: r.cfg.NTPServers, Resolve: r.resolve, Dial: r.dial,
			Clock: sv.clock, Synced: sv.bus.Time})
		if err != nil {
			return fmt.Errorf("router: SNTP: %w", err)
		}
		sv.ntp = c
		wan := sv.bus.WAN.Subscribe(0)
		r.wg.Add(1)
		go func() { defer r.wg.Done(); defer wan.Close(); _ = c.Run(r.ctx, wan.C()) }()
	}
	if st := r.cfg.TimeStore; st != nil {
		k := &clock.Keeper{Clock: sv.clock, Store: st}
		synced := sv.bus.Time.Subscribe(0)
		r.wg.Add(1)
		go func() { defer r.wg.Done(); defer synced.Close(); _ = k.Run(r.ctx, synced.C()) }()
	}
	return nil
}

// openStorage opens the persistent items Config.Storage offers for the
// stores not given. One it cannot open is reported and left out: the
// router runs without it.
func (r *Router) openStorage() {
	open := r.cfg.Storage
	if open == nil {
		return
	}
	if r.cfg.LeaseStore == nil {
		if s, err := open(StoreLeases); err != nil {
			r.logf(slog.LevelWarn, "no lease store: %v", err)
		} else {
			r.cfg.LeaseStore = s
		}
	}
	if r.cfg.TimeStore == nil {
		if s, err := open(StoreTime); err != nil {
			r.logf(slog.LevelWarn, "no time store: %v", err)
		} else {
			r.cfg.TimeStore = s
		}
	}
}

func (r *Router) stopServices() {
	sv := &r.svc
	for _, c := range []interface{ Close() error }{sv.dhcpConn, sv.dnsUDP, sv.dnsTCP} {
		if c != nil {
			_ = c.Close()
		}
	}
	if d := sv.dhcp.Load(); d != nil {
		_ = d.Flush() // renewals not saved yet
	}
}

// listenUDP opens a UDP socket on the router's stack, bound to port on
// NIC nic (any of its addresses when addr is invalid); broadcast lets it
// send to 255.255.255.255 (the DHCP server's answers to clients without
// an address yet).
func (r *Router) listenUDP(nic tcpip.NICID, addr netip.Addr, port uint16, broadcast bool) (*gonet.UDPConn, error) {
	var wq waiter.Queue
	ep, e := r.s.NewEndpoint(udp.ProtocolNumber, ipv4.ProtocolNumber, &wq)
	if e != nil {
		return nil, fmt.Errorf("UDP socket: %v", e)
	}
	ep.SocketOptions().SetBroadcast(broadcast)
	fa := tcpip.FullAddress{NIC: nic, Port: port}
	if addr.IsValid() {
		fa.Addr = tcpip.AddrFrom4(addr.As4())
	}
	if broadcast {
		// Bound to the interface so that its broadcasts leave there.
		if e := ep.SocketOptions().SetBindToDevice(int32(nic)); e != nil {
			ep.Close()
			return nil, fmt.Errorf("UDP socket: bind to device: %v", e)
		}
	}
	if e := ep.Bind(fa); e != nil {
		ep.Close()
		return nil, fmt.Errorf("UDP port %d: %v", port, e)
	}
	return gonet.NewUDPConn(&wq, ep), nil
}

// dial connects to addr over the router's stack (the DNS forwarder's
// upstreams, SNTP servers: all reached through the WAN's routes).
func (r *Router) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil || !ap.Addr().Is4() {
		return nil, fmt.Errorf("router: dial %q: need an IPv4 address and port", addr)
	}
	fa := tcpip.FullAddress{Addr: tcpip.AddrFrom4(ap.Addr().As4()), Port: ap.Port()}
	switch network {
	case "udp", "udp4":
		return gonet.DialUDP(r.s, nil, &fa, ipv4.ProtocolNumber)
	case "tcp", "tcp4":
		return gonet.DialContextTCP(ctx, r.s, fa, ipv4.ProtocolNumber)
	}
	return nil, fmt.Errorf("router: dial: network %q", network)
}

// resolve looks host up through the router's own DNS forwarder, as a LAN
// client would, so SNTP's server names share its cache and its upstreams.
func (r *Router) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	conn, err := r.dial(ctx, "udp", netip.AddrPortFrom(r.LANAddr().Addr(), dnsPort).String())
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return lookupA(ctx, conn, host)
}

// newDHCPServer makes the LAN's DHCP server for d on the lease store.
func (r *Router) newDHCPServer(d DHCPServer) (*dhcpd.Server, error) {
	srv, err := dhcpd.New(dhcpd.Config{Addr: r.LANAddr(), Start: d.Start, Limit: d.Limit, LeaseTime: d.LeaseTime,
		Domain: d.Domain, Static: d.Static, Store: r.cfg.LeaseStore,
		Logf: func(format string, args ...any) { r.logf(slog.LevelWarn, "DHCP: "+format, args...) }})
	if err != nil {
		return nil, fmt.Errorf("router: DHCP server: %w", err)
	}
	return srv, nil
}

// serveDHCP hands each request to the current DHCP server, so SetDHCP can
// replace the server without closing the socket.
func (r *Router) serveDHCP(conn net.PacketConn) {
	buf := make([]byte, 1500)
	for {
		n, peer, err := conn.ReadFrom(buf)
		if err != nil {
			if r.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		if srv := r.svc.dhcp.Load(); srv != nil {
			srv.HandlePacket(conn, peer, buf[:n])
		}
	}
}

// SetDHCP applies a new DHCP server configuration without a restart: the
// leases granted so far are kept (they move through the lease store), a
// client asking for a new address gets one from the new pool, and one
// whose address lies outside it is refused at its next renewal and starts
// over. Disabling or enabling the server needs a restart.
func (r *Router) SetDHCP(d DHCPServer) error {
	sv := &r.svc
	sv.dhcpMu.Lock()
	defer sv.dhcpMu.Unlock()
	old := sv.dhcp.Load()
	if old == nil || d.Disabled {
		if old == nil && d.Disabled {
			return nil
		}
		return fmt.Errorf("router: turning the DHCP server on or off needs a restart")
	}
	if err := old.Flush(); err != nil {
		return fmt.Errorf("router: DHCP: saving the leases: %w", err)
	}
	srv, err := r.newDHCPServer(d)
	if err != nil {
		return err
	}
	if err := srv.LoadError(); err != nil {
		return fmt.Errorf("router: DHCP: reloading the leases: %w", err)
	}
	sv.dhcp.Store(srv)
	r.mu.Lock()
	r.cfg.DHCP = d
	r.mu.Unlock()
	r.logf(slog.LevelInfo, "DHCP: pool %d+%d, lease %v, %d leases kept", d.Start, d.Limit, d.LeaseTime, len(srv.Leases()))
	return nil
}

// dhcpNames answers the DNS forwarder's local names from the current DHCP
// server.
type dhcpNames struct{ p *atomic.Pointer[dhcpd.Server] }

func (n dhcpNames) Lookup(name string) (netip.Addr, bool) {
	if s := n.p.Load(); s != nil {
		return s.Lookup(name)
	}
	return netip.Addr{}, false
}

func (n dhcpNames) LookupAddr(a netip.Addr) (string, bool) {
	if s := n.p.Load(); s != nil {
		return s.LookupAddr(a)
	}
	return "", false
}

// memStore is a lease store in RAM, for boards without storage.
type memStore struct {
	mu sync.Mutex
	b  []byte
}

func (m *memStore) Load() ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]byte(nil), m.b...), nil
}

func (m *memStore) Save(b []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.b = append(m.b[:0], b...)
	return nil
}

// dnsCacheBytesFor bounds the DNS cache's memory by the board's RAM: a
// 64th of it, between 128 KiB and dnsfwd's default of 1 MiB (reached at
// 64 MiB). A LAN client asking for many names fills the cache to its
// bound, which on a 16 MiB board would otherwise be a sixteenth of all
// RAM; 256 KiB there still holds hundreds of typical answers. Off the
// gowrt kernel (ram 0) it is 0: dnsfwd's default.
func dnsCacheBytesFor(ram uint32) int {
	if ram == 0 {
		return 0
	}
	return min(max(int(ram/64), 128<<10), dnsfwd.DefaultCacheBytes)
}
