package part

import (
	"fmt"
	"strings"
)

// Grammar of one device's partition list (Linux
// drivers/mtd/parsers/cmdlinepart.c; U-Boot cmd/mtdparts.c accepts the
// same):
//
//	[mtdparts=]<mtd-id>:<partdef>[,<partdef>]*
//	<partdef> := <size>[@<offset>][(<name>)][ro][lk][slc]
//	<size>    := memsize | "-"   ("-": the rest of the device; must be last)
//	<offset>  := memsize         (default: right after the previous one)
//	memsize   := number as C strtoull base 0 (0x.. hex, 0.. octal,
//	             decimal) with an optional K, M, G, T, P or E suffix
//	             (either case; powers of 1024), as Linux memparse.
//
// Unnamed partitions are called Partition_NNN as Linux names them. The
// "lk" flag (keep locked) and "slc" (MLC NAND in SLC mode) are accepted
// and have no effect here. UNVERIFIED: "slc" only exists in recent Linux.
// Linux truncates a partition that overruns the device with a warning;
// this parser refuses it, and refuses overlaps (which Linux does not check).

// maxParts bounds the partition count of one string (bad input).
const maxParts = 64

// ParseMtdparts parses one device's mtdparts definition for a device of
// devSize bytes and returns the device name and its partitions.
func ParseMtdparts(s string, devSize int64) (string, []Partition, error) {
	if devSize <= 0 {
		return "", nil, fmt.Errorf("part: mtdparts: device size %d", devSize)
	}
	s = strings.TrimPrefix(strings.TrimSpace(s), "mtdparts=")
	if strings.Contains(s, ";") {
		return "", nil, fmt.Errorf("part: mtdparts %q: several devices (split at ';' and parse each)", s)
	}
	// The mtd-id ends at the last ':' before the first name, so ids with
	// colons (Linux allows them) still parse.
	head := s
	if i := strings.IndexByte(s, '('); i >= 0 {
		head = s[:i]
	}
	colon := strings.LastIndexByte(head, ':')
	if colon <= 0 {
		return "", nil, fmt.Errorf("part: mtdparts %q: want <mtd-id>:<partitions>", s)
	}
	dev, rest := s[:colon], s[colon+1:]
	var parts []Partition
	next := int64(0)
	for i := 0; ; i++ {
		if i == maxParts {
			return "", nil, fmt.Errorf("part: mtdparts: more than %d partitions", maxParts)
		}
		p, r, err := parsePartdef(rest, next, devSize, i)
		if err != nil {
			return "", nil, fmt.Errorf("part: mtdparts %s partition %d: %w", dev, i, err)
		}
		parts = append(parts, p)
		next = p.End()
		if r == "" {
			break
		}
		if r[0] != ',' {
			return "", nil, fmt.Errorf("part: mtdparts %s partition %d: unexpected %q after it", dev, i, r)
		}
		if p.Size == devSize-p.Offset && strings.HasPrefix(rest, "-") {
			return "", nil, fmt.Errorf("part: mtdparts %s: no partitions allowed after a fill-up (-) partition", dev)
		}
		rest = r[1:]
	}
	for i, p := range parts {
		for _, q := range parts[:i] {
			if p.Name == q.Name {
				return "", nil, fmt.Errorf("%w: mtdparts %s: two partitions named %q", ErrLayout, dev, p.Name)
			}
		}
	}
	if err := checkLayout(parts, devSize); err != nil {
		return "", nil, fmt.Errorf("part: mtdparts %s: %w", dev, err)
	}
	return dev, parts, nil
}

func parsePartdef(s string, next, devSize int64, index int) (Partition, string, error) {
	p := Partition{Name: fmt.Sprintf("Partition_%03d", index)}
	fill := false
	if strings.HasPrefix(s, "-") {
		fill, s = true, s[1:]
	} else {
		n, r, err := memsize(s)
		if err != nil {
			return p, "", fmt.Errorf("size: %w", err)
		}
		if n == 0 {
			return p, "", fmt.Errorf("%w: zero size", ErrLayout)
		}
		p.Size, s = n, r
	}
	p.Offset = next
	if strings.HasPrefix(s, "@") {
		n, r, err := memsize(s[1:])
		if err != nil {
			return p, "", fmt.Errorf("offset: %w", err)
		}
		p.Offset, s = n, r
	}
	if fill {
		if p.Offset >= devSize {
			return p, "", fmt.Errorf("%w: fill-up partition starts at %#x, past the %#x-byte device", ErrLayout, p.Offset, devSize)
		}
		p.Size = devSize - p.Offset
	}
	if strings.HasPrefix(s, "(") {
		end := strings.IndexByte(s, ')')
		if end < 0 {
			return p, "", fmt.Errorf("no closing ) in the name")
		}
		if end == 1 {
			return p, "", fmt.Errorf("empty name")
		}
		p.Name, s = s[1:end], s[end+1:]
	}
	if strings.HasPrefix(s, "ro") {
		p.ReadOnly, s = true, s[2:]
	}
	s = strings.TrimPrefix(s, "lk")
	s = strings.TrimPrefix(s, "slc")
	return p, s, nil
}

// memsize parses a number as Linux memparse does: strtoull base 0, then a
// binary size suffix. It refuses values that do not fit in an int64.
func memsize(s string) (int64, string, error) {
	base, i := uint64(10), 0
	switch {
	case len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && hexDigit(s[2]) >= 0:
		base, i = 16, 2
	case len(s) > 1 && s[0] == '0':
		base, i = 8, 1
	}
	start := i
	var n uint64
	for ; i < len(s); i++ {
		d := hexDigit(s[i])
		if d < 0 || uint64(d) >= base {
			break
		}
		if n > (1<<63-1-uint64(d))/base {
			return 0, "", fmt.Errorf("number %q too large", s[:i+1])
		}
		n = n*base + uint64(d)
	}
	if i == start && base != 8 { // "0" alone is a valid octal zero
		return 0, "", fmt.Errorf("want a number at %q", trunc(s))
	}
	shift := 0
	if i < len(s) {
		switch s[i] {
		case 'k', 'K':
			shift = 10
		case 'm', 'M':
			shift = 20
		case 'g', 'G':
			shift = 30
		case 't', 'T':
			shift = 40
		case 'p', 'P':
			shift = 50
		case 'e', 'E':
			shift = 60
		}
		if shift != 0 {
			i++
		}
	}
	if n > (1<<63-1)>>shift {
		return 0, "", fmt.Errorf("number %q too large", s[:i])
	}
	return int64(n << shift), s[i:], nil
}

func hexDigit(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

func trunc(s string) string {
	if len(s) > 16 {
		return s[:16] + "…"
	}
	return s
}
