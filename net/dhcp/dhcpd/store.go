package dhcpd

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// The lease table's serialized form, version 1: a header line, then one
// line per binding:
//
//	gowrt-dhcpd-leases 1
//	<state> <expires, Unix seconds> <MAC> <IPv4> <hostname or ->
//
// state is "b" (bound) or "r" (released or expired: a previous binding,
// remembered so the client gets its address back). Text, so a lease file
// on a flash partition can be read by a person; versioned, so a later
// format is refused clearly by this decoder instead of misread.
const (
	storeMagic   = "gowrt-dhcpd-leases"
	storeVersion = 1
	// maxStoredLeases bounds what the decoder accepts whatever the blob
	// says (a /8 pool cannot exceed it either: Limit is an int the config
	// checks against the subnet, and real LANs are far below).
	maxStoredLeases = 1 << 16
)

// ErrStoreFormat wraps every reason a stored blob is refused.
var ErrStoreFormat = errors.New("dhcpd: lease store")

type storedLease struct {
	state    state
	expires  time.Time
	mac      [6]byte
	ip       netip.Addr
	hostname string
}

func encodeLeases(ls []storedLease) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %d\n", storeMagic, storeVersion)
	for _, l := range ls {
		st := "b"
		if l.state != stateBound {
			st = "r"
		}
		h := l.hostname
		if h == "" {
			h = "-"
		}
		fmt.Fprintf(&b, "%s %d %s %s %s\n", st, l.expires.Unix(), net.HardwareAddr(l.mac[:]), l.ip, h)
	}
	return b.Bytes()
}

// decodeLeases parses a blob written by encodeLeases. Any deviation is an
// error wrapping ErrStoreFormat; the caller starts with an empty table.
func decodeLeases(data []byte) ([]storedLease, error) {
	if len(data) == 0 {
		return nil, nil
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 256), 256) // a line is at most ~120 bytes
	if !sc.Scan() {
		return nil, fmt.Errorf("%w: unreadable header: %v", ErrStoreFormat, sc.Err())
	}
	magic, ver, ok := strings.Cut(sc.Text(), " ")
	if !ok || magic != storeMagic {
		return nil, fmt.Errorf("%w: not a gowrt lease table (header %.40q)", ErrStoreFormat, sc.Text())
	}
	if v, err := strconv.Atoi(ver); err != nil || v != storeVersion {
		return nil, fmt.Errorf("%w: format version %.10q, this build reads %d", ErrStoreFormat, ver, storeVersion)
	}
	var out []storedLease
	for line := 2; sc.Scan(); line++ {
		if len(out) == maxStoredLeases {
			return nil, fmt.Errorf("%w: more than %d leases", ErrStoreFormat, maxStoredLeases)
		}
		l, err := decodeLine(sc.Text())
		if err != nil {
			return nil, fmt.Errorf("%w: line %d: %v", ErrStoreFormat, line, err)
		}
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrStoreFormat, err)
	}
	return out, nil
}

func decodeLine(s string) (storedLease, error) {
	var l storedLease
	f := strings.Split(s, " ")
	if len(f) != 5 {
		return l, fmt.Errorf("%d fields, want 5", len(f))
	}
	switch f[0] {
	case "b":
		l.state = stateBound
	case "r":
		l.state = stateReleased
	default:
		return l, fmt.Errorf("state %.10q", f[0])
	}
	sec, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil || sec < 0 || sec > 1<<40 {
		return l, fmt.Errorf("expiry %.20q", f[1])
	}
	l.expires = time.Unix(sec, 0)
	mac, err := net.ParseMAC(f[2])
	if err != nil || len(mac) != 6 {
		return l, fmt.Errorf("MAC %.20q", f[2])
	}
	l.mac = [6]byte(mac)
	ip, err := netip.ParseAddr(f[3])
	if err != nil || !ip.Is4() {
		return l, fmt.Errorf("address %.20q", f[3])
	}
	l.ip = ip
	if f[4] != "-" {
		if sanitizeHostname(f[4]) != f[4] {
			return l, fmt.Errorf("hostname %.70q", f[4])
		}
		l.hostname = f[4]
	}
	return l, nil
}
