//go:build !mips && !mipsle

package boottest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gowrt/gowrt/flash/confstore"
	"github.com/gowrt/gowrt/internal/image"
	"github.com/gowrt/gowrt/internal/qemu"
	"github.com/gowrt/gowrt/internal/wantest"
)

var boards = []string{"malta-be", "malta-le"}

var (
	images  = &image.Cache{}
	workDir string
)

// helperMain, if set (router_test.go), runs instead of the tests when the
// test binary is re-executed as a helper inside a network namespace.
var helperMain func() (int, bool)

func TestMain(m *testing.M) {
	if code, ok := wantest.RunRole(); ok {
		os.Exit(code)
	}
	if helperMain != nil {
		if code, ok := helperMain(); ok {
			os.Exit(code)
		}
	}
	d, err := os.MkdirTemp("", "gowrt-malta-boottest")
	if err != nil {
		panic(err)
	}
	workDir = d
	images.Dir = d
	// Images are built from the module root: package paths are ./... there.
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		panic(err)
	}
	images.BuildDir = filepath.Dir(strings.TrimSpace(string(gomod)))
	code := m.Run()
	os.RemoveAll(d)
	os.Exit(code)
}

// buildImage builds pkg for board once per test binary.
func buildImage(t *testing.T, board, pkg string) string {
	t.Helper()
	p, err := images.Build(board, pkg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// boot runs img on board's QEMU with the given pflash file and returns the
// console output; the program must exit 0.
func boot(t *testing.T, board, img, flashFile, appendArgs string) string {
	t.Helper()
	b, _ := image.LookupBoard(board)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := qemu.Machine{Board: b, Kernel: img, MemMiB: 64, Flash: flashFile, Append: appendArgs}.Command(ctx)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	s := strings.ReplaceAll(out.String(), "\r\n", "\n")
	if ctx.Err() != nil {
		t.Fatalf("%s: timed out:\n%s", board, s)
	}
	if err != nil {
		t.Fatalf("%s: %v:\n%s", board, err, s)
	}
	if !strings.Contains(s, "boardtest: ok") || !strings.Contains(s, "gowrt: exit 0") {
		t.Fatalf("%s %q: did not finish cleanly:\n%s", board, appendArgs, s)
	}
	return s
}

func mustContain(t *testing.T, out string, what ...string) {
	t.Helper()
	for _, w := range what {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
}

const (
	flashSize = 4 << 20
	confA     = 0x3e0000
	confB     = 0x3f0000
)

// TestBoard boots the board test image three times per byte order with one
// flash file (power cycles with the flash preserved):
//  1. blank (erased) flash: PCI is enumerated and BARs assigned, the
//     configuration is empty (defaults), a value is set and saved;
//  2. the value is read back, and the flash file holds a copy the host-side
//     decoder accepts (the on-flash format is endian-free);
//  3. both copies are corrupted in the file: the firmware reports it on the
//     console and boots with defaults.
func TestBoard(t *testing.T) {
	for _, board := range boards {
		t.Run(board, func(t *testing.T) {
			img := buildImage(t, board, "./board/malta/boottest/progs/boardtest")
			fl := filepath.Join(t.TempDir(), "flash.img")
			if err := os.WriteFile(fl, bytes.Repeat([]byte{0xff}, flashSize), 0o644); err != nil {
				t.Fatal(err)
			}

			start := time.Now()
			out := boot(t, board, img, fl, "set:lan.ipaddr:10.7.0.1")
			t.Logf("boot 1: %v", time.Since(start))
			mustContain(t, out,
				"board: registered malta",
				"pci: 00:00.0 11ab:4620 class 060000",
				"pci: 00:0a.0 8086:7110 class 060100",
				"pci: 00:0a.2 8086:7112 class 0c0300 rev 01 irq 11 bar4 io",
				"pci: 00:0b.0 1022:2000 class 020000 rev 10 irq 10 bar0 io 0x2",
				"flash: CFI cmdset 0x0001, 4096 KiB, 64 blocks of 64 KiB",
				"config: loaded seq 0 (0 keys)",
				"config: saved seq 1: 1 erase,")
			for _, l := range strings.Split(out, "\n") {
				if strings.HasPrefix(l, "pci:") || strings.HasPrefix(l, "config: saved") {
					t.Log(l)
				}
			}
			if !strings.Contains(out, "bar1 mem 0x1") {
				t.Errorf("pcnet memory BAR not assigned in the M0 window:\n%s", out)
			}

			out = boot(t, board, img, fl, "get:lan.ipaddr")
			mustContain(t, out, "config: loaded seq 1 (1 keys)", "config: lan.ipaddr=10.7.0.1")
			raw, err := os.ReadFile(fl)
			if err != nil {
				t.Fatal(err)
			}
			seq, v, err := confstore.Decode(raw[confA : confA+0x10000])
			if err != nil || seq != 1 || v["lan.ipaddr"] != "10.7.0.1" {
				t.Fatalf("host decode of the flash file: seq %d %v %v", seq, v, err)
			}
			if !bytes.Equal(raw[:confA], bytes.Repeat([]byte{0xff}, confA)) {
				t.Error("firmware wrote outside the configuration region")
			}

			raw[confA+confstore.HeaderSize+2] ^= 0x55 // CRC of copy A fails
			copy(raw[confB:], "junk")                 // copy B is garbage
			if err := os.WriteFile(fl, raw, 0o644); err != nil {
				t.Fatal(err)
			}
			out = boot(t, board, img, fl, "get:lan.ipaddr")
			mustContain(t, out, "config: ERROR: confstore: no valid configuration copy",
				"CRC mismatch", "config: using defaults", "config: lan.ipaddr=192.168.1.1")
		})
	}
}
