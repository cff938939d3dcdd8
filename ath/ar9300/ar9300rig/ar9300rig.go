// Package ar9300rig wires the ar9300 driver to its ar9300sim model on an
// hwsim system, as a board wires the WMAC, so that tests and simulations
// get a radio.Radio with a hardware key cache that attaches to
// wlan/medium: Rig is a medium.Device (Receive, Tick) and its Driver the
// radio the MAC layer (wlan/ap, wlan/sta) runs on. Test glue: firmware
// never links it.
package ar9300rig

import (
	"encoding/binary"
	"time"

	"github.com/gowrt/gowrt/ath/ar9300"
	"github.com/gowrt/gowrt/ath/ar9300/ar9300sim"
	"github.com/gowrt/gowrt/ath/power"
	"github.com/gowrt/gowrt/hwsim"
)

// Config is one simulated AR9300.
type Config struct {
	Name string
	MAC  [6]byte
	// Seed drives the hwsim system (interleavings, evictions).
	Seed uint64
	// Epoch is the medium's start time (the TSF counts from it).
	Epoch time.Time
	// Driver sizes (zero: the driver's defaults).
	Driver ar9300.Config
	// Model configuration; IRQ, Line and Epoch are filled in.
	Model ar9300sim.Config
	// Hostile: keep hwsim's posted writes, stale reads, evictions and
	// seeded engine runs (the hazard tests' setting). Off, the rig is a
	// quiet, fast radio for end-to-end runs.
	Hostile bool
}

// irqLine is the WMAC's line on the rig's interrupt controller.
const irqLine = 2

// Rig is a driver, its model and the machine they share.
type Rig struct {
	Driver *ar9300.Driver
	Model  *ar9300sim.MAC
	Power  *power.Chip
	Sys    *hwsim.System
	IRQ    *hwsim.Controller
}

// New builds the rig. The driver is not started: the MAC layer calls
// Start with its receiver.
func New(cfg Config) (*Rig, error) {
	hc := hwsim.Config{Seed: cfg.Seed, BigEndianCPU: binary.NativeEndian.Uint16([]byte{1, 0}) != 1}
	if !cfg.Hostile {
		hc.NoPostedWrites, hc.NoStaleReads, hc.NoEviction, hc.AgentRate = true, true, true, -1
	}
	sys := hwsim.New(hc)
	irq := sys.NewController(hwsim.ControllerConfig{Name: "cpu", Lines: 8})
	mc := cfg.Model
	mc.IRQ, mc.Line, mc.Epoch = irq, irqLine, cfg.Epoch
	model := ar9300sim.New(sys, mc)
	if cfg.Name == "" {
		cfg.Name = "ath0"
	}
	regs := model.Map(cfg.Name)
	pw := power.New(cfg.Name, regs)
	dc := cfg.Driver
	dc.Name, dc.Regs, dc.DMA, dc.Power, dc.MAC = cfg.Name, regs, sys.Mem, pw, cfg.MAC
	if dc.Delay == nil {
		dc.Delay = func(time.Duration) {}
	}
	d, err := ar9300.New(dc)
	if err != nil {
		return nil, err
	}
	return &Rig{Driver: d, Model: model, Power: pw, Sys: sys, IRQ: irq}, nil
}

// SetAir sets where the chip's transmissions go (the *medium.Radio that
// Attach returned for this rig).
func (r *Rig) SetAir(a ar9300sim.Air) { r.Model.SetAir(a) }

// Receive implements medium.Device: a frame on the air reaches the chip.
func (r *Rig) Receive(frame []byte) { r.Model.Receive(frame) }

// Tick implements medium.Device: the chip's clock and engines advance,
// then the interrupt handler runs while the line is up, as the board's
// handler would.
func (r *Rig) Tick(now time.Time) {
	r.Model.Tick(now)
	r.Service()
}

// Service lets the engines finish and runs the driver's interrupt handler
// while the WMAC's line is up.
func (r *Rig) Service() {
	for i := 0; i < 16; i++ {
		r.Sys.Sched.Settle(256)
		if r.IRQ.Pending()&(1<<irqLine) == 0 {
			return
		}
		r.Driver.Interrupt()
	}
}
