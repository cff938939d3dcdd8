package router

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"sync"
	"time"

	"github.com/gowrt/gowrt/kernel"
	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/net/dhcp/dhcpc"
	"github.com/gowrt/gowrt/net/dhcp/ethudp"
	"github.com/gowrt/gowrt/net/forward"
	"github.com/gowrt/gowrt/net/nat"
	"github.com/gowrt/gowrt/net/netstack"
	"github.com/gowrt/gowrt/sys/event"

	"gvisor.dev/gvisor/pkg/buffer"
	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv4"
	"gvisor.dev/gvisor/pkg/tcpip/stack"
)

// wanState is the WAN side's current configuration.
type wanState struct {
	mu      sync.Mutex
	addr    netip.Prefix // invalid while the WAN has no address
	gateway netip.Addr
	dns     []netip.Addr
	lease   *dhcpc.Lease // nil with a static address or none
	since   time.Time    // when addr was set
	changes uint64       // address changes (appeared, changed, lost)
	client  *dhcpc.Client
}

func (u *Uplink) validate() error {
	switch u.Proto {
	case "", "dhcp":
		u.Proto = "dhcp"
		if u.Addr.IsValid() || u.Gateway.IsValid() {
			return errors.New(`an address or gateway needs proto "static"`)
		}
	case "static":
		if !u.Addr.IsValid() || !u.Addr.Addr().Is4() || u.Addr.Bits() < 8 || u.Addr.Bits() > 32 {
			return fmt.Errorf("static address %v: need an IPv4 address with a /8../32 prefix", u.Addr)
		}
		if u.Gateway.IsValid() && (!u.Gateway.Is4() || (u.Addr.Bits() < 32 && !u.Addr.Masked().Contains(u.Gateway))) {
			return fmt.Errorf("gateway %v is not on %v", u.Gateway, u.Addr.Masked())
		}
	default:
		return fmt.Errorf("proto %q: want dhcp or static", u.Proto)
	}
	for _, d := range u.DNS {
		if !d.Is4() {
			return fmt.Errorf("DNS server %v is not an IPv4 address", d)
		}
	}
	return nil
}

// newForwarder builds the forwarding layer with the configured firewall,
// its zones mapped onto the router's interfaces.
func (r *Router) newForwarder() error {
	rules, err := r.cfg.Firewall.Compile(map[string]int{netLAN: 0, netWAN: 1})
	if err != nil {
		return fmt.Errorf("router: firewall: %w", err)
	}
	natCfg := r.cfg.NAT
	if natCfg.MaxConns == 0 {
		natCfg.MaxConns = natConnsForRAM()
	}
	if natCfg.Now == nil {
		// The connection table reads the clock per packet and counts
		// in seconds: on the gowrt kernel the runtime's clock is a trap
		// per read, while netstack.CoarseNanotime is a few loads (the
		// standard clock elsewhere). The forwarding layer links no
		// stack, so the router, which has one, picks the clock.
		natCfg.Now = netstack.CoarseNanotime
	}
	f, err := forward.New(forward.Config{NAT: natCfg, Rules: rules, Resolver: stackResolver{r.s}})
	if err != nil {
		return fmt.Errorf("router: %w", err)
	}
	r.fwd = f
	r.wg.Add(1)
	go func() { // expire connections even when no packet comes by
		defer r.wg.Done()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-r.ctx.Done():
				return
			case <-t.C:
				f.Table().Sweep()
			}
		}
	}()
	return nil
}

// stackResolver answers the forwarding layer's next-hop questions from the
// router stack's neighbour cache, which sends the ARP requests.
type stackResolver struct{ s *stack.Stack }

func (sr stackResolver) Resolve(i *forward.Iface, addr, local netip.Addr, done func(gnet.MAC, bool)) {
	e := sr.s.GetLinkAddress(tcpip.NICID(i.StackNIC()), tcpip.AddrFrom4(addr.As4()), tcpip.AddrFrom4(local.As4()),
		ipv4.ProtocolNumber, func(res stack.LinkResolutionResult) {
			var mac gnet.MAC
			ok := res.Err == nil && len(res.LinkAddress) == len(mac)
			if ok {
				copy(mac[:], res.LinkAddress)
			}
			done(mac, ok)
		})
	if e != nil {
		if _, wait := e.(*tcpip.ErrWouldBlock); !wait {
			done(gnet.MAC{}, false)
		}
	}
}

// setRoutes installs the stack's routes: the LAN subnet, the WAN subnet
// and the default route via the WAN gateway, when the WAN has them.
func (r *Router) setRoutes() {
	rt := []tcpip.Route{subnetRoute(r.LANAddr(), nicLAN)}
	r.wan.mu.Lock()
	for _, x := range r.extra {
		rt = append(rt, subnetRoute(x.addr, x.nic))
	}
	a, gw := r.wan.addr, r.wan.gateway
	r.wan.mu.Unlock()
	if a.IsValid() {
		if a.Bits() < 32 {
			rt = append(rt, subnetRoute(a, nicWAN))
		}
		if gw.IsValid() {
			def, _ := tcpip.NewSubnet(tcpip.AddrFrom4([4]byte{}), tcpip.MaskFromBytes(netMask(0)))
			rt = append(rt, tcpip.Route{Destination: def, Gateway: tcpip.AddrFrom4(gw.As4()), NIC: nicWAN})
		}
	}
	r.s.SetRouteTable(rt)
}

func subnetRoute(p netip.Prefix, nic tcpip.NICID) tcpip.Route {
	sub, _ := tcpip.NewSubnet(tcpip.AddrFrom4(p.Masked().Addr().As4()), tcpip.MaskFromBytes(netMask(p.Bits())))
	return tcpip.Route{Destination: sub, NIC: nic}
}

// DHCP client port (RFC 2131 4.1).
const dhcpClientPort = 68

// interceptWAN hands the DHCP client the WAN frames addressed to its
// port, before the firewall and the stack see them: the client runs
// beside the stack, like a raw socket, because it must talk before the
// WAN has an address.
func (r *Router) interceptWAN(frame []byte) bool {
	c := r.dhcpConn.Load()
	if c == nil || len(frame) < gnet.EthHeaderLen+28 || frame[12] != 0x08 || frame[13] != 0 {
		return false
	}
	ip := frame[gnet.EthHeaderLen:]
	ihl := int(ip[0]&0x0f) * 4
	if ip[9] != 17 || ihl < 20 || len(ip) < ihl+8 || uint16(ip[ihl+2])<<8|uint16(ip[ihl+3]) != dhcpClientPort {
		return false
	}
	return c.Deliver(frame)
}

// sendWAN transmits a frame the DHCP client built on the WAN port.
func (r *Router) sendWAN(frame []byte) error {
	if len(frame) > gnet.RxBufSize {
		return errors.New("router: DHCP frame too long")
	}
	v := buffer.NewViewSize(len(frame))
	copy(v.AsSlice(), frame)
	tb := &viewTxBuf{v: v}
	if err := r.cfg.WAN.NIC.Transmit(tb); err != nil {
		v.Release()
		return err
	}
	return nil
}

// viewTxBuf lends a buffer to a NIC (the DHCP client's few frames; the
// forwarding path has a pooled one of its own).
type viewTxBuf struct{ v *buffer.View }

func (t *viewTxBuf) Segments() [][]byte { return [][]byte{t.v.AsSlice()} }
func (t *viewTxBuf) Len() int           { return t.v.Size() }
func (t *viewTxBuf) Release()           { t.v.Release() }

// startWAN configures the WAN: a static address at once, or a DHCP client
// that configures it whenever it obtains, renews or loses a lease.
func (r *Router) startWAN() error {
	u := r.cfg.Uplink
	if u.Proto == "static" {
		r.applyWAN(u.Addr, u.Gateway, u.DNS, nil)
		return nil
	}
	mac := r.cfg.WAN.NIC.MACAddress()
	conn := ethudp.New(ethudp.Config{MAC: mac, Port: dhcpClientPort, Send: r.sendWAN, MTU: r.cfg.WAN.NIC.MTU()})
	c, err := dhcpc.New(dhcpc.Config{HWAddr: net.HardwareAddr(mac[:]), Hostname: r.cfg.Hostname, Conn: conn})
	if err != nil {
		return fmt.Errorf("router: WAN DHCP client: %w", err)
	}
	r.wan.mu.Lock()
	r.wan.client = c
	r.wan.mu.Unlock()
	r.dhcpConn.Store(conn)
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		_ = c.Run(r.ctx, r.onLease)
		_ = conn.Close()
	}()
	return nil
}

// onLease applies the DHCP client's events to the WAN.
func (r *Router) onLease(ev dhcpc.Event) {
	switch ev.Kind {
	case dhcpc.Bound, dhcpc.Renewed, dhcpc.Changed:
		l := ev.Lease
		dns := l.DNS
		if len(r.cfg.Uplink.DNS) > 0 {
			dns = r.cfg.Uplink.DNS
		}
		r.applyWAN(l.Addr, l.Router, dns, &l)
	default: // expired, released
		r.applyWAN(netip.Prefix{}, netip.Addr{}, nil, nil)
	}
}

// applyWAN sets the WAN's address, gateway and DNS servers (an invalid
// address removes them) in the order the rest depends on: the stack's
// address and routes, the forwarding layer's NAT address (flushing
// connections masqueraded to an old one), the DNS forwarder's upstreams,
// and last the WAN-up or WAN-down event, on which SNTP syncs.
func (r *Router) applyWAN(a netip.Prefix, gw netip.Addr, dns []netip.Addr, l *dhcpc.Lease) {
	r.wan.mu.Lock()
	old := r.wan.addr
	changed := old != a || r.wan.gateway != gw || !slices.Equal(r.wan.dns, dns)
	r.wan.addr, r.wan.gateway, r.wan.dns, r.wan.lease = a, gw, slices.Clone(dns), l
	if old != a {
		r.wan.since = time.Now()
		r.wan.changes++
	}
	r.wan.mu.Unlock()
	if old.IsValid() && old != a {
		_ = r.s.RemoveAddress(nicWAN, tcpip.AddrFrom4(old.Addr().As4()))
	}
	if a.IsValid() && old != a {
		if e := r.s.AddProtocolAddress(nicWAN, tcpip.ProtocolAddress{
			Protocol:          ipv4.ProtocolNumber,
			AddressWithPrefix: tcpip.AddressWithPrefix{Address: tcpip.AddrFrom4(a.Addr().As4()), PrefixLen: a.Bits()},
		}, stack.AddressProperties{}); e != nil {
			r.logf(slog.LevelError, "WAN address %v: %v", a, e)
		}
	}
	r.setRoutes()
	r.wanIf.SetAddress(a, gw)
	if !changed {
		return
	}
	if r.svc.dns != nil {
		r.svc.dns.Flush()
	}
	if old != a {
		r.svc.bus.Addr.Publish(event.AddrChange{Iface: netWAN, Old: old, New: a})
	}
	if a.IsValid() {
		via := "no gateway"
		if gw.IsValid() {
			via = "via " + gw.String()
		}
		r.logf(slog.LevelInfo, "WAN up: %v %s, DNS %v", a, via, dns)
		r.svc.bus.WAN.Publish(event.Up(event.WANUp{Addr: a, Router: gw, DNS: slices.Clone(dns)}))
	} else {
		r.logf(slog.LevelWarn, "WAN down")
		r.svc.bus.WAN.Publish(event.Down("no lease"))
	}
}

// upstreams returns the DNS servers the forwarder asks.
func (r *Router) upstreams() []netip.AddrPort {
	r.wan.mu.Lock()
	defer r.wan.mu.Unlock()
	out := make([]netip.AddrPort, 0, len(r.wan.dns))
	for _, d := range r.wan.dns {
		out = append(out, netip.AddrPortFrom(d, 53))
	}
	return out
}

// AddInterface adds a routed interface while the router runs (a VPN
// tunnel, a second uplink): nic with address addr, its network name
// being what the firewall's zones list (fw4's "network"). The firewall is
// compiled again with the new network, so its zone's forwarding,
// masquerading and MSS clamping apply to it at once; established
// connections keep flowing. Subscribers of the event bus get an
// InterfaceUp.
func (r *Router) AddInterface(name string, nic gnet.NIC, addr netip.Prefix) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || r.fwd == nil {
		return errors.New("router: not running")
	}
	if !addr.IsValid() || !addr.Addr().Is4() {
		return fmt.Errorf("router: interface %s: need an IPv4 address, not %v", name, addr)
	}
	networks := map[string]int{}
	for _, i := range r.fwd.Ifaces() {
		networks[i.Name()] = int(i.ID())
	}
	if _, dup := networks[name]; dup {
		return fmt.Errorf("router: interface %s exists", name)
	}
	id := tcpip.NICID(len(networks) + 1) // stack NICs are numbered from 1 in the forwarder's order
	i, err := r.fwd.AddIface(forward.IfaceConfig{Name: name, NIC: nic, Track: true, StackNIC: int32(id)})
	if err != nil {
		return fmt.Errorf("router: interface %s: %w", name, err)
	}
	networks[name] = int(i.ID())
	rules, err := r.cfg.Firewall.Compile(networks)
	if err != nil {
		return fmt.Errorf("router: firewall with %s: %w", name, err)
	}
	if _, err := r.attach(id, i); err != nil {
		return err
	}
	if e := r.s.AddProtocolAddress(id, tcpip.ProtocolAddress{
		Protocol:          ipv4.ProtocolNumber,
		AddressWithPrefix: tcpip.AddressWithPrefix{Address: tcpip.AddrFrom4(addr.Addr().As4()), PrefixLen: addr.Bits()},
	}, stack.AddressProperties{}); e != nil {
		return fmt.Errorf("router: interface %s address: %v", name, e)
	}
	r.wan.mu.Lock()
	r.extra = append(r.extra, extraIface{name: name, nic: id, addr: addr, lower: nic})
	r.wan.mu.Unlock()
	i.SetAddress(addr, netip.Addr{})
	r.fwd.SetRules(rules)
	r.setRoutes()
	r.svc.bus.InterfaceUp.Publish(event.InterfaceUp{Name: name})
	return nil
}

// extraIface is an interface added by AddInterface.
type extraIface struct {
	name  string
	nic   tcpip.NICID
	addr  netip.Prefix
	lower gnet.NIC
}

// natConnsForRAM sizes the connection table, which is allocated whole when
// the router starts, by the board's RAM: an entry per 16 KiB, Linux's
// classic default (nf_conntrack_core.c: a hash table of 1/16384 of memory,
// four entries per bucket on 32-bit; 2048 for 32 MiB), between
// minNATConns and nat.DefaultMaxConns (reached at 128 MiB). Off the gowrt
// kernel (sim boards, library use) it returns 0: the nat default.
func natConnsForRAM() int {
	ram := boardRAM()
	if ram == 0 {
		return 0
	}
	return natConnsFor(ram)
}

// boardRAM is the board's RAM as the gowrt kernel found it; 0 off it.
func boardRAM() uint32 {
	in, err := kernel.ReadInfo()
	if err != nil {
		return 0
	}
	return in.RAM
}

func natConnsFor(ram uint32) int {
	return min(max(int(ram/natRAMPerConn), minNATConns), nat.DefaultMaxConns)
}

const (
	natRAMPerConn = 16 << 10
	// minNATConns keeps a household's connections on the smallest
	// board: the table costs about 160 bytes an entry.
	minNATConns = 1024
)
