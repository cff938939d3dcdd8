//go:build linux && !mips && !mipsle

package boottest

import (
	"regexp"
	"strconv"
	"testing"

	"github.com/gowrt/gowrt/internal/image"
	"github.com/gowrt/gowrt/internal/netns"
	"github.com/gowrt/gowrt/internal/qemu"
)

// routerUpRE is progs/routertest's LAN-up line; its uptime is counted
// from kernel entry, which under -icount follows QEMU's start by the few
// instructions of QEMU's boot stub.
var routerUpRE = regexp.MustCompile(`router: board \S+, LAN up at \S+ after \d+ ms in main, uptime (\d+) ns`)

// BenchmarkRouterBootInstructions boots the router (progs/routertest, a
// LAN TAP, no WAN) under -icount shift=0,sleep=off (qemu.Deterministic:
// one guest nanosecond per instruction) on both byte orders and reports
// the instructions from QEMU's start to the router's "LAN up" line:
// kernel boot, the runtime's start, the drivers and every router service
// started (issue 18's goal: 30 M).
//
//	go test ./board/malta/boottest -run '^$' -bench RouterBootInstructions -benchtime 1x
func BenchmarkRouterBootInstructions(b *testing.B) {
	for i, board := range boards {
		for _, wan := range []bool{false, true} {
			name := board + "/lan"
			if wan {
				name += "+wan"
			}
			b.Run(name, func(b *testing.B) { routerBoot(b, board, i, wan) })
		}
	}
}

func routerBoot(b *testing.B, board string, i int, withWAN bool) {
	img, err := images.Build(board, "./board/malta/boottest/progs/routertest")
	if err != nil {
		b.Fatal(err)
	}
	bd, _ := image.LookupBoard(board)
	var sum float64
	for range b.N {
		ns := netns.New(b)
		tap := "gwboot" + strconv.Itoa(i)
		ns.Must(b, "ip", "tuntap", "add", "dev", tap, "mode", "tap")
		ns.Must(b, "ip", "link", "set", tap, "up")
		m := qemu.Machine{Board: bd, Kernel: img, MemMiB: 32,
			NIC: "tap,ifname=" + tap + ",script=no,downscript=no", Deterministic: true}
		if withWAN {
			wtap := "gwbootw" + strconv.Itoa(i)
			ns.Must(b, "ip", "tuntap", "add", "dev", wtap, "mode", "tap")
			ns.Must(b, "ip", "link", "set", wtap, "up")
			m.WAN = "tap,ifname=" + wtap + ",script=no,downscript=no"
		}
		v := startVM(b, ns, "router: board malta, LAN up", m)
		up := routerUpRE.FindStringSubmatch(v.console.String())
		v.stop()
		if up == nil {
			b.Fatalf("no LAN-up line with the uptime:\n%s", v.console.String())
		}
		n, _ := strconv.ParseUint(up[1], 10, 64)
		if n == 0 {
			b.Fatalf("the firmware read no uptime:\n%s", v.console.String())
		}
		sum += float64(n)
	}
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(sum/float64(b.N), "instructions-to-LAN-up")
}
