//go:build !mips && !mipsle

package boottest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gowrt/gowrt/internal/image"
	"github.com/gowrt/gowrt/internal/qemu"
)

// TestPcnetQEMU boots progs/pcnettest on both byte orders with QEMU's
// on-board pcnet on user networking: the driver comes up through PCI, DMA
// memory from the kernel and the i8259, gVisor's TCP connects out to an
// echo server on the host (10.0.2.2 inside slirp), and 1 MiB goes there and
// back with its checksum verified in the firmware. The time from starting
// QEMU to the firmware's "LAN up" line is logged.
func TestPcnetQEMU(t *testing.T) {
	const size = 1 << 20
	for _, board := range boards {
		t.Run(board, func(t *testing.T) {
			img := buildImage(t, board, "./board/malta/boottest/progs/pcnettest")
			ln, err := net.Listen("tcp4", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			go func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					go func() { defer c.Close(); io.Copy(c, c) }()
				}
			}()
			port := ln.Addr().(*net.TCPAddr).Port
			b, _ := image.LookupBoard(board)
			ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
			defer cancel()
			cmd := qemu.Machine{Board: b, Kernel: img, MemMiB: 64, NIC: "user",
				Append: fmt.Sprintf("echo:%d:%d", port, size)}.Command(ctx)
			pr, pw := io.Pipe()
			cmd.Stdout, cmd.Stderr = pw, pw
			start := time.Now()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			go func() { cmd.Wait(); pw.Close() }()
			var out strings.Builder
			var lanUp time.Duration
			sc := bufio.NewScanner(pr)
			for sc.Scan() {
				l := strings.TrimRight(sc.Text(), "\r")
				if lanUp == 0 && strings.HasPrefix(l, "LAN up") {
					lanUp = time.Since(start)
				}
				out.WriteString(l + "\n")
			}
			s := out.String()
			if ctx.Err() != nil {
				t.Fatalf("timed out:\n%s", s)
			}
			mustContain(t, s, "pcnet: 00:0b.0 Am79C970A PCnet-PCI II 52:54:00:12:34:56 irq 10",
				"LAN up", fmt.Sprintf("echo: %d bytes", size), "pcnettest: ok", "gowrt: exit 0")
			for _, l := range strings.Split(s, "\n") {
				if strings.HasPrefix(l, "echo:") || strings.HasPrefix(l, "pcnet:") || strings.HasPrefix(l, "LAN up") {
					t.Log(l)
				}
			}
			t.Logf("QEMU start to LAN up: %d ms", lanUp.Milliseconds())
		})
	}
}
