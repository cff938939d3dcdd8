package ar9300_test

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	"github.com/gowrt/gowrt/ath/airtime"
	"github.com/gowrt/gowrt/ath/ar9300"
	"github.com/gowrt/gowrt/ath/ar9300/ar9300sim"
	"github.com/gowrt/gowrt/ath/power"
	"github.com/gowrt/gowrt/busdma"
	"github.com/gowrt/gowrt/hwsim"
	"github.com/gowrt/gowrt/wlan/radio"
)

var cpuBig = binary.NativeEndian.Uint16([]byte{1, 0}) != 1

var (
	apMAC   = [6]byte{0x02, 0, 0, 0, 0, 0x01}
	peerMAC = [6]byte{0x02, 0, 0, 0, 0, 0x02}
	bcast   = [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	epoch   = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
)

type rigOpts struct {
	seed      uint64
	hw        hwsim.Config
	cfg       ar9300.Config // sizes only
	sim       ar9300sim.Config
	power     func(p *power.Chip) ar9300.Power
	noMisuse  bool
	wrongHook func(d *ar9300.Driver)
	mac       [6]byte // station address; zero: apMAC
	// plat wraps the DMA platform the driver is given (wrong-code
	// variants from internal/wrongcode).
	plat func(busdma.Platform) busdma.Platform
}

// sink collects what the model puts on the air.
type sink struct{ frames [][]byte }

func (s *sink) Transmit(f []byte) error {
	s.frames = append(s.frames, append([]byte(nil), f...))
	return nil
}

type rxFrame struct {
	frame []byte
	st    radio.RxStatus
}

type rig struct {
	t      testing.TB
	sys    *hwsim.System
	mac    *ar9300sim.MAC
	regs   *hwsim.Region
	irq    *hwsim.Controller
	pw     *power.Chip
	drv    *ar9300.Driver
	air    *sink
	now    time.Time
	got    []rxFrame
	keep   bool
	rxN    int
	misuse []hwsim.Misuse
}

func (r *rig) Receive(f []byte, st *radio.RxStatus) {
	r.rxN++
	if r.keep {
		r.got = append(r.got, rxFrame{append([]byte(nil), f...), *st})
	}
}

func newRig(t testing.TB, o rigOpts) *rig {
	t.Helper()
	hc := o.hw
	hc.Seed = o.seed
	hc.BigEndianCPU = cpuBig
	sys := hwsim.New(hc)
	r := &rig{t: t, sys: sys, air: &sink{}, now: epoch, keep: true}
	sys.OnMisuse(func(m hwsim.Misuse) { r.misuse = append(r.misuse, m) })
	r.irq = sys.NewController(hwsim.ControllerConfig{Name: "cpu", Lines: 8})
	sc := o.sim
	sc.IRQ, sc.Line, sc.Epoch = r.irq, 2, epoch
	if sc.Air == nil {
		sc.Air = r.air
	}
	r.mac = ar9300sim.New(sys, sc)
	r.regs = r.mac.Map("wmac")
	r.pw = power.New("wmac", r.regs)
	var pw ar9300.Power = r.pw
	if o.power != nil {
		pw = o.power(r.pw)
	}
	cfg := o.cfg
	var plat busdma.Platform = sys.Mem
	if o.plat != nil {
		plat = o.plat(plat)
	}
	cfg.Name, cfg.Regs, cfg.DMA, cfg.Power, cfg.MAC = "ath0", r.regs, plat, pw, apMAC
	if o.mac != ([6]byte{}) {
		cfg.MAC = o.mac
	}
	cfg.Delay = func(time.Duration) {}
	if cfg.RxBufs == 0 {
		cfg.RxBufs = 16
	}
	if cfg.RxHPBufs == 0 {
		cfg.RxHPBufs = 4
	}
	if cfg.TxDescs == 0 {
		cfg.TxDescs = 32
	}
	if cfg.RxBufSize == 0 {
		cfg.RxBufSize = 2048
	}
	d, err := ar9300.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.drv = d
	if o.wrongHook != nil {
		o.wrongHook(d)
	}
	if err := d.Start(r); err != nil {
		t.Fatal(err)
	}
	if !o.noMisuse {
		t.Cleanup(func() {
			for _, m := range r.misuse {
				t.Errorf("seed %d: misuse: %v", o.seed, m)
			}
			if n := r.mac.Stats().AsleepAccesses; n != 0 {
				t.Errorf("seed %d: %d register accesses while the chip slept", o.seed, n)
			}
			if n := r.drv.Stats.DeadReads.Load(); n != 0 {
				t.Errorf("seed %d: driver read 0xdeadbeef %d times", o.seed, n)
			}
		})
	}
	return r
}

// settle lets the model's engines finish, then services the interrupt as
// the board's handler would while the line is up.
func (r *rig) settle() {
	for i := 0; i < 16; i++ {
		r.sys.Sched.Settle(256)
		if r.irq.Pending()&(1<<2) == 0 {
			return
		}
		r.drv.Interrupt()
	}
}

// advance moves the clock in 1 ms steps, servicing interrupts unless
// service says no.
func (r *rig) advance(d time.Duration, service func(now time.Time) bool) {
	end := r.now.Add(d)
	for r.now.Before(end) {
		r.now = r.now.Add(time.Millisecond)
		r.mac.Tick(r.now)
		if service == nil || service(r.now) {
			r.settle()
		}
	}
}

// qosData builds a QoS data frame from src to dst (FromDS) with seq and a
// body; protected frames get room for the CCMP header and MIC.
func qosData(dst, src [6]byte, seq uint16, body []byte, protected bool) []byte {
	f := make([]byte, 0, 26+16+len(body)+16)
	fc1 := byte(0x02) // FromDS
	if protected {
		fc1 |= 0x40
	}
	f = append(f, 0x88, fc1, 0, 0)
	f = append(f, dst[:]...)
	f = append(f, src[:]...)
	f = append(f, src[:]...)
	f = binary.LittleEndian.AppendUint16(f, seq<<4)
	f = append(f, 0, 0) // QoS control TID 0
	if protected {
		f = append(f, make([]byte, 8)...)
	}
	f = append(f, body...)
	if protected {
		f = append(f, make([]byte, 8)...)
	}
	return f
}

func payload(n int, tag byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = tag + byte(i*7)
	}
	return b
}

type done struct {
	n  int
	st []radio.TxStatus
}

func (d *done) fn(_ *radio.TxRequest, st *radio.TxStatus) {
	d.n++
	d.st = append(d.st, *st)
}

func sched(tries ...uint8) (s [radio.MaxSeries]radio.Series) {
	for i, t := range tries {
		s[i] = radio.Series{Rate: airtime.MCS(uint8(7-i), false, false), Tries: t}
	}
	return s
}

// dmaFrame copies f into DMA-able memory (frames from the MAC layer are
// in ordinary Go memory; hwsim translates those too, but tests keep the
// model's cache bookkeeping exact).
func (r *rig) dmaFrame(f []byte) []byte {
	b, _, err := r.sys.Mem.AllocCached("frame", (len(f)+31)&^31, 32)
	if err != nil {
		r.t.Fatal(err)
	}
	copy(b, f)
	return b[:len(f)]
}

func expectEqual(t testing.TB, what string, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		t.Fatalf("%s:\n got  %x\n want %x", what, got, want)
	}
}
