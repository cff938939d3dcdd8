package fwimage

import (
	"bytes"
	"crypto/md5"
	"encoding/binary"
	"strings"
	"testing"
)

// wdr4300 is the TL-WDR4300 v1 header as OpenWrt's ath79 builds it
// (HWID 0x43000001, rev 1, 8Mlzma) with gowrt's kernel addresses.
var wdr4300 = TPLink{
	Vendor: TPLinkVendor, Version: TPLinkVersion,
	HWID: TPLinkHWIDWDR4300v1, HWRev: 1,
	KernelLoad: 0x80100000, KernelEntry: 0x801ef74c,
	FirmwareSize: TPLink8MLZMA,
	FWVersion:    [3]uint16{1, 2, 3},
}

// Field by field at the offsets of mktplinkfw.c's packed struct
// fw_header, and the MD5 as mktplinkfw -i checks it: over the whole image
// with md5salt_normal in md5sum1's place.
func TestTPLinkGoldenHeader(t *testing.T) {
	kernel := bytes.Repeat([]byte{0x5d, 0, 0, 0x80}, 1000)
	for _, factory := range []bool{false, true} {
		c := wdr4300
		c.Region = "US"
		img, err := c.Build(kernel, factory)
		if err != nil {
			t.Fatal(err)
		}
		be := binary.BigEndian
		u32 := func(off int) uint32 { return be.Uint32(img[off:]) }
		str := func(off, n int) string { return strings.TrimRight(string(img[off:off+n]), "\x00") }
		wantLen := 0x200 + len(kernel)
		if factory {
			wantLen = 0x7c0000
		}
		for _, f := range []struct {
			name      string
			got, want any
		}{
			{"length", len(img), wantLen},
			{"0x00 version", u32(0x00), uint32(0x01000000)},
			{"0x04 vendor_name", str(0x04, 24), "TP-LINK Technologies"},
			{"0x1c fw_version", str(0x1c, 36), "ver. 1.0"},
			{"0x40 hw_id", u32(0x40), uint32(0x43000001)},
			{"0x44 hw_rev", u32(0x44), uint32(1)},
			{"0x48 region_code (US)", u32(0x48), uint32(1)},
			{"0x5c unk2", u32(0x5c), uint32(0)},
			{"0x60 md5sum2", string(img[0x60:0x70]), string(make([]byte, 16))},
			{"0x70 unk3", u32(0x70), uint32(0)},
			{"0x74 kernel_la", u32(0x74), uint32(0x80100000)},
			{"0x78 kernel_ep", u32(0x78), uint32(0x801ef74c)},
			{"0x7c fw_length", u32(0x7c), uint32(0x7c0000)},
			{"0x80 kernel_ofs", u32(0x80), uint32(0x200)},
			{"0x84 kernel_len", u32(0x84), uint32(len(kernel))},
			{"0x88 rootfs_ofs", u32(0x88), uint32(0x200 + len(kernel))},
			{"0x8c rootfs_len", u32(0x8c), uint32(0)},
			{"0x90 boot_ofs", u32(0x90), uint32(0)},
			{"0x94 boot_len", u32(0x94), uint32(0)},
			{"0x98 ver_hi.mid.lo", [3]uint16{be.Uint16(img[0x98:]), be.Uint16(img[0x9a:]), be.Uint16(img[0x9c:])}, [3]uint16{1, 2, 3}},
			{"0x120 region_str1", str(0x120, 32), "00000000;55530000;"},
			{"0x140 region_str2", str(0x140, 32), "55530000"},
			{"kernel at 0x200", string(img[0x200 : 0x200+len(kernel)]), string(kernel)},
		} {
			if f.got != f.want {
				t.Errorf("factory=%v %s: %v, want %v", factory, f.name, f.got, f.want)
			}
		}
		for i, c := range img[0x200+len(kernel):] {
			if c != 0xff {
				t.Fatalf("factory padding byte %#x is %#x, not 0xff", 0x200+len(kernel)+i, c)
			}
		}
		// mktplinkfw's md5salt_normal, written out from the source.
		salt := []byte{0xdc, 0xd7, 0x3a, 0xa5, 0xc3, 0x95, 0x98, 0xfb, 0xdd, 0xf9, 0xe7, 0xf4, 0x0e, 0xae, 0x47, 0x38}
		check := append([]byte{}, img...)
		copy(check[0x4c:], salt)
		if sum := md5.Sum(check); !bytes.Equal(sum[:], img[0x4c:0x5c]) {
			t.Errorf("factory=%v md5sum1 % x, want % x", factory, img[0x4c:0x5c], sum)
		}
	}
}

func TestTPLinkRoundTrip(t *testing.T) {
	for _, c := range []struct {
		name string
		t    TPLink
	}{
		{"wdr4300", wdr4300},
		{"wdr3600 OpenWrt-style vendor", TPLink{Vendor: "OpenWrt", Version: "r1", HWID: TPLinkHWIDWDR3600v1, HWRev: 1, KernelLoad: 0x80100000, KernelEntry: 0x80100400, FirmwareSize: TPLink8MLZMA}},
		{"archer c7 v2 EU", TPLink{Vendor: TPLinkVendor, Version: TPLinkVersion, HWID: TPLinkHWIDArcherC7v2, HWRev: 1, Region: "EU", KernelLoad: 0x80100000, KernelEntry: 0x80100400, FirmwareSize: TPLink16MLZMA}},
		{"full-length strings", TPLink{Vendor: strings.Repeat("v", 24), Version: strings.Repeat("w", 36), FirmwareSize: 0x10000}},
	} {
		for _, factory := range []bool{false, true} {
			kernel := bytes.Repeat([]byte("lzma kernel "), 300)
			img, err := c.t.Build(kernel, factory)
			if err != nil {
				t.Fatal(err)
			}
			got, k, err := ParseTPLink(img)
			if err != nil {
				t.Fatalf("%s factory=%v: %v", c.name, factory, err)
			}
			if got != c.t || !bytes.Equal(k, kernel) {
				t.Fatalf("%s factory=%v: parsed %+v, want %+v", c.name, factory, got, c.t)
			}
		}
	}
}

func TestTPLinkRefuses(t *testing.T) {
	small := wdr4300
	small.FirmwareSize = 0x1000
	if _, err := small.Build(make([]byte, 0x1000-0x200+1), true); err == nil || !strings.Contains(err.Error(), "4097 bytes") || !strings.Contains(err.Error(), "4096 bytes") {
		t.Errorf("kernel one byte too big: %v, want both sizes named", err)
	}
	bad := wdr4300
	bad.Region = "XX"
	if _, err := bad.Build([]byte{1}, false); err == nil {
		t.Error("unknown region accepted")
	}
	good, err := wdr4300.Build([]byte("kernel"), false)
	if err != nil {
		t.Fatal(err)
	}
	resum := func(b []byte, salt [16]byte) []byte {
		copy(b[tpMD5Sum1:], salt[:])
		s := md5.Sum(b)
		copy(b[tpMD5Sum1:], s[:])
		return b
	}
	mod := func(f func(b []byte) []byte) []byte { return f(append([]byte{}, good...)) }
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"short", good[:0x1ff], "shorter than a TP-Link header"},
		{"version", mod(func(b []byte) []byte { b[0] = 2; return resum(b, tplinkSaltNormal) }), "header version"},
		{"md5", mod(func(b []byte) []byte { b[len(b)-1] ^= 1; return b }), "MD5"},
		{"wrong salt", mod(func(b []byte) []byte { return resum(b, tplinkSaltBoot) }), "MD5"},
		{"boot loader", mod(func(b []byte) []byte { b[tpBootLen+3] = 1; return resum(b, tplinkSaltBoot) }), "boot loader"},
		{"rootfs", mod(func(b []byte) []byte { b[tpRootfsLen+3] = 1; return resum(b, tplinkSaltNormal) }), "root file system"},
		{"truncated", mod(func(b []byte) []byte { return resum(b[:len(b)-1], tplinkSaltNormal) }), "does not fit"},
		{"md5sum2 set", mod(func(b []byte) []byte { b[tpMD5Sum2] = 1; return resum(b, tplinkSaltNormal) }), "fields gowrt does not know"},
	} {
		if _, _, err := ParseTPLink(c.b); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
	}
}
