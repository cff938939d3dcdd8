package fwimage

import (
	"bytes"
	"testing"
	"time"
)

func FuzzParseUImage(f *testing.F) {
	for _, p := range [][]byte{nil, []byte("x"), bytes.Repeat([]byte{0x5d, 0, 0, 0x80}, 64)} {
		b, err := UImage{Name: "gowrt", Load: 0x80100000, Entry: 0x801ef74c, Comp: "lzma", OS: "linux", Arch: "mips", Type: "kernel", Time: testTime}.Build(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add(make([]byte, 64))
	f.Fuzz(func(t *testing.T, b []byte) {
		u, payload, err := ParseUImage(b)
		if err != nil {
			return
		}
		again, err := u.Build(payload)
		if err != nil {
			t.Fatalf("accepted %+v does not build: %v", u, err)
		}
		if !bytes.Equal(again, b) {
			t.Fatalf("accepted image rebuilds differently")
		}
		if u.Time.Location() != time.UTC {
			t.Fatal("time not in UTC")
		}
	})
}

func FuzzParseTPLink(f *testing.F) {
	small := wdr4300
	small.FirmwareSize = 0x400
	for _, factory := range []bool{false, true} {
		for _, r := range []string{"", "US"} {
			c := small
			c.Region = r
			b, err := c.Build([]byte("lzma kernel bytes"), factory)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	f.Add(make([]byte, 0x200))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, kernel, err := ParseTPLink(b)
		if err != nil {
			return
		}
		again, err := h.Build(kernel, len(b) != TPLinkHeaderLen+len(kernel))
		if err != nil {
			t.Fatalf("accepted %+v does not build: %v", h, err)
		}
		if !bytes.Equal(again, b) {
			t.Fatal("accepted image rebuilds differently")
		}
	})
}
