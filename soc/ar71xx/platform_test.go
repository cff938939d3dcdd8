package ar71xx_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/gowrt/gowrt/hwsim"
	"github.com/gowrt/gowrt/soc/ar71xx"
	"github.com/gowrt/gowrt/soc/ar71xx/ar71xxsim"
)

// The platform code (the kernel's hooks on this family) against the
// ar71xxsim models, with hwsim's posted writes and stale reads on: the
// same generic functions soc/ar71xx/baremetal binds to the kernel.

const (
	revAR7161  = 0x00A2
	revAR9132  = 0x00B1
	revAR7241  = 0x0101
	revAR9331  = 0x1110
	revAR9344  = 0x2120
	revQCA9558 = 0x1130
)

var seeds = []uint64{1, 2, 3, 4, 5, 6, 7, 8}

func newSoC(t *testing.T, seed uint64, cfg ar71xxsim.Config) (*hwsim.System, *ar71xxsim.SoC) {
	t.Helper()
	sys := hwsim.New(hwsim.Config{Seed: seed, BigEndianCPU: true})
	cfg.HooksTakeInterrupts = true
	s, err := ar71xxsim.New(sys, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return sys, s
}

func TestFamilyOfMatchesIdentify(t *testing.T) {
	for _, rev := range []uint32{0xA0, 0xA1, 0xA2, 0xB0, 0xB1, 0xC0, 0x100, 0x1100, 0x110, 0x1110, 0x120, 0x1120, 0x2120,
		0x130, 0x1130, 0x2123, 0x1131} {
		info, err := ar71xx.Identify(rev)
		if err != nil {
			t.Fatal(err)
		}
		if f := ar71xx.FamilyOf(rev); f != info.Family {
			t.Errorf("FamilyOf(%#x) = %v, Identify says %v", rev, f, info.Family)
		}
		if n := ar71xx.ChipName(rev); n != info.Name {
			t.Errorf("ChipName(%#x) = %q, Identify says %q", rev, n, info.Name)
		}
	}
	if f := ar71xx.FamilyOf(0x4242); f != 0 {
		t.Errorf("FamilyOf(unknown) = %v", f)
	}
	if n := ar71xx.ChipName(0x4242); n != "unknown" {
		t.Errorf("ChipName(unknown) = %q", n)
	}
}

// TestConsole: output through the model's UART (both UART kinds), input
// through it, no byte lost to a busy transmitter.
func TestConsole(t *testing.T) {
	for _, rev := range []uint32{revAR7161, revAR9331, revAR9344, revQCA9558} {
		for _, seed := range seeds {
			sys, s := newSoC(t, seed, ar71xxsim.Config{Rev: rev})
			p := s.Phys()
			msg := "gowrt console\r\n"
			for i := 0; i < len(msg); i++ {
				ar71xx.ConsolePutc(p, msg[i])
			}
			if got := string(s.UART.Output()); got != msg {
				t.Errorf("%s seed %d: UART sent %q, want %q", s.Info.Name, seed, got, msg)
			}
			if c := ar71xx.ConsoleGetc(p); c != -1 {
				t.Errorf("%s: Getc with nothing typed = %d", s.Info.Name, c)
			}
			s.UART.Type([]byte("ok"))
			var got []byte
			for i := 0; i < 10; i++ {
				c := ar71xx.ConsoleGetc(p)
				if c < 0 {
					break
				}
				got = append(got, byte(c))
			}
			if string(got) != "ok" {
				t.Errorf("%s seed %d: received %q, want \"ok\"", s.Info.Name, seed, got)
			}
			if m := sys.Misuses(); len(m) > 0 {
				t.Errorf("%s seed %d: %v", s.Info.Name, seed, m)
			}
		}
	}
}

// TestHazardConsoleNoWait: a console that does not wait for the
// transmitter loses bytes, and the model says so.
func TestHazardConsoleNoWait(t *testing.T) {
	sys, s := newSoC(t, 1, ar71xxsim.Config{Rev: revAR9344})
	for _, c := range []byte("lost") {
		s.Phys().Write32(ar71xx.PhysUART+ar71xx.UARTRBR, uint32(c))
		s.Phys().Barrier()
	}
	if s.UART.Overruns == 0 || len(sys.Misuses()) == 0 {
		t.Fatalf("no overrun reported: sent %q", s.UART.Output())
	}
}

// mustPoll checks what IntrPoll returns for pins.
func mustPoll(t *testing.T, s *ar71xxsim.SoC, pins uint32, want int, what string) {
	t.Helper()
	if got := ar71xx.IntrPoll(s.Phys(), pins); got != want {
		t.Errorf("%s: %s: IntrPoll(%#x) = %d, want %d (MISC status %#x)", s.Info.Name, what, pins, got, want, s.Reset.Status())
	}
}

const pinMisc = 1 << 6 // IP6

// TestIntrConsoleLine: the console's receive line as the kernel handles
// it: taken, drained, ended, and quiet afterwards on every family.
func TestIntrConsoleLine(t *testing.T) {
	for _, rev := range []uint32{revAR7161, revAR9331, revAR9344, revQCA9558} {
		for _, seed := range seeds {
			_, s := newSoC(t, seed, ar71xxsim.Config{Rev: rev})
			p := s.Phys()
			ar71xx.IntrInit(p)
			ar71xx.ConsoleEnableRX(p)
			if pins := ar71xx.IntrUnmask(p, ar71xx.MiscUART); pins != 0 {
				t.Errorf("%s: unmasking a MISC line asks for CPU pins %#x", s.Info.Name, pins)
			}
			mustPoll(t, s, pinMisc, -1, "nothing typed")
			s.UART.Type([]byte("x"))
			mustPoll(t, s, pinMisc, ar71xx.MiscUART, "typed")
			mustPoll(t, s, 0, -1, "IP6 not pending")
			if c := ar71xx.ConsoleGetc(p); c != 'x' {
				t.Errorf("%s: Getc = %d", s.Info.Name, c)
			}
			ar71xx.IntrEOI(p, ar71xx.MiscUART)
			mustPoll(t, s, pinMisc, -1, "drained and ended")
		}
	}
}

// TestIntrGoroutineLine: a line delivered to a goroutine: the kernel
// masks it and ends it while the device still asserts; the handler clears
// the device's cause, acknowledges (on controllers that latch) and
// unmasks. Without the acknowledgement a latching controller (AR934x,
// QCA955x) fires again for the old event; AR71xx's does not latch.
func TestIntrGoroutineLine(t *testing.T) {
	for _, tc := range []struct {
		rev     uint32
		latches bool
	}{{revAR7161, false}, {revAR9132, false}, {revAR7241, true}, {revAR9344, true}, {revQCA9558, true}} {
		for _, ack := range []bool{true, false} {
			name := fmt.Sprintf("%#x/ack=%v", tc.rev, ack)
			sys, s := newSoC(t, 3, ar71xxsim.Config{Rev: tc.rev})
			p := s.Phys()
			ar71xx.IntrInit(p)
			ar71xx.IntrUnmask(p, ar71xx.MiscGPIO)
			sys.Do(func() { s.Reset.RaiseMisc(ar71xx.MiscGPIO) })
			mustPoll(t, s, pinMisc, ar71xx.MiscGPIO, name+": raised")
			// Trap: mask, end; the device still asserts.
			ar71xx.IntrMask(p, ar71xx.MiscGPIO)
			ar71xx.IntrEOI(p, ar71xx.MiscGPIO)
			mustPoll(t, s, pinMisc, -1, name+": masked")
			// Handler goroutine: clear the cause, ack, unmask.
			sys.Do(func() { s.Reset.LowerMisc(ar71xx.MiscGPIO) })
			if ack {
				ar71xx.IntrEOI(p, ar71xx.MiscGPIO)
			}
			ar71xx.IntrUnmask(p, ar71xx.MiscGPIO)
			want := -1
			if tc.latches && !ack {
				want = ar71xx.MiscGPIO // the stale latch fires again
			}
			mustPoll(t, s, pinMisc, want, name+": handled and unmasked")
		}
	}
}

// TestIntrEOIClearsOnlyItsLine: acknowledging one latched line leaves
// another latched line pending (the ack writes STATUS back with only its
// own bit cleared).
func TestIntrEOIClearsOnlyItsLine(t *testing.T) {
	for _, seed := range seeds {
		sys, s := newSoC(t, seed, ar71xxsim.Config{Rev: revAR9344})
		p := s.Phys()
		ar71xx.IntrInit(p)
		ar71xx.IntrUnmask(p, ar71xx.MiscGPIO)
		ar71xx.IntrUnmask(p, ar71xx.MiscTimer2)
		sys.Do(func() {
			s.Reset.RaiseMisc(ar71xx.MiscGPIO)
			s.Reset.LowerMisc(ar71xx.MiscGPIO) // latched, source gone
			s.Reset.RaiseMisc(ar71xx.MiscTimer2)
			s.Reset.LowerMisc(ar71xx.MiscTimer2)
		})
		mustPoll(t, s, pinMisc, ar71xx.MiscGPIO, "both latched")
		ar71xx.IntrEOI(p, ar71xx.MiscGPIO)
		mustPoll(t, s, pinMisc, ar71xx.MiscTimer2, "GPIO acked")
		if pend := ar71xx.IntrPending(p, 0); pend != 1<<ar71xx.MiscTimer2 {
			t.Errorf("seed %d: pending %#x after acking GPIO", seed, pend)
		}
		ar71xx.IntrEOI(p, ar71xx.MiscTimer2)
		mustPoll(t, s, pinMisc, -1, "both acked")
	}
}

// TestIntrCPUPins: IP2-IP5 are lines 32-35, masked in CP0 Status by the
// kernel: Mask and Unmask return the pin and touch no register.
func TestIntrCPUPins(t *testing.T) {
	_, s := newSoC(t, 1, ar71xxsim.Config{Rev: revQCA9558})
	p := s.Phys()
	ar71xx.IntrInit(p)
	for n := 0; n < 4; n++ {
		line := ar71xx.LineIP2 + n
		pin := uint32(1) << (2 + n)
		mustPoll(t, s, pin, line, fmt.Sprintf("IP%d", 2+n))
		if got := ar71xx.IntrMask(p, line); got != pin {
			t.Errorf("Mask(%d) = %#x, want %#x", line, got, pin)
		}
		if got := ar71xx.IntrUnmask(p, line); got != pin {
			t.Errorf("Unmask(%d) = %#x, want %#x", line, got, pin)
		}
		if pend := ar71xx.IntrPending(p, pin); pend != 1<<uint(line) {
			t.Errorf("Pending(pin %#x) = %#x", pin, pend)
		}
	}
	// A CPU line comes before the MISC summary; IP7 (timer) is not a line.
	mustPoll(t, s, 1<<4|pinMisc, ar71xx.LineIP2+2, "IP4 and IP6")
	mustPoll(t, s, 1<<7, -1, "IP7")
	if got := ar71xx.IntrMask(p, ar71xx.IntrLines); got != 0 {
		t.Errorf("Mask(out of range) = %#x", got)
	}
}

// TestCountHz: the Count rate (half the CPU clock) from the model's PLL
// registers, as each family's boot loader leaves them.
func TestCountHz(t *testing.T) {
	for _, tc := range []struct {
		rev   uint32
		clock ar71xxsim.Clock
	}{
		{revAR7161, ar71xxsim.Clock{}},                   // 680 MHz
		{revAR7161, ar71xxsim.Clock{CPUHz: 400_000_000}}, // an AR7130's rate
		{revAR9132, ar71xxsim.Clock{}},
		{revAR7241, ar71xxsim.Clock{CPUHz: 360_000_000}},
		{revAR9331, ar71xxsim.Clock{RefHz: 25_000_000}},
		{revAR9331, ar71xxsim.Clock{RefHz: 40_000_000}},
		{revAR9331, ar71xxsim.Clock{RefHz: 25_000_000, Source: ar71xxsim.Bypass}},
		{revAR9344, ar71xxsim.Clock{}},                                                 // 560 MHz from 40 MHz
		{revAR9344, ar71xxsim.Clock{RefHz: 25_000_000}},                                // fractional NINT
		{revAR9344, ar71xxsim.Clock{RefHz: 40_000_000, Source: ar71xxsim.FromDDRPLL}},  // CPU from the DDR PLL
		{revAR9344, ar71xxsim.Clock{RefHz: 25_000_000, Source: ar71xxsim.FromSRIF}},    // SRIF DPLL
		{revAR9344, ar71xxsim.Clock{RefHz: 40_000_000, Source: ar71xxsim.Bypass}},      // reference clock
		{revQCA9558, ar71xxsim.Clock{}},                                                // 720 MHz
		{revQCA9558, ar71xxsim.Clock{RefHz: 25_000_000, CPUHz: 750_000_000}},           // fractional
		{revQCA9558, ar71xxsim.Clock{RefHz: 40_000_000, Source: ar71xxsim.FromDDRPLL}}, // inverted select bit
		{revQCA9558, ar71xxsim.Clock{RefHz: 25_000_000, Source: ar71xxsim.Bypass}},
	} {
		_, s := newSoC(t, 1, ar71xxsim.Config{Rev: tc.rev, Clock: tc.clock})
		want := tc.clock.CPUHz
		if want == 0 {
			want = map[ar71xx.Family]uint32{ar71xx.AR71xx: 680e6, ar71xx.AR934x: 560e6, ar71xx.QCA955x: 720e6}[s.Info.Family]
			if want == 0 {
				want = 400e6
			}
		}
		if tc.clock.Source == ar71xxsim.Bypass {
			want = tc.clock.RefHz
		}
		got := ar71xx.CountHz(s.Phys())
		// A fractional PLL is programmed to within 1/64 of the
		// reference: allow that much.
		if d := int64(got)*2 - int64(want); d < -int64(tc.clock.RefHz/32) || d > int64(tc.clock.RefHz/32) || got == 0 {
			t.Errorf("%s %+v: Count at %d Hz, want %d (CPU %d Hz)", s.Info.Name, tc.clock, got, want/2, want)
		} else {
			t.Logf("%s %+v: Count at %d Hz", s.Info.Name, tc.clock, got)
		}
	}
}

// TestChipReset: the whole-chip reset reaches RESET_MODULE, at 0x24 on
// AR71xx and 0x1C after.
func TestChipReset(t *testing.T) {
	for _, rev := range []uint32{revAR7161, revAR9132, revAR9331, revAR9344, revQCA9558} {
		for _, seed := range seeds[:3] {
			_, s := newSoC(t, seed, ar71xxsim.Config{Rev: rev})
			ar71xx.ChipReset(s.Phys())
			if n := s.Reset.ChipResets(); n != 1 {
				t.Errorf("%s seed %d: %d chip resets, want 1", s.Info.Name, seed, n)
			}
		}
	}
}

// aliasRAM is RAM of size bytes that repeats every size bytes, as the DDR
// controller decodes it, with varied contents.
type aliasRAM struct{ size uint32 }

func (r aliasRAM) Read32(pa uint32) uint32 {
	a := pa % r.size
	return a*2654435761 ^ a>>7
}
func (aliasRAM) Write32(pa, v uint32) {}
func (aliasRAM) Barrier()             {}

func TestRAMSize(t *testing.T) {
	for _, mib := range []uint32{2, 16, 32, 64, 128, 256} {
		if got := ar71xx.RAMSize(aliasRAM{mib << 20}, 0x100000); got != mib<<20 {
			t.Errorf("%d MiB of RAM: RAMSize = %d MiB", mib, got>>20)
		}
	}
}

// TestWatchdogHz: the watchdog's rate from the PLL registers matches the
// model's clock (AHB on AR71xx to AR933x, the reference after).
func TestWatchdogHz(t *testing.T) {
	for _, tc := range []struct {
		rev   uint32
		clock ar71xxsim.Clock
	}{
		{revAR7161, ar71xxsim.Clock{}},
		{revAR7161, ar71xxsim.Clock{CPUHz: 400_000_000}},
		{revAR9132, ar71xxsim.Clock{}},
		{revAR7241, ar71xxsim.Clock{CPUHz: 360_000_000}},
		{revAR9331, ar71xxsim.Clock{RefHz: 25_000_000}},
		{revAR9331, ar71xxsim.Clock{RefHz: 40_000_000, Source: ar71xxsim.Bypass}},
		{revAR9344, ar71xxsim.Clock{}},
		{revAR9344, ar71xxsim.Clock{RefHz: 25_000_000, Source: ar71xxsim.FromSRIF}},
		{revQCA9558, ar71xxsim.Clock{RefHz: 25_000_000}},
	} {
		_, s := newSoC(t, 1, ar71xxsim.Config{Rev: tc.rev, Clock: tc.clock})
		got, want := ar71xx.WatchdogHz(s.Phys()), s.Reset.WatchdogHz()
		if got != want || got == 0 {
			t.Errorf("%s %+v: watchdog at %d Hz, the model counts at %d Hz", s.Info.Name, tc.clock, got, want)
		}
	}
}

// TestWatchdogTimer: armed and petted, the model's watchdog never fires;
// left alone for the armed timeout it resets the chip once and reports
// LAST_RESET; disarmed, it never fires.
func TestWatchdogTimer(t *testing.T) {
	for _, rev := range []uint32{revAR7161, revAR9331, revAR9344, revQCA9558} {
		_, s := newSoC(t, 3, ar71xxsim.Config{Rev: rev})
		w := ar71xx.NewWatchdogTimer(s.ResetRegion, ar71xx.WatchdogHz(s.Phys()))
		armed, err := w.Arm(30 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		want := min(30*time.Second, w.MaxTimeout())
		if d := armed - want; d < -time.Millisecond || d > time.Millisecond {
			t.Fatalf("%s: armed %v for 30 s (max %v)", s.Info.Name, armed, w.MaxTimeout())
		}
		for i := 0; i < 10; i++ {
			s.Reset.Elapse(armed * 3 / 4)
			w.Pet()
		}
		if n := s.Reset.WatchdogResets(); n != 0 || w.LastResetByWatchdog() {
			t.Fatalf("%s: petted watchdog fired %d times", s.Info.Name, n)
		}
		s.Reset.Elapse(armed - time.Millisecond)
		if n := s.Reset.WatchdogResets(); n != 0 {
			t.Fatalf("%s: fired before its timeout", s.Info.Name)
		}
		s.Reset.Elapse(2 * time.Millisecond)
		if n := s.Reset.WatchdogResets(); n != 1 || !w.LastResetByWatchdog() {
			t.Fatalf("%s: %d watchdog resets after the timeout (last reset by watchdog %v), want 1", s.Info.Name, n, w.LastResetByWatchdog())
		}
		if _, err := w.Arm(time.Second); err != nil {
			t.Fatal(err)
		}
		if !w.LastResetByWatchdog() {
			t.Fatalf("%s: arming cleared LAST_RESET", s.Info.Name)
		}
		w.Disarm()
		s.Reset.Elapse(time.Hour)
		if n := s.Reset.WatchdogResets(); n != 1 {
			t.Fatalf("%s: disarmed watchdog fired", s.Info.Name)
		}
		t.Logf("%s: watchdog at %d Hz, 30 s armed as %v", s.Info.Name, ar71xx.WatchdogHz(s.Phys()), armed)
	}
}
