package ehcisim

import (
	"strings"
	"testing"
	"time"

	"github.com/gowrt/gowrt/barrier"
	"github.com/gowrt/gowrt/hwsim"
	"github.com/gowrt/gowrt/usbnet/usb"
	"github.com/gowrt/gowrt/usbnet/usbsim"
)

// fn is a function that only has a speed: the register tests never send
// it a transaction.
type fn struct {
	speed  usb.Speed
	resets int
}

func (f *fn) Speed() usb.Speed                                       { return f.speed }
func (f *fn) Reset()                                                 { f.resets++ }
func (f *fn) Setup(uint8, [8]byte) usbsim.Handshake                  { return usbsim.NoResponse }
func (f *fn) In(uint8, uint8, []byte) (int, uint8, usbsim.Handshake) { return 0, 0, usbsim.NoResponse }
func (f *fn) Out(uint8, uint8, uint8, []byte) usbsim.Handshake       { return usbsim.NoResponse }

func newModel(t *testing.T, cfg Config) (*hwsim.System, *Controller, *hwsim.Region) {
	t.Helper()
	sys := hwsim.New(hwsim.Config{Seed: 1, BigEndianCPU: true, NoPostedWrites: true, NoStaleReads: true, NoEviction: true})
	c := New(sys, nil, cfg)
	return sys, c, c.Map("ehci")
}

func ruleBroken(sys *hwsim.System, what string) bool {
	for _, m := range sys.Misuses() {
		if m.Kind == hwsim.ModelRule && strings.Contains(m.Detail, what) {
			return true
		}
	}
	return false
}

// TestCapabilityLanes: CAPLENGTH and HCIVERSION through 8- and 16-bit
// reads land in the lanes of the register block's byte order.
func TestCapabilityLanes(t *testing.T) {
	for _, o := range []barrier.Order{barrier.BigEndian, barrier.LittleEndian} {
		_, _, r := newModel(t, Config{CapLength: 0x40, RegOrder: o})
		if w := r.Read32(0); w != 0x0100_0040 {
			t.Fatalf("%v: capability word %#x", o, w)
		}
		capOff, verOff := uint32(0), uint32(2)
		if o == barrier.BigEndian {
			capOff, verOff = 3, 0
		}
		if v := r.Read8(capOff); v != 0x40 {
			t.Errorf("%v: CAPLENGTH byte at %d = %#x", o, capOff, v)
		}
		if v := r.Read16(verOff); v != 0x0100 {
			t.Errorf("%v: HCIVERSION at %d = %#x", o, verOff, v)
		}
	}
}

// TestRules: the register rules the model enforces.
func TestRules(t *testing.T) {
	const op = 0x20
	sys, _, r := newModel(t, Config{})
	r.Write32(op+oAsync, 0x1000)
	r.Write32(op+oCmd, cRun)
	r.Write32(op+oCmd, cRun|cReset)
	if !ruleBroken(sys, "HCRESET while the controller runs") {
		t.Error("HCRESET of a running controller not reported")
	}
	r.Write32(op+oAsync, 0x1010)
	if !ruleBroken(sys, "not 32-byte aligned") {
		t.Error("misaligned ASYNCLISTADDR not reported")
	}
	r.Write16(op+oCmd, 1)
	if !ruleBroken(sys, "written as words") {
		t.Error("16-bit register write not reported")
	}

	sys, _, r = newModel(t, Config{IntegratedTT: true, CapLength: 0x40})
	r.Write32(0x40+oCmd, cRun)
	if !ruleBroken(sys, "idle mode") || r.Read32(0x40+oSts)&sHalted == 0 {
		t.Error("a ChipIdea core ran without host mode")
	}
	r.Write32(0x40+oUSBMod, 3)
	r.Write32(0x40+oCmd, cRun)
	if r.Read32(0x40+oSts)&sHalted != 0 {
		t.Error("host-mode core did not run")
	}
}

// TestPortReset: a short reset is reported; a high-speed device enables
// the port, a full-speed one does not without a TT (and does with one,
// PSPD saying full).
func TestPortReset(t *testing.T) {
	for _, tc := range []struct {
		tt      bool
		speed   usb.Speed
		enabled bool
		pspd    uint32
	}{
		{false, usb.SpeedHigh, true, 0},
		{false, usb.SpeedFull, false, 0},
		{true, usb.SpeedFull, true, 0},
		{true, usb.SpeedHigh, true, 2},
		{true, usb.SpeedLow, true, 1},
	} {
		sys, c, r := newModel(t, Config{IntegratedTT: tc.tt, Companions: 1})
		d := &fn{speed: tc.speed}
		c.Attach(1, d)
		const port = 0x20 + oPort
		r.Write32(0x20+oCfg, 1)
		if v := r.Read32(port); v&pCCS == 0 || v&pPO != 0 {
			t.Fatalf("attached port %#x", v)
		}
		r.Write32(port, pPP|pPR)
		r.Write32(port, pPP)
		if !ruleBroken(sys, "reset held") {
			t.Error("a short port reset was not reported")
		}
		r.Write32(port, pPP|pPR)
		time.Sleep(minPortReset)
		r.Write32(port, pPP)
		v := r.Read32(port)
		if (v&pPE != 0) != tc.enabled || v>>26&3 != tc.pspd || d.resets != 2 {
			t.Errorf("tt %v %v device: PORTSC %#x after reset (resets %d)", tc.tt, tc.speed, v, d.resets)
		}
	}
}
