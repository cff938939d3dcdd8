package cfg

import (
	"fmt"
	"github.com/robfig/cron/v3"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
)

// kind is what an option's value must look like.
type kind uint8

const (
	kString   kind = iota // any text without control characters
	kBool                 // OpenWrt's boolean words (boolWords)
	kUint                 // decimal in [min, max]
	kIPv4                 // dotted quad
	kNetmask              // dotted quad with contiguous one bits
	kPrefix               // IPv4 address or address/length
	kMAC                  // 6 octets, ':' or '-' separated
	kHostname             // RFC 1123 labels separated by dots
	kPort                 // 1..65535
	kDuration             // dnsmasq lease time: N, Nm, Nh, Nd, Nw, "infinite"
	kEnum                 // one of enum
	kChannel              // "auto" or a channel number
	kSSHKey               // one authorized_keys line
	kBcrypt               // a bcrypt hash ($2a$/$2b$/$2y$)
	kName                 // a UCI section name (a reference to another section)
	kCrontab              // five cron schedule fields and a command line
)

// optType is the schema of one option.
type optType struct {
	kind     kind
	min, max uint64
	enum     []string
	// list options are stored as UCI lists; a Set value is split on
	// white space when split is true (addresses, names), kept whole
	// otherwise (SSH keys hold spaces).
	list, split bool
	// any: the option may be an option or a list as written (firewall;
	// net/firewall's Load decides what is valid).
	any bool
}

func str() optType                    { return optType{kind: kString} }
func boolean() optType                { return optType{kind: kBool} }
func uintRange(lo, hi uint64) optType { return optType{kind: kUint, min: lo, max: hi} }
func of(k kind) optType               { return optType{kind: k} }
func enum(vals ...string) optType     { return optType{kind: kEnum, enum: vals} }
func listOf(t optType) optType        { t.list, t.split = true, true; return t }
func wholeListOf(t optType) optType   { t.list = true; return t }

// boolWords are the spellings OpenWrt's config helpers accept
// (functions.sh config_get_bool, libubox's blobmsg bool parsing).
var boolWords = map[string]bool{
	"1": true, "on": true, "yes": true, "true": true, "enabled": true,
	"0": false, "off": false, "no": false, "false": false, "disabled": false,
}

// parseBool reads one of boolWords (case-insensitive, as OpenWrt's are).
func parseBool(v string) (bool, bool) {
	b, ok := boolWords[strings.ToLower(v)]
	return b, ok
}

// minLease is dnsmasq's shortest lease (dnsmasq option.c raises shorter
// ones to 120 s); gowrt refuses them instead of changing them silently.
const minLease = 2 * time.Minute

// Infinite is the Snapshot's LeaseTime for leasetime 'infinite'.
const Infinite = time.Duration(1<<63 - 1)

// parseLease reads a lease time the way dnsmasq's dhcp-range does: a
// number of seconds, or a number with m, h, d or w, or "infinite".
func parseLease(v string) (time.Duration, error) {
	if v == "infinite" {
		return Infinite, nil
	}
	if v == "" {
		return 0, fmt.Errorf("empty lease time")
	}
	unit := time.Second
	num := v
	switch v[len(v)-1] {
	case 's', 'S':
		num = v[:len(v)-1]
	case 'm', 'M':
		unit, num = time.Minute, v[:len(v)-1]
	case 'h', 'H':
		unit, num = time.Hour, v[:len(v)-1]
	case 'd', 'D':
		unit, num = 24*time.Hour, v[:len(v)-1]
	case 'w', 'W':
		unit, num = 7*24*time.Hour, v[:len(v)-1]
	}
	n, err := strconv.ParseUint(num, 10, 32)
	if err != nil || num == "" || num[0] == '+' {
		return 0, fmt.Errorf("not a lease time (seconds, or a number with m, h, d or w, or 'infinite')")
	}
	d := time.Duration(n) * unit
	if d < minLease {
		return 0, fmt.Errorf("shorter than dnsmasq's minimum lease of 2m")
	}
	return d, nil
}

// validHostname checks RFC 1123 section 2.1 host names: dot-separated
// labels of letters, digits and hyphens, 1..63 bytes each, not starting or
// ending with a hyphen, at most 253 bytes in all.
func validHostname(v string) error {
	if len(v) == 0 || len(v) > 253 {
		return fmt.Errorf("host name must be 1..253 characters")
	}
	for _, label := range strings.Split(v, ".") {
		if len(label) == 0 || len(label) > 63 {
			return fmt.Errorf("label %q must be 1..63 characters", label)
		}
		if label[0] == '-' || label[len(label)-1] == '-' {
			return fmt.Errorf("label %q starts or ends with '-'", label)
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return fmt.Errorf("label %q holds %q (letters, digits and '-' only)", label, c)
			}
		}
	}
	return nil
}

func parseIPv4(v string) (netip.Addr, error) {
	a, err := netip.ParseAddr(v)
	if err != nil || !a.Is4() {
		return netip.Addr{}, fmt.Errorf("not an IPv4 address")
	}
	return a, nil
}

// maskBits returns the prefix length of a dotted-quad netmask.
func maskBits(v string) (int, error) {
	a, err := parseIPv4(v)
	if err != nil {
		return 0, fmt.Errorf("not a netmask")
	}
	m := net.IPMask(a.AsSlice())
	ones, bits := m.Size()
	if bits == 0 {
		return 0, fmt.Errorf("netmask bits are not contiguous")
	}
	return ones, nil
}

func parsePrefix(v string) (netip.Prefix, error) {
	if !strings.Contains(v, "/") {
		a, err := parseIPv4(v)
		if err != nil {
			return netip.Prefix{}, err
		}
		return netip.PrefixFrom(a, 32), nil
	}
	p, err := netip.ParsePrefix(v)
	if err != nil || !p.Addr().Is4() {
		return netip.Prefix{}, fmt.Errorf("not an IPv4 prefix (a.b.c.d/len)")
	}
	return p, nil
}

func parseMAC(v string) (net.HardwareAddr, error) {
	m, err := net.ParseMAC(v)
	if err != nil || len(m) != 6 {
		return nil, fmt.Errorf("not a MAC address (xx:xx:xx:xx:xx:xx)")
	}
	return m, nil
}

// validBcrypt checks the shape of a bcrypt hash (OpenBSD's bcrypt(3)
// "modular crypt" form): "$2a$", "$2b$" or "$2y$", a two-digit cost 04..31,
// "$", then 53 characters of bcrypt's base64 alphabet (22 of salt, 31 of
// hash): 60 bytes in all.
func validBcrypt(v string) error {
	if len(v) != 60 || v[0] != '$' || v[1] != '2' || !strings.ContainsRune("aby", rune(v[2])) || v[3] != '$' || v[6] != '$' {
		return fmt.Errorf("not a bcrypt hash ($2b$NN$ and 53 characters)")
	}
	cost, err := strconv.Atoi(v[4:6])
	if err != nil || cost < 4 || cost > 31 {
		return fmt.Errorf("bcrypt cost must be 04..31")
	}
	for i := 7; i < len(v); i++ {
		c := v[i]
		if !(c == '.' || c == '/' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return fmt.Errorf("bcrypt hash holds %q", c)
		}
	}
	return nil
}

// check validates one value against t.
func (t optType) check(v string) error {
	if v == "" {
		return fmt.Errorf("empty value")
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] == 0x7f {
			return fmt.Errorf("control character in value")
		}
	}
	switch t.kind {
	case kString:
		return nil
	case kBool:
		if _, ok := parseBool(v); !ok {
			return fmt.Errorf("not a boolean (0/1, on/off, yes/no, true/false, enabled/disabled)")
		}
	case kUint, kPort:
		lo, hi := t.min, t.max
		if t.kind == kPort {
			lo, hi = 1, 65535
		}
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil || v[0] == '+' {
			return fmt.Errorf("not a number")
		}
		if n < lo || n > hi {
			return fmt.Errorf("out of range %d..%d", lo, hi)
		}
	case kIPv4:
		_, err := parseIPv4(v)
		return err
	case kNetmask:
		_, err := maskBits(v)
		return err
	case kPrefix:
		_, err := parsePrefix(v)
		return err
	case kMAC:
		_, err := parseMAC(v)
		return err
	case kHostname:
		return validHostname(v)
	case kDuration:
		_, err := parseLease(v)
		return err
	case kEnum:
		for _, e := range t.enum {
			if v == e {
				return nil
			}
		}
		return fmt.Errorf("must be one of %s", strings.Join(t.enum, ", "))
	case kChannel:
		if v == "auto" {
			return nil
		}
		n, err := strconv.ParseUint(v, 10, 8)
		if err != nil || v[0] == '+' || n < 1 || n > 233 {
			return fmt.Errorf("must be 'auto' or a channel 1..233")
		}
	case kSSHKey:
		// ParseAuthorizedKey skips comment and blank lines and would
		// read a key from a later line; one value is one key line.
		if strings.HasPrefix(strings.TrimSpace(v), "#") {
			return fmt.Errorf("not an SSH public key line")
		}
		if _, _, _, rest, err := ssh.ParseAuthorizedKey([]byte(v)); err != nil || len(rest) != 0 {
			return fmt.Errorf("not an SSH public key line (authorized_keys format)")
		}
	case kBcrypt:
		return validBcrypt(v)
	case kCrontab:
		f := strings.Fields(v)
		if len(f) < 6 {
			return fmt.Errorf("need five schedule fields and a command")
		}
		if _, err := cron.ParseStandard(strings.Join(f[:5], " ")); err != nil {
			return fmt.Errorf("schedule %q: %v", strings.Join(f[:5], " "), err)
		}
	case kName:
		for i := 0; i < len(v); i++ {
			c := v[i]
			if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
				return fmt.Errorf("not a section name (letters, digits, '_')")
			}
		}
	}
	return nil
}
