package ar71xx

import (
	"errors"
	"testing"
	"time"

	"github.com/gowrt/gowrt/barrier"
)

func TestUSBUnits(t *testing.T) {
	for _, c := range []struct {
		rev   uint32
		units int
		caps  uint32
		tt    bool
	}{
		{0x00A2, 1, 0, false},    // AR7161: OHCI companion, no TT
		{0x00C0, 0, 0, false},    // AR7240: OHCI only
		{0x0100, 1, 0x100, true}, // AR7241
		{0x00B0, 1, 0x100, true}, // AR913x
		{0x1110, 1, 0x100, true}, // AR9331
		{0x2120, 1, 0x100, true}, // AR9344
		{0x1130, 2, 0x100, true}, // QCA9558
	} {
		info, err := Identify(c.rev)
		if err != nil {
			t.Fatal(err)
		}
		u := info.USB()
		if len(u.Units) != c.units {
			t.Fatalf("%s: %d EHCIs, want %d", info.Name, len(u.Units), c.units)
		}
		for i, e := range u.Units {
			if e.CapOffset != c.caps || e.IntegratedTT != c.tt || e.IRQ != CPUIRQUSB || e.Flush != FlushUSB {
				t.Errorf("%s unit %d: %+v", info.Name, i, e)
			}
			if e.IntegratedTT == e.SynopsysIAABug {
				t.Errorf("%s unit %d: the Synopsys IAA defect is the AR71xx core's", info.Name, i)
			}
			if e.IntegratedTT == (e.Companions != 0) {
				t.Errorf("%s unit %d: TT %v with %d companions", info.Name, i, e.IntegratedTT, e.Companions)
			}
			if e.RegOrder != barrier.BigEndian || e.DescOrder != barrier.LittleEndian {
				t.Errorf("%s unit %d: orders %v/%v", info.Name, i, e.RegOrder, e.DescOrder)
			}
			if !info.HasFlush(e.Flush) {
				t.Errorf("%s: no USB flush channel", info.Name)
			}
		}
		if c.units > 0 && u.Units[0].Base != PhysEHCI {
			t.Errorf("%s: EHCI at %#x", info.Name, u.Units[0].Base)
		}
	}
	info, _ := Identify(0x1130)
	if u := info.USB().Units; u[1].Base != PhysEHCI2955x || u[0].IP3Bit != 24 || u[1].IP3Bit != 28 {
		t.Errorf("QCA955x units %+v", u)
	}
}

// TestStartUSB checks each family's reset sequence, write by write, and
// its delays; an unrelated block held in reset stays so.
func TestStartUSB(t *testing.T) {
	for _, c := range []struct {
		rev    uint32
		reg    uint32
		held   uint32   // RESET_MODULE before: bit 15 an unrelated block, USB held
		writes []uint32 // RESET_MODULE values written
		delays []time.Duration
	}{
		{0x00A2, RstModuleAR71xx, 0x8030, []uint32{0x8070, 0x8000},
			[]time.Duration{time.Second, 900 * time.Millisecond}},
		{0x0100, RstModuleOther, 0x8030, []uint32{0x8038, 0x8018, 0x8008},
			[]time.Duration{10 * time.Millisecond, 10 * time.Millisecond, 10 * time.Millisecond}},
		{0x00B0, RstModuleOther, 0x8030, []uint32{0x8430, 0x8410, 0x8400},
			[]time.Duration{10 * time.Millisecond, 10 * time.Millisecond, 10 * time.Millisecond}},
		{0x2120, RstModuleOther, 0x8830, []uint32{0x8838, 0x8828, 0x8028, 0x8008},
			[]time.Duration{time.Millisecond, time.Millisecond, time.Millisecond, time.Millisecond}},
		{0x1130, RstModuleOther, 0x8030, nil, nil},
	} {
		s, _, _, rst, _ := newTestSoC(t, c.rev)
		var delays []time.Duration
		s.Delay = func(d time.Duration) { delays = append(delays, d) }
		rst.set(c.reg, c.held)
		ctrl := newRegs()
		if err := s.StartUSB(ctrl); err != nil {
			t.Fatalf("%s: %v", s.Info.Name, err)
		}
		w := rst.writes(c.reg)
		if len(w) != len(c.writes) {
			t.Fatalf("%s: RESET_MODULE writes %#x, want %#x", s.Info.Name, w, c.writes)
		}
		for i := range w {
			if w[i] != c.writes[i] {
				t.Fatalf("%s: RESET_MODULE writes %#x, want %#x", s.Info.Name, w, c.writes)
			}
		}
		if len(delays) != len(c.delays) {
			t.Fatalf("%s: delays %v, want %v", s.Info.Name, delays, c.delays)
		}
		for i := range delays {
			if delays[i] != c.delays[i] {
				t.Fatalf("%s: delays %v, want %v", s.Info.Name, delays, c.delays)
			}
		}
		if s.Info.Family == AR71xx {
			if ctrl.get(USBCtrlConfig) != 0xf0000 || ctrl.get(USBCtrlFLADJ) != 0x20c00 {
				t.Errorf("AR71xx USB control CONFIG %#x FLADJ %#x", ctrl.get(USBCtrlConfig), ctrl.get(USBCtrlFLADJ))
			}
			if err := s.StartUSB(nil); err == nil {
				t.Error("AR71xx bring-up without the control block accepted")
			}
		} else if len(ctrl.log) != 0 {
			t.Errorf("%s: touched the USB control block: %v", s.Info.Name, ctrl.log)
		}
	}
	s, _, _, _, _ := newTestSoC(t, 0x00C0)
	if err := s.StartUSB(nil); !errors.Is(err, ErrNoUSB) {
		t.Fatalf("AR7240: %v", err)
	}
}
