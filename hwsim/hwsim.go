// Package hwsim is the simulation core that gowrt's hardware models are
// built on. It reproduces the hazards that broke real drivers on real
// boards, so that a driver written the wrong way fails a test:
//
//   - Memory keeps a CPU (cache) view and a device (DRAM) view of every
//     cached DMA buffer, line by line. Only cache maintenance moves data
//     between them, dirty lines may be evicted at any scheduling point, and
//     misuse is reported: the device reading a line the CPU has not written
//     back, the CPU writing a line the device owns, DMA into a cache line
//     shared with unrelated data.
//   - Bus posts register writes in a write buffer: they may lag behind
//     later reads and overtake each other until a barrier drains them, and an
//     unbarriered re-read of a register may return the previous read's value.
//   - Sched runs the models' engines (a DMA engine walking a descriptor ring)
//     at seeded points between any two driver accesses, so a driver that
//     exposes a half-written descriptor chain loses under some seed, and that
//     seed reproduces the failure exactly.
//   - Controller models interrupt lines (level/edge) behind a controller that
//     may need an explicit ack, and implements intr.Controller and
//     intr.Source so the real intr.Dispatcher runs against it.
//
// # Locking
//
// A System has one lock. Every driver-facing operation (a register access
// through a Region, a coherent-memory access, a cache operation) takes it.
// Model callbacks (Device.ReadReg/WriteReg, Sched agents) run with it held
// and use the device-side methods (DevRead, DevWrite, …), which assume it is
// held. A model goroutine acting on its own (a wire delivering a frame)
// wraps its work in System.Do.
//
// Eviction reads a cached buffer's CPU view at a scheduling point, in
// whichever goroutine reached it. A test in which one goroutine fills a
// mapped buffer while another drives the model must set NoEviction: a real
// cache evicts concurrently with CPU stores, but in Go that read is a data
// race the race detector rightly reports. Missing syncs are still caught
// then (at sync time and on device reads); only the spontaneous corruption
// is lost.
package hwsim

import (
	"encoding/binary"
	"fmt"
	"sync"
)

// Config selects a System's seed and how hostile it is. The zero value of
// each hazard field means "on": tests switch hazards off explicitly.
type Config struct {
	// Seed drives every random decision; the same seed and the same
	// sequence of driver accesses give the same run.
	Seed uint64
	// BigEndianCPU is the simulated CPU's byte order (the AR71xx family and
	// malta-be are big-endian). It defines barrier.Native for regions.
	BigEndianCPU bool
	// LineSize is the D-cache line size in bytes (32 on 24K/74K).
	LineSize int

	// Agent run probability per scheduling point, in 1/256ths (default 64).
	AgentRate int
	// NoPostedWrites makes register and coherent-memory writes reach their
	// target at once.
	NoPostedWrites bool
	// NoStaleReads makes every register read fetch from the device.
	NoStaleReads bool
	// NoEviction stops dirty lines from being written back spontaneously.
	NoEviction bool
}

// System is one simulated machine: scheduler, MMIO bus, memory.
type System struct {
	mu    sync.Mutex
	cfg   Config
	order binary.ByteOrder

	Sched *Sched
	Bus   *Bus
	Mem   *Memory

	misuse   []Misuse
	onMisuse func(Misuse)
}

// New returns a System configured by cfg.
func New(cfg Config) *System {
	if cfg.LineSize == 0 {
		cfg.LineSize = 32
	}
	if cfg.LineSize&(cfg.LineSize-1) != 0 || cfg.LineSize < 4 {
		panic(fmt.Sprintf("hwsim: line size %d is not a power of two ≥ 4", cfg.LineSize))
	}
	if cfg.AgentRate == 0 {
		cfg.AgentRate = 64
	}
	s := &System{cfg: cfg, order: binary.LittleEndian}
	if cfg.BigEndianCPU {
		s.order = binary.BigEndian
	}
	s.Sched = newSched(s, cfg.Seed)
	s.Bus = newBus(s)
	s.Mem = newMemory(s)
	return s
}

// Config returns the configuration the System was built with (defaults filled in).
func (s *System) Config() Config { return s.cfg }

// ByteOrder is the simulated CPU's byte order.
func (s *System) ByteOrder() binary.ByteOrder { return s.order }

// Do runs f with the System's lock held. Model goroutines use it to act on
// the machine (deliver a frame, flap a link) outside a driver access.
func (s *System) Do(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f()
}

// MisuseKind classifies a hazard the System caught.
type MisuseKind uint8

const (
	// StaleDeviceRead: the device read a line whose latest contents were
	// still only in the CPU cache (missing PREWRITE writeback).
	StaleDeviceRead MisuseKind = iota + 1
	// CPUWroteDeviceLine: the CPU wrote a line after handing it to the
	// device for DMA and before taking it back (PREREAD .. POSTREAD).
	CPUWroteDeviceLine
	// SharedLine: DMA targeted a cache line that also holds bytes outside
	// the DMA buffer; invalidating it would destroy them.
	SharedLine
	// WritebackOverDMA: a writeback (or eviction) of a dirty line
	// overwrote data the device had written.
	WritebackOverDMA
	// UnackedInterrupt: a line kept firing with nothing acknowledging it.
	UnackedInterrupt
	// BadDMAAddress: the device accessed a bus address with no memory.
	BadDMAAddress
	// ModelRule: a device model's own check failed (see Detail).
	ModelRule
)

func (k MisuseKind) String() string {
	switch k {
	case StaleDeviceRead:
		return "stale device read (missing PREWRITE)"
	case CPUWroteDeviceLine:
		return "CPU wrote a line the device owns"
	case SharedLine:
		return "DMA into a cache line shared with unrelated data"
	case WritebackOverDMA:
		return "writeback overwrote DMA data"
	case UnackedInterrupt:
		return "interrupt storm: line never acknowledged"
	case BadDMAAddress:
		return "DMA to an unmapped bus address"
	case ModelRule:
		return "model rule violated"
	}
	return fmt.Sprintf("MisuseKind(%d)", uint8(k))
}

// Misuse is one hazard the System caught.
type Misuse struct {
	Kind   MisuseKind
	Addr   uint64 // bus address (or line number for interrupts)
	Region string
	Detail string
}

func (m Misuse) String() string {
	return fmt.Sprintf("%s at %#x in %s: %s", m.Kind, m.Addr, m.Region, m.Detail)
}

// OnMisuse installs a callback run (with the lock held) for every misuse,
// in addition to recording it. Tests pass t.Errorf-like functions.
func (s *System) OnMisuse(f func(Misuse)) {
	s.mu.Lock()
	s.onMisuse = f
	s.mu.Unlock()
}

// Misuses returns the misuses recorded so far.
func (s *System) Misuses() []Misuse {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Misuse(nil), s.misuse...)
}

// Report records a misuse. Device models call it (lock held) for their own
// rule violations.
func (s *System) Report(m Misuse) {
	if len(s.misuse) < 1024 {
		s.misuse = append(s.misuse, m)
	}
	if s.onMisuse != nil {
		s.onMisuse(m)
	}
}
