//go:build !mips && !mipsle

package boottest

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gowrt/gowrt/internal/image"
	"github.com/gowrt/gowrt/internal/qemu"
)

// TestEHCIQEMU boots progs/ehcitest on both byte orders with QEMU's PCI
// EHCI (usb-ehci) and a high-speed usb-storage device on it, backed by a
// 1 MiB raw image of seeded random bytes: the ehci driver enumerates the
// device, configures it and reads the image's first 4 KiB through the
// bulk-only transport; the firmware prints their SHA-256, which must be
// the file's.
func TestEHCIQEMU(t *testing.T) {
	disk := filepath.Join(t.TempDir(), "stick.img")
	data := make([]byte, 1<<20)
	r := rand.NewChaCha8([32]byte{'e', 'h', 'c', 'i'})
	_, _ = r.Read(data)
	if err := os.WriteFile(disk, data, 0o644); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("read: 4096 bytes sha256 %x", sha256.Sum256(data[:4096]))
	for _, board := range boards {
		t.Run(board, func(t *testing.T) {
			img := buildImage(t, board, "./board/malta/boottest/progs/ehcitest")
			b, _ := image.LookupBoard(board)
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			cmd := qemu.Machine{Board: b, Kernel: img, MemMiB: 64, Extra: []string{
				"-device", "usb-ehci,id=ehci",
				"-drive", "if=none,id=stick,format=raw,readonly=on,file=" + disk,
				"-device", "usb-storage,bus=ehci.0,drive=stick",
			}}.Command(ctx)
			out, err := cmd.CombinedOutput()
			s := strings.ReplaceAll(string(out), "\r\n", "\n")
			if ctx.Err() != nil {
				t.Fatalf("timed out:\n%s", s)
			}
			if err != nil {
				if _, ok := err.(*exec.ExitError); !ok {
					t.Fatal(err)
				}
			}
			mustContain(t, s, "high-speed device", "vid:pid 46f4:0001", want, "ehcitest: ok", "gowrt: exit 0")
			for _, l := range strings.Split(s, "\n") {
				for _, p := range []string{"ehci:", "device:", "config", "inquiry:", "sense:", "read:"} {
					if strings.HasPrefix(l, p) {
						t.Log(l)
					}
				}
			}
		})
	}
}
