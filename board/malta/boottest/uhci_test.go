//go:build !mips && !mipsle

package boottest

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gowrt/gowrt/internal/image"
	"github.com/gowrt/gowrt/internal/qemu"
)

// TestUHCIQEMU boots progs/uhcitest on both byte orders with QEMU's
// usb-net on the PIIX4's UHCI: the driver resets the controller, sees the
// connect on port 1 from its poll, resets the port, reads the device
// descriptor at address 0 (usb-net is 0525:a4a2), sets address 1 and
// reads both configuration descriptors (RNDIS and CDC-ECM). Then it
// selects the ECM configuration and moves Ethernet frames over the bulk
// pipes by hand (ARP and pings to slirp's gateway, four bulk-in transfers
// in flight): the round trip and the bulk throughput through the 12 Mb/s
// bus are logged.
func TestUHCIQEMU(t *testing.T) {
	for _, board := range boards {
		t.Run(board, func(t *testing.T) {
			img := buildImage(t, board, "./board/malta/boottest/progs/uhcitest")
			b, _ := image.LookupBoard(board)
			ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
			defer cancel()
			cmd := qemu.Machine{Board: b, Kernel: img, MemMiB: 64, Extra: []string{
				"-netdev", "user,id=usbnet0,restrict=on",
				"-device", "usb-net,netdev=usbnet0,bus=usb-bus.0,mac=52:54:00:12:34:99",
			}}.Command(ctx)
			out, err := cmd.CombinedOutput()
			s := string(out)
			if ctx.Err() != nil {
				t.Fatalf("timed out:\n%s", s)
			}
			if _, ok := err.(*exec.ExitError); err != nil && !ok {
				t.Fatalf("qemu: %v\n%s", err, s)
			}
			mustContain(t, s, "uhci: 00:0a.2 8086:7112", "irq 11",
				"uhci: connect change on port 1", "uhci: port 1 full speed, enabled",
				"usb: device 0525:a4a2", "usb: addressed as 1",
				"ep 0x82 bulk 64", "ep 0x02 bulk 64",
				"usb: configuration 0 read with wLength 255: 67 bytes",
				"usbnet: gateway 10.0.2.2 is", "usbnet: ping 10.0.2.2 with 1514-byte frames",
				"usbnet: 200 pings of 1514-byte frames",
				"uhcitest: ok", "gowrt: exit 0")
			for _, l := range strings.Split(s, "\n") {
				if strings.HasPrefix(l, "usb:") || strings.HasPrefix(l, "uhci:") || strings.HasPrefix(l, "usbnet:") {
					t.Log(strings.TrimRight(l, "\r"))
				}
			}
		})
	}
}
