// Package router assembles gowrt's first router from NICs: a LAN bridge
// (br-lan) over the LAN ports, the router's own gVisor stack on the
// bridge's host port at 192.168.1.1/24 (OpenWrt's default), a WAN port,
// ICMP, and an HTTP status page.
//
// It knows nothing about hardware: the board hands it net.NIC values —
// arge MACs behind their models in sim mode, pcnet on QEMU malta, TAP
// devices in tests — and the same router runs on all of them.
//
// LAN↔LAN frames are bridged by net/bridge without entering gVisor; only
// frames for the router itself reach the stack. The configuration is
// static for now: DHCP, DNS, NAT, SSH and the config store come later.
package router

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/net/bridge"
	"github.com/gowrt/gowrt/net/connlimit"
	"github.com/gowrt/gowrt/net/dhcp/dhcpd"
	"github.com/gowrt/gowrt/net/dhcp/ethudp"
	"github.com/gowrt/gowrt/net/firewall"
	"github.com/gowrt/gowrt/net/forward"
	"github.com/gowrt/gowrt/net/httpd"
	"github.com/gowrt/gowrt/net/nat"
	"github.com/gowrt/gowrt/net/netstack"
	"github.com/gowrt/gowrt/sys/clock"
	"github.com/gowrt/gowrt/sys/event"

	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/adapters/gonet"
	"gvisor.dev/gvisor/pkg/tcpip/network/arp"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv4"
	"gvisor.dev/gvisor/pkg/tcpip/stack"
	"gvisor.dev/gvisor/pkg/tcpip/transport/icmp"
	"gvisor.dev/gvisor/pkg/tcpip/transport/tcp"
	"gvisor.dev/gvisor/pkg/tcpip/transport/udp"
	"gvisor.dev/gvisor/pkg/waiter"
)

// The router's stack takes the frames br-lan delivers to it by reference:
// the bridge's one copy of a received frame is the memory gVisor parses.
var _ bridge.ViewHandler = (*netstack.Endpoint)(nil)

// DefaultLANAddr is OpenWrt's default LAN address.
var DefaultLANAddr = netip.MustParsePrefix("192.168.1.1/24")

// Stack NIC numbers.
const (
	nicLAN tcpip.NICID = 1
	nicWAN tcpip.NICID = 2
)

// Port is one external Ethernet port.
type Port struct {
	Name string // "lan1", "wan" …
	NIC  gnet.NIC
	// VLANs is the port's 802.1Q membership on br-lan; the zero value
	// means bridge.DefaultVLANs (untagged VLAN 1).
	VLANs bridge.PortVLANs
}

// Config is the router's static configuration.
type Config struct {
	Board string // shown on the status page
	LAN   []Port
	WAN   *Port // optional
	// LANAddr is the router's address and LAN prefix (default 192.168.1.1/24).
	LANAddr netip.Prefix
	// HostVLANs is the host port's membership on br-lan (default VLAN 1).
	HostVLANs bridge.PortVLANs
	// BridgeMAC is br-lan's address (default: the first LAN port's MAC
	// with the locally-administered bit set, so it differs from the port).
	BridgeMAC gnet.MAC
	HTTPPort  uint16 // default 80
	// FloodRate is br-lan's storm control, frames per second each LAN
	// port may flood (bridge.Config.FloodRate; default
	// bridge.DefaultFloodRate, negative = off).
	FloodRate int
	// HTTP bounds the status page's server; zero fields take the values
	// in DefaultHTTPLimits.
	HTTP HTTPLimits

	// Hostname is the router's name: sent to the ISP in DHCP requests
	// and answered by the DNS forwarder (default "gowrt").
	Hostname string
	// Uplink says how the WAN port gets its address (default: DHCP).
	Uplink Uplink
	// Firewall is the firewall configuration (default: fw4's, see
	// firewall.Default).
	Firewall *firewall.Config
	// NAT sizes the connection tracking table (zero: net/nat's defaults,
	// sized for a 32 MiB board).
	NAT nat.Config
	// DHCP configures the LAN's DHCP server (dnsmasq's OpenWrt defaults).
	DHCP DHCPServer
	// NTPServers are the SNTP servers asked once the WAN is up (nil:
	// sntp's defaults, OpenWrt's pool names; empty: no time sync).
	NTPServers []string
	// LeaseStore keeps the DHCP server's leases across restarts, and
	// TimeStore the last known time across reboots, where the board has
	// storage (nil: kept in RAM only, unless Storage opens them).
	LeaseStore dhcpd.LeaseStore
	TimeStore  clock.Store
	// Storage, if set, opens the board's persistent items by name (a
	// board.Storage's Store method): the router keeps its DHCP leases in
	// "dhcp.leases" and the last known time in "clock.time" unless
	// LeaseStore or TimeStore is given.
	Storage func(name string) (Store, error)
	// Clock is the wall clock SNTP sets (default: clock.NewSystem()).
	Clock *clock.System

	// Bus is the event bus the router publishes on (default: its own).
	Bus *event.Bus
	// Log receives the router's messages (default: printed on the
	// console as "router: message").
	Log *slog.Logger
	// Web serves the router's HTTP port on the LAN (default: the status
	// page, on net/httpd). The router opens the listener, with the
	// connection limits of HTTP, and hands it to Web.Serve; Close closes
	// Web. A *net/http.Server fits, for a web UI that needs net/http.
	Web WebServer
}

// WebServer serves HTTP on a listener until closed: *httpd.Server and
// *net/http.Server both are.
type WebServer interface {
	Serve(ln net.Listener) error
	Close() error
}

// Store is one persistent item of the board (flash on malta).
type Store interface {
	Load() ([]byte, error)
	Save([]byte) error
}

// The names of the router's persistent items (Config.Storage).
const (
	StoreLeases = "dhcp.leases"
	StoreTime   = "clock.time"
)

// Uplink configures the WAN port's IPv4 address: from the ISP's DHCP
// server (Proto "dhcp", OpenWrt's default) or static.
type Uplink struct {
	Proto   string       // "dhcp" (default) or "static"
	Addr    netip.Prefix // static: address and prefix
	Gateway netip.Addr   // static: default gateway
	// DNS servers: static ones, or, with DHCP, servers used instead of
	// the lease's when set.
	DNS []netip.Addr
}

// DHCPServer configures the LAN's DHCP server; zero fields take dnsmasq's
// OpenWrt defaults (start 100, limit 150, lease 12 h, domain "lan").
type DHCPServer struct {
	Disabled  bool
	Start     int
	Limit     int
	LeaseTime time.Duration
	Domain    string
	Static    []dhcpd.StaticLease
}

// HTTPLimits bound what clients of the status page can hold on the
// router: how long a connection may take to send its request, to read the
// answer and to sit idle between requests, and how many connections may
// be open. A connection over a limit is closed as soon as it is accepted
// and counted (net/connlimit); the page shows the count.
type HTTPLimits struct {
	ReadHeaderTimeout time.Duration // request line and headers
	ReadTimeout       time.Duration // the whole request
	WriteTimeout      time.Duration // from the end of the request headers to the end of the answer
	IdleTimeout       time.Duration // keep-alive connection waiting for its next request
	MaxConns          int           // open at once
	MaxConnsPerSource int           // open at once from one address
}

// DefaultHTTPLimits are sized for a status page on a 16 to 32 MiB router.
//
// Each open connection costs its goroutine and gVisor's endpoint with up
// to httpRcvBuf of unread data; while it is served, net/httpd's 1 KiB read
// buffer, up to HTTPMaxHeaderBytes of request headers and the page (a
// web UI on net/http holds 4 KiB read and write buffers all along). That
// was about 25 KiB when idle on net/http (2000 held keep-alive
// connections once cost 38 to 51 MB), under 64 KiB with every buffer full. 32 connections cost under 1 MiB idle and 2 MiB
// at worst, affordable on a 16 MiB board. A browser opens at most six
// connections to one host, so 8 per address leaves room for a script
// beside it, and 32 in all serve four such clients at once.
//
// On a LAN a request arrives in one round trip and the page is a few KiB:
// 5 s for the headers and 10 s for the request and for the answer only
// cut off clients that stall on purpose (slowloris). Browsers keep idle
// connections for a minute or more; 30 s still serves page refreshes
// without a new handshake and frees a hoarded slot within half a minute.
var DefaultHTTPLimits = HTTPLimits{
	ReadHeaderTimeout: 5 * time.Second,
	ReadTimeout:       10 * time.Second,
	WriteTimeout:      10 * time.Second,
	IdleTimeout:       30 * time.Second,
	MaxConns:          32,
	MaxConnsPerSource: 8,
}

// HTTPMaxHeaderBytes bounds the request line and header fields the
// status page reads (and a web server given as Config.Web should): an
// HTTP GET's fit in a few hundred bytes.
const HTTPMaxHeaderBytes = 8 << 10

// Per-connection buffers of the status page.
const (
	httpRcvBuf  = 16 << 10 // TCP receive buffer (gVisor's minimum is tcpBufMin)
	httpBacklog = 128      // handshaken connections waiting for Accept
)

// Router is a running router.
type Router struct {
	cfg     Config
	br      *bridge.Bridge
	host    *bridge.HostNIC
	lanEP   *netstack.Endpoint
	wanEP   *netstack.Endpoint
	s       *stack.Stack
	ports   []portState
	srv     WebServer
	httpLn  *connlimit.Listener
	started time.Time

	// lanAddr is the LAN address and prefix in use: Config.LANAddr at
	// Start, then SetLANAddr's.
	lanAddr atomic.Pointer[netip.Prefix]

	fwd   *forward.Forwarder
	lanIf *forward.Iface
	wanIf *forward.Iface
	wan   wanState
	svc   services
	// dhcpConn is the WAN DHCP client's socket (nil: static WAN), read
	// for every WAN frame.
	dhcpConn atomic.Pointer[ethudp.Conn]
	extra    []extraIface // added by AddInterface, guarded by wan.mu
	// wifiStats writes the status page's Wi-Fi section (SetWifiStats).
	wifiMu    sync.Mutex
	wifiStats func(w io.Writer) error

	ctx    context.Context // cancelled by Close: stops the services
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex
	closed bool
	done   chan struct{}
}

type portState struct {
	Port
	num int // bridge port, -1 for WAN
}

// Errors from New.
var ErrConfig = errors.New("router: invalid configuration")

func (c *Config) validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrConfig, fmt.Sprintf(format, a...))
	}
	if len(c.LAN) == 0 {
		return bad("no LAN ports")
	}
	if len(c.LAN) >= bridge.MaxPorts {
		return bad("%d LAN ports (at most %d)", len(c.LAN), bridge.MaxPorts-1)
	}
	names := map[string]bool{}
	all := c.LAN
	if c.WAN != nil {
		all = append(append([]Port(nil), c.LAN...), *c.WAN)
	}
	for i, p := range all {
		if p.NIC == nil {
			return bad("port %d (%q) has no NIC", i, p.Name)
		}
		if p.Name == "" || names[p.Name] {
			return bad("port %d: empty or duplicate name %q", i, p.Name)
		}
		names[p.Name] = true
	}
	if !c.LANAddr.IsValid() {
		c.LANAddr = DefaultLANAddr
	}
	if !c.LANAddr.Addr().Is4() || c.LANAddr.Bits() < 8 || c.LANAddr.Bits() > 30 {
		return bad("LAN address %v: need an IPv4 address with a /8../30 prefix", c.LANAddr)
	}
	if c.LANAddr.Masked().Addr() == c.LANAddr.Addr() {
		return bad("LAN address %v is the network address", c.LANAddr)
	}
	if c.HostVLANs.PVID == 0 && len(c.HostVLANs.Untagged) == 0 && len(c.HostVLANs.Tagged) == 0 {
		c.HostVLANs = bridge.DefaultVLANs
	}
	if c.BridgeMAC.IsZero() {
		c.BridgeMAC = c.LAN[0].NIC.MACAddress()
		c.BridgeMAC[0] |= 0x02
		c.BridgeMAC[5] ^= 0x80
	}
	if c.HTTPPort == 0 {
		c.HTTPPort = 80
	}
	if c.Hostname == "" {
		c.Hostname = DefaultHostname
	}
	if err := c.Uplink.validate(); err != nil {
		return bad("WAN: %v", err)
	}
	if c.Firewall == nil {
		fw, err := firewall.Load(firewall.Default())
		if err != nil {
			return bad("default firewall: %v", err)
		}
		c.Firewall = fw
	}
	h, d := &c.HTTP, DefaultHTTPLimits
	for _, f := range []struct{ v, def *time.Duration }{
		{&h.ReadHeaderTimeout, &d.ReadHeaderTimeout}, {&h.ReadTimeout, &d.ReadTimeout},
		{&h.WriteTimeout, &d.WriteTimeout}, {&h.IdleTimeout, &d.IdleTimeout},
	} {
		if *f.v < 0 {
			return bad("negative HTTP timeout %v", *f.v)
		}
		if *f.v == 0 {
			*f.v = *f.def
		}
	}
	if h.MaxConns < 0 || h.MaxConnsPerSource < 0 {
		return bad("negative HTTP connection limit")
	}
	if h.MaxConns == 0 {
		h.MaxConns = d.MaxConns
	}
	if h.MaxConnsPerSource == 0 {
		h.MaxConnsPerSource = min(d.MaxConnsPerSource, h.MaxConns)
	}
	return nil
}

// New validates cfg and builds the router without starting any port.
func New(cfg Config) (*Router, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	br, err := bridge.New(bridge.Config{MAC: cfg.BridgeMAC, FloodRate: cfg.FloodRate, Now: netstack.CoarseNanotime})
	if err != nil {
		return nil, fmt.Errorf("router: br-lan: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Router{cfg: cfg, br: br, done: make(chan struct{}), ctx: ctx, cancel: cancel}, nil
}

// DefaultHostname is the router's name unless configured.
const DefaultHostname = "gowrt"

// Network names the firewall's zones refer to (fw4's "network" option).
const (
	netLAN = "lan"
	netWAN = "wan"
)

// Bridge returns br-lan.
func (r *Router) Bridge() *bridge.Bridge { return r.br }

// TCP buffer sizes per connection and direction. gVisor's defaults (1 MiB,
// auto-tuned up to 4 MiB) are sized for servers: on a router with 32 MiB
// of RAM a few busy connections would hold most of it, and a long send
// queue makes gVisor's RACK loss detection, which walks every unacked
// segment on each ACK during recovery, the largest CPU cost of a transfer
// (the malta profile: half the CPU). 512 KiB still fills a 100 Mbit/s
// path with a 40 ms round trip. RACK stays on: without it (RFC 6675
// recovery alone) gVisor's download over the 12 Mbit/s USB link of
// TestRouterUSBNetQEMU stalls in repeated retransmission timeouts.
const (
	tcpBufMin     = 4 << 10
	tcpBufDefault = 128 << 10
	tcpBufMax     = 512 << 10
)

func sizeTCPBuffers(s *stack.Stack) error {
	snd := tcpip.TCPSendBufferSizeRangeOption{Min: tcpBufMin, Default: tcpBufDefault, Max: tcpBufMax}
	rcv := tcpip.TCPReceiveBufferSizeRangeOption{Min: tcpBufMin, Default: tcpBufDefault, Max: tcpBufMax}
	if e := s.SetTransportProtocolOption(tcp.ProtocolNumber, &snd); e != nil {
		return fmt.Errorf("router: TCP send buffer: %v", e)
	}
	if e := s.SetTransportProtocolOption(tcp.ProtocolNumber, &rcv); e != nil {
		return fmt.Errorf("router: TCP receive buffer: %v", e)
	}
	return nil
}

// Stack returns the router's gVisor stack (nil before Start).
func (r *Router) Stack() *stack.Stack { return r.s }

// LANLinkStats returns the counters of the router stack's LAN link (its
// side of the bridge's host port): frames as they are on the wire, where
// the stack's own TCP counters count a packet the link cut into segments
// (sending) or merged from them (receiving) once. Nil before Start.
func (r *Router) LANLinkStats() *netstack.Stats {
	if r.lanEP == nil {
		return nil
	}
	return &r.lanEP.Stats
}

// Start brings up the stack, br-lan and its ports, and the status page.
func (r *Router) Start() error {
	r.started = time.Now()
	r.s = stack.New(stack.Options{
		Clock:              netstack.StackClock(),
		NetworkProtocols:   []stack.NetworkProtocolFactory{ipv4.NewProtocol, arp.NewProtocol},
		TransportProtocols: []stack.TransportProtocolFactory{tcp.NewProtocol, udp.NewProtocol, icmp.NewProtocol4},
		// The router's services talk to each other through its own
		// addresses (SNTP resolves names through the DNS forwarder).
		HandleLocal: true,
	})
	if err := sizeTCPBuffers(r.s); err != nil {
		return r.fail(err)
	}
	host, err := r.br.AddHostPort(r.cfg.HostVLANs)
	if err != nil {
		return r.fail(fmt.Errorf("router: br-lan host port: %w", err))
	}
	r.host = host
	if err := r.newForwarder(); err != nil {
		return r.fail(err)
	}
	if r.lanIf, err = r.fwd.AddIface(forward.IfaceConfig{Name: netLAN, NIC: host, StackNIC: int32(nicLAN)}); err != nil {
		return r.fail(fmt.Errorf("router: br-lan: %w", err))
	}
	if r.lanEP, err = r.attach(nicLAN, r.lanIf); err != nil {
		return r.fail(err)
	}
	a := r.cfg.LANAddr
	r.lanAddr.Store(&a)
	r.lanIf.SetAddress(a, netip.Addr{})
	if e := r.s.AddProtocolAddress(nicLAN, tcpip.ProtocolAddress{
		Protocol: ipv4.ProtocolNumber,
		AddressWithPrefix: tcpip.AddressWithPrefix{
			Address: tcpip.AddrFrom4(a.Addr().As4()), PrefixLen: a.Bits()},
	}, stack.AddressProperties{}); e != nil {
		return r.fail(fmt.Errorf("router: LAN address: %v", e))
	}
	r.setRoutes()

	for _, p := range r.cfg.LAN {
		v := p.VLANs
		if v.PVID == 0 && len(v.Untagged) == 0 && len(v.Tagged) == 0 {
			v = bridge.DefaultVLANs
		}
		n, err := r.br.AttachNIC(p.NIC, v)
		if err != nil {
			return r.fail(fmt.Errorf("router: %s: %w", p.Name, err))
		}
		r.ports = append(r.ports, portState{Port: p, num: n})
	}
	if w := r.cfg.WAN; w != nil {
		r.wanIf, err = r.fwd.AddIface(forward.IfaceConfig{Name: netWAN, NIC: w.NIC, Track: true,
			Intercept: r.interceptWAN, StackNIC: int32(nicWAN)})
		if err != nil {
			return r.fail(fmt.Errorf("router: %s: %w", w.Name, err))
		}
		if r.wanEP, err = r.attach(nicWAN, r.wanIf); err != nil {
			return r.fail(err)
		}
		r.ports = append(r.ports, portState{Port: *w, num: -1})
	}
	if err := r.startServices(); err != nil {
		return r.fail(err)
	}
	if r.cfg.WAN != nil {
		if err := r.startWAN(); err != nil {
			return r.fail(err)
		}
	}

	// Bound to br-lan, not to its address, so a new LAN address
	// (SetLANAddr) needs no new listener.
	ln, err := r.listenHTTP(tcpip.FullAddress{NIC: nicLAN, Port: r.cfg.HTTPPort})
	if err != nil {
		return r.fail(err)
	}
	h := r.cfg.HTTP
	if r.httpLn, err = connlimit.New(ln, connlimit.Config{Total: h.MaxConns, PerSource: h.MaxConnsPerSource}); err != nil {
		_ = ln.Close()
		return r.fail(fmt.Errorf("router: status page: %w", err))
	}
	r.srv = r.cfg.Web
	if r.srv == nil {
		r.srv = &httpd.Server{Handler: r, ReadHeaderTimeout: h.ReadHeaderTimeout, ReadTimeout: h.ReadTimeout,
			WriteTimeout: h.WriteTimeout, IdleTimeout: h.IdleTimeout, MaxHeaderBytes: HTTPMaxHeaderBytes,
			Log: func(format string, args ...any) { r.logf(slog.LevelWarn, format, args...) }}
	}
	go func() {
		_ = r.srv.Serve(r.httpLn)
		close(r.done)
	}()
	return nil
}

// listenHTTP is gonet.ListenTCP with the status page's small receive
// buffer, which the connections it accepts inherit.
func (r *Router) listenHTTP(addr tcpip.FullAddress) (*gonet.TCPListener, error) {
	var wq waiter.Queue
	ep, e := r.s.NewEndpoint(tcp.ProtocolNumber, ipv4.ProtocolNumber, &wq)
	if e != nil {
		return nil, fmt.Errorf("router: status page listener: %v", e)
	}
	ep.SocketOptions().SetReceiveBufferSize(httpRcvBuf, true)
	if e := ep.Bind(addr); e != nil {
		ep.Close()
		return nil, fmt.Errorf("router: status page listener: bind: %v", e)
	}
	if e := ep.Listen(httpBacklog); e != nil {
		ep.Close()
		return nil, fmt.Errorf("router: status page listener: listen: %v", e)
	}
	return gonet.NewTCPListener(r.s, &wq, ep), nil
}

func (r *Router) attach(id tcpip.NICID, nic gnet.NIC) (*netstack.Endpoint, error) {
	// No TCP timestamps on connections to the router: on a CPU without
	// an FPU, gVisor's timestamp-driven RTT estimate costs about a tenth
	// of a bulk transfer's instructions (see netstack.Options).
	ep, err := netstack.NewEndpointOptions(nic, netstack.Options{NoTCPTimestamps: true})
	if err != nil {
		return nil, fmt.Errorf("router: endpoint: %w", err)
	}
	if e := netstack.CreateNIC(r.s, id, ep); e != nil {
		return nil, fmt.Errorf("router: stack NIC %d: %v", id, e)
	}
	if err := ep.BindStack(r.s, id); err != nil {
		return nil, fmt.Errorf("router: stack NIC %d: %w", id, err)
	}
	return ep, nil
}

func netMask(bits int) []byte {
	m := uint32(0xffffffff) << (32 - bits)
	return []byte{byte(m >> 24), byte(m >> 16), byte(m >> 8), byte(m)}
}

// logf reports a router event: to Config.Log, or on the console.
func (r *Router) logf(level slog.Level, format string, args ...any) {
	if r.cfg.Log != nil {
		r.cfg.Log.Log(context.Background(), level, fmt.Sprintf(format, args...))
		return
	}
	fmt.Printf("router: "+format+"\n", args...)
}

func (r *Router) fail(err error) error {
	_ = r.Close()
	return err
}

// Close stops the status page, the ports and the stack.
func (r *Router) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	r.cancel()
	r.stopServices()
	r.wg.Wait() // the DHCP client releases its lease on the way out
	if r.srv != nil {
		_ = r.srv.Close()
		<-r.done
	}
	for _, p := range r.ports {
		p.NIC.Stop()
	}
	r.wan.mu.Lock()
	extra := r.extra
	r.wan.mu.Unlock()
	for _, x := range extra {
		x.lower.Stop()
	}
	if r.s != nil {
		r.s.Close()
		r.s.Wait()
	}
	return nil
}
