package router

import (
	"errors"
	"strings"
	"testing"

	"github.com/gowrt/gowrt/board/ar71xx/boardfile"
	gnet "github.com/gowrt/gowrt/net"
)

// fakeFlash is a flash image with the given bytes at off, erased elsewhere.
func fakeFlash(size int64, off int64, content []byte) FlashReader {
	img := make([]byte, size)
	for i := range img {
		img[i] = 0xff
	}
	copy(img[off:], content)
	return func(o int64, p []byte) error {
		if o < 0 || o+int64(len(p)) > int64(len(img)) {
			return errors.New("outside")
		}
		copy(p, img[o:])
		return nil
	}
}

func macAt(t *testing.T, b *boardfile.Board) int64 {
	t.Helper()
	p, err := b.Part(b.MACAddr.Part)
	if err != nil {
		t.Fatal(err)
	}
	return p.Offset + b.MACAddr.Offset
}

// TestBaseMAC: a good address is read where the boardfile says (bytes on
// the TP-Link and ART boards, text on the RouterStation Pro); a bad one
// gives a clear error and a usable locally administered fallback.
func TestBaseMAC(t *testing.T) {
	good := gnet.MAC{0x14, 0xcc, 0x20, 0x01, 0x02, 0x03}
	for _, b := range boardfile.All {
		content := good[:]
		if b.MACAddr.Text {
			content = []byte("14:cc:20:01:02:03")
		}
		got, err := BaseMAC(b, fakeFlash(b.Flash.Size, macAt(t, b), content), b.Rev, nil)
		if err != nil || got != good {
			t.Errorf("%s: %v, %v; want %v", b.Name, got, err, good)
		}
	}
	for _, tc := range []struct {
		name    string
		b       *boardfile.Board
		content []byte
		want    string
	}{
		{"zero", boardfile.TLWDR4300, make([]byte, 6), "all zeros"},
		{"erased", boardfile.TLWDR4300, nil, "all ones"},
		{"multicast", boardfile.AP135, []byte{0x01, 0, 0x5e, 1, 2, 3}, "multicast"},
		{"text garbage", boardfile.RSPro, []byte("ethaddr=\x00\x01garbage"), "not a MAC address as text"},
		{"text multicast", boardfile.RSPro, []byte("ff:ff:ff:ff:ff:ff"), "all ones"},
	} {
		seed := []byte("calibration")
		got, err := BaseMAC(tc.b, fakeFlash(tc.b.Flash.Size, macAt(t, tc.b), tc.content), tc.b.Rev, seed)
		if !errors.Is(err, ErrBadMAC) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "locally administered") {
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.want)
		}
		if got != FallbackMAC(tc.b.Rev, seed) || CheckMAC(got) != nil || got[0]&2 == 0 {
			t.Errorf("%s: fallback %v is not the locally administered unicast FallbackMAC", tc.name, got)
		}
	}
	// A location outside the flash is an error, not a panic.
	b := *boardfile.TLWDR4300
	b.MACAddr.Offset = 1 << 30
	if _, err := BaseMAC(&b, fakeFlash(b.Flash.Size, 0, nil), b.Rev, nil); err == nil || !strings.Contains(err.Error(), "outside the partition") {
		t.Errorf("MAC beyond the partition: %v", err)
	}
}

// TestFallbackMAC: stable, locally administered, unicast, room for the
// per-port increments, and different for different calibration data.
func TestFallbackMAC(t *testing.T) {
	a, b := FallbackMAC(0x1120, []byte("unit A")), FallbackMAC(0x1120, []byte("unit B"))
	if a != FallbackMAC(0x1120, []byte("unit A")) {
		t.Error("not stable")
	}
	if a == b {
		t.Error("two calibrations, one fallback")
	}
	for _, m := range []gnet.MAC{a, b} {
		if m[0]&3 != 2 || m[5]&0x0f != 0 {
			t.Errorf("%x: want U/L set, I/G clear, low nibble free", m)
		}
	}
}

// TestName: the name linked in selects the boardfile entry; none gives
// a board that says how to build it properly.
func TestName(t *testing.T) {
	defer func(n string) { boardName = n }(boardName)
	boardName = ""
	if (Board{}).Name() != genericName {
		t.Error(Board{}.Name())
	}
	if _, err := (Board{}).Ports(); !errors.Is(err, ErrNoName) {
		t.Errorf("Ports without a name: %v", err)
	}
	boardName = "tl-wdr4300"
	if d, err := Description(); err != nil || d != boardfile.TLWDR4300 {
		t.Errorf("Description: %v %v", d, err)
	}
	boardName = "nonesuch"
	if _, err := Description(); err == nil || !strings.Contains(err.Error(), "nonesuch") {
		t.Errorf("unknown name: %v", err)
	}
}
