package firewall

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// parseEnum matches val case-insensitively against the start of each
// choice in order, as fw4.uc parse_enum does ("acc" is accept).
func parseEnum(val string, choices ...string) (string, bool) {
	v := strings.ToLower(val)
	if v == "" {
		return "", false
	}
	for _, c := range choices {
		if strings.HasPrefix(c, v) {
			return c, true
		}
	}
	return "", false
}

func parsePolicy(val string) (Target, error) {
	switch c, _ := parseEnum(val, "accept", "reject", "drop"); c {
	case "accept":
		return Accept, nil
	case "reject":
		return Reject, nil
	case "drop":
		return Drop, nil
	}
	return Drop, fmt.Errorf("invalid policy %q (want ACCEPT, REJECT or DROP)", val)
}

// parseTarget reads a rule's target. fw4 knows more targets than gowrt
// acts on; those are errors, since skipping the rule would change what
// is filtered.
func parseTarget(val string) (Target, error) {
	c, ok := parseEnum(val, "accept", "reject", "drop", "notrack", "helper", "mark", "dscp", "dnat", "snat", "masquerade")
	switch {
	case !ok:
		return Drop, fmt.Errorf("invalid target %q (want ACCEPT, REJECT or DROP)", val)
	case c == "accept":
		return Accept, nil
	case c == "reject":
		return Reject, nil
	case c == "drop":
		return Drop, nil
	}
	return Drop, fmt.Errorf("target %q is not supported by gowrt (ACCEPT, REJECT or DROP)", val)
}

// parseBool takes fw4.uc parse_bool's spellings.
func parseBool(val string) (bool, error) {
	switch val {
	case "1", "on", "true", "yes":
		return true, nil
	case "0", "off", "false", "no":
		return false, nil
	}
	return false, fmt.Errorf("invalid boolean %q (want 1 or 0)", val)
}

// parseFamily follows fw4.uc parse_family.
func parseFamily(val string) (Family, error) {
	switch {
	case val == "any" || val == "all" || val == "*":
		return AnyFamily, nil
	case val == "inet" || strings.Contains(val, "4"):
		return IPv4, nil
	case strings.Contains(val, "6"):
		return IPv6, nil
	}
	return AnyFamily, fmt.Errorf("invalid family %q (want ipv4, ipv6 or any)", val)
}

// protoNames are the protocol names of /etc/protocols that rules use
// (IANA protocol-numbers registry).
var protoNames = map[string]uint8{
	"icmp": ProtoICMP, "igmp": ProtoIGMP, "tcp": ProtoTCP, "udp": ProtoUDP,
	"gre": ProtoGRE, "esp": ProtoESP, "ah": ProtoAH,
	"icmpv6": ProtoICMPv6, "ipv6-icmp": ProtoICMPv6,
	"sctp": ProtoSCTP, "udplite": 136, "ipip": 4, "ipv6": 41,
}

// addProto adds one proto value to set (fw4.uc parse_protocol).
func addProto(set *ProtoSet, val string) error {
	v := strings.ToLower(strings.TrimSpace(val))
	if strings.HasPrefix(v, "!") {
		return fmt.Errorf("negated protocol %q is not supported by gowrt", val)
	}
	switch v {
	case "all", "any", "*":
		*set = AllProtos
		return nil
	case "tcpudp":
		set.Add(ProtoTCP)
		set.Add(ProtoUDP)
		return nil
	}
	if n, ok := protoNames[v]; ok {
		set.Add(n)
		return nil
	}
	n, err := strconv.ParseUint(v, 10, 8)
	if err != nil {
		return fmt.Errorf("unknown protocol %q", val)
	}
	set.Add(uint8(n))
	return nil
}

// invert strips fw4's "!" negation prefix (fw4.uc parse_invert).
func invert(val string) (string, bool) {
	v := strings.TrimLeft(val, " \t")
	if strings.HasPrefix(v, "!") {
		return strings.TrimSpace(v[1:]), true
	}
	return strings.TrimSpace(v), false
}

// parsePort reads "22", "1000-2000" or "1000:2000", optionally negated
// (fw4.uc parse_port).
func parsePort(val string) (PortRange, error) {
	v, inv := invert(val)
	lo, hi, isRange := strings.Cut(v, "-")
	if !isRange {
		lo, hi, isRange = strings.Cut(v, ":")
	}
	min, err1 := parsePortNumber(lo)
	max := min
	var err2 error
	if isRange {
		max, err2 = parsePortNumber(hi)
	}
	if err1 != nil || err2 != nil {
		return PortRange{}, fmt.Errorf("invalid port %q (want a port 0-65535 or a range like 1000-2000)", val)
	}
	if min > max {
		return PortRange{}, fmt.Errorf("invalid port range %q (start above end)", val)
	}
	return PortRange{Min: min, Max: max, Invert: inv}, nil
}

func parsePortNumber(s string) (uint16, error) {
	if s == "" || len(s) > 5 {
		return 0, errors.New("bad port")
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, errors.New("bad port")
		}
	}
	n, err := strconv.ParseUint(s, 10, 16)
	return uint16(n), err
}

// parseAddr reads a host, CIDR prefix ("10.0.0.0/8"), address with a
// netmask ("10.0.0.0/255.0.0.0") or range ("10.0.0.1-10.0.0.9"),
// optionally negated (fw4.uc parse_subnet). fw4 also takes network names
// (resolved through netifd) and non-contiguous masks; gowrt does not.
func parseAddr(val string) (AddrRange, error) {
	v, inv := invert(val)
	if a, m, ok := strings.Cut(v, "/"); ok {
		addr, err := parseHost(a)
		if err != nil {
			return AddrRange{}, fmt.Errorf("invalid address %q", val)
		}
		var bits int
		if mask, err := netip.ParseAddr(m); err == nil {
			if mask.BitLen() != addr.BitLen() {
				return AddrRange{}, fmt.Errorf("invalid netmask in %q (family differs)", val)
			}
			if bits = maskBits(mask); bits < 0 {
				return AddrRange{}, fmt.Errorf("non-contiguous netmask in %q is not supported by gowrt", val)
			}
		} else if bits, err = strconv.Atoi(m); err != nil || bits < 0 || bits > addr.BitLen() {
			return AddrRange{}, fmt.Errorf("invalid prefix length in %q", val)
		}
		p := netip.PrefixFrom(addr, bits).Masked()
		return AddrRange{From: p.Addr(), To: lastAddr(p), Invert: inv}, nil
	}
	if a, b, ok := strings.Cut(v, "-"); ok {
		from, err1 := parseHost(a)
		to, err2 := parseHost(b)
		if err1 != nil || err2 != nil || from.BitLen() != to.BitLen() {
			return AddrRange{}, fmt.Errorf("invalid address range %q", val)
		}
		if from.Compare(to) > 0 {
			return AddrRange{}, fmt.Errorf("invalid address range %q (start above end)", val)
		}
		return AddrRange{From: from, To: to, Invert: inv}, nil
	}
	addr, err := parseHost(v)
	if err != nil {
		return AddrRange{}, fmt.Errorf("invalid address %q (network names are not supported by gowrt)", val)
	}
	return AddrRange{From: addr, To: addr, Invert: inv}, nil
}

func parseHost(s string) (netip.Addr, error) {
	a, err := netip.ParseAddr(strings.TrimSpace(s))
	if err != nil {
		return netip.Addr{}, err
	}
	if a.Zone() != "" {
		return netip.Addr{}, errors.New("scoped address")
	}
	return a.Unmap(), nil
}

// maskBits is the prefix length of a contiguous netmask, or -1.
func maskBits(mask netip.Addr) int {
	b := mask.AsSlice()
	bits, zero := 0, false
	for _, x := range b {
		for i := 7; i >= 0; i-- {
			if x&(1<<i) != 0 {
				if zero {
					return -1
				}
				bits++
			} else {
				zero = true
			}
		}
	}
	return bits
}

func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// ICMP type names with their type and code range, as fw4.uc's
// ipv4_icmptypes and ipv6_icmptypes tables define them (the names are
// iptables'; numbers from RFC 792 and RFC 4443). code range 0-255 is
// "any code".
var icmp4Names = map[string][3]uint8{
	"any": {255, 0, 255}, "echo-reply": {0, 0, 255}, "pong": {0, 0, 255},
	"destination-unreachable": {3, 0, 255}, "network-unreachable": {3, 0, 0},
	"host-unreachable": {3, 1, 1}, "protocol-unreachable": {3, 2, 2},
	"port-unreachable": {3, 3, 3}, "fragmentation-needed": {3, 4, 4},
	"source-route-failed": {3, 5, 5}, "network-unknown": {3, 6, 6},
	"host-unknown": {3, 7, 7}, "network-prohibited": {3, 9, 9},
	"host-prohibited": {3, 10, 10}, "TOS-network-unreachable": {3, 11, 11},
	"TOS-host-unreachable": {3, 12, 12}, "communication-prohibited": {3, 13, 13},
	"host-precedence-violation": {3, 14, 14}, "precedence-cutoff": {3, 15, 15},
	"source-quench": {4, 0, 255}, "redirect": {5, 0, 255},
	"network-redirect": {5, 0, 0}, "host-redirect": {5, 1, 1},
	"TOS-network-redirect": {5, 2, 2}, "TOS-host-redirect": {5, 3, 3},
	"echo-request": {8, 0, 255}, "ping": {8, 0, 255},
	"router-advertisement": {9, 0, 255}, "router-solicitation": {10, 0, 255},
	"time-exceeded": {11, 0, 255}, "ttl-exceeded": {11, 0, 255},
	"ttl-zero-during-transit": {11, 0, 0}, "ttl-zero-during-reassembly": {11, 1, 1},
	"parameter-problem": {12, 0, 255}, "ip-header-bad": {12, 0, 0},
	"required-option-missing": {12, 1, 1}, "timestamp-request": {13, 0, 255},
	"timestamp-reply": {14, 0, 255}, "address-mask-request": {17, 0, 255},
	"address-mask-reply": {18, 0, 255},
}

var icmp6Names = map[string][3]uint8{
	"destination-unreachable": {1, 0, 255}, "no-route": {1, 0, 0},
	"communication-prohibited": {1, 1, 1}, "address-unreachable": {1, 3, 3},
	"port-unreachable": {1, 4, 4}, "packet-too-big": {2, 0, 255},
	"time-exceeded": {3, 0, 255}, "ttl-exceeded": {3, 0, 255},
	"ttl-zero-during-transit": {3, 0, 0}, "ttl-zero-during-reassembly": {3, 1, 1},
	"parameter-problem": {4, 0, 255}, "bad-header": {4, 0, 0},
	"unknown-header-type": {4, 1, 1}, "unknown-option": {4, 2, 2},
	"echo-request": {128, 0, 255}, "ping": {128, 0, 255},
	"echo-reply": {129, 0, 255}, "pong": {129, 0, 255},
	"router-solicitation": {133, 0, 255}, "router-advertisement": {134, 0, 255},
	"neighbour-solicitation": {135, 0, 255}, "neighbor-solicitation": {135, 0, 255},
	"neighbour-advertisement": {136, 0, 255}, "neighbor-advertisement": {136, 0, 255},
	"redirect": {137, 0, 255},
}

// parseICMPType reads a type name, a number or "type/code" (fw4.uc
// parse_icmptype). fw4's "any" (type 255) is kept as it defines it.
func parseICMPType(val string) (ICMPType, error) {
	t := ICMPType{Name: val}
	v4, ok4 := icmp4Names[val]
	v6, ok6 := icmp6Names[val]
	if ok4 || ok6 {
		switch {
		case ok4 && ok6:
			t.Family = AnyFamily
		case ok4:
			t.Family = IPv4
		default:
			t.Family = IPv6
		}
		t.Type, t.CodeMin, t.CodeMax = v4[0], v4[1], v4[2]
		t.Type6, t.Code6Min, t.Code6Max = v6[0], v6[1], v6[2]
		return t, nil
	}
	typ, code, hasCode := strings.Cut(val, "/")
	n, err := strconv.ParseUint(typ, 10, 8)
	if err != nil || typ == "" || typ[0] == '+' {
		return t, fmt.Errorf("invalid ICMP type %q (want a name like echo-request, a number or type/code)", val)
	}
	t.Type, t.CodeMin, t.CodeMax = uint8(n), 0, 255
	if hasCode {
		c, err := strconv.ParseUint(code, 10, 8)
		if err != nil || code == "" || code[0] == '+' {
			return t, fmt.Errorf("invalid ICMP code in %q", val)
		}
		t.CodeMin, t.CodeMax = uint8(c), uint8(c)
	}
	t.Type6, t.Code6Min, t.Code6Max = t.Type, t.CodeMin, t.CodeMax
	return t, nil
}

// matches reports whether an ICMP (family 4) or ICMPv6 (family 6) type
// and code are this entry's.
func (t *ICMPType) matches(fam Family, typ, code uint8) bool {
	if t.Family != AnyFamily && t.Family != fam {
		return false
	}
	if fam == IPv4 {
		return typ == t.Type && code >= t.CodeMin && code <= t.CodeMax
	}
	return typ == t.Type6 && code >= t.Code6Min && code <= t.Code6Max
}
