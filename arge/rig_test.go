package arge_test

import (
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gowrt/gowrt/arge"
	"github.com/gowrt/gowrt/arge/argesim"
	"github.com/gowrt/gowrt/barrier"
	"github.com/gowrt/gowrt/board/ar71xx/argeport"
	"github.com/gowrt/gowrt/busdma"
	"github.com/gowrt/gowrt/hwsim"
	"github.com/gowrt/gowrt/internal/wrongcode"
	"github.com/gowrt/gowrt/mdio/phy"
	"github.com/gowrt/gowrt/mdio/phy/physim"
	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/soc/ar71xx"
	"github.com/gowrt/gowrt/soc/ar71xx/ar71xxsim"
)

const (
	revAR7161 = 0x00A2
	revAR9344 = 0x2120
)

type rigOpts struct {
	rev      uint32
	seed     uint64
	hw       hwsim.Config // hazard switches (Seed and BigEndianCPU are set by newRig)
	noDDRBuf bool
	txRing   int
	rxRing   int
	budget   int
	wrong    wrong // mistakes injected through wrapped contracts
	partner  *physim.Partner
	noCheck  bool // don't fail on misuse reports
	fastLink bool
	txBounce int // skip PHY negotiation over MDIO: program a 1000/full link directly
}

// wrong is the mistakes a rig makes the driver commit, each through a
// wrapper of a contract the driver is given (internal/wrongcode), except
// earlyFirst, the driver's one in-driver hook (-tags gowrt_hazard only).
type wrong struct {
	skipCache      busdma.CacheOp // cache maintenance never done (no PREWRITE / no PRE-, POSTREAD)
	ringNoBarriers bool           // descriptor-ring barriers dropped
	noFlush        bool           // the DDR write buffer never drained
	noRecovery     bool           // error clears and engine restarts swallowed after Start
	earlyFirst     bool           // first descriptor handed over before the chain (in-driver hook)
}

type rig struct {
	t    testing.TB
	sys  *hwsim.System
	soc  *ar71xxsim.SoC
	s    *ar71xx.SoC
	mac  *argesim.MAC
	regs *hwsim.Region
	irq  *hwsim.Controller
	phy  *physim.PHY
	drv  *arge.Driver
	mii  *arge.MII
	ph   *phy.PHY // the PHY driver, unless fastLink

	got   [][]byte
	keep  bool // copy received frames into got
	rxN   int
	done  map[uint64]bool
	doneN int
	doneA atomic.Int64
	// noTokens: count releases only (benchmarks: no map growth)
	noTokens bool // doneN for tests reading from another goroutine
	onRecv   func([]byte)
}

func noDelay(time.Duration) {}

func newRig(t testing.TB, o rigOpts) *rig {
	t.Helper()
	if o.rev == 0 {
		o.rev = revAR9344
	}
	hc := o.hw
	hc.Seed = o.seed
	hc.BigEndianCPU = true
	sys := hwsim.New(hc)
	r := &rig{t: t, sys: sys, keep: true, done: map[uint64]bool{}}
	if !o.noCheck {
		sys.OnMisuse(func(m hwsim.Misuse) { t.Errorf("seed %d: misuse: %v", o.seed, m) })
	}
	var err error
	r.soc, err = ar71xxsim.New(sys, ar71xxsim.Config{Rev: o.rev, NoWriteBuffer: o.noDDRBuf})
	if err != nil {
		t.Fatal(err)
	}
	r.irq = sys.NewController(hwsim.ControllerConfig{Name: "cpu", Lines: 6})
	r.mac, err = argesim.New(sys, argesim.Config{Unit: 0, Info: r.soc.Info, IRQ: r.irq, Line: ar71xx.CPUIRQGE0,
		DMA: r.soc.DDR.Channel(ar71xx.FlushGE0), Clock: func(mbps int) bool { return r.soc.EthSpeedProgrammed(0, mbps) }})
	if err != nil {
		t.Fatal(err)
	}
	r.regs = r.mac.Map("arge0")
	r.phy = physim.New(0x004DD072, true)
	pt := physim.GigabitPartner
	if o.partner != nil {
		pt = *o.partner
	}
	r.phy.SetPartner(pt)
	r.mac.AttachPHY(0, r.phy)
	r.mac.SetWire(argesim.Loopback{To: r.mac})

	r.s, err = ar71xx.Probe(r.soc.Regions())
	if err != nil {
		t.Fatal(err)
	}
	r.s.Delay = noDelay
	r.mii = arge.NewMII(r.regs)
	r.mii.Delay = noDelay
	var plat busdma.Platform = sys.Mem
	if o.wrong.skipCache != 0 || o.wrong.ringNoBarriers {
		plat = &wrongcode.Platform{Platform: sys.Mem, SkipCache: o.wrong.skipCache, CoherentNoBarriers: o.wrong.ringNoBarriers}
	}
	var regs barrier.Space = r.regs
	var armed bool
	if o.wrong.noRecovery {
		regs = wrongcode.WriteFilter(r.regs, func(_ int, off, v uint32) bool {
			return armed && recoveryWrite(off, v)
		})
	}
	// Wired as a board wires GE0 (board/ar71xx/argeport).
	cfg, err := argeport.Config(r.s, ar71xx.GE0, regs, plat)
	if err != nil {
		t.Fatal(err)
	}
	if o.wrong.noFlush {
		cfg.Flush = nil // the board wires no flush channel: nothing drains the buffer
	}
	cfg.MII, cfg.MAC = r.mii, [6]byte{0x00, 0x03, 0x7f, 0x01, 0x02, 0x03}
	cfg.TxRing, cfg.RxRing, cfg.Budget, cfg.TxBounce, cfg.Delay = o.txRing, o.rxRing, o.budget, o.txBounce, noDelay
	cfg.Receive = func(f []byte) {
		r.rxN++
		if r.onRecv != nil {
			r.onRecv(f)
		}
		if r.keep {
			r.got = append(r.got, append([]byte(nil), f...))
		}
	}
	cfg.TXDone = func(tok uint64) {
		if r.noTokens {
			r.doneN++
			return
		}
		if r.done[tok] {
			t.Errorf("token %d released twice", tok)
		}
		r.done[tok] = true
		r.doneN++
		r.doneA.Add(1)
	}
	r.drv, err = arge.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if o.wrong.earlyFirst {
		setEarlyFirst(r.drv)
	}
	if err := r.drv.Start(); err != nil {
		t.Fatal(err)
	}
	armed = true
	if o.fastLink {
		r.phy.AnegReads = 0
		r.phy.SetPartner(pt)
		if err := r.drv.SetLink(gnet.LinkState{Up: true, SpeedMbps: 1000, FullDuplex: true}); err != nil {
			t.Fatal(err)
		}
		r.sys.Do(func() { r.phy.ReadReg(phy.RegBMSR) }) // negotiation completes
		return r
	}
	ph, err := phy.New(r.mii, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := ph.Reset(); err != nil {
		t.Fatal(err)
	}
	if err := ph.StartAutoneg(phy.All); err != nil {
		t.Fatal(err)
	}
	r.ph = ph
	for i := 0; i < 50; i++ {
		l, _, err := r.pollLink()
		if err != nil {
			t.Fatal(err)
		}
		if l.Up {
			return r
		}
	}
	t.Fatalf("link never came up")
	return nil
}

// recoveryWrite reports the register writes by which the driver recovers
// from RX overflow, TX underrun and bus errors: clearing the error status
// and re-enabling the receiver (the transmitter is re-enabled by every
// Transmit too, so that write stays).
func recoveryWrite(off, v uint32) bool {
	switch off {
	case arge.RegRXStatus:
		return v&(arge.RXStatusOverflow|arge.RXStatusBusError) != 0
	case arge.RegTXStatus:
		return v&(arge.TXStatusUnderrun|arge.TXStatusBusError) != 0
	case arge.RegRXCtrl:
		return v&arge.RXCtrlEnable != 0
	}
	return false
}

// pollLink is one tick of phy.Follow, the board's PHY poll: a PHY pass,
// and the driver told the link when it changed.
func (r *rig) pollLink() (phy.Link, bool, error) {
	l, changed, err := r.ph.Poll()
	if err != nil || !changed {
		return l, changed, err
	}
	return l, true, r.drv.SetLink(l.State())
}

// frame builds a test frame of n bytes carrying seq.
func frame(n int, seq uint32) []byte {
	f := make([]byte, n)
	copy(f, []byte{0x00, 0x03, 0x7f, 0x01, 0x02, 0x03, 0x02, 0, 0, 0, 0, 1, 0x88, 0xb5})
	binary.BigEndian.PutUint32(f[14:], seq)
	for i := 18; i < n; i++ {
		f[i] = byte(seq) ^ byte(i)
	}
	return f
}

func checkFrame(f []byte, n int, seq uint32) error {
	want := frame(n, seq)
	if len(f) != len(want) {
		return fmt.Errorf("frame %d: %d bytes, want %d", seq, len(f), len(want))
	}
	for i := range f {
		if f[i] != want[i] {
			return fmt.Errorf("frame %d: byte %d is %#x, want %#x", seq, i, f[i], want[i])
		}
	}
	return nil
}

// pump runs the driver (polling) and the hardware until cond or rounds.
func (r *rig) pump(rounds int, cond func() bool) bool {
	for i := 0; i < rounds; i++ {
		if cond() {
			return true
		}
		r.sys.Sched.Settle(8)
		r.drv.Service(0)
	}
	return cond()
}
