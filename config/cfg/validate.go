package cfg

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/gowrt/gowrt/config/uci"
	"github.com/gowrt/gowrt/net/firewall"
)

// validate checks what no single option can: references between
// sections, addresses against subnets, and the firewall as a whole. Every
// problem is reported (errors.Join), each naming the key.
func validate(files map[string]*uci.File) error {
	var v validator
	v.files = files
	v.network()
	v.dhcp()
	v.system()
	v.wireless()
	v.dropbear()
	v.firewall()
	return errors.Join(v.errs...)
}

type validator struct {
	files map[string]*uci.File
	errs  []error
}

func (v *validator) errf(format string, args ...any) {
	v.errs = append(v.errs, fmt.Errorf(format, args...))
}

// subnet returns a static interface's address and prefix length.
func subnet(s *uci.Section) (netip.Prefix, bool) {
	if p, _ := s.Get("proto"); p != "static" {
		return netip.Prefix{}, false
	}
	ip, ok1 := s.Get("ipaddr")
	mask, ok2 := s.Get("netmask")
	if !ok1 || !ok2 {
		return netip.Prefix{}, false
	}
	a, err1 := parseIPv4(ip)
	bits, err2 := maskBits(mask)
	if err1 != nil || err2 != nil {
		return netip.Prefix{}, false
	}
	return netip.PrefixFrom(a, bits), true
}

func (v *validator) iface(name string) *uci.Section {
	s := v.files["network"].Section(name)
	if s == nil || s.Type != "interface" || strings.HasPrefix(name, "@") {
		return nil
	}
	return s
}

func (v *validator) network() {
	f := v.files["network"]
	lan := v.iface("lan")
	if lan == nil {
		v.errf("network.lan: the LAN interface section is missing")
	} else if p, _ := lan.Get("proto"); p != "static" {
		v.errf("network.lan.proto: the LAN must be static")
	}
	var statics []netip.Prefix
	var names []string
	for _, s := range f.Find("interface") {
		ref := "network." + f.Ref(s)
		proto, _ := s.Get("proto")
		if proto == "" {
			v.errf("%s.proto: not set", ref)
		}
		if proto != "static" {
			continue
		}
		_, hasIP := s.Get("ipaddr")
		_, hasMask := s.Get("netmask")
		if !hasIP || !hasMask {
			v.errf("%s: a static interface needs ipaddr and netmask", ref)
			continue
		}
		p, _ := subnet(s)
		if p.Bits() < 31 && (p.Addr() == p.Masked().Addr() || p.Addr() == broadcast(p)) {
			v.errf("%s.ipaddr: %s is the network or broadcast address of %s", ref, p.Addr(), p.Masked())
		}
		if gw, ok := s.Get("gateway"); ok {
			if a, err := parseIPv4(gw); err == nil && !p.Contains(a) {
				v.errf("%s.gateway: %s is not in %s", ref, a, p.Masked())
			}
		}
		if s.Name == "loopback" {
			continue
		}
		for i, q := range statics {
			if q.Overlaps(p) {
				v.errf("%s: subnet %s overlaps network.%s's %s", ref, p.Masked(), names[i], q.Masked())
			}
		}
		statics = append(statics, p)
		names = append(names, f.Ref(s))
	}
	for _, s := range f.Find("route") {
		ref := "network." + f.Ref(s)
		if n, ok := s.Get("interface"); !ok || v.iface(n) == nil {
			v.errf("%s.interface: must name a network interface", ref)
		}
		if _, ok := s.Get("target"); !ok {
			v.errf("%s.target: not set", ref)
		}
	}
}

func broadcast(p netip.Prefix) netip.Addr {
	a := p.Masked().Addr().As4()
	host := uint32(1)<<(32-p.Bits()) - 1
	n := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	n |= host
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
}

func addrAdd(base netip.Addr, off uint32) netip.Addr {
	a := base.As4()
	n := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	n += off
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
}

func getUint(s *uci.Section, name string, def int) int {
	if v, ok := s.Get(name); ok {
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
	}
	return def
}

func getBool(s *uci.Section, name string, def bool) bool {
	if v, ok := s.Get(name); ok {
		if b, ok := parseBool(v); ok {
			return b
		}
	}
	return def
}

// pool returns a DHCP pool's first and last address. As in OpenWrt's
// dnsmasq.init (dhcp_add, via ipcalc.sh), start is an offset from the
// subnet's network address and the pool runs start .. start+limit-1,
// its end clamped to the last address before the broadcast address; ok is
// false when even the first address is not a host address of the subnet.
func pool(p netip.Prefix, start, limit int) (first, last netip.Addr, ok bool) {
	base := p.Masked().Addr()
	bc := broadcast(p)
	first = addrAdd(base, uint32(start))
	if p.Bits() >= 31 || !p.Contains(first) || first == bc {
		return first, first, false
	}
	last = addrAdd(base, uint32(start+limit-1))
	if !p.Contains(last) || last == bc || last.Less(first) {
		last = addrAdd(bc, ^uint32(0)) // bc - 1
	}
	return first, last, true
}

// dhcp: each pool must start inside its interface's subnet (its end is
// clamped, as OpenWrt does) and must not hold the router's own address:
// gowrt refuses that rather than relying on the server to skip it.
func (v *validator) dhcp() {
	f := v.files["dhcp"]
	for _, s := range f.Find("dhcp") {
		ref := "dhcp." + f.Ref(s)
		ifname, ok := s.Get("interface")
		if !ok {
			ifname = s.Name
		}
		n := v.iface(ifname)
		if n == nil {
			v.errf("%s.interface: %q is not a network interface", ref, ifname)
			continue
		}
		if getBool(s, "ignore", false) {
			continue
		}
		p, ok := subnet(n)
		if !ok {
			if proto, _ := n.Get("proto"); proto != "static" {
				v.errf("%s: serves DHCP on network.%s, which is not static (set ignore 1)", ref, ifname)
			}
			continue
		}
		start, limit := getUint(s, "start", 100), getUint(s, "limit", 150)
		first, last, ok := pool(p, start, limit)
		if !ok {
			v.errf("%s.start: %d puts the pool outside %s", ref, start, p.Masked())
			continue
		}
		if !p.Addr().Less(first) && !last.Less(p.Addr()) {
			v.errf("%s: pool %s-%s holds the router's address %s", ref, first, last, p.Addr())
		}
	}
	ips := map[string]string{}
	macs := map[string]string{}
	for _, s := range f.Find("host") {
		ref := "dhcp." + f.Ref(s)
		mac := s.List("mac")
		if len(mac) == 0 {
			v.errf("%s.mac: a host needs a MAC address", ref)
		}
		for _, m := range mac {
			hw, err := parseMAC(m)
			if err != nil {
				continue
			}
			if other, dup := macs[hw.String()]; dup {
				v.errf("%s.mac: %s is also %s's", ref, hw, other)
			}
			macs[hw.String()] = ref
		}
		if ip, ok := s.Get("ip"); ok {
			if other, dup := ips[ip]; dup {
				v.errf("%s.ip: %s is also %s's", ref, ip, other)
			}
			ips[ip] = ref
		}
	}
	if n := len(f.Find("dnsmasq")); n > 1 {
		v.errf("dhcp: %d dnsmasq sections, gowrt runs one", n)
	}
}

func (v *validator) system() {
	f := v.files["system"]
	if n := len(f.Find("system")); n != 1 {
		v.errf("system.@system: need exactly one system section, have %d", n)
	} else if _, ok := f.Find("system")[0].Get("hostname"); !ok {
		v.errf("system.@system[0].hostname: not set")
	}
	ts := f.Find("timeserver")
	for _, s := range ts {
		if s.Name != "ntp" {
			v.errf("system.%s: the timeserver section must be named 'ntp'", f.Ref(s))
		}
	}
}

// wpaKey checks a WPA passphrase (IEEE 802.11i: 8..63 printable ASCII) or
// a raw PSK (64 hex digits).
func wpaKey(k string) error {
	if len(k) == 64 {
		for i := 0; i < 64; i++ {
			c := k[i]
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return fmt.Errorf("a 64-character key must be hex digits")
			}
		}
		return nil
	}
	if len(k) < 8 || len(k) > 63 {
		return fmt.Errorf("a passphrase is 8..63 characters")
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x20 || k[i] > 0x7e {
			return fmt.Errorf("a passphrase is printable ASCII")
		}
	}
	return nil
}

// apEncryptions are the wifi-iface encryptions gowrt's AP runs (package
// wlan/ap: open, or WPA2-PSK with CCMP); OpenWrt's others (WPA1 TKIP in
// psk and psk-mixed, SAE, OWE) are refused for an enabled AP rather than
// run as something weaker than asked.
var apEncryptions = []string{"none", "psk2"}

// validChannel checks a channel number against the band (IEEE 802.11-2016
// 19.3.15 and 17.3.8.4: 2.4 GHz channels 1..14; 5 GHz 20 MHz channels 36
// to 64 and 100 to 144 in steps of 4, 149 to 177 in steps of 4).
func validChannel(band string, ch int) error {
	switch band {
	case "", "2g":
		if ch < 1 || ch > 14 {
			return fmt.Errorf("channel %d is not a 2.4 GHz channel (1..14)", ch)
		}
	case "5g":
		ok := ch%4 == 0 && (ch >= 36 && ch <= 64 || ch >= 100 && ch <= 144) || ch%4 == 1 && ch >= 149 && ch <= 177
		if !ok {
			return fmt.Errorf("channel %d is not a 5 GHz channel (36..64, 100..144 in steps of 4; 149..177)", ch)
		}
	default:
		return fmt.Errorf("band %s: gowrt's radios are 2.4 and 5 GHz", band)
	}
	return nil
}

func (v *validator) wireless() {
	f := v.files["wireless"]
	for _, s := range f.Find("wifi-device") {
		ref := "wireless." + f.Ref(s)
		if c, ok := s.Get("country"); ok && !(len(c) == 2 && (c == "00" || c[0] >= 'A' && c[0] <= 'Z' && c[1] >= 'A' && c[1] <= 'Z')) {
			v.errf("%s.country: %q is not an ISO 3166 alpha-2 code", ref, c)
		}
		band, _ := s.Get("band")
		if c, ok := s.Get("channel"); ok && c != "auto" {
			if n, err := strconv.Atoi(c); err == nil {
				if err := validChannel(band, n); err != nil {
					v.errf("%s.channel: %v", ref, err)
				}
			}
		}
	}
	for _, s := range f.Find("wifi-iface") {
		ref := "wireless." + f.Ref(s)
		d, _ := s.Get("device")
		if dev := f.Section(d); dev == nil || dev.Type != "wifi-device" {
			v.errf("%s.device: %q is not a wifi-device", ref, d)
		}
		if n, ok := s.Get("network"); ok && v.iface(n) == nil {
			v.errf("%s.network: %q is not a network interface", ref, n)
		}
		ssid, ok := s.Get("ssid")
		mode, _ := s.Get("mode")
		if mode == "ap" && !ok {
			v.errf("%s.ssid: an access point needs an SSID", ref)
		}
		if len(ssid) > 32 { // IEEE 802.11 SSID element: 0..32 octets
			v.errf("%s.ssid: %d bytes, at most 32", ref, len(ssid))
		}
		enc, _ := s.Get("encryption")
		key, hasKey := s.Get("key")
		switch enc {
		case "", "none", "owe":
		default:
			if !hasKey {
				v.errf("%s.key: encryption %s needs a key", ref, enc)
			} else if err := wpaKey(key); err != nil {
				v.errf("%s.key: %v", ref, err)
			}
		}
		disabled, _ := s.Get("disabled")
		if off, _ := parseBool(disabled); mode == "ap" && !off && enc != "" && !slices.Contains(apEncryptions, enc) {
			v.errf("%s.encryption: gowrt's access point runs %s, not %s", ref, strings.Join(apEncryptions, " or "), enc)
		}
	}
}

func (v *validator) dropbear() {
	f := v.files["dropbear"]
	for _, s := range f.Find("dropbear") {
		if n, ok := s.Get("Interface"); ok && v.iface(n) == nil {
			v.errf("dropbear.%s.Interface: %q is not a network interface", f.Ref(s), n)
		}
	}
	if n := len(f.Find("dropbear")); n > 1 {
		v.errf("dropbear: %d dropbear sections, gowrt runs one SSH server", n)
	}
}

// firewall hands the package to net/firewall's Load, reading it back from
// its exported text so that the line numbers in Load's errors are those
// of `cfg export firewall`.
func (v *validator) firewall() {
	f := v.files["firewall"]
	g := clone(f)
	g.Package = ""
	parsed, err := uci.Parse("firewall", strings.NewReader(g.String()))
	if err != nil {
		v.errf("firewall: %v", err)
		return
	}
	if _, err := firewall.Load(parsed); err != nil {
		v.errs = append(v.errs, err)
	}
}
