package part_test

import (
	"encoding/binary"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/gowrt/gowrt/flash/part"
)

const mib = 1 << 20

func TestParseMtdparts(t *testing.T) {
	for _, tc := range []struct {
		in   string
		size int64
		dev  string
		want []part.Partition
	}{
		{"spi0.0:128k(u-boot)ro,64k(u-boot-env),7936k(firmware),64k(art)ro", 8 * mib, "spi0.0", []part.Partition{
			{"u-boot", 0, 128 << 10, true},
			{"u-boot-env", 128 << 10, 64 << 10, false},
			{"firmware", 192 << 10, 7936 << 10, false},
			{"art", 8*mib - 64<<10, 64 << 10, true},
		}},
		{"mtdparts=ar7240-nor0:256k(u-boot)ro,64k(u-boot-env)ro,-(firmware)", 4 * mib, "ar7240-nor0", []part.Partition{
			{"u-boot", 0, 256 << 10, true},
			{"u-boot-env", 256 << 10, 64 << 10, true},
			{"firmware", 320 << 10, 4*mib - 320<<10, false},
		}},
		{"spi0.0:0x10000@0x7f0000(art)ro,0x20000@0(boot)rolk", 8 * mib, "spi0.0", []part.Partition{
			{"art", 0x7f0000, 0x10000, true},
			{"boot", 0, 0x20000, true},
		}},
		{"flash:1M,1m,-", 4 * mib, "flash", []part.Partition{
			{"Partition_000", 0, mib, false},
			{"Partition_001", mib, mib, false},
			{"Partition_002", 2 * mib, 2 * mib, false},
		}},
		{"nor:010k(oct)", mib, "nor", []part.Partition{{"oct", 0, 8 << 10, false}}},
		{"dev:with:colons:64k(a:b)", mib, "dev:with:colons", []part.Partition{{"a:b", 0, 64 << 10, false}}},
	} {
		dev, parts, err := part.ParseMtdparts(tc.in, tc.size)
		if err != nil || dev != tc.dev || !reflect.DeepEqual(parts, tc.want) {
			t.Errorf("%q:\n got %q %v %v\nwant %q %v", tc.in, dev, parts, err, tc.dev, tc.want)
		}
	}
}

func TestParseMtdpartsErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"spi0.0:128k(a),64k@64k(b)", "overlaps"},
		{"spi0.0:4m(a),5m(b)", "past the end"},
		{"spi0.0:-(a),64k(b)", "fill-up"},
		{"spi0.0:64k(a", "closing"},
		{"spi0.0:64k()", "empty name"},
		{"spi0.0:64k(a)rw", "unexpected"},
		{"spi0.0:", "want a number"},
		{"128k(u-boot)", "mtd-id"},
		{":128k(u-boot)", "mtd-id"},
		{"spi0.0:0(a)", "zero size"},
		{"spi0.0:64k(a),64k(a)", "two partitions named"},
		{"spi0.0:99999999999999999999k", "too large"},
		{"spi0.0:90000000000000000k", "too large"},
		{"a:64k;b:64k", "several devices"},
		{"spi0.0:64k@8m(a)", "past the end"},
		{"spi0.0:-@8m", "fill-up"},
	} {
		_, _, err := part.ParseMtdparts(tc.in, 8*mib)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want an error with %q", tc.in, err, tc.want)
		}
	}
}

func FuzzParseMtdparts(f *testing.F) {
	for _, s := range []string{
		"spi0.0:128k(u-boot)ro,64k(u-boot-env),7936k(firmware),64k(art)ro",
		"mtdparts=spi0.0:256k(u-boot)ro,-(firmware)",
		"x:0x10000@0x7f0000(art)rolkslc,1M@0",
		"a:010,0x,-@1k",
	} {
		f.Add(s, int64(8*mib))
	}
	f.Fuzz(func(t *testing.T, s string, size int64) {
		dev, parts, err := part.ParseMtdparts(s, size)
		if err != nil {
			return
		}
		if dev == "" || len(parts) == 0 {
			t.Fatalf("%q: ok with device %q and %d partitions", s, dev, len(parts))
		}
		for i, p := range parts {
			if p.Offset < 0 || p.Size <= 0 || p.End() > size || p.End() < p.Offset {
				t.Fatalf("%q: partition %v outside %#x", s, p, size)
			}
			for _, q := range parts[:i] {
				if p.Offset < q.End() && q.Offset < p.End() {
					t.Fatalf("%q: %v overlaps %v", s, p, q)
				}
			}
		}
	})
}

// fisEntry builds a 256-byte FIS directory entry from the documented
// layout (Linux redboot.c struct fis_image_desc).
func fisEntry(o binary.ByteOrder, name string, flashBase, memBase, size, entry, dataLen uint32) []byte {
	e := make([]byte, 256)
	copy(e, name)
	o.PutUint32(e[16:], flashBase)
	o.PutUint32(e[20:], memBase)
	o.PutUint32(e[24:], size)
	o.PutUint32(e[28:], entry)
	o.PutUint32(e[32:], dataLen)
	return e
}

// rsproDir is a RouterStation Pro-style directory (16 MiB flash mapped at
// 0xbf000000; layout as OpenWrt documents the board's RedBoot: RedBoot,
// rootfs, vmlinux, FIS directory, RedBoot config), listed out of order,
// with an unused slot and the end marker.
func rsproDir(o binary.ByteOrder) []byte {
	var d []byte
	d = append(d, fisEntry(o, "RedBoot", 0xbf000000, 0xbf000000, 0x40000, 0, 0x40000)...)
	d = append(d, fisEntry(o, "vmlinux.gz", 0xbfe80000, 0x80060000, 0x140000, 0x80060000, 0x100000)...)
	unused := fisEntry(o, "", 0, 0, 0, 0, 0)
	unused[0], unused[1] = 0xff, 0x00
	d = append(d, unused...)
	d = append(d, fisEntry(o, "rootfs", 0xbf040000, 0xbf040000, 0xe40000, 0, 0xe40000)...)
	d = append(d, fisEntry(o, "FIS directory", 0xbffc0000, 0xbffc0000, 0x3f000, 0, 0)...)
	d = append(d, fisEntry(o, "RedBoot config", 0xbffff000, 0xbffff000, 0x1000, 0, 0)...)
	end := make([]byte, 256)
	for i := range end {
		end[i] = 0xff
	}
	d = append(d, end...)
	d = append(d, fisEntry(o, "after-end", 0xbf000000, 0, 0x1000, 0, 0)...) // ignored
	return d
}

func TestParseFIS(t *testing.T) {
	want := []part.Partition{
		{"RedBoot", 0, 0x40000, false},
		{"rootfs", 0x40000, 0xe40000, false},
		{"vmlinux.gz", 0xe80000, 0x140000, false},
		{"FIS directory", 0xfc0000, 0x3f000, false},
		{"RedBoot config", 0xfff000, 0x1000, false},
	}
	for _, be := range []bool{true, false} {
		var o binary.ByteOrder = binary.LittleEndian
		if be {
			o = binary.BigEndian
		}
		parts, err := part.ParseFIS(rsproDir(o), 16*mib, be)
		if err != nil || !reflect.DeepEqual(parts, want) {
			t.Errorf("be=%v: %v %v", be, parts, err)
		}
		if p, err := part.Find(parts, "rootfs"); err != nil || p.Offset != 0x40000 {
			t.Errorf("Find rootfs: %v %v", p, err)
		}
		// Read with the wrong byte order: refused with a hint.
		if _, err := part.ParseFIS(rsproDir(o), 16*mib, !be); err == nil || !strings.Contains(err.Error(), "byte order") {
			t.Errorf("be=%v read swapped: %v", be, err)
		}
	}
	if _, err := part.Find(nil, "art"); !errors.Is(err, part.ErrNotFound) {
		t.Errorf("Find in nothing: %v", err)
	}
}

func TestParseFISErrors(t *testing.T) {
	o := binary.BigEndian
	ff := make([]byte, 512)
	for i := range ff {
		ff[i] = 0xff
	}
	bad := fisEntry(o, "x\x01y", 0, 0, 0x1000, 0, 0)
	for _, tc := range []struct {
		name string
		dir  []byte
		size int64
		want string
	}{
		{"erased", ff, 16 * mib, "empty directory"},
		{"zeros", make([]byte, 512), 16 * mib, "empty name"},
		{"short", make([]byte, 100), 16 * mib, "no directory entries"},
		{"overrun", fisEntry(o, "big", 0xbff00000, 0, 0x200000, 0, 0), 16 * mib, "does not fit"},
		{"zero size", fisEntry(o, "nil", 0xbf000000, 0, 0, 0, 0), 16 * mib, "does not fit"},
		{"name", bad, 16 * mib, "printable"},
		{"dup", append(fisEntry(o, "a", 0, 0, 0x1000, 0, 0), fisEntry(o, "a", 0x1000, 0, 0x1000, 0, 0)...), 16 * mib, "two entries"},
		{"size", ff, 3 * mib, "power of two"},
	} {
		if _, err := part.ParseFIS(tc.dir, tc.size, true); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}

func FuzzParseFIS(f *testing.F) {
	f.Add(rsproDir(binary.BigEndian), int64(16*mib), true)
	f.Add(rsproDir(binary.LittleEndian), int64(16*mib), false)
	f.Add(make([]byte, 256), int64(mib), true)
	f.Fuzz(func(t *testing.T, dir []byte, size int64, be bool) {
		parts, err := part.ParseFIS(dir, size, be)
		if err != nil {
			return
		}
		for i, p := range parts {
			if p.Name == "" || p.Offset < 0 || p.Size <= 0 || p.End() > size {
				t.Fatalf("entry %v outside %#x", p, size)
			}
			if i > 0 && parts[i-1].Offset > p.Offset {
				t.Fatalf("not sorted: %v", parts)
			}
		}
	})
}
