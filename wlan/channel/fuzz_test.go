package channel

import (
	"testing"

	"github.com/gowrt/gowrt/wlan/ie"
)

// FuzzFromOperation derives channels from arbitrary element values: no
// panic, and an accepted channel has its primary 20 MHz channel inside
// the (first segment of the) channel it reports.
func FuzzFromOperation(f *testing.F) {
	f.Add(uint8(1), uint8(36), uint8(36), uint8(1), true, uint8(1), uint8(42), uint8(0), uint8(0), true, true)
	f.Add(uint8(0), uint8(6), uint8(6), uint8(3), true, uint8(0), uint8(0), uint8(0), uint8(0), true, false)
	f.Fuzz(func(t *testing.T, band, ds, primary, offset uint8, anyWidth bool, width, c0, c1, ccfs2 uint8, haveHT, haveVHT bool) {
		var h *ie.HTOperation
		if haveHT {
			h = &ie.HTOperation{Primary: primary, SecondaryOffset: offset & 3, AnyWidth: anyWidth, CCFS2: ccfs2}
		}
		var v *ie.VHTOperation
		if haveVHT {
			v = &ie.VHTOperation{ChannelWidth: width % 4, CCFS0: c0, CCFS1: c1}
		}
		c, err := FromOperation(Band(band%2), ds, h, v)
		if err != nil {
			return
		}
		half := c.Width.MHz() / 2
		p, center := c.PrimaryFreq(), c.CenterFreq1()
		if p == 0 || center == 0 || p-10 < center-half || p+10 > center+half {
			t.Fatalf("%+v: primary %d MHz outside %d ± %d", c, p, center, half)
		}
	})
}
