package router

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"time"

	"github.com/gowrt/gowrt/net/dhcp/dhcpd"
	"github.com/gowrt/gowrt/net/firewall"
	"github.com/gowrt/gowrt/net/nat"
	"github.com/gowrt/gowrt/sys/event"

	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/adapters/gonet"
	"gvisor.dev/gvisor/pkg/tcpip/header"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv4"
	"gvisor.dev/gvisor/pkg/tcpip/stack"
	"gvisor.dev/gvisor/pkg/tcpip/transport/icmp"
	"gvisor.dev/gvisor/pkg/tcpip/transport/tcp"
	"gvisor.dev/gvisor/pkg/waiter"
)

// What the management services (shell, SSH, web UI) ask of the router.

// ListenLAN opens a TCP listener on br-lan (the router's LAN address,
// whatever it becomes: nothing arriving on the WAN reaches it), for SSH
// and the like.
func (r *Router) ListenLAN(port uint16) (net.Listener, error) {
	var wq waiter.Queue
	ep, e := r.s.NewEndpoint(tcp.ProtocolNumber, ipv4.ProtocolNumber, &wq)
	if e != nil {
		return nil, fmt.Errorf("router: listen on port %d: %v", port, e)
	}
	if e := ep.Bind(tcpip.FullAddress{NIC: nicLAN, Port: port}); e != nil {
		ep.Close()
		return nil, fmt.Errorf("router: listen on port %d: bind: %v", port, e)
	}
	if e := ep.Listen(16); e != nil {
		ep.Close()
		return nil, fmt.Errorf("router: listen on port %d: %v", port, e)
	}
	return gonet.NewTCPListener(r.s, &wq, ep), nil
}

// Resolve looks name up through the router's DNS forwarder (an address
// is returned as it is).
func (r *Router) Resolve(ctx context.Context, name string) (netip.Addr, error) {
	if a, err := netip.ParseAddr(name); err == nil {
		return a, nil
	}
	as, err := r.resolve(ctx, name)
	if err != nil {
		return netip.Addr{}, err
	}
	for _, a := range as {
		if a.Is4() {
			return a, nil
		}
	}
	return netip.Addr{}, fmt.Errorf("resolve %s: no IPv4 address", name)
}

// Ping sends one ICMP echo request of size payload bytes from the router
// and waits for the reply until ctx is done.
func (r *Router) Ping(ctx context.Context, dst netip.Addr, seq uint16, size int) (time.Duration, error) {
	if !dst.Is4() {
		return 0, fmt.Errorf("ping: %v: IPv4 only", dst)
	}
	if size < 0 || size > 65507-header.ICMPv4MinimumSize {
		return 0, fmt.Errorf("ping: payload size %d out of range", size)
	}
	var wq waiter.Queue
	ep, e := r.s.NewEndpoint(icmp.ProtocolNumber4, ipv4.ProtocolNumber, &wq)
	if e != nil {
		return 0, fmt.Errorf("ping: %v", e)
	}
	defer ep.Close()
	if e := ep.Connect(tcpip.FullAddress{Addr: tcpip.AddrFrom4(dst.As4())}); e != nil {
		return 0, fmt.Errorf("ping %v: %v", dst, e)
	}
	we, ch := waiter.NewChannelEntry(waiter.ReadableEvents)
	wq.EventRegister(&we)
	defer wq.EventUnregister(&we)

	// The ping endpoint fills in the identifier and the checksum.
	pkt := make([]byte, header.ICMPv4MinimumSize+size)
	pkt[0] = byte(header.ICMPv4Echo)
	binary.BigEndian.PutUint16(pkt[6:], seq)
	for i := header.ICMPv4MinimumSize; i < len(pkt); i++ {
		pkt[i] = byte(i)
	}
	start := time.Now()
	var rd bytesReader
	rd.b = pkt
	if _, e := ep.Write(&rd, tcpip.WriteOptions{}); e != nil {
		return 0, fmt.Errorf("ping %v: %v", dst, e)
	}
	var reply [header.ICMPv4MinimumSize]byte
	for {
		var w limitedWriter
		w.b = reply[:0]
		_, e := ep.Read(&w, tcpip.ReadOptions{})
		if _, wait := e.(*tcpip.ErrWouldBlock); wait {
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return 0, ctx.Err()
			}
		}
		if e != nil {
			return 0, fmt.Errorf("ping %v: %v", dst, e)
		}
		if len(w.b) >= header.ICMPv4MinimumSize && w.b[0] == byte(header.ICMPv4EchoReply) &&
			binary.BigEndian.Uint16(w.b[6:]) == seq {
			return time.Since(start), nil
		}
	}
}

// bytesReader and limitedWriter adapt byte slices to the io interfaces
// gVisor's endpoints read from and write to.
type bytesReader struct{ b []byte }

func (r *bytesReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, errors.New("EOF")
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}

func (r *bytesReader) Len() int { return len(r.b) }

type limitedWriter struct{ b []byte }

func (w *limitedWriter) Write(p []byte) (int, error) {
	n := min(len(p), cap(w.b)-len(w.b))
	w.b = append(w.b, p[:n]...)
	return len(p), nil
}

// Route is one of the router's IPv4 routes.
type Route struct {
	Dst     netip.Prefix
	Gateway netip.Addr // invalid: directly connected
	Iface   string
}

// Routes returns the router's routing table.
func (r *Router) Routes() []Route {
	var out []Route
	for _, rt := range r.s.GetRouteTable() {
		id := rt.Destination.ID()
		a, ok := netip.AddrFromSlice(id.AsSlice())
		if !ok {
			continue
		}
		var gw netip.Addr
		if rt.Gateway.Len() > 0 {
			gw, _ = netip.AddrFromSlice(rt.Gateway.AsSlice())
			if gw.IsUnspecified() {
				gw = netip.Addr{}
			}
		}
		out = append(out, Route{Dst: netip.PrefixFrom(a, rt.Destination.Prefix()), Gateway: gw, Iface: r.nicName(rt.NIC)})
	}
	return out
}

func (r *Router) nicName(id tcpip.NICID) string {
	switch id {
	case nicLAN:
		return "br-lan"
	case nicWAN:
		if r.cfg.WAN != nil {
			return r.cfg.WAN.Name
		}
	}
	if name := r.s.FindNICNameFromID(id); name != "" {
		return name
	}
	return fmt.Sprintf("nic%d", id)
}

// Conntrack calls yield for each tracked connection (the forwarding
// layer's NAT table) until it returns false.
func (r *Router) Conntrack(yield func(nat.ConnInfo) bool) {
	if r.fwd != nil {
		r.fwd.Table().Conns(yield)
	}
}

// LANAddr returns the router's LAN address and prefix.
func (r *Router) LANAddr() netip.Prefix {
	if p := r.lanAddr.Load(); p != nil {
		return *p
	}
	return r.cfg.LANAddr
}

// SetLANAddr moves the router to a new LAN address and prefix without a
// restart: the stack's address and the LAN route, the forwarding
// layer's interface, the DNS forwarder's answer for the router's name,
// and the DHCP server, which starts over with no leases (those of the old
// subnet are void; clients get new ones at their next DHCP exchange).
// Listeners are bound to br-lan, not to the address, so the web UI, SSH
// and DNS answer at the new address at once. Connections to the old
// address end.
func (r *Router) SetLANAddr(p netip.Prefix) error {
	if !p.IsValid() || !p.Addr().Is4() || p.Bits() < 8 || p.Bits() > 30 || p.Masked().Addr() == p.Addr() {
		return fmt.Errorf("router: LAN address %v: need an IPv4 host address with a /8../30 prefix", p)
	}
	old := r.LANAddr()
	if p == old {
		return nil
	}
	r.svc.dhcpMu.Lock()
	defer r.svc.dhcpMu.Unlock()
	if e := r.s.AddProtocolAddress(nicLAN, tcpip.ProtocolAddress{Protocol: ipv4.ProtocolNumber,
		AddressWithPrefix: tcpip.AddressWithPrefix{Address: tcpip.AddrFrom4(p.Addr().As4()), PrefixLen: p.Bits()}},
		stack.AddressProperties{}); e != nil {
		return fmt.Errorf("router: LAN address %v: %v", p, e)
	}
	if old.Addr() != p.Addr() {
		_ = r.s.RemoveAddress(nicLAN, tcpip.AddrFrom4(old.Addr().As4()))
	}
	r.lanAddr.Store(&p)
	r.setRoutes()
	r.lanIf.SetAddress(p, netip.Addr{})
	if f := r.svc.dns; f != nil {
		f.SetRouterAddr(p.Addr())
	}
	if d := r.svc.dhcp.Load(); d != nil {
		// Leases of the old subnet are void in the new one.
		if err := r.cfg.LeaseStore.Save(nil); err != nil {
			r.logf(slog.LevelWarn, "DHCP: clearing the leases: %v", err)
		}
		r.mu.Lock()
		dc := r.cfg.DHCP
		r.mu.Unlock()
		srv, err := r.newDHCPServer(dc)
		if err != nil {
			r.logf(slog.LevelError, "DHCP server for the new LAN: %v (DHCP off until fixed)", err)
			r.svc.dhcp.Store(nil)
		} else {
			r.svc.dhcp.Store(srv)
		}
	}
	r.svc.bus.Addr.Publish(event.AddrChange{Iface: netLAN, Old: old, New: p})
	r.logf(slog.LevelInfo, "LAN address %v (was %v)", p, old)
	return nil
}

// SetFirewall replaces the firewall's rules without a restart. New
// connections meet the new rules (port forwards included); tracked ones
// keep their verdict until they end, as with fw4's reload, which leaves
// conntrack alone. The configuration is compiled first; a bad one is
// refused and the running rules stay.
func (r *Router) SetFirewall(c *firewall.Config) error {
	rules, err := c.Compile(map[string]int{netLAN: 0, netWAN: 1})
	if err != nil {
		return fmt.Errorf("router: firewall: %w", err)
	}
	r.fwd.SetRules(rules)
	r.mu.Lock()
	r.cfg.Firewall = c
	r.mu.Unlock()
	r.logf(slog.LevelInfo, "firewall: %d rules, %d redirects", len(c.Rules), len(c.Redirects))
	return nil
}

// WANInfo is the WAN's current state, typed.
type WANInfo struct {
	Proto     string // "dhcp" or "static"
	Addr      netip.Prefix
	Gateway   netip.Addr
	DNS       []netip.Addr
	LeaseLeft time.Duration // DHCP only
}

// WAN returns the WAN's current state.
func (r *Router) WAN() WANInfo {
	r.wan.mu.Lock()
	defer r.wan.mu.Unlock()
	w := WANInfo{Proto: r.cfg.Uplink.Proto, Addr: r.wan.addr, Gateway: r.wan.gateway, DNS: slices.Clone(r.wan.dns)}
	if l := r.wan.lease; l != nil {
		w.LeaseLeft = max(time.Until(l.Obtained.Add(l.Duration)), 0)
	}
	return w
}

// Leases returns the LAN DHCP server's leases (none when it is off).
func (r *Router) Leases() []dhcpd.Lease {
	if d := r.svc.dhcp.Load(); d != nil {
		return d.Leases()
	}
	return nil
}

// Dial connects to addr ("a.b.c.d:port") over the router's stack, for the
// management services' clients (remote syslog).
func (r *Router) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	return r.dial(ctx, network, addr)
}
