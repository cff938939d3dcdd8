package sysupgrade_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gowrt/gowrt/sysupgrade"
)

// TestBootCheckMkimage: an image made by u-boot-tools' mkimage passes, and
// the test's own builder makes the same bytes.
func TestBootCheckMkimage(t *testing.T) {
	dir := t.TempDir()
	payload := randBytes(5, 7777)
	in, out := filepath.Join(dir, "payload"), filepath.Join(dir, "uImage")
	if err := os.WriteFile(in, payload, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("mkimage", "-A", "mips", "-O", "linux", "-T", "kernel", "-C", "lzma",
		"-a", "0x80060000", "-e", "0x80060000", "-n", "gowrt", "-d", in, out)
	cmd.Env = append(os.Environ(), "SOURCE_DATE_EPOCH=1700000000") // the test builder's ih_time
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mkimage: %v\n%s", err, b)
	}
	img, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	part := append(img, bytes.Repeat([]byte{0xff}, 4096)...) // the partition's erased tail
	if err := sysupgrade.CheckUImage(part); err != nil {
		t.Fatalf("mkimage's image: %v", err)
	}
	if mine := mkUImage(payload, "gowrt"); !bytes.Equal(mine, img) {
		t.Fatalf("test builder's header\n% x\nmkimage's\n% x", mine[:64], img[:64])
	}
	if b, err := exec.Command("mkimage", "-l", out).CombinedOutput(); err != nil || !bytes.Contains(b, []byte("MIPS Linux Kernel Image (lzma compressed)")) {
		t.Fatalf("mkimage -l: %v\n%s", err, b)
	}
}

func TestBootCheckRefuses(t *testing.T) {
	good := append(mkUImage(randBytes(6, 2000), "gowrt"), 0xff, 0xff)
	if !sysupgrade.BootCheck(good) {
		t.Fatal(sysupgrade.CheckUImage(good))
	}
	for _, c := range []struct {
		name string
		at   int
		n    int // truncate to n bytes if > 0
	}{
		{"magic", 0, 0}, {"header CRC", 5, 0}, {"time", 8, 0}, {"size", 13, 0}, {"name", 40, 0},
		{"data CRC", 25, 0}, {"first data byte", 64, 0}, {"last data byte", 64 + 1999, 0},
		{"header only", -1, 64}, {"short data", -1, 64 + 1999}, {"short header", -1, 63}, {"empty", -1, 0},
	} {
		b := bytes.Clone(good)
		if c.at >= 0 {
			b[c.at] ^= 0x20
		} else {
			b = b[:c.n]
		}
		err := sysupgrade.CheckUImage(b)
		if !errors.Is(err, sysupgrade.ErrBoot) || sysupgrade.BootCheck(b) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	// A change in the bytes after the data does not matter.
	b := bytes.Clone(good)
	b[len(b)-1] = 0
	if !sysupgrade.BootCheck(b) {
		t.Error("tail byte changed the verdict")
	}
}
