//go:build linux && !mips && !mipsle

package boottest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gowrt/gowrt/internal/image"
	"github.com/gowrt/gowrt/internal/netns"
	"github.com/gowrt/gowrt/internal/qemu"
)

// usbXferBytes is what the USB test moves each way: at the 12 Mbit/s of
// a full-speed bus (at most 19 bulk packets of 64 bytes per 1 ms frame,
// USB 2.0 §5.8.4: 9.7 Mbit/s of payload; QEMU's UHCI moves at most 1280
// bytes a frame, 10.2 Mbit/s) a few seconds.
const usbXferBytes = 2 << 20

var rttLine = regexp.MustCompile(`rtt min/avg/max/mdev = ([0-9.]+)/([0-9.]+)/([0-9.]+)/`)

// TestRouterUSBNetQEMU boots the router (progs/routertest with
// board/malta/usb, -tags gowrt_usb) on both byte orders with QEMU's
// usb-net on the PIIX4's UHCI, its netdev a TAP in a test network
// namespace, and a WAN pcnet on the UHCI's interrupt line: the CDC-ECM port joins br-lan as "usb0", and from the
// namespace, through the USB function only (the pcnet's backend is
// QEMU's restricted user network), it pings 192.168.1.1, fetches the
// status page and moves usbXferBytes each way through the firmware's TCP
// sink and source. It logs the ping RTT and the TCP throughput against the
// 12 Mbit/s bound of a full-speed bus.
func TestRouterUSBNetQEMU(t *testing.T) {
	for i, board := range boards {
		t.Run(board, func(t *testing.T) {
			ns := netns.New(t)
			img, err := images.Build(board, "./board/malta/boottest/progs/routertest", "-tags", "gowrt_usb")
			if err != nil {
				t.Fatal(err)
			}
			tapName := fmt.Sprintf("gwusb%d", i)
			ns.Must(t, "ip", "tuntap", "add", "dev", tapName, "mode", "tap")
			ns.Must(t, "ip", "addr", "add", "192.168.1.100/24", "dev", tapName)
			ns.Must(t, "ip", "link", "set", tapName, "up")

			b, _ := image.LookupBoard(board)
			ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
			defer cancel()
			// The WAN pcnet (slot 12, PIRQC) shares i8259 line 11 with
			// the UHCI (PIRQD): one handler services both.
			m := qemu.Machine{Board: b, Kernel: img, MemMiB: 64, WAN: "user,restrict=on",
				USBNet: "tap,ifname=" + tapName + ",script=no,downscript=no", USBNetMAC: "52:54:00:12:34:60"}
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
				cancel()
				<-exited
			}()
			var out consoleLog
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
			waitConsole(t, &out, "router: port usb0 ")

			ping := ns.Must(t, "ping", "-c", "10", "-i", "0.2", "-W", "3", "192.168.1.1")
			if !strings.Contains(ping, "10 received") {
				t.Fatalf("ping:\n%s\nconsole:\n%s", ping, out.String())
			}
			if mm := rttLine.FindStringSubmatch(ping); mm != nil {
				t.Logf("ping through usb-net: RTT min %s avg %s max %s ms", mm[1], mm[2], mm[3])
			}
			page := ns.Must(t, "curl", "-sS", "--max-time", "20", "http://192.168.1.1/status.json")
			if !strings.Contains(page, `"board":"malta"`) && !strings.Contains(page, `"board": "malta"`) {
				t.Fatalf("status page:\n%s", page)
			}
			if !strings.Contains(page, "usb0") {
				t.Fatalf("status page does not list usb0:\n%.2000s", page)
			}

			exe, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			res, err := ns.Exec(150*time.Second, "env", "GOWRT_XFER_HOST=192.168.1.1",
				fmt.Sprintf("GOWRT_XFER_BYTES=%d", usbXferBytes), exe)
			if err != nil || !strings.Contains(res, "xfer ok") {
				t.Fatalf("transfer client: %v\n%s\nconsole:\n%s", err, res, out.String())
			}
			t.Logf("%s (bound: 12 Mbit/s full-speed USB, at most 9.7 Mbit/s of bulk payload)", strings.TrimSpace(res))
		})
	}
}

// waitConsole waits until the console shows a line starting with prefix.
func waitConsole(t *testing.T, out *consoleLog, prefix string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		for _, l := range strings.Split(out.String(), "\n") {
			if strings.HasPrefix(l, prefix) {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no console line %q:\n%s", prefix, out.String())
}
