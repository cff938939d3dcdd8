package ar9300sim

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/gowrt/gowrt/ath/athsim"
	"github.com/gowrt/gowrt/barrier"
	"github.com/gowrt/gowrt/hwsim"
)

type env struct {
	sys  *hwsim.System
	m    *MAC
	r    *hwsim.Region
	irq  *hwsim.Controller
	air  [][]byte
	tick time.Time
}

type airFunc func([]byte) error

func (f airFunc) Transmit(b []byte) error { return f(b) }

func newEnv(t *testing.T) *env {
	e := &env{sys: hwsim.New(hwsim.Config{Seed: 1, NoPostedWrites: true, NoStaleReads: true})}
	e.irq = e.sys.NewController(hwsim.ControllerConfig{Name: "cpu", Lines: 4})
	e.m = New(e.sys, Config{IRQ: e.irq, Line: 1, Air: airFunc(func(b []byte) error {
		e.air = append(e.air, append([]byte(nil), b...))
		return nil
	})})
	e.r = e.m.Map("wmac")
	e.sys.OnMisuse(func(m hwsim.Misuse) { t.Errorf("misuse: %v", m) })
	return e
}

// wake takes the RTC out of reset and forces the MAC awake (the sequence
// ath/power runs; athsim models it).
func (e *env) wake() {
	e.r.Write32(athsim.RegRC, 0)
	e.r.Write32(athsim.RegRTCReset, athsim.RTCResetEn)
	e.r.Write32(athsim.RegRTCForceWake, athsim.ForceWakeEn)
	for e.r.Read32(athsim.RegRTCStatus)&athsim.RTCStatusMask != athsim.RTCStatusOn {
	}
}

func TestAsleepAccess(t *testing.T) {
	e := newEnv(t)
	if v := e.r.Read32(RegIMR); v != athsim.Dead {
		t.Fatalf("asleep read %#x", v)
	}
	e.r.Write32(RegIMR, 0x40)
	e.wake()
	if v := e.r.Read32(RegIMR); v != 0 {
		t.Fatalf("write while asleep landed: %#x", v)
	}
	if n := e.m.Stats().AsleepAccesses; n != 2 {
		t.Fatalf("%d asleep accesses counted", n)
	}
}

// TestInterruptStatusSemantics: AR_ISR and the secondaries clear on a
// write of 1; AR_ISR_RAC returns AR_ISR and clears everything, latching
// the secondaries into the shadows; the line follows ISR & IMR with IER.
func TestInterruptStatusSemantics(t *testing.T) {
	e := newEnv(t)
	e.wake()
	e.r.Write32(RegIMR, ISRSWBA|ISRTXOK)
	e.r.Write32(RegIER, IEREnable)
	e.sys.Do(func() { e.m.raise(ISRSWBA | ISRRXEOL); e.m.isrS[0] = 0x5; e.m.isrS[2] = 0x100 })
	if e.irq.Pending()&2 == 0 {
		t.Fatal("line not raised for an unmasked cause")
	}
	e.r.Write32(RegISR, ISRSWBA)
	if v := e.r.Read32(RegISR); v != ISRRXEOL {
		t.Fatalf("ISR after W1C %#x", v)
	}
	if e.irq.Pending()&2 != 0 {
		t.Fatal("line still up with only a masked cause")
	}
	e.r.Write32(RegISRS0, 0x1)
	if v := e.r.Read32(RegISRS0); v != 0x4 {
		t.Fatalf("S0 after W1C %#x", v)
	}
	if v := e.r.Read32(RegISRRAC); v != ISRRXEOL {
		t.Fatalf("RAC %#x", v)
	}
	if v := e.r.Read32(RegISR); v != 0 {
		t.Fatalf("ISR after RAC %#x", v)
	}
	if s0, s2, live := e.r.Read32(RegISRS0S), e.r.Read32(RegISRS2S), e.r.Read32(RegISRS0); s0 != 0x4 || s2 != 0x100 || live != 0 {
		t.Fatalf("shadows %#x %#x, live S0 %#x", s0, s2, live)
	}
}

// TestBadDescriptorRefused: a descriptor with a wrong pointer checksum is
// refused with DescCfgErr in its status; nothing goes on the air.
func TestBadDescriptorRefused(t *testing.T) {
	e := newEnv(t)
	e.wake()
	ring, ringBus, _ := e.sys.Mem.AllocCoherent("status", 4*TxStatusSize, 8, barrier.LittleEndian)
	desc, descBus, _ := e.sys.Mem.AllocCoherent("desc", TxDescSize, 128, barrier.LittleEndian)
	buf, bufBus, _ := e.sys.Mem.AllocCoherent("frame", 64, 32, barrier.LittleEndian)
	for i := 0; i < 16; i++ {
		buf.Write32(uint32(4*i), 0x01020304)
	}
	e.r.Write32(RegQStatusStart, uint32(ringBus))
	e.r.Write32(RegQStatusEnd, uint32(ringBus)+4*TxStatusSize)
	w := [TxDescWords]uint32{}
	w[0] = VendorID<<16 | infoTxRxDesc | infoCtrlStat | 1<<infoQCUShift | TxDescWords
	w[2], w[3] = uint32(bufBus), 60<<bufLenShift
	w[10] = 7<<16 | (ptrChecksum(&w) + 1) // wrong checksum
	w[11] = 64
	w[13] = 1 << 16
	for i, v := range w {
		desc.Write32(uint32(4*i), v)
	}
	desc.Barrier()
	e.r.Write32(RegQTXDP0+4, uint32(descBus))
	e.r.Write32(RegQTXE, 1<<1)
	e.sys.Sched.Settle(64)
	var st [9]uint32
	for i := range st {
		st[i] = ring.Read32(uint32(4 * i))
	}
	if st[8]&txsDone == 0 || st[3]&txsDescCfgErr == 0 || st[1]>>16 != 7 || len(e.air) != 0 {
		t.Fatalf("status %#x, %d on air", st, len(e.air))
	}
	if e.m.Stats().TxDescErrors != 1 {
		t.Fatal("not counted")
	}
	_ = binary.LittleEndian
}

// TestBeaconTimers: SWBA fires at its time and period; with nothing in
// the beacon queue at DBA the beacon is counted missed.
func TestBeaconTimers(t *testing.T) {
	e := newEnv(t)
	e.wake()
	e.r.Write32(RegIMR, ISRSWBA)
	e.r.Write32(RegIER, IEREnable)
	e.r.Write32(RegNextTBTT, 10240)
	e.r.Write32(RegNextDBA, 10240-1024)
	e.r.Write32(RegNextSWBA, 10240-6144)
	for _, r := range []uint32{RegBeaconPeriod, RegDBAPeriod, RegSWBAPeriod} {
		e.r.Write32(r, 10240)
	}
	e.r.Write32(RegTimerMode, TimerTBTT|TimerDBA|TimerSWBA)
	start := time.Time{}
	e.m.Tick(start.Add(4 * time.Millisecond))
	if e.r.Read32(RegISR)&ISRSWBA != 0 {
		t.Fatal("SWBA early")
	}
	e.m.Tick(start.Add(5 * time.Millisecond))
	if e.r.Read32(RegISR)&ISRSWBA == 0 || e.irq.Pending()&2 == 0 {
		t.Fatal("no SWBA at 4.096 ms")
	}
	e.m.Tick(start.Add(25 * time.Millisecond))
	if s := e.m.Stats(); s.MissedBeacons != 2 || s.Beacons != 0 {
		t.Fatalf("%+v", s)
	}
}
