package hwsim_test

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"unsafe"

	"github.com/gowrt/gowrt/barrier"
	"github.com/gowrt/gowrt/busdma"
	"github.com/gowrt/gowrt/hwsim"
)

// seeds is how many seeded interleavings the exploring tests try. The
// big-endian run under qemu-mips is ~30x slower, so it explores fewer.
func seeds() int {
	if runtime.GOARCH == "mips" || runtime.GOARCH == "mipsle" {
		return 300
	}
	return 3000
}

func tag(t *testing.T, sys *hwsim.System, cfg busdma.TagConfig) *busdma.Tag {
	t.Helper()
	if cfg.Name == "" {
		cfg.Name = "test"
	}
	if cfg.MaxSize == 0 {
		cfg.MaxSize = 2048
	}
	tg, err := busdma.NewTag(sys.Mem, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func kinds(ms []hwsim.Misuse) map[hwsim.MisuseKind]int {
	k := map[hwsim.MisuseKind]int{}
	for _, m := range ms {
		k[m.Kind]++
	}
	return k
}

// TestHazardCacheToDevice: the CPU fills a TX buffer and the device reads
// it. Without the PREWRITE writeback the device sees what memory held
// before (and the model says why); with it, the device sees the frame.
func TestHazardCacheToDevice(t *testing.T) {
	for _, sync := range []bool{false, true} {
		sys := hwsim.New(hwsim.Config{Seed: 1, NoEviction: true})
		tg := tag(t, sys, busdma.TagConfig{})
		buf, err := tg.Alloc(256)
		if err != nil {
			t.Fatal(err)
		}
		m, _ := tg.NewMap()
		segs, err := m.Load(buf, busdma.ToDevice)
		if err != nil {
			t.Fatal(err)
		}
		want := bytes.Repeat([]byte{0xa5}, len(buf))
		copy(buf, want)
		if sync {
			if err := m.Sync(busdma.PreWrite); err != nil {
				t.Fatal(err)
			}
		}
		got := make([]byte, len(buf))
		sys.Do(func() { _ = sys.Mem.DevRead(segs[0].Addr, got) })
		k := kinds(sys.Misuses())
		if sync {
			if !bytes.Equal(got, want) || len(k) != 0 {
				t.Fatalf("with PREWRITE: device read %x…, misuses %v", got[:4], sys.Misuses())
			}
		} else {
			if bytes.Equal(got, want) {
				t.Fatal("without PREWRITE the device still saw the CPU's data: the cache model is not modelling")
			}
			if k[hwsim.StaleDeviceRead] == 0 {
				t.Fatalf("without PREWRITE: no StaleDeviceRead reported: %v", sys.Misuses())
			}
		}
	}
}

// TestHazardCacheFromDevice: the device writes an RX buffer. Without the
// POSTREAD invalidate the CPU reads its stale cached copy.
func TestHazardCacheFromDevice(t *testing.T) {
	for _, sync := range []bool{false, true} {
		sys := hwsim.New(hwsim.Config{Seed: 2})
		tg := tag(t, sys, busdma.TagConfig{})
		buf, _ := tg.Alloc(128)
		m, _ := tg.NewMap()
		segs, err := m.Load(buf, busdma.FromDevice)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Sync(busdma.PreRead); err != nil {
			t.Fatal(err)
		}
		frame := bytes.Repeat([]byte{0x5a}, len(buf))
		sys.Do(func() { _ = sys.Mem.DevWrite(segs[0].Addr, frame) })
		if sync {
			if err := m.Sync(busdma.PostRead); err != nil {
				t.Fatal(err)
			}
		}
		if got := bytes.Equal(buf, frame); got != sync {
			t.Fatalf("sync=%v: CPU sees the device's data = %v", sync, got)
		}
		if len(sys.Misuses()) != 0 {
			t.Fatalf("unexpected misuse: %v", sys.Misuses())
		}
	}
}

// TestHazardCPUWritesDeviceLine: the CPU writes into a buffer between
// PREREAD and POSTREAD. The model reports it and, as real hardware would,
// the write is lost (or clobbers the DMA data when the line is evicted).
func TestHazardCPUWritesDeviceLine(t *testing.T) {
	sys := hwsim.New(hwsim.Config{Seed: 3, NoEviction: true})
	tg := tag(t, sys, busdma.TagConfig{})
	buf, _ := tg.Alloc(64)
	m, _ := tg.NewMap()
	segs, _ := m.Load(buf, busdma.FromDevice)
	_ = m.Sync(busdma.PreRead)
	buf[0] = 0xff // wrong: the device owns the buffer now
	sys.Do(func() { _ = sys.Mem.DevWrite(segs[0].Addr, make([]byte, 64)) })
	_ = m.Sync(busdma.PostRead)
	if kinds(sys.Misuses())[hwsim.CPUWroteDeviceLine] == 0 {
		t.Fatalf("CPU write during DMA not reported: %v", sys.Misuses())
	}
	if buf[0] != 0 {
		t.Fatal("the CPU's write survived the invalidate: the model is too kind")
	}
}

// TestHazardSharedCacheLine: an RX buffer whose first and last cache lines
// hold other data. Handing it straight to the device is caught and destroys
// the neighbours; busdma bounces it and both survive.
func TestHazardSharedCacheLine(t *testing.T) {
	const line = 32
	backing := make([]byte, 6*line)
	base := int(addrMod(backing, line))
	region := backing[line-base : line-base+4*line] // line-aligned window
	neighbourLo, rx, neighbourHi := region[:10], region[10:10+2*line], region[10+2*line:]

	t.Run("wrong", func(t *testing.T) {
		sys := hwsim.New(hwsim.Config{Seed: 4, NoEviction: true})
		copy(neighbourLo, "neighbour!")
		addr, _, err := sys.Mem.Translate(rx)
		if err != nil {
			t.Fatal(err)
		}
		_ = sys.Mem.Cache(busdma.Invalidate, rx)
		sys.Do(func() { _ = sys.Mem.DevWrite(addr, bytes.Repeat([]byte{1}, len(rx))) })
		_ = sys.Mem.Cache(busdma.Invalidate, rx)
		if kinds(sys.Misuses())[hwsim.SharedLine] == 0 {
			t.Fatalf("DMA into a shared line not reported: %v", sys.Misuses())
		}
		_ = sys.Mem.Release(addr)
	})
	t.Run("busdma", func(t *testing.T) {
		sys := hwsim.New(hwsim.Config{Seed: 4, NoEviction: true})
		copy(neighbourLo, "neighbour!")
		copy(neighbourHi, "other data")
		tg := tag(t, sys, busdma.TagConfig{})
		m, _ := tg.NewMap()
		segs, err := m.Load(rx, busdma.FromDevice)
		if err != nil {
			t.Fatal(err)
		}
		if m.Bounced != 1 {
			t.Fatal("busdma did not bounce a buffer sharing cache lines")
		}
		_ = m.Sync(busdma.PreRead)
		frame := bytes.Repeat([]byte{7}, len(rx))
		sys.Do(func() { _ = sys.Mem.DevWrite(segs[0].Addr, frame) })
		_ = m.Sync(busdma.PostRead)
		_ = m.Unload()
		if !bytes.Equal(rx, frame) || string(neighbourLo) != "neighbour!" || string(neighbourHi[:10]) != "other data" {
			t.Fatalf("data lost: rx ok=%v lo=%q hi=%q", bytes.Equal(rx, frame), neighbourLo, neighbourHi[:10])
		}
		if len(sys.Misuses()) != 0 {
			t.Fatalf("misuse: %v", sys.Misuses())
		}
	})
}

// mirror is a device with a command register and a status register that
// reports the last command it received, plus an arrival log.
type mirror struct {
	cmd     uint32
	arrived []uint32
	reads   uint32
}

const (
	regCmd    = 0x0
	regStatus = 0x4
	regA      = 0x8
	regB      = 0xc
	regCount  = 0x10
)

func (d *mirror) ReadReg(off uint32, _ int) uint32 {
	switch off {
	case regStatus:
		return d.cmd
	case regCount:
		d.reads++
		return d.reads
	}
	return 0
}

func (d *mirror) WriteReg(off uint32, _ int, v uint32) {
	switch off {
	case regCmd:
		d.cmd = v
	case regA, regB:
		d.arrived = append(d.arrived, off)
	}
}

// TestHazardPostedWrite: a read of a status register can overtake the
// command write it depends on, and two writes can arrive out of order,
// unless a barrier separates them.
func TestHazardPostedWrite(t *testing.T) {
	run := func(barrierBetween bool) (stale, reordered int) {
		for seed := uint64(0); seed < 500; seed++ {
			sys := hwsim.New(hwsim.Config{Seed: seed, NoStaleReads: true})
			dev := &mirror{}
			r := sys.Bus.Map("mirror", 0x20, dev)
			r.Write32(regCmd, 42)
			if barrierBetween {
				r.Barrier()
			}
			if r.Read32(regStatus) != 42 {
				stale++
			}
			r.Write32(regA, 1)
			if barrierBetween {
				r.Barrier()
			}
			r.Write32(regB, 1)
			r.Barrier()
			if dev.arrived[0] != regA {
				reordered++
			}
		}
		return
	}
	if s, o := run(false); s == 0 || o == 0 {
		t.Fatalf("without barriers: %d stale reads, %d reorderings in 500 seeds; the bus must produce both", s, o)
	}
	if s, o := run(true); s != 0 || o != 0 {
		t.Fatalf("with barriers: %d stale reads, %d reorderings", s, o)
	}
}

// TestHazardStalePoll: re-reading a register with no barrier in between
// may return the previous read's value (the AR934x MDIO symptom);
// barrier.Poll32 issues a barrier before every read.
func TestHazardStalePoll(t *testing.T) {
	sys := hwsim.New(hwsim.Config{Seed: 5})
	dev := &mirror{}
	r := sys.Bus.Map("counter", 0x20, dev)
	repeats := 0
	prev := r.Read32(regCount)
	for i := 0; i < 200; i++ {
		v := r.Read32(regCount)
		if v == prev {
			repeats++
		}
		prev = v
	}
	if repeats == 0 {
		t.Fatal("unbarriered re-reads never returned a stale value")
	}
	// The right way: every poll read sees a fresh value.
	prev = r.Read32(regCount)
	for i := 0; i < 200; i++ {
		v, _ := barrier.Poll32(r, regCount, 0, 1, 1) // condition never met: one read
		if v == prev {
			t.Fatalf("Poll32 read %d twice: a barrier did not force a fresh read", v)
		}
		prev = v
	}
}

// ring is a minimal descriptor ring device for the interleaving test: a
// descriptor is {flags, len}; the engine, when it finds OWN set, "sends"
// len bytes and clears OWN.
type ring struct {
	sys  *hwsim.System
	addr uint64
	sent []uint32
}

const own = 0x8000_0000

func (d *ring) step() bool {
	flags, _ := d.sys.Mem.DevLoad32(d.addr, barrier.BigEndian)
	if flags&own == 0 {
		return false
	}
	n, _ := d.sys.Mem.DevLoad32(d.addr+4, barrier.BigEndian)
	d.sent = append(d.sent, n)
	_ = d.sys.Mem.DevStore32(d.addr, flags&^own, barrier.BigEndian)
	return true
}

// TestHazardDescriptorOrder: the DMA engine runs at seeded points between
// the driver's stores. Setting OWN before the length (or without a barrier
// between them) transmits a wrong length under some seed; the right order
// never does. The failing seed is reported and reproduces exactly.
func TestHazardDescriptorOrder(t *testing.T) {
	post := func(wrong bool) func(seed uint64) error {
		return func(seed uint64) error {
			sys := hwsim.New(hwsim.Config{Seed: seed, BigEndianCPU: true, AgentRate: 128})
			desc, addr, err := sys.Mem.AllocCoherent("ring", 8, 4, barrier.Native)
			if err != nil {
				return err
			}
			d := &ring{sys: sys, addr: addr}
			sys.Sched.AddAgent("engine", d.step)
			for _, n := range []uint32{60, 1514} {
				if wrong {
					desc.Write32(0, own)
					desc.Write32(4, n)
				} else {
					desc.Write32(4, n)
					desc.Barrier() // length visible before ownership passes
					desc.Write32(0, own)
				}
				desc.Barrier()
				sys.Sched.Settle(10)
			}
			if len(d.sent) != 2 || d.sent[0] != 60 || d.sent[1] != 1514 {
				return fmt.Errorf("engine sent lengths %v, want [60 1514]", d.sent)
			}
			return nil
		}
	}
	if err := hwsim.Explore(0, seeds(), post(true)); err == nil {
		t.Fatal("OWN-before-length was never caught")
	} else {
		t.Logf("wrong order caught: %v", err)
	}
	if err := hwsim.Explore(0, seeds(), post(false)); err != nil {
		t.Fatalf("right order failed: %v", err)
	}
}

func TestExploreReportsSeed(t *testing.T) {
	err := hwsim.Explore(10, 5, func(seed uint64) error {
		if seed == 12 {
			return errors.New("boom")
		}
		return nil
	})
	if err == nil || err.Error() != "seed 12: boom" {
		t.Fatalf("got %v", err)
	}
}

func addrMod(b []byte, n uintptr) uintptr {
	return uintptr(unsafe.Pointer(unsafe.SliceData(b))) % n
}
