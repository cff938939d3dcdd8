//go:build !mips && !mipsle

package main

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gowrt/gowrt/board/ar71xx/boardfile"
	"github.com/gowrt/gowrt/fwimage"
	"github.com/gowrt/gowrt/internal/image"
	"github.com/gowrt/gowrt/sysupgrade"
)

// unlzma decompresses a .lzma stream with the real xz tool.
func unlzma(t *testing.T, comp []byte) []byte {
	t.Helper()
	cmd := exec.Command("xz", "--format=lzma", "-d", "-c")
	cmd.Stdin = bytes.NewReader(comp)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("xz --format=lzma -d: %v: %s", err, stderr.String())
	}
	return out
}

// linkedString reads a string variable set at link time (-X) from the
// ELF: sym is the variable's full name.
func linkedString(t *testing.T, elfBytes []byte, sym string) string {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(elfBytes))
	if err != nil {
		t.Fatal(err)
	}
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	read := func(addr uint64, n int) []byte {
		for _, s := range f.Sections {
			if s.Type == elf.SHT_PROGBITS && addr >= s.Addr && addr+uint64(n) <= s.Addr+s.Size {
				b := make([]byte, n)
				if _, err := s.ReadAt(b, int64(addr-s.Addr)); err != nil {
					t.Fatal(err)
				}
				return b
			}
		}
		t.Fatalf("no section holds %#x+%d", addr, n)
		return nil
	}
	for _, s := range syms {
		if s.Name == sym {
			hdr := read(s.Value, 8) // string header: pointer, length (big-endian mips)
			return string(read(uint64(binary.BigEndian.Uint32(hdr)), int(binary.BigEndian.Uint32(hdr[4:]))))
		}
	}
	t.Fatalf("no %s symbol", sym)
	return ""
}

// TestBuildRouters builds examples/router for every boardfile router
// with gowrt build -sign and checks what each boot loader gets: TP-Link
// factory and sysupgrade images that fwimage.ParseTPLink accepts (mkimage
// does not know TP-Link's header), uImages that mkimage -l lists, RedBoot's
// ELF and flat binary; every LZMA payload decompresses with xz to the
// firmware ELF's load segments (fwimage.Raw of the same build), the
// router's name is linked in, the image fits the firmware partition, and
// the signed upgrade verifies and carries the flashed bytes. It is the
// package's slow test (a router build per board, mostly from the Go build
// cache after the first): -short skips it.
func TestBuildRouters(t *testing.T) {
	if testing.Short() {
		t.Skip("builds examples/router for six routers (about a minute)")
	}
	dir := t.TempDir()
	key := filepath.Join(dir, "upgrade.key")
	var stdout, stderr strings.Builder
	if code := gowrt([]string{"keygen", "-o", key}, &stdout, &stderr); code != 0 {
		t.Fatal(stderr.String())
	}
	pubPEM, _ := os.ReadFile(key + ".pub")
	pub, err := sysupgrade.ParsePublicKey(pubPEM)
	if err != nil {
		t.Fatal(err)
	}
	const version = "test-1"
	for _, r := range boardfile.All {
		t.Run(r.Name, func(t *testing.T) {
			out := filepath.Join(dir, r.Name+".bin")
			var stdout, stderr strings.Builder
			if code := gowrt([]string{"build", "-board", r.Name, "-sign", key, "-version", version, "-o", out, "../../examples/router"}, &stdout, &stderr); code != 0 {
				t.Fatalf("exit %d:\n%s", code, stderr.String())
			}
			log := stderr.String()
			// The same build through internal/image, for the expected load segments.
			b := image.Boards[r.Name]
			b.LDExtra += " -X main.version=" + version + " -X main.upgradeKey=" + sysupgrade.BuiltinKey(pub)
			elfPath := filepath.Join(dir, r.Name+".elf")
			if err := image.Build(context.Background(), b, ".", "../../examples/router", elfPath); err != nil {
				t.Fatal(err)
			}
			elfBytes, err := os.ReadFile(elfPath)
			if err != nil {
				t.Fatal(err)
			}
			if name := linkedString(t, elfBytes, image.RouterPackage+".boardName"); name != r.Name {
				t.Errorf("linked-in name %q", name)
			}
			if k := linkedString(t, elfBytes, "main.upgradeKey"); k != sysupgrade.BuiltinKey(pub) {
				t.Errorf("linked-in upgrade key %q, want the signing key's public half", k)
			}
			raw, load, entry, err := fwimage.Raw(elfBytes)
			if err != nil {
				t.Fatal(err)
			}
			part, _ := r.Part(boardfile.PartFirmware)
			if !strings.Contains(log, "firmware partition "+size(int(part.Size))) {
				t.Errorf("no partition report:\n%s", log)
			}
			if int64(len(raw)) > r.Image.BootmLimit && r.Image.BootmLimit > 0 && !strings.Contains(log, "WARNING: "+r.Name+": the firmware decompresses to "+size(len(raw))) {
				t.Errorf("no bootm warning:\n%s", log)
			}
			var flashed []byte
			switch r.Image.Format {
			case boardfile.TPLink:
				factory, _ := os.ReadFile(out)
				sysup, _ := os.ReadFile(filepath.Join(dir, r.Name+"-sysupgrade.bin"))
				for _, img := range [][]byte{factory, sysup} {
					h, kernel, err := fwimage.ParseTPLink(img)
					if err != nil {
						t.Fatal(err)
					}
					if h.HWID != r.Image.TPLinkHWID || h.KernelLoad != load || h.KernelEntry != entry {
						t.Errorf("header %+v", h)
					}
					if !bytes.Equal(unlzma(t, kernel), raw) {
						t.Error("the LZMA payload does not decompress to the load segments")
					}
				}
				if len(factory) != int(fwimage.TPLink8MLZMA) && len(factory) != int(fwimage.TPLink16MLZMA) {
					t.Errorf("factory image %d bytes", len(factory))
				}
				flashed = sysup
			case boardfile.UImage:
				img, _ := os.ReadFile(out)
				u, payload, err := fwimage.ParseUImage(img)
				if err != nil {
					t.Fatal(err)
				}
				list, err := exec.Command("mkimage", "-l", out).CombinedOutput()
				if err != nil || !strings.Contains(string(list), "MIPS Linux Kernel Image (lzma compressed)") ||
					!strings.Contains(string(list), "Load Address: 80100000") {
					t.Errorf("mkimage -l: %v\n%s", err, list)
				}
				if u.Load != load || u.Entry != entry || !bytes.Equal(unlzma(t, payload), raw) {
					t.Errorf("uImage %+v does not hold the load segments", u)
				}
				if !strings.Contains(log, "-compress none") {
					t.Errorf("no -compress none offer:\n%s", log)
				}
				flashed = img
			case boardfile.RedBoot:
				got, _ := os.ReadFile(out)
				if !bytes.Equal(got, elfBytes) {
					t.Error("the RedBoot ELF is not the build's fixed-up ELF")
				}
				flashed, _ = os.ReadFile(filepath.Join(dir, r.Name+"-raw.bin"))
				if !bytes.Equal(flashed, raw) {
					t.Error("the flat binary is not the load segments")
				}
				for _, w := range []string{"fis create -b 0x80100000", "fis load gowrt", "exec"} {
					if !strings.Contains(log, w) {
						t.Errorf("no %q in:\n%s", w, log)
					}
				}
			}
			if err := fwimage.Fits(flashed, int(part.Size)); err != nil {
				t.Error(err)
			}
			upg, _ := os.ReadFile(out + upgradeExt)
			md, fw, err := sysupgrade.Verify(upg, r.Name, pub)
			if err != nil || md.Version != version || !bytes.Equal(fw, flashed) {
				t.Errorf("signed upgrade: %+v, %v; carries the flashed bytes: %v", md, err, bytes.Equal(fw, flashed))
			}
			t.Logf("%s: raw %d, flashed %d, partition %d", r.Name, len(raw), len(flashed), part.Size)

			// The same ELF in a board with a 1 MiB firmware partition: a
			// clear failure naming both sizes. Once: it compresses the
			// image again, and the check does not depend on the board.
			if r != boardfile.All[0] {
				return
			}
			small := *r
			small.Flash.Parts = append([]boardfile.Partition(nil), r.Flash.Parts...)
			for i := range small.Flash.Parts {
				if small.Flash.Parts[i].Name == boardfile.PartFirmware {
					small.Flash.Parts[i].Size = 1 << 20
				}
			}
			var sink strings.Builder
			_, err = routerFirmware(&small, elfBytes, compressLZMA, "gowrt router", filepath.Join(dir, "small.bin"), &sink)
			if err == nil || !strings.Contains(err.Error(), "does not fit the firmware partition") || !strings.Contains(err.Error(), "1048576 bytes") {
				t.Errorf("too big: %v", err)
			}
		})
	}
}

// TestBuildUImageUncompressed: -compress none on a U-Boot router gives
// an uncompressed uImage of the load segments, which mkimage lists.
func TestBuildUImageUncompressed(t *testing.T) {
	if testing.Short() {
		t.Skip("builds examples/router")
	}
	out := filepath.Join(t.TempDir(), "ap135.uimage")
	var stdout, stderr strings.Builder
	if code := gowrt([]string{"build", "-board", "ap135", "-compress", "none", "-o", out, "../../examples/router"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr.String())
	}
	if strings.Contains(stderr.String(), "WARNING") {
		t.Errorf("an uncompressed image warned about decompression:\n%s", stderr.String())
	}
	list, err := exec.Command("mkimage", "-l", out).CombinedOutput()
	if err != nil || !strings.Contains(string(list), "MIPS Linux Kernel Image (uncompressed)") {
		t.Errorf("mkimage -l: %v\n%s", err, list)
	}
}

// TestCheckFits: the size check against a small fake partition.
func TestCheckFits(t *testing.T) {
	part := boardfile.Partition{Name: boardfile.PartFirmware, Size: 64 << 10}
	if err := checkFits(boardfile.AP135, "uImage", make([]byte, 64<<10), part); err != nil {
		t.Errorf("exactly full: %v", err)
	}
	err := checkFits(boardfile.AP135, "uImage", make([]byte, 64<<10+1), part)
	if err == nil || !strings.Contains(err.Error(), "ap135: the uImage does not fit the firmware partition") ||
		!strings.Contains(err.Error(), "65537 bytes") || !strings.Contains(err.Error(), "65536 bytes") || !strings.Contains(err.Error(), "1 bytes too big") {
		t.Errorf("one byte over: %v", err)
	}
	if sysupgradeName("out/fw.bin") != "out/fw-sysupgrade.bin" || sysupgradeName("fw") != "fw-sysupgrade" || rawName("x/rs.elf") != "x/rs-raw.bin" {
		t.Error("derived names")
	}
}
