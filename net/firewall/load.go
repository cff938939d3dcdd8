package firewall

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/gowrt/gowrt/config/uci"
)

// Error is one problem Load found in a configuration.
type Error struct {
	File    string
	Line    int    // of the option, or of the section when the option is missing
	Section string // "rule 'Allow-SSH' (@rule[2])"
	Option  string // "" for a problem with the whole section
	Msg     string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteString(":" + strconv.Itoa(e.Line))
	}
	b.WriteString(": ")
	if e.Section != "" {
		b.WriteString(e.Section + ": ")
	}
	if e.Option != "" {
		b.WriteString("option '" + e.Option + "': ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Option names per section type: those gowrt reads; those it ignores
// with a warning because without them no more traffic gets through than
// the user asked for (logging, counters, kernel tunables, offloading,
// NAT reflection); and those fw4 knows that would narrow what a section
// matches or change what it does, which gowrt cannot honour and so
// refuses. Every other name is unknown and an error: fw4 only warns about
// it, but a misspelt option (dest_prot) silently widens a rule to every
// port, which a firewall should not do quietly.
var (
	defaultsOptions = options{
		read:    []string{"input", "output", "forward", "syn_flood", "synflood_protect", "synflood_rate", "synflood_burst", "drop_invalid"},
		ignored: []string{"tcp_reject_code", "any_reject_code", "tcp_syncookies", "tcp_ecn", "tcp_window_scaling", "accept_redirects", "accept_source_route", "auto_helper", "custom_chains", "disable_ipv6", "flow_offloading", "flow_offloading_hw", "auto_includes"},
	}
	zoneOptions = options{
		read:        []string{"name", "network", "input", "output", "forward", "masq", "mtu_fix", "family", "enabled"},
		ignored:     []string{"masq_allow_invalid", "masq6", "log", "log_limit", "counter", "auto_helper", "helper", "custom_chains", "extra", "extra_src", "extra_dest"},
		unsupported: []string{"device", "subnet", "masq_src", "masq_dest"},
	}
	forwardingOptions = options{
		read: []string{"name", "src", "dest", "family", "enabled"},
	}
	ruleOptions = options{
		read:        []string{"name", "src", "dest", "proto", "src_ip", "dest_ip", "src_port", "dest_port", "icmp_type", "family", "target", "enabled"},
		ignored:     []string{"_name", "counter", "log", "extra", "utc_time"},
		unsupported: []string{"device", "direction", "ipset", "helper", "set_helper", "src_mac", "limit", "limit_burst", "start_date", "stop_date", "start_time", "stop_time", "weekdays", "monthdays", "mark", "set_mark", "set_xmark", "dscp", "set_dscp"},
	}
	redirectOptions = options{
		read:        []string{"name", "src", "dest", "proto", "src_ip", "src_port", "src_dip", "src_dport", "dest_ip", "dest_port", "family", "target", "enabled"},
		ignored:     []string{"_name", "counter", "log", "extra", "utc_time", "reflection", "reflection_src", "reflection_zone"},
		unsupported: []string{"ipset", "helper", "src_mac", "limit", "limit_burst", "start_date", "stop_date", "start_time", "stop_time", "weekdays", "monthdays", "mark"},
	}
)

type options struct{ read, ignored, unsupported []string }

func has(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Load reads a firewall configuration (OpenWrt's /etc/config/firewall
// as fw4 reads it) and validates all of it, returning every problem
// found, joined (errors.Join), each an *Error naming file, line, section
// and option. Options gowrt ignores are listed in Config.Warnings.
func Load(f *uci.File) (*Config, error) {
	l := &loader{f: f, c: &Config{}}
	// fw4.uc load: defaults first (zone policies inherit them), then
	// zones, rules, forwardings and redirects, each in file order.
	var defaults []*uci.Section
	for _, s := range f.Sections {
		switch s.Type {
		case "defaults":
			defaults = append(defaults, s)
		case "zone", "rule", "forwarding", "redirect":
		case "include", "ipset", "helper":
			l.warnf(s, "", "section type %s is not supported by gowrt and is ignored", s.Type)
		case "nat":
			l.section(s).errorf("", s.Line, "section type nat (SNAT) is not supported by gowrt")
		default:
			l.section(s).errorf("", s.Line, "unknown section type %q", s.Type)
		}
	}
	l.loadDefaults(defaults)
	for _, s := range f.Find("zone") {
		l.loadZone(s)
	}
	l.checkNetworks()
	for _, s := range f.Find("rule") {
		l.loadRule(s)
	}
	for _, s := range f.Find("forwarding") {
		l.loadForwarding(s)
	}
	for _, s := range f.Find("redirect") {
		l.loadRedirect(s)
	}
	sort.SliceStable(l.warns, func(i, j int) bool { return l.warns[i].Line < l.warns[j].Line })
	for _, w := range l.warns {
		l.c.Warnings = append(l.c.Warnings, w.Error())
	}
	if len(l.errs) > 0 {
		sort.SliceStable(l.errs, func(i, j int) bool { return l.errs[i].Line < l.errs[j].Line })
		errs := make([]error, len(l.errs))
		for i, e := range l.errs {
			errs[i] = e
		}
		return nil, errors.Join(errs...)
	}
	return l.c, nil
}

type loader struct {
	f     *uci.File
	c     *Config
	errs  []*Error
	warns []*Error
}

func (l *loader) describe(s *uci.Section) string {
	ref := l.f.Ref(s)
	if name, ok := s.Get("name"); ok && name != ref {
		return fmt.Sprintf("%s '%s' (%s)", s.Type, name, ref)
	}
	return s.Type + " " + ref
}

func (l *loader) warnf(s *uci.Section, opt string, format string, args ...any) {
	e := Error{File: l.f.Name, Line: s.Line, Section: l.describe(s), Option: opt, Msg: fmt.Sprintf(format, args...)}
	if o := s.Option(opt); o != nil {
		e.Line = o.Line
	}
	l.warns = append(l.warns, &e)
}

// section reads one uci section's options.
type section struct {
	l    *loader
	s    *uci.Section
	desc string
	bad  bool // an error was reported for this section
}

func (l *loader) section(s *uci.Section) *section {
	return &section{l: l, s: s, desc: l.describe(s)}
}

func (sec *section) errorf(opt string, line int, format string, args ...any) {
	sec.bad = true
	sec.l.errs = append(sec.l.errs, &Error{File: sec.l.f.Name, Line: line, Section: sec.desc, Option: opt, Msg: fmt.Sprintf(format, args...)})
}

// single returns an option that must have one value (fw4.uc parse_opt:
// "must not be a list").
func (sec *section) single(name string) (string, int, bool) {
	o := sec.s.Option(name)
	if o == nil {
		return "", sec.s.Line, false
	}
	if o.List {
		sec.errorf(name, o.Line, "must not be a list")
		return "", o.Line, false
	}
	return o.Values[0], o.Line, true
}

// multi returns a list's elements, or an option's value split at spaces
// (fw4.uc to_array).
func (sec *section) multi(name string) ([]string, int) {
	o := sec.s.Option(name)
	if o == nil {
		return nil, sec.s.Line
	}
	if o.List {
		return o.Values, o.Line
	}
	return strings.Fields(o.Values[0]), o.Line
}

func (sec *section) boolean(name string, def bool) bool {
	v, line, ok := sec.single(name)
	if !ok {
		return def
	}
	b, err := parseBool(v)
	if err != nil {
		sec.errorf(name, line, "%v", err)
		return def
	}
	return b
}

func (sec *section) policy(name string, def Target) Target {
	v, line, ok := sec.single(name)
	if !ok {
		return def
	}
	t, err := parsePolicy(v)
	if err != nil {
		sec.errorf(name, line, "%v", err)
		return def
	}
	return t
}

func (sec *section) family(name string) Family {
	v, line, ok := sec.single(name)
	if !ok {
		return AnyFamily
	}
	f, err := parseFamily(v)
	if err != nil {
		sec.errorf(name, line, "%v", err)
	}
	return f
}

func (sec *section) protos() ProtoSet {
	vals, line := sec.multi("proto")
	if vals == nil {
		vals = []string{"tcpudp"} // fw4.uc parse_rule, parse_redirect default
	}
	var set ProtoSet
	for _, v := range vals {
		if err := addProto(&set, v); err != nil {
			sec.errorf("proto", line, "%v", err)
		}
	}
	if set.Empty() && !sec.bad {
		sec.errorf("proto", line, "no protocol given")
	}
	return set
}

func (sec *section) ports(name string, list bool) []PortRange {
	return parseEach(sec, name, list, parsePort)
}

func (sec *section) addrs(name string, list bool) []AddrRange {
	return parseEach(sec, name, list, parseAddr)
}

// parseEach parses option name's values (several when list) with parse,
// reporting each value it refuses against the option.
func parseEach[T any](sec *section, name string, list bool, parse func(string) (T, error)) []T {
	var vals []string
	var line int
	if list {
		vals, line = sec.multi(name)
	} else if v, l, ok := sec.single(name); ok {
		vals, line = []string{v}, l
	}
	var out []T
	for _, v := range vals {
		x, err := parse(v)
		if err != nil {
			sec.errorf(name, line, "%v", err)
			continue
		}
		out = append(out, x)
	}
	return out
}

// zoneRef checks a src or dest option: a known enabled zone or "*".
func (sec *section) zoneRef(name string, allowAny bool) string {
	v, line, ok := sec.single(name)
	if !ok {
		return ""
	}
	if v == "*" {
		if !allowAny {
			sec.errorf(name, line, "must name a zone, not '*'")
		}
		return v
	}
	if sec.l.c.Zone(v) != nil {
		return v
	}
	for i := range sec.l.c.Zones {
		if sec.l.c.Zones[i].Name == v {
			sec.errorf(name, line, "zone '%s' is disabled", v)
			return v
		}
	}
	sec.errorf(name, line, "unknown zone '%s'", v)
	return v
}

// finish reports the section's options gowrt does not read.
func (sec *section) finish(opts options) {
	for _, o := range sec.s.Options {
		switch {
		case has(opts.read, o.Name):
		case has(opts.ignored, o.Name):
			sec.l.warnf(sec.s, o.Name, "not supported by gowrt, ignored")
		case has(opts.unsupported, o.Name):
			sec.errorf(o.Name, o.Line, "not supported by gowrt")
		default:
			sec.errorf(o.Name, o.Line, "unknown option")
		}
	}
}

func (l *loader) loadDefaults(list []*uci.Section) {
	// Without a defaults section every policy is DROP (fw4.uc
	// parse_defaults defaults).
	d := Defaults{Input: Drop, Output: Drop, Forward: Drop, SynFloodRate: 25, SynFloodBurst: 50}
	for i, s := range list {
		if i > 0 {
			l.warnf(s, "", "duplicate defaults section ignored")
			continue
		}
		sec := l.section(s)
		d.Line = s.Line
		d.Input = sec.policy("input", Drop)
		d.Output = sec.policy("output", Drop)
		d.Forward = sec.policy("forward", Drop)
		d.DropInvalid = sec.boolean("drop_invalid", false)
		d.SynFlood = sec.boolean("syn_flood", false)
		if s.Option("synflood_protect") != nil {
			d.SynFlood = sec.boolean("synflood_protect", false)
		}
		if v, line, ok := sec.single("synflood_rate"); ok {
			rate, err := parseRate(v)
			if err != nil {
				sec.errorf("synflood_rate", line, "%v", err)
			}
			d.SynFloodRate = rate
		}
		if v, line, ok := sec.single("synflood_burst"); ok {
			n, err := strconv.ParseUint(v, 10, 32)
			if err != nil {
				sec.errorf("synflood_burst", line, "invalid number %q", v)
			}
			d.SynFloodBurst = uint32(n)
		}
		sec.finish(defaultsOptions)
	}
	l.c.Defaults = d
}

// parseRate reads fw4's limit syntax, "25/second" (fw4.uc parse_limit),
// as a rate per second; rates below one per second are refused.
func parseRate(v string) (uint32, error) {
	num, unit, hasUnit := strings.Cut(v, "/")
	n, err := strconv.ParseUint(num, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("invalid rate %q (want like 25/second)", v)
	}
	if hasUnit {
		if u, ok := parseEnum(unit, "second", "minute", "hour", "day"); !ok {
			return 0, fmt.Errorf("invalid rate unit in %q", v)
		} else if u != "second" {
			return 0, fmt.Errorf("rate %q: only per-second rates are supported by gowrt", v)
		}
	}
	return uint32(n), nil
}

func validZoneName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func (l *loader) loadZone(s *uci.Section) {
	sec := l.section(s)
	z := Zone{Ref: l.f.Ref(s), Line: s.Line}
	name, nameLine, ok := sec.single("name")
	switch {
	case !ok && s.Option("name") == nil:
		sec.errorf("name", s.Line, "is required")
	case ok && !validZoneName(name):
		sec.errorf("name", nameLine, "invalid zone name %q (letters, digits, _ and -)", name)
	}
	z.Name = name
	z.Enabled = sec.boolean("enabled", true)
	z.Family = sec.family("family")
	nets, line := sec.multi("network")
	for _, n := range nets {
		if strings.HasPrefix(n, "!") {
			sec.errorf("network", line, "negated network %q is not supported by gowrt", n)
			continue
		}
		z.Networks = append(z.Networks, n)
	}
	d := l.c.Defaults
	z.Input = sec.policy("input", d.Input)
	z.Output = sec.policy("output", d.Output)
	z.Forward = sec.policy("forward", d.Forward)
	z.Masq = sec.boolean("masq", false)
	z.MTUFix = sec.boolean("mtu_fix", false)
	sec.finish(zoneOptions)
	if z.Enabled && z.Name != "" {
		if prev := l.c.Zone(z.Name); prev != nil {
			sec.errorf("name", nameLine, "duplicate zone name '%s' (also %s, line %d)", z.Name, prev.Ref, prev.Line)
			return
		}
	}
	l.c.Zones = append(l.c.Zones, z)
}

// checkNetworks refuses a network in two zones: fw4 would send its
// traffic to whichever zone comes first, which is rarely what was meant.
func (l *loader) checkNetworks() {
	owner := map[string]string{}
	for _, z := range l.c.Zones {
		if !z.Enabled {
			continue
		}
		for _, n := range z.Networks {
			if o, ok := owner[n]; ok && o != z.Name {
				l.errs = append(l.errs, &Error{File: l.f.Name, Line: z.Line, Section: "zone '" + z.Name + "' (" + z.Ref + ")", Option: "network",
					Msg: fmt.Sprintf("network '%s' is already in zone '%s'", n, o)})
				continue
			}
			owner[n] = z.Name
		}
	}
}

func (l *loader) loadForwarding(s *uci.Section) {
	sec := l.section(s)
	fw := Forwarding{Ref: l.f.Ref(s), Line: s.Line}
	fw.Name, _, _ = sec.single("name")
	fw.Enabled = sec.boolean("enabled", true)
	fw.Family = sec.family("family")
	fw.Src = sec.zoneRef("src", true)
	fw.Dest = sec.zoneRef("dest", true)
	if s.Option("src") == nil {
		sec.errorf("src", s.Line, "is required")
	}
	if s.Option("dest") == nil {
		sec.errorf("dest", s.Line, "is required")
	}
	if fw.Name == "" {
		fw.Name = fmt.Sprintf("Accept %s to %s forwarding", anyName(fw.Src), anyName(fw.Dest))
	}
	sec.finish(forwardingOptions)
	l.c.Forwardings = append(l.c.Forwardings, fw)
}

func anyName(z string) string {
	if z == "*" {
		return "any"
	}
	return z
}

// addrFamily is fw4.uc subnets_split_af's family of an address list: 4
// or 6 if it holds addresses of one family only, else any.
func addrFamily(list []AddrRange) Family {
	var v4, v6 bool
	for i := range list {
		if list[i].family() == IPv4 {
			v4 = true
		} else {
			v6 = true
		}
	}
	switch {
	case v4 && !v6:
		return IPv4
	case v6 && !v4:
		return IPv6
	}
	return AnyFamily
}

// inferFamily narrows a configured family by what the section refers to
// (fw4.uc infer_family); two different single families are a conflict.
func inferFamily(fam Family, objs ...any) (Family, error) {
	by := ""
	for i := 0; i+1 < len(objs); i += 2 {
		f, what := objs[i].(Family), objs[i+1].(string)
		if f == AnyFamily || f == fam {
			continue
		}
		if fam == AnyFamily {
			fam, by = f, what
			continue
		}
		if by == "" {
			return fam, fmt.Errorf("is restricted to %s but %s is %s only", fam, what, f)
		}
		return fam, fmt.Errorf("%s is %s only but %s is %s only", by, fam, what, f)
	}
	return fam, nil
}

func (l *loader) zoneFamily(name string) Family {
	if z := l.c.Zone(name); z != nil {
		return z.Family
	}
	return AnyFamily
}

func (l *loader) loadRule(s *uci.Section) {
	sec := l.section(s)
	r := Rule{Ref: l.f.Ref(s), Line: s.Line}
	r.Name, _, _ = sec.single("name")
	if r.Name == "" {
		r.Name = r.Ref
	}
	r.Enabled = sec.boolean("enabled", true)
	fam := sec.family("family")
	r.Src = sec.zoneRef("src", true)
	r.Dest = sec.zoneRef("dest", true)
	r.Proto = sec.protos()
	r.SrcIP = sec.addrs("src_ip", true)
	r.DestIP = sec.addrs("dest_ip", true)
	r.SrcPort = sec.ports("src_port", true)
	r.DestPort = sec.ports("dest_port", true)
	icmps, icmpLine := sec.multi("icmp_type")
	for _, v := range icmps {
		t, err := parseICMPType(v)
		if err != nil {
			sec.errorf("icmp_type", icmpLine, "%v", err)
			continue
		}
		r.ICMPType = append(r.ICMPType, t)
	}
	if v, line, ok := sec.single("target"); ok {
		t, err := parseTarget(v)
		if err != nil {
			sec.errorf("target", line, "%v", err)
		}
		r.Target = t
	} else if s.Option("target") == nil {
		// fw4 emits no verdict for a rule without target, fw3 dropped:
		// ask rather than guess.
		sec.errorf("target", s.Line, "is required (ACCEPT, REJECT or DROP)")
	}
	// fw4.uc parse_rule matches ports only for tcp and udp and ICMP
	// types only for icmp, silently matching every packet of the other
	// protocols; refuse options that would match nothing they name.
	if len(r.SrcPort)+len(r.DestPort) > 0 && (r.Proto.All() || !r.Proto.portful()) {
		opt := "dest_port"
		if len(r.SrcPort) > 0 {
			opt = "src_port"
		}
		sec.errorf(opt, s.Option(opt).Line, "ports need proto tcp, udp or tcpudp")
	}
	if len(r.ICMPType) > 0 && (r.Proto.All() || !r.Proto.Has(ProtoICMP) && !r.Proto.Has(ProtoICMPv6)) {
		sec.errorf("icmp_type", icmpLine, "ICMP types need proto icmp")
	}
	// Family: configured, or inferred like fw4.uc parse_rule does from
	// addresses, zones and ICMP types.
	fam, err := inferFamily(fam, addrFamily(r.SrcIP), "source IP", addrFamily(r.DestIP), "destination IP",
		l.zoneFamily(r.Src), "source zone", l.zoneFamily(r.Dest), "destination zone")
	if err != nil {
		sec.errorf("family", s.Line, "%v", err)
	}
	if r.Proto.Has(ProtoICMPv6) && !r.Proto.Has(ProtoICMP) && !r.Proto.All() {
		if fam == IPv4 {
			sec.errorf("proto", s.Line, "ICMPv6 in an IPv4-only rule")
		}
		fam = IPv6
	}
	if fam == AnyFamily {
		v4, v6 := false, false
		for _, a := range append(append([]AddrRange(nil), r.SrcIP...), r.DestIP...) {
			if a.family() == IPv4 {
				v4 = true
			} else {
				v6 = true
			}
		}
		for _, t := range r.ICMPType {
			v4 = v4 || t.Family != IPv6
			v6 = v6 || t.Family != IPv4
		}
		if v4 && !v6 {
			fam = IPv4
		} else if v6 && !v4 {
			fam = IPv6
		}
	}
	r.Family = fam
	sec.finish(ruleOptions)
	l.c.Rules = append(l.c.Rules, r)
}

func (l *loader) loadRedirect(s *uci.Section) {
	sec := l.section(s)
	rd := Redirect{Ref: l.f.Ref(s), Line: s.Line}
	rd.Name, _, _ = sec.single("name")
	if rd.Name == "" {
		rd.Name = rd.Ref
	}
	rd.Enabled = sec.boolean("enabled", true)
	fam := sec.family("family")
	if v, line, ok := sec.single("target"); ok {
		switch t, _ := parseEnum(v, "accept", "reject", "drop", "notrack", "helper", "mark", "dscp", "dnat", "snat", "masquerade"); t {
		case "dnat":
		case "snat":
			sec.errorf("target", line, "SNAT redirects are not supported by gowrt")
		default:
			sec.errorf("target", line, "invalid redirect target %q (want DNAT)", v)
		}
	}
	rd.Src = sec.zoneRef("src", false)
	if s.Option("src") == nil {
		sec.errorf("src", s.Line, "is required (the zone the connections arrive from)")
	}
	rd.Dest = sec.zoneRef("dest", false)
	rd.Proto = sec.protos()
	rd.SrcIP = sec.addrs("src_ip", false)
	rd.SrcDIP = sec.addrs("src_dip", false)
	rd.SrcPort = sec.ports("src_port", false)
	rd.SrcDPort = sec.ports("src_dport", false)
	destPorts := sec.ports("dest_port", false)
	if v, line, ok := sec.single("dest_ip"); ok {
		a, err := parseAddr(v)
		switch {
		case err != nil:
			sec.errorf("dest_ip", line, "%v", err)
		case a.Invert:
			sec.errorf("dest_ip", line, "must not be negated")
		case a.From != a.To:
			sec.errorf("dest_ip", line, "must be one address, not %q", v)
		default:
			rd.DestIP = a.From
		}
	} else if s.Option("dest_ip") == nil {
		// fw4 then redirects to the router itself; gowrt's NAT needs a
		// host to send the connection to.
		sec.errorf("dest_ip", s.Line, "is required (redirects to the router itself are not supported by gowrt)")
	}
	if len(destPorts) == 1 {
		dp := destPorts[0]
		line := s.Option("dest_port").Line
		switch {
		case dp.Invert:
			sec.errorf("dest_port", line, "must not be negated")
		case dp.Min == dp.Max:
			rd.DestPort = dp.Min
		case len(rd.SrcDPort) == 1 && rd.SrcDPort[0] == dp:
			// the same range: ports are kept
		default:
			sec.errorf("dest_port", line, "a port range must equal src_dport (ports are then kept)")
		}
	}
	if len(rd.SrcPort)+len(rd.SrcDPort)+len(destPorts) > 0 && (rd.Proto.All() || !rd.Proto.portful()) {
		sec.errorf("proto", s.Line, "ports need proto tcp, udp or tcpudp")
	}
	destFam := AnyFamily
	if rd.DestIP.IsValid() {
		destFam = IPv4
		if rd.DestIP.Is6() {
			destFam = IPv6
		}
	}
	fam, err := inferFamily(fam, addrFamily(rd.SrcIP), "source IP", addrFamily(rd.SrcDIP), "destination IP",
		destFam, "rewrite IP", l.zoneFamily(rd.Src), "source zone", l.zoneFamily(rd.Dest), "destination zone")
	if err != nil {
		sec.errorf("family", s.Line, "%v", err)
	}
	rd.Family = fam
	sec.finish(redirectOptions)
	l.c.Redirects = append(l.c.Redirects, rd)
}
