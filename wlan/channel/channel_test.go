package channel

import (
	"testing"

	"github.com/gowrt/gowrt/wlan/ie"
)

func ht(primary, offset uint8) *ie.HTOperation {
	return &ie.HTOperation{Primary: primary, SecondaryOffset: offset, AnyWidth: offset != ie.SecondaryNone}
}

func vht(w, c0, c1 uint8) *ie.VHTOperation {
	return &ie.VHTOperation{ChannelWidth: w, CCFS0: c0, CCFS1: c1}
}

func TestFromOperation(t *testing.T) {
	cases := []struct {
		name        string
		band        Band
		ds          uint8
		ht          *ie.HTOperation
		vht         *ie.VHTOperation
		width       Width
		primary, f1 int
		f2          int
		err         error
	}{
		{"legacy ch6", Band2GHz, 6, nil, nil, Width20, 2437, 2437, 0, nil},
		{"ch14", Band2GHz, 14, nil, nil, Width20, 2484, 2484, 0, nil},
		{"ht20 ch11", Band2GHz, 11, ht(11, ie.SecondaryNone), nil, Width20, 2462, 2462, 0, nil},
		{"ht40+ ch1", Band2GHz, 1, ht(1, ie.SecondaryAbove), nil, Width40, 2412, 2422, 0, nil},
		{"ht40- ch9", Band2GHz, 9, ht(9, ie.SecondaryBelow), nil, Width40, 2452, 2442, 0, nil},
		{"ht40+ ch11 leaves the band", Band2GHz, 11, ht(11, ie.SecondaryAbove), nil, 0, 0, 0, 0, ErrSecondary},
		{"ht40- ch14 has no pair", Band2GHz, 14, ht(14, ie.SecondaryBelow), nil, 0, 0, 0, 0, ErrSecondary},
		{"reserved secondary offset", Band5GHz, 36, ht(36, 2), nil, 0, 0, 0, 0, ErrSecondary},
		{"ht40- ch1", Band2GHz, 1, ht(1, ie.SecondaryBelow), nil, 0, 0, 0, 0, ErrSecondary},
		{"ds mismatch", Band2GHz, 1, ht(6, ie.SecondaryNone), nil, 0, 0, 0, 0, ErrDSMismatch},
		{"no primary", Band5GHz, 0, nil, nil, 0, 0, 0, 0, ErrNoPrimary},
		{"ch 15 in 2.4", Band2GHz, 15, nil, nil, 0, 0, 0, 0, ErrBadChannel},
		{"vht on 2.4 ignored", Band2GHz, 1, ht(1, ie.SecondaryAbove), vht(1, 42, 0), Width40, 2412, 2422, 0, nil},
		{"vht20/40", Band5GHz, 36, ht(36, ie.SecondaryAbove), vht(0, 0, 0), Width40, 5180, 5190, 0, nil},
		{"vht80 ch36", Band5GHz, 36, ht(36, ie.SecondaryAbove), vht(1, 42, 0), Width80, 5180, 5210, 0, nil},
		{"vht80 ch40", Band5GHz, 40, ht(40, ie.SecondaryBelow), vht(1, 42, 0), Width80, 5200, 5210, 0, nil},
		{"vht80 ch48", Band5GHz, 48, ht(48, ie.SecondaryBelow), vht(1, 42, 0), Width80, 5240, 5210, 0, nil},
		{"vht80 ch149", Band5GHz, 149, ht(149, ie.SecondaryAbove), vht(1, 155, 0), Width80, 5745, 5775, 0, nil},
		{"vht80 wrong secondary", Band5GHz, 44, ht(44, ie.SecondaryBelow), vht(1, 42, 0), 0, 0, 0, 0, ErrPrimaryPos},
		{"vht80 primary outside", Band5GHz, 100, ht(100, ie.SecondaryAbove), vht(1, 42, 0), 0, 0, 0, 0, ErrPrimaryPos},
		{"vht160 new encoding", Band5GHz, 36, ht(36, ie.SecondaryAbove), vht(1, 42, 50), Width160, 5180, 5250, 0, nil},
		{"vht160 ch64", Band5GHz, 64, ht(64, ie.SecondaryBelow), vht(1, 58, 50), Width160, 5320, 5250, 0, nil},
		{"vht160 deprecated", Band5GHz, 52, ht(52, ie.SecondaryAbove), vht(2, 50, 0), Width160, 5260, 5250, 0, nil},
		{"vht80+80", Band5GHz, 36, ht(36, ie.SecondaryAbove), vht(1, 42, 155), Width80P80, 5180, 5210, 5775, nil},
		{"vht80+80 deprecated", Band5GHz, 36, ht(36, ie.SecondaryAbove), vht(3, 42, 106), Width80P80, 5180, 5210, 5530, nil},
		{"vht segments overlap", Band5GHz, 36, ht(36, ie.SecondaryAbove), vht(1, 42, 46), 0, 0, 0, 0, ErrSegments},
		{"vht80 over ht20", Band5GHz, 36, ht(36, ie.SecondaryNone), vht(1, 42, 0), 0, 0, 0, 0, ErrSegments},
		{"vht without ht", Band5GHz, 36, nil, vht(1, 42, 0), 0, 0, 0, 0, ErrVHTWithoutHT},
	}
	for _, tc := range cases {
		c, err := FromOperation(tc.band, tc.ds, tc.ht, tc.vht)
		if err != tc.err {
			t.Errorf("%s: err %v, want %v", tc.name, err, tc.err)
			continue
		}
		if err != nil {
			continue
		}
		if c.Width != tc.width || c.PrimaryFreq() != tc.primary || c.CenterFreq1() != tc.f1 || c.CenterFreq2() != tc.f2 {
			t.Errorf("%s: got %v primary %d center %d/%d, want %v %d %d/%d", tc.name, c.Width, c.PrimaryFreq(),
				c.CenterFreq1(), c.CenterFreq2(), tc.width, tc.primary, tc.f1, tc.f2)
		}
	}
}

// TestHTCCFS2 takes the 160 MHz second segment from HT Operation when VHT
// Operation's CCFS1 is zero (extended NSS bandwidth signalling).
func TestHTCCFS2(t *testing.T) {
	h := ht(36, ie.SecondaryAbove)
	h.CCFS2 = 50
	c, err := FromOperation(Band5GHz, 36, h, vht(1, 42, 0))
	if err != nil || c.Width != Width160 || c.CenterFreq1() != 5250 {
		t.Fatalf("got %+v %v", c, err)
	}
}
