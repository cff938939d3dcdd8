package sim_test

import (
	"strings"
	"testing"

	"github.com/gowrt/gowrt/board"
	"github.com/gowrt/gowrt/board/ar71xx/boardfile"
	"github.com/gowrt/gowrt/board/sim"
)

// TestTwinUSBBringUp: every twin of a board with USB runs usbport.Start
// on its EHCI models (one per EHCI the description uses) with nothing
// plugged in: no USB port, no error, no misuse; a USB device asked of a
// board without USB is refused.
func TestTwinUSBBringUp(t *testing.T) {
	for _, b := range boardfile.All {
		t.Run(b.Name, func(t *testing.T) {
			logs := &logSink{}
			tw, err := sim.NewTwin(b, sim.TwinConfig{Seed: 9, Log: logs.log})
			if err != nil {
				t.Fatal(err)
			}
			defer tw.Close()
			ports, err := tw.Ports()
			if err != nil {
				t.Fatal(err)
			}
			if len(ports) != len(b.Ports) {
				t.Errorf("ports %v with nothing plugged in", names(ports))
			}
			if len(b.USB) == 0 {
				if tw.USB() != nil {
					t.Error("USB started on a board without USB")
				}
				return
			}
			units := map[int]bool{}
			for _, p := range b.USB {
				units[p.Unit] = true
			}
			if err := tw.USBError(); err != nil || tw.USB() == nil || len(tw.USB().Controllers) != len(units) {
				t.Fatalf("USB: %v, %+v", err, tw.USB())
			}
			for u := range units {
				if tw.EHCI(u) == nil {
					t.Errorf("EHCI %d not modelled", u)
				}
			}
			checkClean(t, tw, logs)
		})
	}
	if _, err := sim.NewTwin(boardfile.AP135, sim.TwinConfig{USB: "nonesuch"}); err == nil || !strings.Contains(err.Error(), "no USB port") {
		t.Errorf("AX88179 on a board without USB: %v", err)
	}
}

func names(ps []board.Port) []string {
	var n []string
	for _, p := range ps {
		n = append(n, p.Name)
	}
	return n
}
