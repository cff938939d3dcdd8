package qemu

import (
	"strings"
	"testing"

	"github.com/gowrt/gowrt/internal/image"
)

var be = image.Board{Name: "malta-be", Machine: "malta", QEMU: "qemu-system-mips"}

// TestArgsOneNIC pins the one-NIC command line: the tests, benchmarks and
// cmd/gowrt that boot malta without a WAN port depend on it staying the
// same, byte for byte.
func TestArgsOneNIC(t *testing.T) {
	m := Machine{Board: be, Kernel: "fw.elf", MemMiB: 32, NIC: "tap,ifname=t0,script=no,downscript=no",
		Flash: "flash.bin", Deterministic: true, Append: "a b=c", Extra: []string{"-S"}}
	want := "-M malta -cpu 24Kc -m 32 -kernel fw.elf -nodefaults -display none -serial stdio -no-reboot " +
		"-global pcnet.romfile= -nic tap,ifname=t0,script=no,downscript=no,model=pcnet " +
		"-drive if=pflash,format=raw,file=flash.bin -icount shift=0,sleep=off -rtc clock=vm -seed 1 " +
		"-append a b=c -S"
	if got := strings.Join(m.Args(), " "); got != want {
		t.Fatalf("args\n got %s\nwant %s", got, want)
	}
	want = "-M malta -cpu 24Kc -m 128 -kernel fw.elf -nodefaults -display none -serial stdio -no-reboot " +
		"-global pcnet.romfile= -nic user,restrict=on,model=pcnet"
	if got := strings.Join(Machine{Board: be, Kernel: "fw.elf"}.Args(), " "); got != want {
		t.Fatalf("default args\n got %s\nwant %s", got, want)
	}
}

// TestArgsWAN checks the second pcnet: a -netdev with the given backend and
// a pcnet -device on it in slot 0x0c with no option ROM, placed after the
// on-board NIC and before the options that follow it.
func TestArgsWAN(t *testing.T) {
	m := Machine{Board: be, Kernel: "fw.elf", NIC: "tap,ifname=lan0,script=no,downscript=no",
		WAN: "tap,ifname=wan0,script=no,downscript=no", Append: "x"}
	got := strings.Join(m.Args(), " ")
	want := "-nic tap,ifname=lan0,script=no,downscript=no,model=pcnet " +
		"-netdev tap,ifname=wan0,script=no,downscript=no,id=wan -device pcnet,netdev=wan,romfile=,addr=0c.0 -append x"
	if !strings.HasSuffix(got, want) {
		t.Fatalf("args\n got %s\nwant suffix %s", got, want)
	}
	m.WANMAC = "02:00:00:00:00:02"
	if got := strings.Join(m.Args(), " "); !strings.Contains(got, " -device pcnet,netdev=wan,romfile=,addr=0c.0,mac=02:00:00:00:00:02 ") {
		t.Fatalf("WANMAC not on the device: %s", got)
	}
	for _, a := range m.Args() {
		if a == "-nodefaults" {
			return
		}
	}
	t.Fatal("-nodefaults missing with a WAN NIC")
}

// TestArgsUSBNet checks the usb-net: a -netdev with the given backend and
// a usb-net -device on the PIIX4's UHCI bus, after the pcnets.
func TestArgsUSBNet(t *testing.T) {
	m := Machine{Board: be, Kernel: "fw.elf", USBNet: "tap,ifname=usb0,script=no,downscript=no", Append: "x"}
	got := strings.Join(m.Args(), " ")
	want := "-nic user,restrict=on,model=pcnet " +
		"-netdev tap,ifname=usb0,script=no,downscript=no,id=usbnet -device usb-net,netdev=usbnet,bus=usb-bus.0 -append x"
	if !strings.HasSuffix(got, want) {
		t.Fatalf("args\n got %s\nwant suffix %s", got, want)
	}
	m.USBNetMAC = "52:54:00:12:34:60"
	if got := strings.Join(m.Args(), " "); !strings.Contains(got, " -device usb-net,netdev=usbnet,bus=usb-bus.0,mac=52:54:00:12:34:60 ") {
		t.Fatalf("USBNetMAC not on the device: %s", got)
	}
}
