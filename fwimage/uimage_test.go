package fwimage

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ulikunitz/xz/lzma"
)

// testTime is the image timestamp: 2026-01-01 00:00:00 UTC.
var testTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// mkimage runs U-Boot's mkimage with the timestamp fixed to ts.
func mkimage(t *testing.T, ts time.Time, args ...string) string {
	t.Helper()
	cmd := exec.Command("mkimage", args...)
	cmd.Env = append(os.Environ(), "SOURCE_DATE_EPOCH="+strconv.FormatInt(ts.Unix(), 10))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("mkimage %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// The firmware ELF of examples/hello and examples/router (malta-be link
// layout) → Raw → LZMA → uImage, checked with u-boot-tools: mkimage -l
// reads our header, dumpimage extracts our payload, which decompresses
// (with the lzma package and with xz) to the ELF's load segments, and
// mkimage makes the same file from the same payload.
func TestFirmwareUImage(t *testing.T) {
	for _, name := range []string{"hello", "router"} {
		t.Run(name, func(t *testing.T) {
			e := firmwareELF(t, "./examples/"+name)
			raw, load, entry, err := Raw(e)
			if err != nil {
				t.Fatal(err)
			}
			checkRawMatchesELF(t, e, raw, load)
			z, err := LZMA(raw)
			if err != nil {
				t.Fatal(err)
			}
			u := UImage{Name: "gowrt " + name, Load: load, Entry: entry, Comp: "lzma", OS: "linux", Arch: "mips", Type: "kernel", Time: testTime}
			img, err := u.Build(z)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: raw %d bytes (%.2f MiB), lzma %d bytes (%.2f MiB, %.1f%% of raw), uImage %d bytes; load %#x entry %#x",
				name, len(raw), float64(len(raw))/(1<<20), len(z), float64(len(z))/(1<<20), 100*float64(len(z))/float64(len(raw)), len(img), load, entry)

			dir := t.TempDir()
			ours := filepath.Join(dir, "ours.uimg")
			if err := os.WriteFile(ours, img, 0o644); err != nil {
				t.Fatal(err)
			}
			list := mkimage(t, testTime, "-l", ours)
			t.Logf("mkimage -l:\n%s", list)
			for _, want := range []string{
				"Image Name:   " + u.Name + "\n",
				fmt.Sprintf("Load Address: %08x\n", load),
				fmt.Sprintf("Entry Point:  %08x\n", entry),
				fmt.Sprintf("Data Size:    %d Bytes", len(z)),
				"MIPS Linux Kernel Image (lzma compressed)",
			} {
				if !strings.Contains(list, want) {
					t.Errorf("mkimage -l does not print %q", want)
				}
			}

			payload := filepath.Join(dir, "payload.lzma")
			// u-boot-tools 2023.01 (Debian bookworm) takes the image as the
			// last argument; later versions also take it with -i.
			if out, err := exec.Command("dumpimage", "-T", "kernel", "-p", "0", "-o", payload, ours).CombinedOutput(); err != nil {
				t.Fatalf("dumpimage: %v\n%s", err, out)
			}
			got := readFile(t, payload)
			if !bytes.Equal(got, z) {
				t.Fatalf("dumpimage extracted %d bytes, not the %d-byte LZMA payload", len(got), len(z))
			}
			r, err := lzma.NewReader(bytes.NewReader(got))
			if err != nil {
				t.Fatal(err)
			}
			back, err := io.ReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
			checkRawMatchesELF(t, e, back, load)
			if !bytes.Equal(back, raw) {
				t.Fatal("lzma package: payload does not decompress to the raw image")
			}
			back, err = exec.Command("xz", "--format=lzma", "-d", "-c", payload).Output()
			if err != nil {
				t.Fatalf("xz --format=lzma -d: %v", err)
			}
			if !bytes.Equal(back, raw) {
				t.Fatalf("xz: payload decompresses to %d bytes, not the %d-byte raw image", len(back), len(raw))
			}

			theirs := filepath.Join(dir, "mkimage.uimg")
			mkimage(t, testTime, "-A", "mips", "-O", "linux", "-T", "kernel", "-C", "lzma",
				"-a", fmt.Sprintf("%#x", load), "-e", fmt.Sprintf("%#x", entry), "-n", u.Name, "-d", payload, theirs)
			if m := readFile(t, theirs); !bytes.Equal(m[:UImageHeaderLen], img[:UImageHeaderLen]) || !bytes.Equal(m, img) {
				t.Fatalf("mkimage's header differs from ours:\nmkimage % x\nours    % x", m[:UImageHeaderLen], img[:UImageHeaderLen])
			}

			pu, pp, err := ParseUImage(img)
			if err != nil {
				t.Fatal(err)
			}
			if pu != u || !bytes.Equal(pp, z) {
				t.Fatalf("ParseUImage: %+v, want %+v", pu, u)
			}
		})
	}
}

// The numeric OS/arch/type/compression codes are the ones mkimage writes
// for the same names.
func TestUImageCodesMatchMkimage(t *testing.T) {
	payload := []byte("gowrt payload\x00\x01\x02")
	dir := t.TempDir()
	in := filepath.Join(dir, "payload")
	if err := os.WriteFile(in, payload, 0o644); err != nil {
		t.Fatal(err)
	}
	ts := time.Date(2030, 6, 1, 12, 0, 0, 0, time.UTC)
	for i, c := range []UImage{
		{Name: "none", Comp: "none", OS: "linux", Arch: "mips", Type: "kernel", Load: 0x80060000, Entry: 0x80060000},
		{Name: "gzip firmware mips64", Comp: "gzip", OS: "linux", Arch: "mips64", Type: "firmware"},
		{Name: "bzip2 standalone", Comp: "bzip2", OS: "linux", Arch: "mips", Type: "standalone", Load: 1, Entry: 2},
		{Name: "lzo", Comp: "lzo", OS: "linux", Arch: "mips", Type: "kernel"},
		{Name: "exactly thirty-two bytes long!!!", Comp: "lzma", OS: "linux", Arch: "mips", Type: "kernel"},
	} {
		c.Time = ts
		ours, err := c.Build(payload)
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, fmt.Sprint(i))
		mkimage(t, ts, "-A", c.Arch, "-O", c.OS, "-T", c.Type, "-C", c.Comp,
			"-a", fmt.Sprintf("%#x", c.Load), "-e", fmt.Sprintf("%#x", c.Entry), "-n", c.Name, "-d", in, out)
		if theirs := readFile(t, out); !bytes.Equal(theirs, ours) {
			t.Errorf("%+v:\nmkimage % x\nours    % x", c, theirs[:UImageHeaderLen], ours[:UImageHeaderLen])
		}
	}
}

func TestUImageBuildRefuses(t *testing.T) {
	ok := UImage{Name: "x", Comp: "lzma", OS: "linux", Arch: "mips", Type: "kernel"}
	for _, c := range []struct {
		u    UImage
		want string
	}{
		{func() UImage { u := ok; u.Name = strings.Repeat("n", 33); return u }(), "at most 32"},
		{func() UImage { u := ok; u.Name = "a\x00b"; return u }(), "no NUL"},
		{func() UImage { u := ok; u.Comp = "xz"; return u }(), "compression \"xz\" unknown"},
		{func() UImage { u := ok; u.Arch = "arm"; return u }(), "arch"},
		{func() UImage { u := ok; u.Time = time.Date(1960, 1, 1, 0, 0, 0, 0, time.UTC); return u }(), "ih_time"},
	} {
		if _, err := c.u.Build([]byte("p")); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error containing %q", c.u, err, c.want)
		}
	}
}

func TestParseUImageRefuses(t *testing.T) {
	good, err := UImage{Name: "gowrt", Load: 0x80100000, Entry: 0x80100400, Comp: "lzma", OS: "linux", Arch: "mips", Type: "kernel", Time: testTime}.Build([]byte("payload bytes"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := ParseUImage(good); err != nil {
		t.Fatal(err)
	}
	mod := func(f func(b []byte) []byte) []byte { return f(append([]byte{}, good...)) }
	rehash := func(b []byte) []byte {
		binary.BigEndian.PutUint32(b[ihHCRC:], 0)
		binary.BigEndian.PutUint32(b[ihHCRC:], crc32IEEE(b[:UImageHeaderLen]))
		return b
	}
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"short", good[:63], "shorter than a uImage header"},
		{"magic", mod(func(b []byte) []byte { b[0] ^= 1; return b }), "magic"},
		{"header CRC", mod(func(b []byte) []byte { b[ihLoad] ^= 1; return b }), "header CRC"},
		{"truncated", good[:len(good)-1], "data bytes"},
		{"trailing", append(append([]byte{}, good...), 0xff), "data bytes"},
		{"data CRC", mod(func(b []byte) []byte { b[len(b)-1] ^= 1; return b }), "data CRC"},
		{"unknown OS", mod(func(b []byte) []byte { b[ihOS] = 99; return rehash(b) }), "OS code 99"},
		{"name garbage", mod(func(b []byte) []byte { b[ihName+31] = 'x'; return rehash(b) }), "after its terminating NUL"},
	} {
		if _, _, err := ParseUImage(c.b); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
	}
}

// The .lzma header: properties lc=1 lp=2 pb=2 ((pb*5+lp)*9+lc = 109), the
// dictionary a power of two covering the data (64 KiB..8 MiB), the
// uncompressed size, little-endian.
func TestLZMAHeader(t *testing.T) {
	for _, c := range []struct{ n, dict int }{{1, 64 << 10}, {100 << 10, 128 << 10}, {3 << 20, 4 << 20}, {9 << 20, 8 << 20}} {
		raw := bytes.Repeat([]byte("gowrt\x00\x00\x01"), c.n/8+1)[:c.n]
		z, err := LZMA(raw)
		if err != nil {
			t.Fatal(err)
		}
		if z[0] != 109 || binary.LittleEndian.Uint32(z[1:]) != uint32(c.dict) || binary.LittleEndian.Uint64(z[5:]) != uint64(c.n) {
			t.Errorf("%d bytes: header % x, want props 0x6d, dict %#x, size %#x", c.n, z[:13], c.dict, c.n)
		}
	}
	if _, err := LZMA(nil); err == nil {
		t.Error("LZMA of nothing accepted")
	}
}

func TestFits(t *testing.T) {
	img := make([]byte, 0x7c0001)
	if err := Fits(img[:0x7c0000], 0x7c0000); err != nil {
		t.Errorf("an image exactly the partition's size: %v", err)
	}
	err := Fits(img, 0x7c0000)
	if err == nil {
		t.Fatal("an image one byte too big fits")
	}
	for _, want := range []string{"8126465 bytes", "8126464 bytes", "1 bytes too big"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v: does not say %q", err, want)
		}
	}
	if err := Fits(img[:1], 0); err == nil {
		t.Error("a zero-size partition accepted")
	}
}
