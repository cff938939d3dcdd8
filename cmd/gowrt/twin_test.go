//go:build linux && !mips && !mipsle

package main

import (
	"strings"
	"testing"

	"github.com/gowrt/gowrt/internal/wantest"
)

// TestRunTwin: gowrt run -board ROUTER runs the router on that router's
// sim twin: the ports come from its board file (the TL-WDR4300's LAN and
// WAN VLANs on one MAC), every socket is a TAP device, the configuration
// store opens on the twin's SPI flash model, and it stops cleanly.
func TestRunTwin(t *testing.T) {
	// The firmware's output is copied in by os/exec's goroutines while
	// gowrt writes its own lines: a buffer safe for both.
	var stdout, stderr wantest.SyncBuffer
	code := gowrt([]string{"run", "-board", "tl-wdr4300", "-append", "-run-for 6s", "../../examples/router"}, &stdout, &stderr)
	out := stdout.String() + stderr.String()
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	for _, want := range []string{
		"TP-Link TL-WDR4300 v1 (tl-wdr4300) as its sim twin",
		"socket lan1  is TAP device gowrt-lan1", "socket wan   is TAP device gowrt-wan",
		"router: board tl-wdr4300, LAN up at 192.168.1.1/24",
		"router: port lan   lan", "router: port wan   wan",
		"router: run time over, shutting down",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in the output:\n%s", want, out)
		}
	}
	for _, bad := range []string{"MISUSE", "configuration store:", "panic"} {
		if strings.Contains(out, bad) {
			t.Errorf("%q in the output:\n%s", bad, out)
		}
	}
}
