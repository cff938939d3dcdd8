package router

import (
	"errors"
	"fmt"
	"hash/fnv"
	"net"

	"github.com/gowrt/gowrt/board/ar71xx/boardfile"
	gnet "github.com/gowrt/gowrt/net"
)

// macTextLen is the length of a MAC address stored as text,
// "xx:xx:xx:xx:xx:xx" (RedBoot's configuration).
const macTextLen = 17

// FlashReader reads len(p) bytes at byte offset off of the flash.
type FlashReader func(off int64, p []byte) error

// ErrBadMAC is wrapped by BaseMAC's errors about the stored address.
var ErrBadMAC = errors.New("router: no usable MAC address in flash")

// BaseMAC reads the board's base MAC address from the flash at
// b.MACAddr. When the location is outside the flash, or the stored value
// is all zeros, all ones (erased flash), a multicast address or unreadable
// text, it returns a locally administered fallback derived from the SoC
// (FallbackMAC of rev and seed) together with an error saying what was
// wrong, so that the caller logs it and the router still comes up.
func BaseMAC(b *boardfile.Board, flash FlashReader, rev uint32, seed []byte) (gnet.MAC, error) {
	mac, err := storedMAC(b, flash)
	if err != nil {
		fb := FallbackMAC(rev, seed)
		return fb, fmt.Errorf("%w: %v; using the locally administered %v, which changes if the SoC or the calibration data does",
			ErrBadMAC, err, net.HardwareAddr(fb[:]))
	}
	return mac, nil
}

func storedMAC(b *boardfile.Board, flash FlashReader) (gnet.MAC, error) {
	var mac gnet.MAC
	loc := b.MACAddr
	p, err := b.Part(loc.Part)
	if err != nil {
		return mac, err
	}
	n := int64(len(mac))
	if loc.Text {
		n = macTextLen
	}
	if loc.Offset < 0 || loc.Offset+n > p.Size || p.Offset+loc.Offset+n > b.Flash.Size {
		return mac, fmt.Errorf("MAC location %s+%#x (%d bytes) is outside the partition", loc.Part, loc.Offset, n)
	}
	buf := make([]byte, n)
	if err := flash(p.Offset+loc.Offset, buf); err != nil {
		return mac, fmt.Errorf("reading %s+%#x: %v", loc.Part, loc.Offset, err)
	}
	if loc.Text {
		hw, err := net.ParseMAC(string(buf))
		if err != nil || len(hw) != len(mac) {
			return mac, fmt.Errorf("%s+%#x holds %q, not a MAC address as text", loc.Part, loc.Offset, printable(buf))
		}
		copy(mac[:], hw)
	} else {
		copy(mac[:], buf)
	}
	if err := CheckMAC(mac); err != nil {
		return mac, fmt.Errorf("%s+%#x: %v", loc.Part, loc.Offset, err)
	}
	return mac, nil
}

// CheckMAC says why mac cannot be a port's station address: all zeros,
// all ones (erased flash) or a group (multicast) address.
func CheckMAC(mac gnet.MAC) error {
	switch {
	case mac == gnet.MAC{}:
		return fmt.Errorf("%v is all zeros", net.HardwareAddr(mac[:]))
	case mac == gnet.MAC{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}:
		return fmt.Errorf("%v is all ones (erased flash)", net.HardwareAddr(mac[:]))
	case mac[0]&1 != 0:
		return fmt.Errorf("%v is a multicast address", net.HardwareAddr(mac[:]))
	}
	return nil
}

// FallbackMAC derives a locally administered unicast address (IEEE 802
// U/L bit set, I/G bit clear) from the SoC's REV_ID and seed, the board's
// radio calibration data when it has some (per-unit data, so two routers
// of one model rarely share the fallback) or nothing. The result is
// stable across boots. It never ends in a way that overflows the WAN's
// base+1 into the next byte.
func FallbackMAC(rev uint32, seed []byte) gnet.MAC {
	h := fnv.New64a()
	h.Write([]byte{byte(rev >> 24), byte(rev >> 16), byte(rev >> 8), byte(rev)})
	h.Write(seed)
	s := h.Sum64()
	mac := gnet.MAC{0x02, byte(s >> 40), byte(s >> 32), byte(s >> 24), byte(s >> 16), byte(s >> 8)}
	mac[5] &^= 0x0f // room for the per-port increments
	return mac
}

func printable(b []byte) string {
	out := make([]byte, len(b))
	for i, c := range b {
		if c < 0x20 || c > 0x7e {
			c = '.'
		}
		out[i] = c
	}
	return string(out)
}
