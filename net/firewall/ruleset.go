package firewall

import (
	"fmt"
	"net/netip"
)

// MaxIfaces is how many interface numbers a Ruleset knows (uint8).
const MaxIfaces = 256

// Packet is what the firewall looks at: the first packet of a new
// connection, or any packet that no connection accounts for. In and Out
// are interface numbers as given to Compile (Out is unused by Input, In
// by Output).
type Packet struct {
	In, Out          uint8
	Proto            uint8 // IP protocol number
	Src, Dst         netip.Addr
	SrcPort, DstPort uint16 // TCP and UDP
	ICMPType         uint8  // ICMP and ICMPv6
	ICMPCode         uint8
	// DNAT is set when a redirect rewrote the connection's destination
	// (fw4's "ct status dnat"): such traffic is accepted from the zone
	// the redirect is for, as fw4 does, after that zone's rules.
	DNAT bool
}

// Ruleset is a Config compiled for evaluation: zones resolved to
// interface numbers, rules split per chain and zone in fw4's order. It is
// read-only, so any number of goroutines may use it; to change the
// firewall, compile a new one and swap it in.
type Ruleset struct {
	zoneOf   [MaxIfaces]int16 // zone index, or -1
	zones    []czone
	defaults Defaults

	inputAny, forwardAny, outputAny []crule
	// per zone index
	input, forward, output [][]crule
	redirects              [][]credirect
}

type czone struct {
	name                   string
	input, output, forward Target
	masq, mtuFix, dnat     bool
	family                 Family
}

// crule is one rule, forwarding, compiled.
type crule struct {
	name      string
	family    Family
	dest      int16 // zone the packet must leave through, or -1
	protos    ProtoSet
	src, dst  []AddrRange
	sport     []PortRange
	dport     []PortRange
	icmp      []ICMPType
	target    Target
	hasPorts  bool
	hasICMP   bool
	anyProtos bool
}

type credirect struct {
	name        string
	family      Family
	protos      ProtoSet
	src, srcDst []AddrRange
	sport       []PortRange
	dport       []PortRange
	to          netip.Addr
	toPort      uint16
}

// Compile resolves the configuration against the router's networks:
// networks maps network names (the names zones list, "lan", "wan") to
// interface numbers. A network a zone lists but the map lacks (wan6 on a
// router without IPv6) is left out; an interface not in any zone is
// decided by the default policies. Disabled sections are left out.
func (c *Config) Compile(networks map[string]int) (*Ruleset, error) {
	r := &Ruleset{defaults: c.Defaults}
	for i := range r.zoneOf {
		r.zoneOf[i] = -1
	}
	index := map[string]int16{}
	for _, z := range c.Zones {
		if !z.Enabled {
			continue
		}
		if _, dup := index[z.Name]; dup {
			return nil, fmt.Errorf("firewall: two zones named %q", z.Name)
		}
		zi := int16(len(r.zones))
		index[z.Name] = zi
		r.zones = append(r.zones, czone{name: z.Name, input: z.Input, output: z.Output, forward: z.Forward,
			masq: z.Masq, mtuFix: z.MTUFix, family: z.Family})
		for _, n := range z.Networks {
			ifc, ok := networks[n]
			if !ok {
				continue
			}
			if ifc < 0 || ifc >= MaxIfaces {
				return nil, fmt.Errorf("firewall: network %q has interface number %d, outside 0-%d", n, ifc, MaxIfaces-1)
			}
			if prev := r.zoneOf[ifc]; prev >= 0 && prev != zi {
				return nil, fmt.Errorf("firewall: interface %d (network %q) is in zones %q and %q", ifc, n, r.zones[prev].name, z.Name)
			}
			r.zoneOf[ifc] = zi
		}
	}
	nz := len(r.zones)
	r.input = make([][]crule, nz)
	r.forward = make([][]crule, nz)
	r.output = make([][]crule, nz)
	r.redirects = make([][]credirect, nz)

	zone := func(name, what string) (int16, error) {
		if name == "" || name == "*" {
			return -1, nil
		}
		zi, ok := index[name]
		if !ok {
			return -1, fmt.Errorf("firewall: %s refers to unknown zone %q", what, name)
		}
		return zi, nil
	}

	// fw4.uc parse_rule chooses the chain: src and dest make a forward
	// rule, src alone an input rule, anything else an output rule; a
	// specific zone puts it in that zone's chain, '*' in the main chain
	// that runs before every zone's.
	for i := range c.Rules {
		rule := &c.Rules[i]
		if !rule.Enabled {
			continue
		}
		src, err := zone(rule.Src, "rule "+rule.Name)
		if err != nil {
			return nil, err
		}
		dst, err := zone(rule.Dest, "rule "+rule.Name)
		if err != nil {
			return nil, err
		}
		cr := crule{name: rule.Name, family: rule.Family, dest: dst, protos: rule.Proto,
			src: rule.SrcIP, dst: rule.DestIP, sport: rule.SrcPort, dport: rule.DestPort,
			icmp: rule.ICMPType, target: rule.Target}
		cr.finish()
		switch {
		case rule.Src != "" && rule.Dest != "":
			place(&r.forwardAny, r.forward, src, cr)
		case rule.Src != "":
			place(&r.inputAny, r.input, src, cr)
		default:
			place(&r.outputAny, r.output, dst, cr)
		}
	}
	// Forwardings come after the rules in the same chains (fw4.uc load
	// parses them after the rules), as accept rules with a dest zone.
	for _, fw := range c.Forwardings {
		if !fw.Enabled {
			continue
		}
		src, err := zone(fw.Src, "forwarding "+fw.Name)
		if err != nil {
			return nil, err
		}
		dst, err := zone(fw.Dest, "forwarding "+fw.Name)
		if err != nil {
			return nil, err
		}
		cr := crule{name: fw.Name, family: fw.Family, dest: dst, protos: AllProtos, target: Accept}
		cr.finish()
		place(&r.forwardAny, r.forward, src, cr)
	}
	for _, rd := range c.Redirects {
		if !rd.Enabled {
			continue
		}
		src, err := zone(rd.Src, "redirect "+rd.Name)
		if err != nil {
			return nil, err
		}
		if src < 0 {
			return nil, fmt.Errorf("firewall: redirect %s needs a source zone", rd.Name)
		}
		if !rd.DestIP.IsValid() {
			return nil, fmt.Errorf("firewall: redirect %s has no dest_ip", rd.Name)
		}
		r.zones[src].dnat = true
		r.redirects[src] = append(r.redirects[src], credirect{name: rd.Name, family: rd.Family, protos: rd.Proto,
			src: rd.SrcIP, srcDst: rd.SrcDIP, sport: rd.SrcPort, dport: rd.SrcDPort, to: rd.DestIP, toPort: rd.DestPort})
	}
	return r, nil
}

func (cr *crule) finish() {
	cr.anyProtos = cr.protos.All()
	cr.hasPorts = len(cr.sport)+len(cr.dport) > 0
	cr.hasICMP = len(cr.icmp) > 0
	// proto icmp stands for ICMPv6 in IPv6 rules (fw4.uc l4proto).
	if cr.protos.Has(ProtoICMP) && cr.family != IPv4 {
		cr.protos.Add(ProtoICMPv6)
	}
}

func familyOf(a netip.Addr) Family {
	if a.Is4() || a.Is4In6() {
		return IPv4
	}
	return IPv6
}

// matchAddrs: in one of the plain ranges of a's family (if there are
// any), in none of the inverted ones.
func matchAddrs(list []AddrRange, a netip.Addr) bool {
	plain, hit := false, false
	for i := range list {
		e := &list[i]
		if e.From.BitLen() != a.BitLen() {
			continue
		}
		in := e.contains(a)
		if e.Invert {
			if in {
				return false
			}
			continue
		}
		plain = true
		hit = hit || in
	}
	return !plain || hit
}

func matchPorts(list []PortRange, port uint16) bool {
	plain, hit := false, false
	for i := range list {
		e := &list[i]
		in := port >= e.Min && port <= e.Max
		if e.Invert {
			if in {
				return false
			}
			continue
		}
		plain = true
		hit = hit || in
	}
	return !plain || hit
}

func (cr *crule) match(p *Packet, fam Family, src, dst netip.Addr) bool {
	if cr.family != AnyFamily && cr.family != fam {
		return false
	}
	if !cr.anyProtos && !cr.protos.Has(p.Proto) {
		return false
	}
	if len(cr.src) > 0 && !matchAddrs(cr.src, src) {
		return false
	}
	if len(cr.dst) > 0 && !matchAddrs(cr.dst, dst) {
		return false
	}
	if cr.hasPorts && (p.Proto == ProtoTCP || p.Proto == ProtoUDP) {
		if !matchPorts(cr.sport, p.SrcPort) || !matchPorts(cr.dport, p.DstPort) {
			return false
		}
	}
	if cr.hasICMP && (p.Proto == ProtoICMP && fam == IPv4 || p.Proto == ProtoICMPv6 && fam == IPv6) {
		hit := false
		for i := range cr.icmp {
			if cr.icmp[i].matches(fam, p.ICMPType, p.ICMPCode) {
				hit = true
				break
			}
		}
		if !hit {
			return false
		}
	}
	return true
}

func (r *Ruleset) zoneIn(ifc uint8, fam Family) int16 {
	zi := r.zoneOf[ifc]
	if zi >= 0 {
		if zf := r.zones[zi].family; zf != AnyFamily && zf != fam {
			return -1
		}
	}
	return zi
}

// Input decides traffic to the router arriving on p.In: the rules from
// any zone ('*'), then the rules of p.In's zone, in order, first match
// wins; then redirected (p.DNAT) traffic is accepted if the zone has
// redirects; then the zone's input policy. Traffic from an interface in
// no zone meets the default input policy.
//
// Established and related traffic is not asked about: the connection
// tracker accepts it before consulting the firewall, as fw4's
// "ct state established,related accept" does first in every chain.
func (r *Ruleset) Input(p *Packet) Target {
	src, dst := p.Src.Unmap(), p.Dst.Unmap()
	fam := familyOf(src)
	for i := range r.inputAny {
		if r.inputAny[i].match(p, fam, src, dst) {
			return r.inputAny[i].target
		}
	}
	zi := r.zoneIn(p.In, fam)
	if zi < 0 {
		return r.defaults.Input
	}
	rules := r.input[zi]
	for i := range rules {
		if rules[i].match(p, fam, src, dst) {
			return rules[i].target
		}
	}
	if p.DNAT && r.zones[zi].dnat {
		return Accept
	}
	return r.zones[zi].input
}

// Forward decides traffic routed from p.In to p.Out: the rules from any
// zone, then the rules and forwardings of p.In's zone in order (a rule or
// forwarding with a dest zone matches only traffic leaving through it);
// then redirected traffic (p.DNAT) from a zone with redirects is
// accepted; then, if p.Out is in the same zone, that zone's forward
// policy; otherwise the default forward policy (fw4's forward chain ends
// so: a zone's forward policy covers only traffic within the zone).
func (r *Ruleset) Forward(p *Packet) Target {
	src, dst := p.Src.Unmap(), p.Dst.Unmap()
	fam := familyOf(src)
	out := r.zoneIn(p.Out, fam)
	for i := range r.forwardAny {
		cr := &r.forwardAny[i]
		if (cr.dest < 0 || cr.dest == out) && cr.match(p, fam, src, dst) {
			return cr.target
		}
	}
	zi := r.zoneIn(p.In, fam)
	if zi < 0 {
		return r.defaults.Forward
	}
	rules := r.forward[zi]
	for i := range rules {
		cr := &rules[i]
		if (cr.dest < 0 || cr.dest == out) && cr.match(p, fam, src, dst) {
			return cr.target
		}
	}
	if p.DNAT && r.zones[zi].dnat {
		return Accept
	}
	if out == zi {
		return r.zones[zi].forward
	}
	return r.defaults.Forward
}

// Output decides traffic from the router leaving through p.Out: rules
// without a source zone for any zone, then those for p.Out's zone, then
// that zone's output policy; an interface in no zone meets the default
// output policy.
func (r *Ruleset) Output(p *Packet) Target {
	src, dst := p.Src.Unmap(), p.Dst.Unmap()
	fam := familyOf(src)
	for i := range r.outputAny {
		if r.outputAny[i].match(p, fam, src, dst) {
			return r.outputAny[i].target
		}
	}
	zi := r.zoneIn(p.Out, fam)
	if zi < 0 {
		return r.defaults.Output
	}
	rules := r.output[zi]
	for i := range rules {
		if rules[i].match(p, fam, src, dst) {
			return rules[i].target
		}
	}
	return r.zones[zi].output
}

// Masquerade reports whether IPv4 traffic leaving through interface out
// is masqueraded (its zone has masq).
func (r *Ruleset) Masquerade(out uint8) bool {
	zi := r.zoneOf[out]
	return zi >= 0 && r.zones[zi].masq
}

// MSSClamp reports whether forwarded TCP SYNs through interface ifc have
// their MSS clamped to the path MTU (its zone has mtu_fix). fw4 clamps
// SYNs entering and leaving such a zone, so ask for both p.In and p.Out.
func (r *Ruleset) MSSClamp(ifc uint8) bool {
	zi := r.zoneOf[ifc]
	return zi >= 0 && r.zones[zi].mtuFix
}

// Redirect looks up the DNAT for a new connection arriving on p.In to
// one of the router's own addresses: the first redirect of p.In's zone
// that matches gives the address and port to send it to (the original
// port when the redirect names none). Matching uses src_ip, src_port,
// src_dip (against p.Dst) and src_dport (against p.DstPort). The caller
// asks only for packets addressed to the router: the firewall does not
// know the router's addresses. A redirected connection is then forwarded
// with p.DNAT set.
func (r *Ruleset) Redirect(p *Packet) (netip.AddrPort, bool) {
	src, dst := p.Src.Unmap(), p.Dst.Unmap()
	fam := familyOf(src)
	zi := r.zoneIn(p.In, fam)
	if zi < 0 {
		return netip.AddrPort{}, false
	}
	rds := r.redirects[zi]
	for i := range rds {
		rd := &rds[i]
		if rd.family != AnyFamily && rd.family != fam || familyOf(rd.to) != fam {
			continue
		}
		if !rd.protos.All() && !rd.protos.Has(p.Proto) {
			continue
		}
		if len(rd.src) > 0 && !matchAddrs(rd.src, src) || len(rd.srcDst) > 0 && !matchAddrs(rd.srcDst, dst) {
			continue
		}
		if p.Proto == ProtoTCP || p.Proto == ProtoUDP {
			if !matchPorts(rd.sport, p.SrcPort) || !matchPorts(rd.dport, p.DstPort) {
				continue
			}
		}
		port := rd.toPort
		if port == 0 {
			port = p.DstPort
		}
		return netip.AddrPortFrom(rd.to, port), true
	}
	return netip.AddrPort{}, false
}

// Zone returns the name of the zone interface ifc is in.
func (r *Ruleset) Zone(ifc uint8) (string, bool) {
	zi := r.zoneOf[ifc]
	if zi < 0 {
		return "", false
	}
	return r.zones[zi].name, true
}

// Defaults returns the default policies and switches compiled in.
func (r *Ruleset) Defaults() Defaults { return r.defaults }

// place appends cr to a chain: the main one (anyChain, rules for zone '*',
// z < 0) or zone z's.
func place(anyChain *[]crule, zones [][]crule, z int16, cr crule) {
	if z < 0 {
		*anyChain = append(*anyChain, cr)
		return
	}
	zones[z] = append(zones[z], cr)
}
