package boardfile

import (
	"errors"
	"testing"

	"github.com/gowrt/gowrt/soc/ar71xx"
)

// TestUSBPorts: the described boards' USB ports name EHCIs their SoCs
// have, and each bad port is refused.
func TestUSBPorts(t *testing.T) {
	want := map[string]int{"tl-wdr4300": 1, "tl-wdr3600": 1, "archer-c7-v2": 2, "carambola2": 1, "rspro": 1, "ap135": 0}
	for _, b := range All {
		if len(b.USB) != want[b.Name] {
			t.Errorf("%s: %d USB ports, want %d", b.Name, len(b.USB), want[b.Name])
		}
		info, err := ar71xx.Identify(b.Rev)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range b.USB {
			if p.Unit >= len(info.USB().Units) {
				t.Errorf("%s: %v on an EHCI the %s lacks", b.Name, p, info.Name)
			}
		}
	}
	if TLWDR4300.USBRootPorts(0) != 1 || ArcherC7v2.USBRootPorts(1) != 1 || AP135.USBRootPorts(0) != 0 {
		t.Error("USBRootPorts")
	}
	cases := map[string]func(b *Board){
		"no ehci":      func(b *Board) { b.USB[0].Unit = 1 },
		"port 0":       func(b *Board) { b.USB[0].Port = 0 },
		"port 16":      func(b *Board) { b.USB[0].Port = 16 },
		"no label":     func(b *Board) { b.USB[0].Label = "" },
		"twice":        func(b *Board) { b.USB = append(b.USB, USBPort{Label: "usb9", Unit: 0, Port: 1}) },
		"same label":   func(b *Board) { b.USB = append(b.USB, USBPort{Label: "usb", Unit: 0, Port: 2}) },
		"hub negative": func(b *Board) { b.USB[0].HubPorts = -1 },
	}
	for name, mutate := range cases {
		b := *TLWDR4300
		b.USB = append([]USBPort(nil), TLWDR4300.USB...)
		mutate(&b)
		if err := b.Validate(); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: Validate = %v, want ErrInvalid", name, err)
		}
	}
	// The AR7240 has no EHCI: a USB port on one is refused.
	b := *TLWDR4300
	b.Rev = ar71xx.RevMajor7240
	b.USB = []USBPort{{Label: "usb", Unit: 0, Port: 1}}
	if err := b.validateUSB(); !errors.Is(err, ErrInvalid) {
		t.Errorf("AR7240 with USB: %v", err)
	}
}
