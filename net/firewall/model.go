package firewall

import (
	"net/netip"
	"strconv"
)

// Target is what a rule or policy does with a packet.
type Target uint8

const (
	// Drop discards the packet silently. It is the zero Target, so a
	// Target nobody set drops.
	Drop Target = iota
	// Reject discards the packet and tells the sender: a TCP reset for
	// TCP, an ICMP port unreachable for anything else (fw4's defaults
	// tcp_reject_code tcp-reset and any_reject_code port-unreachable,
	// ruleset.uc handle_reject). Sending the reply is the caller's job.
	Reject
	// Accept lets the packet through.
	Accept
)

func (t Target) String() string {
	switch t {
	case Drop:
		return "DROP"
	case Reject:
		return "REJECT"
	case Accept:
		return "ACCEPT"
	}
	return "Target(" + strconv.Itoa(int(t)) + ")"
}

// Family restricts a zone, rule, forwarding or redirect to one address
// family; AnyFamily is both.
type Family uint8

const (
	AnyFamily Family = 0
	IPv4      Family = 4
	IPv6      Family = 6
)

func (f Family) String() string {
	switch f {
	case IPv4:
		return "ipv4"
	case IPv6:
		return "ipv6"
	}
	return "any"
}

// IP protocol numbers (IANA protocol-numbers registry).
const (
	ProtoICMP   = 1
	ProtoIGMP   = 2
	ProtoTCP    = 6
	ProtoUDP    = 17
	ProtoGRE    = 47
	ProtoESP    = 50
	ProtoAH     = 51
	ProtoICMPv6 = 58
	ProtoSCTP   = 132
)

// ProtoSet is a set of IP protocol numbers.
type ProtoSet [4]uint64

// AllProtos is every protocol (fw4's proto all, any or *).
var AllProtos = ProtoSet{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}

// Has reports whether p is in the set.
func (s *ProtoSet) Has(p uint8) bool { return s[p>>6]&(1<<(p&63)) != 0 }

// Add puts p in the set.
func (s *ProtoSet) Add(p uint8) { s[p>>6] |= 1 << (p & 63) }

// All reports whether the set holds every protocol.
func (s *ProtoSet) All() bool { return *s == AllProtos }

// Empty reports whether the set holds no protocol.
func (s *ProtoSet) Empty() bool { return *s == ProtoSet{} }

// portful reports whether the set holds a protocol that has ports fw4
// matches (tcp or udp; fw4.uc parse_rule takes ports only for these).
func (s *ProtoSet) portful() bool { return s.Has(ProtoTCP) || s.Has(ProtoUDP) }

// PortRange is a port or inclusive range of ports, or its negation
// ("!22" matches every port but 22).
type PortRange struct {
	Min, Max uint16
	Invert   bool
}

func (r PortRange) String() string {
	s := strconv.Itoa(int(r.Min))
	if r.Max != r.Min {
		s += "-" + strconv.Itoa(int(r.Max))
	}
	if r.Invert {
		s = "!" + s
	}
	return s
}

// AddrRange is an inclusive range of addresses of one family: a host, a
// CIDR prefix, or "a-b"; or its negation.
type AddrRange struct {
	From, To netip.Addr
	Invert   bool
}

func (r AddrRange) String() string {
	s := r.From.String()
	if r.To != r.From {
		s += "-" + r.To.String()
	}
	if r.Invert {
		s = "!" + s
	}
	return s
}

func (r *AddrRange) family() Family {
	if r.From.Is4() {
		return IPv4
	}
	return IPv6
}

func (r *AddrRange) contains(a netip.Addr) bool {
	return a.BitLen() == r.From.BitLen() && a.Compare(r.From) >= 0 && a.Compare(r.To) <= 0
}

// ICMPType matches an ICMP type and range of codes. A name may stand for
// different numbers in ICMP and ICMPv6 (echo-request is 8 and 128); Family
// says which of the two the entry has.
type ICMPType struct {
	Name                      string // as configured
	Type, CodeMin, CodeMax    uint8  // ICMP (IPv4)
	Type6, Code6Min, Code6Max uint8  // ICMPv6
	Family                    Family
}

// Defaults is the `defaults` section: the policies for traffic no zone
// decides, and global switches.
type Defaults struct {
	Input, Output, Forward Target
	// SynFlood is syn_flood (or synflood_protect): rate-limit new TCP
	// connections to the router to SynFloodRate per second with bursts
	// of SynFloodBurst (fw4 defaults 25/second, 50). The Ruleset does not
	// enforce it; the connection-tracking layer may.
	SynFlood                    bool
	SynFloodRate, SynFloodBurst uint32
	// DropInvalid drops packets conntrack finds invalid (connection
	// tracking's job, not the Ruleset's).
	DropInvalid bool
	Line        int
}

// Zone is a `zone` section: a named group of networks with policies.
type Zone struct {
	Name     string
	Networks []string
	// Input is the policy for traffic from the zone to the router,
	// Output for traffic from the router into the zone, Forward for
	// traffic forwarded between networks of the zone (fw4 applies a
	// zone's forward policy only where the packet also leaves through
	// the zone; traffic to another zone needs a forwarding or a rule).
	Input, Output, Forward Target
	// Masq masquerades IPv4 traffic leaving through the zone.
	Masq bool
	// MTUFix clamps the MSS of forwarded TCP SYNs entering or leaving
	// through the zone to the path MTU.
	MTUFix  bool
	Family  Family
	Enabled bool
	Ref     string // the section, "wan" or "@zone[1]"
	Line    int
}

// Forwarding is a `forwarding` section: forwarded traffic from Src to
// Dest is accepted. "*" stands for any zone.
type Forwarding struct {
	Name      string
	Src, Dest string
	Family    Family
	Enabled   bool
	Ref       string
	Line      int
}

// Rule is a `rule` section. Src and Dest are zone names, "*" for any
// zone, or "" when not given: a rule with Src and Dest filters forwarded
// traffic, with Src only traffic to the router, with Dest only (or
// neither) traffic from the router.
type Rule struct {
	Name      string
	Src, Dest string
	Proto     ProtoSet
	// SrcIP and DestIP match if the address is in one of the ranges
	// that are not inverted (or there are none) and in none of those
	// that are.
	SrcIP, DestIP []AddrRange
	// SrcPort and DestPort are matched only for TCP and UDP packets.
	SrcPort, DestPort []PortRange
	// ICMPType, if set, is matched for ICMP and ICMPv6 packets.
	ICMPType []ICMPType
	Family   Family
	Target   Target
	Enabled  bool
	Ref      string
	Line     int
}

// Redirect is a `redirect` section with target DNAT: connections
// arriving from zone Src that match are sent to DestIP, port DestPort
// (or the original port when DestPort is zero).
type Redirect struct {
	Name string
	Src  string
	// Dest is the zone DestIP is in; optional, as in fw4.
	Dest     string
	Proto    ProtoSet
	SrcIP    []AddrRange // the connection's source
	SrcPort  []PortRange
	SrcDIP   []AddrRange // the router address the connection was made to
	SrcDPort []PortRange // the port the connection was made to
	DestIP   netip.Addr
	DestPort uint16
	Family   Family
	Enabled  bool
	Ref      string
	Line     int
}

// Config is a loaded firewall configuration.
type Config struct {
	Defaults    Defaults
	Zones       []Zone
	Forwardings []Forwarding
	Rules       []Rule
	Redirects   []Redirect
	// Warnings are fw4 options and sections gowrt ignores because
	// ignoring them cannot let more traffic through (see the package
	// documentation).
	Warnings []string
}

// Zone returns the enabled zone of that name, or nil.
func (c *Config) Zone(name string) *Zone {
	for i := range c.Zones {
		if c.Zones[i].Name == name && c.Zones[i].Enabled {
			return &c.Zones[i]
		}
	}
	return nil
}
