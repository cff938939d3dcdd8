//go:build linux && !mips && !mipsle

package boottest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gowrt/gowrt/internal/image"
	"github.com/gowrt/gowrt/internal/netns"
)

// TestRouterQEMU boots the router (progs/routertest: net/router on
// board/malta/eth) on both byte orders with the pcnet attached to a TAP
// device inside a test network namespace, then from that namespace pings
// 192.168.1.1 and fetches the status page with curl. It logs QEMU start to
// "LAN up" (the router's first console line after its stack is up) and
// the RAM the kernel reports in use, at -m 32.
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
			cmd := exec.CommandContext(ctx, "ip", "netns", "exec", ns.Name, b.QEMU,
				"-M", "malta", "-m", "32", "-kernel", img, "-display", "none", "-monitor", "none",
				"-serial", "stdio", "-no-reboot",
				"-nic", "tap,ifname="+tapName+",script=no,downscript=no,model=pcnet")
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

			// 50 MB to the firmware's echo service and back, from the
			// namespace, checksummed on the host side.
			exe, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			res, err := ns.Exec(90*time.Second, "env", "GOWRT_ECHO_CLIENT=192.168.1.1:7",
				fmt.Sprintf("GOWRT_ECHO_BYTES=%d", echoBytes), exe)
			if err != nil || !strings.Contains(res, "echo ok") {
				t.Fatalf("echo client: %v\n%s\nconsole:\n%s", err, res, out.String())
			}
			t.Log(strings.TrimSpace(res))
			// Idle RAM at -m 32: the kernel's report after the transfer.
			deadline := time.Now().Add(10 * time.Second)
			for !strings.Contains(out.String(), "ram:") && time.Now().Before(deadline) {
				time.Sleep(100 * time.Millisecond)
			}
			last := ""
			for _, l := range strings.Split(out.String(), "\n") {
				if strings.HasPrefix(l, "ram:") {
					last = l
				}
			}
			t.Logf("after the transfer: %s", last)
		})
	}
}

const echoBytes = 50 << 20

func init() { helperMain = echoClient }

// echoClient is the helper the router test runs inside its namespace: it
// sends GOWRT_ECHO_BYTES pseudo-random bytes to GOWRT_ECHO_CLIENT while
// reading the echo, and compares SHA-256 sums.
func echoClient() (int, bool) {
	addr := os.Getenv("GOWRT_ECHO_CLIENT")
	if addr == "" {
		return 0, false
	}
	n, _ := strconv.Atoi(os.Getenv("GOWRT_ECHO_BYTES"))
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		fmt.Println("dial:", err)
		return 1, true
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(80 * time.Second))
	data := make([]byte, n)
	r := rand.NewChaCha8([32]byte{'m', 'a', 'l', 't', 'a'})
	_, _ = r.Read(data)
	want := sha256.Sum256(data)
	start := time.Now()
	errc := make(chan error, 1)
	go func() {
		_, err := io.Copy(c, bytes.NewReader(data))
		errc <- err
	}()
	h := sha256.New()
	got, err := io.CopyN(h, c, int64(n))
	if err != nil {
		fmt.Printf("read back %d of %d bytes: %v\n", got, n, err)
		return 1, true
	}
	if err := <-errc; err != nil {
		fmt.Println("write:", err)
		return 1, true
	}
	d := time.Since(start)
	if !bytes.Equal(h.Sum(nil), want[:]) {
		fmt.Println("echo checksum mismatch")
		return 1, true
	}
	fmt.Printf("echo ok: %d MB each way in %.1f s, %.1f Mbit/s each way\n", n>>20, d.Seconds(), float64(n)*8/d.Seconds()/1e6)
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
