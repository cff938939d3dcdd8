package dhcpd

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"
)

// OpenWrt's defaults for the LAN (its /etc/config/dhcp "lan" section and
// the dnsmasq init script): 192.168.1.1/24, start 100, limit 150, 12h.
const (
	DefaultStart     = 100
	DefaultLimit     = 150
	DefaultLeaseTime = 12 * time.Hour
	DefaultDomain    = "lan"
	// MinLeaseTime is the shortest lease dnsmasq will configure (its
	// option parser refuses lease times under two minutes).
	MinLeaseTime = 2 * time.Minute
	// DefaultSaveInterval bounds how often renewals that only extend a
	// lease are written to the store. See Config.SaveInterval.
	DefaultSaveInterval = 30 * time.Minute
)

// DefaultAddr is OpenWrt's LAN address.
var DefaultAddr = netip.MustParsePrefix("192.168.1.1/24")

// StaticLease pins an address (and optionally a name) to a MAC address,
// like OpenWrt's "config host" sections.
type StaticLease struct {
	MAC      net.HardwareAddr
	IP       netip.Addr
	Hostname string
}

// LeaseStore keeps the serialized lease table across restarts (a flash
// partition, a file). Load returns nil, nil when nothing was saved.
type LeaseStore interface {
	Load() ([]byte, error)
	Save([]byte) error
}

// Config configures a Server. Zero fields take OpenWrt's defaults.
type Config struct {
	Addr      netip.Prefix  // the router's LAN address and subnet (DefaultAddr)
	Start     int           // first pool address: network + Start (100)
	Limit     int           // pool size (150)
	LeaseTime time.Duration // (12h; at least MinLeaseTime)
	Router    netip.Addr    // option 3 (Addr.Addr())
	DNS       netip.Addr    // option 6 (Addr.Addr())
	Domain    string        // option 15 ("lan")
	Static    []StaticLease
	Store     LeaseStore // optional
	Now       func() time.Time
	// SaveInterval: a renewal that only moves a lease's expiry is saved
	// at most this often (DefaultSaveInterval); creations, changes and
	// releases are saved at once. Losing an unsaved extension costs
	// nothing but an earlier expiry after a restart, and an expired
	// binding still gives its client the same address back (it is only
	// reclaimed when the pool runs dry), so flash need not be written on
	// every renewal: with 30 minutes, renewals cause at most 48 writes a
	// day however many clients there are.
	SaveInterval time.Duration
	// Logf, if set, receives store errors and similar one-line events.
	Logf func(format string, args ...any)
}

// pool is the validated configuration in the form the server uses.
type pool struct {
	prefix     netip.Prefix
	self       netip.Addr
	first      netip.Addr
	limit      int
	leaseTime  time.Duration
	router     netip.Addr
	dns        netip.Addr
	domain     string
	static     []StaticLease
	staticByIP map[netip.Addr]int
	staticMAC  map[[6]byte]int
}

func (c *Config) validate() (*pool, error) {
	if !c.Addr.IsValid() {
		c.Addr = DefaultAddr
	}
	if c.Start == 0 {
		c.Start = DefaultStart
	}
	if c.Limit == 0 {
		c.Limit = DefaultLimit
	}
	if c.LeaseTime == 0 {
		c.LeaseTime = DefaultLeaseTime
	}
	if c.Domain == "" {
		c.Domain = DefaultDomain
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.SaveInterval <= 0 {
		c.SaveInterval = DefaultSaveInterval
	}
	if !c.Addr.Addr().Is4() || c.Addr.Bits() < 8 || c.Addr.Bits() > 30 {
		return nil, fmt.Errorf("dhcpd: Addr %v: need an IPv4 address with a prefix of /8 to /30", c.Addr)
	}
	p := &pool{prefix: c.Addr.Masked(), self: c.Addr.Addr(), limit: c.Limit, leaseTime: c.LeaseTime, domain: c.Domain}
	if p.self == p.prefix.Addr() || p.self == broadcastOf(p.prefix) {
		return nil, fmt.Errorf("dhcpd: Addr %v is the subnet's network or broadcast address", c.Addr)
	}
	if c.Start < 1 || c.Limit < 1 {
		return nil, fmt.Errorf("dhcpd: Start %d and Limit %d must be positive", c.Start, c.Limit)
	}
	hosts := 1<<(32-p.prefix.Bits()) - 2
	if c.Start+c.Limit-1 > hosts {
		return nil, fmt.Errorf("dhcpd: pool %d..%d lies outside %v (hosts 1..%d)", c.Start, c.Start+c.Limit-1, p.prefix, hosts)
	}
	p.first = addOffset(p.prefix.Addr(), c.Start)
	if c.LeaseTime < MinLeaseTime {
		return nil, fmt.Errorf("dhcpd: LeaseTime %v is shorter than %v (dnsmasq refuses it too)", c.LeaseTime, MinLeaseTime)
	}
	if c.LeaseTime > 0xffffffff*time.Second {
		return nil, fmt.Errorf("dhcpd: LeaseTime %v does not fit option 51", c.LeaseTime)
	}
	p.router, p.dns = c.Router, c.DNS
	if !p.router.IsValid() {
		p.router = p.self
	}
	if !p.dns.IsValid() {
		p.dns = p.self
	}
	if !p.router.Is4() || !p.dns.Is4() {
		return nil, fmt.Errorf("dhcpd: Router %v and DNS %v must be IPv4", p.router, p.dns)
	}
	if !validDomain(c.Domain) {
		return nil, fmt.Errorf("dhcpd: Domain %q is not a DNS name", c.Domain)
	}
	p.staticByIP = make(map[netip.Addr]int)
	p.staticMAC = make(map[[6]byte]int)
	for i, s := range c.Static {
		if len(s.MAC) != 6 {
			return nil, fmt.Errorf("dhcpd: static lease %d: MAC %v is not an Ethernet address", i, s.MAC)
		}
		if !s.IP.Is4() || !p.prefix.Contains(s.IP) || s.IP == p.prefix.Addr() || s.IP == broadcastOf(p.prefix) {
			return nil, fmt.Errorf("dhcpd: static lease %v: %v is not a host address in %v", s.MAC, s.IP, p.prefix)
		}
		if s.IP == p.self {
			return nil, fmt.Errorf("dhcpd: static lease %v: %v is the router's own address", s.MAC, s.IP)
		}
		if j, dup := p.staticMAC[[6]byte(s.MAC)]; dup {
			return nil, fmt.Errorf("dhcpd: static leases %d and %d have the same MAC %v", j, i, s.MAC)
		}
		if j, dup := p.staticByIP[s.IP]; dup {
			return nil, fmt.Errorf("dhcpd: static leases %d and %d have the same address %v", j, i, s.IP)
		}
		if s.Hostname != "" && sanitizeHostname(s.Hostname) != s.Hostname {
			return nil, fmt.Errorf("dhcpd: static lease %v: hostname %q is not a DNS label", s.MAC, s.Hostname)
		}
		p.staticMAC[[6]byte(s.MAC)] = i
		p.staticByIP[s.IP] = i
		s.MAC = append(net.HardwareAddr(nil), s.MAC...)
		p.static = append(p.static, s)
	}
	return p, nil
}

// inPool reports whether a is one of the dynamic addresses.
func (p *pool) inPool(a netip.Addr) bool {
	i := p.index(a)
	return i >= 0 && i < p.limit
}

// index is a's offset from the pool's first address (may be outside 0..limit-1).
func (p *pool) index(a netip.Addr) int {
	if !a.Is4() {
		return -1
	}
	x, f := a.As4(), p.first.As4()
	return int(int64(be32(x)) - int64(be32(f)))
}

func (p *pool) at(i int) netip.Addr { return addOffset(p.first, i) }

func be32(b [4]byte) uint32 {
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

func addOffset(a netip.Addr, n int) netip.Addr {
	v := be32(a.As4()) + uint32(n)
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

func broadcastOf(p netip.Prefix) netip.Addr {
	v := be32(p.Masked().Addr().As4()) | (1<<(32-p.Bits()) - 1)
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// maxLabel is a DNS label's longest length (RFC 1035 2.3.4).
const maxLabel = 63

// sanitizeHostname turns a client's option 12 into a DNS label the
// forwarder can answer for (RFC 1123 2.1 host name rules): the part
// before the first dot, letters, digits and inner hyphens, at most 63
// bytes. Anything else gives "" (the name is dropped, as dnsmasq does
// with names that are not legal).
func sanitizeHostname(name string) string {
	name, _, _ = strings.Cut(name, ".")
	name = strings.TrimRight(name, "\x00") // some clients send a NUL terminator
	if name == "" || len(name) > maxLabel || name[0] == '-' || name[len(name)-1] == '-' {
		return ""
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			return ""
		}
	}
	return name
}

func validDomain(d string) bool {
	if len(d) > 253 {
		return false
	}
	for _, l := range strings.Split(d, ".") {
		if l == "" || sanitizeHostname(l) != l {
			return false
		}
	}
	return true
}

var errNoStore = errors.New("dhcpd: no lease store configured")
