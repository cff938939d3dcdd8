package axge

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gowrt/gowrt/usbnet/axge/axgesim"
	"github.com/gowrt/gowrt/usbnet/usb"
)

func TestIdentify(t *testing.T) {
	for _, tc := range []struct {
		v, p, bcd uint16
		want      Variant
		ok        bool
	}{
		{0x0b95, 0x1790, 0x0100, AX88179, true},
		{0x0b95, 0x1790, 0x0200, AX88179A, true},
		{0x0b95, 0x1790, 0x0300, AX88179A, true},
		{0x0b95, 0x178a, 0x0100, AX88178A, true},
		{0x0b95, 0x7720, 0x0100, 0, false}, // AX88772: another driver
		{0x0525, 0x1790, 0x0100, 0, false},
	} {
		got, ok := Identify(tc.v, tc.p, tc.bcd)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("%04x:%04x bcd %04x: %v %v, want %v %v", tc.v, tc.p, tc.bcd, got, ok, tc.want, tc.ok)
		}
	}
}

func TestBulkInTable(t *testing.T) {
	for _, tc := range []struct {
		speed int
		plsr  uint8
		want  BulkInCtl
	}{
		{1000, PLSRUSBSuper, BulkInSuper1000},
		{1000, PLSRUSBHigh, BulkInHigh1000},
		{1000, PLSRUSBFull, BulkInSlow},
		{100, PLSRUSBSuper, BulkIn100},
		{100, PLSRUSBHigh, BulkIn100},
		{100, PLSRUSBFull, BulkInSlow},
		{10, PLSRUSBHigh, BulkInSlow},
	} {
		if got := BulkInFor(tc.speed, tc.plsr); got != tc.want {
			t.Errorf("%d Mb/s, PLSR %#x: %x, want %x", tc.speed, tc.plsr, got, tc.want)
		}
	}
	if BulkInHigh1000.Timer() != 0x0320 || BulkInHigh1000.SizeKiB() != 0x16 {
		t.Error("field accessors")
	}
}

func TestPHYSRDecode(t *testing.T) {
	for sr, want := range map[uint16]Media{
		0x0000: {},
		0xA400: {Up: true, SpeedMbps: 1000, FullDuplex: true},
		0x6400: {Up: true, SpeedMbps: 100, FullDuplex: true},
		0x4400: {Up: true, SpeedMbps: 100},
		0x2400: {Up: true, SpeedMbps: 10, FullDuplex: true},
		0xA000: {}, // speed bits without LINK: down
	} {
		if got := DecodePHYSR(sr); got != want {
			t.Errorf("PHYSR %#04x: %+v, want %+v", sr, got, want)
		}
	}
}

// TestInitAndStatchg brings the chip up through the USB core and checks
// what the model was left with, then walks the link through speeds.
func TestInitAndStatchg(t *testing.T) {
	up1000 := axgesim.Media{Up: true, SpeedMbps: 1000, FullDuplex: true, Pause: true}
	for _, tc := range []struct {
		name    string
		speed   usb.Speed
		bcd     uint16
		variant Variant
		q1000   [5]byte
	}{
		{"AX88179 high-speed", usb.SpeedHigh, axgesim.BCD179, AX88179, BulkInHigh1000},
		{"AX88179A super-speed", usb.SpeedSuper, axgesim.BCD179A, AX88179A, BulkInSuper1000},
		{"AX88179 full-speed", usb.SpeedFull, axgesim.BCD179, AX88179, BulkInSlow},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, axgesim.Config{Speed: tc.speed, BCDDevice: tc.bcd, Link: up1000}, tc.variant, nil)
			r.init(t)
			if r.chip.MAC() != testMAC {
				t.Errorf("MAC %v, want the chip's NODE_ID %x", r.chip.MAC(), testMAC)
			}
			if got := r.model.QCtrl(); got != tc.q1000 {
				t.Errorf("QCTRL %x, want %x", got, tc.q1000)
			}
			if got, want := r.model.MSR(), uint16(MSRRxEnable|MSRFullDuplex|MSRTxFlowCtl|MSRRxFlowCtl|MSRGigabit|MSREn125MHz); got != want {
				t.Errorf("MSR %#04x, want %#04x", got, want)
			}
			st := r.model.Stats()
			if tc.variant == AX88179A {
				if r.model.FirmwareMode() != 0 || st.FirmwareModes != 1 {
					t.Errorf("179A firmware mode %d after %d requests, want compatible (0)", r.model.FirmwareMode(), st.FirmwareModes)
				}
			} else if st.FirmwareModes != 0 {
				t.Errorf("firmware-mode request sent to an %v", tc.variant)
			}
			if m := r.chip.Media(); m != (Media{Up: true, SpeedMbps: 1000, FullDuplex: true, Pause: true}) {
				t.Errorf("media %+v", m)
			}
			// 100 full duplex, then down, then 10 half duplex.
			r.model.SetLink(axgesim.Media{Up: true, SpeedMbps: 100, FullDuplex: true, Pause: true})
			if err := r.chip.Tick(); err != nil {
				t.Fatal(err)
			}
			want100 := BulkIn100
			if tc.speed == usb.SpeedFull {
				want100 = BulkInSlow
			}
			if r.model.QCtrl() != want100 || r.model.MSR() != MSRRxEnable|MSRFullDuplex|MSRTxFlowCtl|MSRRxFlowCtl|MSR100 {
				t.Errorf("100FD: QCTRL %x MSR %#04x", r.model.QCtrl(), r.model.MSR())
			}
			r.model.SetLink(axgesim.Media{})
			if err := r.chip.Tick(); err != nil {
				t.Fatal(err)
			}
			if r.chip.Media().Up {
				t.Error("link still up")
			}
			r.model.SetLink(axgesim.Media{Up: true, SpeedMbps: 10})
			if err := r.chip.Tick(); err != nil {
				t.Fatal(err)
			}
			if r.model.QCtrl() != BulkInSlow || r.model.MSR() != MSRRxEnable {
				t.Errorf("10HD: QCTRL %x MSR %#04x", r.model.QCtrl(), r.model.MSR())
			}
			// Init's pass reported 1000, then 100, down, 10.
			if got := r.chip.Stats.LinkChanges.Load(); got != 4 {
				t.Errorf("%d link changes, want 4", got)
			}
			st = r.model.Stats()
			if st.TornMedia != 0 || st.Flaps != 0 || r.chip.Stats.TornMedia.Load() != 0 {
				t.Errorf("torn %d (driver %d), flaps %d", st.TornMedia, r.chip.Stats.TornMedia.Load(), st.Flaps)
			}
			if err := r.chip.Stop(); err != nil || r.model.MSR()&MSRRxEnable != 0 {
				t.Errorf("Stop: %v, MSR %#04x", err, r.model.MSR())
			}
			if err := r.chip.Detach(); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestFailedReadChangesNothing: a PHY read that fails leaves the media,
// the link and the chip's programming alone, and the error says so.
func TestFailedReadChangesNothing(t *testing.T) {
	var plsr atomic.Int32
	r := newRig(t, axgesim.Config{Link: axgesim.Media{Up: true, SpeedMbps: 1000, FullDuplex: true}}, AX88179,
		func(d ControlDevice) ControlDevice { return failPLSR{d, &plsr} })
	r.init(t)
	before := r.model.Stats()
	r.model.FailNextControl(1)
	err := r.chip.Tick()
	if !errors.Is(err, usb.ErrStall) {
		t.Fatalf("Tick: %v, want a stall", err)
	}
	if !r.chip.Media().Up || r.chip.Stats.LinkChanges.Load() != 1 || r.chip.Stats.ControlErrors.Load() != 1 {
		t.Fatalf("media %+v, %d link changes, %d control errors", r.chip.Media(), r.chip.Stats.LinkChanges.Load(), r.chip.Stats.ControlErrors.Load())
	}
	if after := r.model.Stats(); after.Reprograms != before.Reprograms || after.MSRWrites != before.MSRWrites {
		t.Fatal("a failed read reprogrammed the chip")
	}
	// A failed statchg (its PLSR read fails) is retried by the next tick.
	r.model.SetLink(axgesim.Media{Up: true, SpeedMbps: 100, FullDuplex: true})
	plsr.Store(1)
	if err := r.chip.Tick(); err == nil {
		t.Fatal("Tick with PLSR failing succeeded")
	}
	if r.model.QCtrl() == BulkIn100 {
		t.Fatal("QCTRL programmed although statchg failed")
	}
	if err := r.chip.Tick(); err != nil {
		t.Fatal(err)
	}
	if r.model.QCtrl() != BulkIn100 || r.chip.Stats.LinkChanges.Load() != 2 {
		t.Fatalf("QCTRL %x after the retry, %d link changes", r.model.QCtrl(), r.chip.Stats.LinkChanges.Load())
	}
}

// failPLSR fails the next PLSR read when armed.
type failPLSR struct {
	ControlDevice
	armed *atomic.Int32
}

func (f failPLSR) Control(s usb.Setup, data []byte, timeout time.Duration) (int, error) {
	if s.Request == ReqAccessMAC && s.Value == RegPLSR && s.In() && f.armed.CompareAndSwap(1, 0) {
		return 0, usb.ErrTimeout
	}
	return f.ControlDevice.Control(s, data, timeout)
}
