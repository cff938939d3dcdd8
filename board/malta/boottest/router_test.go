//go:build linux && !mips && !mipsle

package boottest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gowrt/gowrt/internal/image"
	"github.com/gowrt/gowrt/internal/netns"
	"github.com/gowrt/gowrt/internal/qemu"
	"github.com/gowrt/gowrt/internal/xfer"
)

// TestRouterQEMU boots the router (progs/routertest: net/router on
// board/malta/eth) on both byte orders with the pcnet attached to a TAP
// device inside a test network namespace, then from that namespace pings
// 192.168.1.1, fetches the status page with curl and moves 50 MB each way
// through the firmware's TCP sink and source (SHA-256 checked). It logs
// QEMU start to "LAN up" (the router's first console line after its stack
// is up) and the RAM the kernel reports in use, at -m 32.
func TestRouterQEMU(t *testing.T) {
	for i, board := range boards {
		t.Run(board, func(t *testing.T) {
			ns := netns.New(t)
			img := buildImage(t, board, "./board/malta/boottest/progs/routertest")
			tapName := fmt.Sprintf("gwmalta%d", i)
			ns.Must(t, "ip", "tuntap", "add", "dev", tapName, "mode", "tap")
			ns.Must(t, "ip", "addr", "add", "192.168.1.100/24", "dev", tapName)
			ns.Must(t, "ip", "link", "set", tapName, "up")

			b, _ := image.LookupBoard(board)
			ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
			defer cancel()
			m := qemu.Machine{Board: b, Kernel: img, MemMiB: 32, NIC: "tap,ifname=" + tapName + ",script=no,downscript=no"}
			cmd := exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", ns.Name, b.QEMU}, m.Args()...)...)
			pr, pw := io.Pipe()
			cmd.Stdout, cmd.Stderr = pw, pw
			start := time.Now()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan struct{})
			go func() { _ = cmd.Wait(); pw.Close(); close(exited) }()
			defer func() {
				cancel() // kills QEMU: the router runs until reset
				<-exited
			}()
			var out consoleLog // written by the reader goroutine, read by the test
			up := make(chan time.Duration, 1)
			go func() {
				sc := bufio.NewScanner(pr)
				for sc.Scan() {
					l := strings.TrimRight(sc.Text(), "\r")
					out.WriteString(l + "\n")
					if strings.HasPrefix(l, "router: board malta, LAN up") {
						up <- time.Since(start)
					}
				}
				close(up)
			}()
			lanUp, ok := <-up
			if !ok {
				t.Fatalf("router never came up:\n%s", out.String())
			}
			t.Logf("QEMU start to LAN up: %d ms", lanUp.Milliseconds())

			ping := ns.Must(t, "ping", "-c", "3", "-i", "0.2", "-W", "2", "192.168.1.1")
			if !strings.Contains(ping, "3 received") {
				t.Fatalf("ping:\n%s", ping)
			}
			page := ns.Must(t, "curl", "-sS", "--max-time", "10", "http://192.168.1.1/status.json")
			if !strings.Contains(page, `"board":"malta"`) && !strings.Contains(page, `"board": "malta"`) {
				t.Fatalf("status page:\n%s", page)
			}
			t.Logf("status.json: %.200s", page)

			// A one-second CPU profile over the LAN (runtime/pprof on the
			// kernel's ITIMER_PROF): a gzipped profile comes back.
			prof := filepath.Join(t.TempDir(), "cpu.pprof")
			ns.Must(t, "curl", "-sS", "--max-time", "20", "-o", prof, "http://192.168.1.1:6060/debug/pprof/profile?seconds=1")
			if p, err := os.ReadFile(prof); err != nil || len(p) < 2 || p[0] != 0x1f || p[1] != 0x8b {
				t.Fatalf("pprof over the LAN: %v, %d bytes", err, len(p))
			}

			// 50 MB to the firmware's sink and 50 MB from its source, from
			// the namespace, SHA-256 checked (internal/xfer).
			exe, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			res, err := ns.Exec(150*time.Second, "env", "GOWRT_XFER_HOST=192.168.1.1",
				fmt.Sprintf("GOWRT_XFER_BYTES=%d", xferBytes), exe)
			if err != nil || !strings.Contains(res, "xfer ok") {
				t.Fatalf("transfer client: %v\n%s\nconsole:\n%s", err, res, out.String())
			}
			t.Log(strings.TrimSpace(res))
			// Idle RAM at -m 32: the kernel's report after the transfer.
			deadline := time.Now().Add(10 * time.Second)
			for !strings.Contains(out.String(), "ram:") && time.Now().Before(deadline) {
				time.Sleep(100 * time.Millisecond)
			}
			last, nic := "", ""
			for _, l := range strings.Split(out.String(), "\n") {
				if strings.HasPrefix(l, "ram:") {
					last = l
				}
				if strings.HasPrefix(l, "nic ") {
					nic = l
				}
			}
			t.Logf("after the transfer: %s", last)
			t.Logf("driver state: %s", nic)
		})
	}
}

const xferBytes = 50 << 20

func init() {
	helperMain = func() (int, bool) {
		if code, ok := connsClient(); ok {
			return code, ok
		}
		if code, ok := sinkServer(); ok {
			return code, ok
		}
		return xferClient()
	}
}

// xferClient is the helper the router test runs inside its namespace:
// GOWRT_XFER_BYTES to the sink at GOWRT_XFER_HOST, then as many from its
// source, both checked with SHA-256.
func xferClient() (int, bool) {
	host := os.Getenv("GOWRT_XFER_HOST")
	if host == "" {
		return 0, false
	}
	n, _ := strconv.ParseInt(os.Getenv("GOWRT_XFER_BYTES"), 10, 64)
	// GOWRT_XFER_ONLY=up or down runs one direction (the instruction
	// benchmark measures each on its own); the other reports 0 MB.
	only := os.Getenv("GOWRT_XFER_ONLY")
	// GOWRT_XFER_MODE=bulk uses the bulk services (iperf3's way: one
	// repeated block, counted and discarded) instead of the checked ones.
	upload, download, upPort, downPort := xfer.Upload, xfer.Download, xfer.SinkPort, xfer.SourcePort
	if os.Getenv("GOWRT_XFER_MODE") == "bulk" {
		upload, download, upPort, downPort = xfer.BulkUpload, xfer.BulkDownload, xfer.DiscardPort, xfer.FillPort
	}
	var up, down xfer.Result
	var err error
	if only != "down" {
		up, err = upload(net.JoinHostPort(host, strconv.Itoa(upPort)), n, 60*time.Second)
		if err != nil {
			fmt.Println("upload:", err)
			return 1, true
		}
	}
	if only != "up" {
		down, err = download(net.JoinHostPort(host, strconv.Itoa(downPort)), n, 60*time.Second)
		if err != nil {
			fmt.Println("download:", err)
			return 1, true
		}
	}
	fmt.Printf("xfer ok: %d MB up at %.1f Mbit/s, %d MB down at %.1f Mbit/s\n", n>>20, up.Mbps(), n>>20, down.Mbps())
	return 0, true
}

// consoleLog collects console lines from a reader goroutine while the test
// reads them.
type consoleLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (c *consoleLog) WriteString(s string) {
	c.mu.Lock()
	c.b.WriteString(s)
	c.mu.Unlock()
}

func (c *consoleLog) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.b.String()
}
