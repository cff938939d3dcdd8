package firmware

import (
	"testing"

	"github.com/gowrt/gowrt/wlan/radio"
)

// TestHTMode: OpenWrt's htmode values onto the AP's HT configuration and
// the channel's width and secondary-channel side.
func TestHTMode(t *testing.T) {
	for _, c := range []struct {
		mode        string
		ch          uint8
		band5       bool
		on, w40, up bool
	}{
		{"NOHT", 6, false, false, false, false},
		{"HT20", 6, false, true, false, false},
		{"", 11, false, true, false, false},
		{"VHT20", 36, true, true, false, false},
		{"HT40+", 1, false, true, true, true},
		{"HT40-", 11, false, true, true, false},
		{"HT40", 1, false, true, true, true},
		{"HT40", 7, false, true, true, true},
		{"HT40", 8, false, true, true, false},
		{"HT40", 36, true, true, true, true},
		{"HT40", 40, true, true, true, false},
		{"VHT80", 44, true, true, true, true},
		{"HE40", 153, true, true, true, false},
		{"HT40", 149, true, true, true, true},
	} {
		ch := radio.Channel{Number: c.ch, Band5G: c.band5}
		ht, on := htConfig(c.mode, &ch)
		if on != c.on || ht.Width40 != c.w40 || ch.Width40 != c.w40 || ht.Above != c.up || ch.Above != c.up {
			t.Errorf("%q on channel %d: on %v, HT %+v, channel %+v; want on %v, 40 MHz %v, above %v",
				c.mode, c.ch, on, ht, ch, c.on, c.w40, c.up)
		}
		if on && (!ht.SGI || ht.Streams != 2) {
			t.Errorf("%q: %+v, want short GI and 2 streams", c.mode, ht)
		}
	}
}
