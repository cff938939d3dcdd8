//go:build linux && !mips && !mipsle

package firmware_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gowrt/gowrt/board"
	"github.com/gowrt/gowrt/firmware"
	"github.com/gowrt/gowrt/internal/wantest"
	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/net/nictest"
	"github.com/gowrt/gowrt/sys/syslog"
)

// TestFirmwareLinkEvents: a port's cable pulled and plugged again reaches
// the event bus (link down, link up with its speed) and the log.
func TestFirmwareLinkEvents(t *testing.T) {
	lan, _ := nictest.Pair(nictest.Config{MAC: gnet.MAC{2, 0x67, 0x77, 0, 0, 1}}, nictest.Config{MAC: gnet.MAC{2, 0x67, 0x77, 0, 0, 2}})
	lan.SetLink(true)
	b := &tapBoard{mem: &memStorage{items: map[string][]byte{}}, ports: []board.Port{{Name: "lan1", Role: board.LAN, NIC: lan}}}
	f, err := firmware.Start(context.Background(), firmware.Options{Board: b, Version: "test", Console: &wantest.SyncBuffer{}})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Stop()
	sub := f.Bus.Link.Subscribe(8)
	defer sub.Close()
	// wait returns the first event with the given carrier (linkwatch's
	// first report of the port may come first, or may have been
	// published before the subscription).
	wait := func(up bool) (port string, speed int) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		for {
			ev, err := sub.Next(ctx)
			if err != nil {
				for _, st := range f.Sup.Status() {
					t.Logf("%+v", st)
				}
				for _, r := range f.Ring.Records(syslog.All()) {
					t.Logf("%s: %s", r.Service, r.Msg)
				}
				t.Fatalf("no link event with up=%v: %v", up, err)
			}
			if ev.Up == up {
				return ev.Port, ev.SpeedMbps
			}
		}
	}
	// Pull the cable once linkwatch has seen the port up.
	waitFor(t, 5*time.Second, "linkwatch's first report", func() bool {
		return len(f.Ring.Records(syslog.Filter{Service: "linkwatch", Contains: "lan1: link up", Facility: syslog.AnyFacility})) > 0
	})
	lan.SetLink(false)
	if p, _ := wait(false); p != "lan1" {
		t.Fatalf("after pulling the cable: event for %s", p)
	}
	lan.SetLink(true)
	if p, speed := wait(true); p != "lan1" || speed != lan.Link().SpeedMbps {
		t.Fatalf("after plugging it: %s at %d Mbit/s", p, speed)
	}
	var lines []string
	for _, r := range f.Ring.Records(syslog.Filter{Service: "linkwatch", Facility: syslog.AnyFacility}) {
		lines = append(lines, r.Msg)
	}
	if got := strings.Join(lines, "\n"); !strings.Contains(got, "lan1: link down") || !strings.Contains(got, "lan1: link up") {
		t.Errorf("linkwatch's log:\n%s", got)
	}
}
