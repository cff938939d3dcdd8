package spinor_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gowrt/gowrt/flash/spinor"
	"github.com/gowrt/gowrt/flash/spinor/spinorsim"
	"github.com/gowrt/gowrt/hwsim"
)

// small is a 1 MiB part (capacity byte 0x14): Macronix MX25L8005.
var small = spinorsim.Config{JEDEC: [3]byte{0xc2, 0x20, 0x14}}

type rig struct {
	sys  *hwsim.System
	sim  *spinorsim.Flash
	regs *hwsim.Region
	win  *hwsim.Region
	f    *spinor.Flash
}

func newRig(t testing.TB, seed uint64, be bool, cfg spinorsim.Config, img []byte) *rig {
	t.Helper()
	r := bare(seed, be, cfg, img)
	f, err := spinor.New(spinor.Config{Regs: r.regs, Mem: r.win, BigEndian: be})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	r.f = f
	return r
}

func bare(seed uint64, be bool, cfg spinorsim.Config, img []byte) *rig {
	sys := hwsim.New(hwsim.Config{Seed: seed, BigEndianCPU: be})
	sim := spinorsim.New(sys, cfg, img)
	return &rig{sys: sys, sim: sim, regs: sim.MapRegs("spi"), win: sim.MapWindow("spiflash")}
}

func (r *rig) noMisuse(t testing.TB) {
	t.Helper()
	for _, m := range r.sys.Misuses() {
		t.Errorf("misuse: %v", m)
	}
}

func (r *rig) misused(substr string) bool {
	for _, m := range r.sys.Misuses() {
		if strings.Contains(m.Detail, substr) {
			return true
		}
	}
	return false
}

func TestIdentify(t *testing.T) {
	for _, tc := range []struct {
		id   [3]byte
		size int64
	}{
		{[3]byte{0xc2, 0x20, 0x17}, 8 << 20},  // MX25L6405D
		{[3]byte{0xef, 0x40, 0x18}, 16 << 20}, // W25Q128
		{[3]byte{0xc2, 0x20, 0x14}, 1 << 20},
	} {
		for _, be := range []bool{false, true} {
			r := newRig(t, 1, be, spinorsim.Config{JEDEC: tc.id}, nil)
			mfr, dev := r.f.JEDEC()
			if mfr != tc.id[0] || dev != uint16(tc.id[1])<<8|uint16(tc.id[2]) || r.f.Size() != tc.size {
				t.Errorf("id % x be=%v: mfr %#x dev %#x size %#x", tc.id, be, mfr, dev, r.f.Size())
			}
			if r.f.BlockSize() != 64<<10 || r.f.ProgramUnit() != 1 {
				t.Errorf("geometry %d/%d", r.f.BlockSize(), r.f.ProgramUnit())
			}
			r.noMisuse(t)
		}
	}
}

func TestIdentifyRefuses(t *testing.T) {
	for _, tc := range []struct {
		cfg  spinorsim.Config
		want string
	}{
		{spinorsim.Config{RawID: true}, "00 00 00"},
		{spinorsim.Config{JEDEC: [3]byte{0xff, 0xff, 0xff}}, "ff ff ff"},
		{spinorsim.Config{JEDEC: [3]byte{0xc2, 0x20, 0x30}}, "capacity byte"},
		{spinorsim.Config{JEDEC: [3]byte{0xc2, 0x20, 0x08}}, "capacity byte"},
		{spinorsim.Config{JEDEC: small.JEDEC, UnstableID: true}, "unstable"},
	} {
		tc.cfg.Size = 1 << 20
		r := bare(1, true, tc.cfg, nil)
		_, err := spinor.New(spinor.Config{Regs: r.regs, Mem: r.win, BigEndian: true})
		if !errors.Is(err, spinor.ErrID) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("id % x: %v, want ErrID with %q", tc.cfg.JEDEC, err, tc.want)
		}
	}
	// A dead chip (data line floating high) reads ff ff ff.
	r := bare(1, false, small, nil)
	r.sim.CutPowerAfter(1)
	r.regs.Write32(spinor.RegFS, 0)
	r.regs.Barrier()
	if _, err := spinor.New(spinor.Config{Regs: r.regs, Mem: r.win}); !errors.Is(err, spinor.ErrID) || !strings.Contains(err.Error(), "ff ff ff") {
		t.Errorf("dead chip: %v", err)
	}
}

// TestProgramRead: data crossing page boundaries at odd offsets programs
// and reads back byte for byte on both CPU byte orders, and lands in the
// array exactly there (the image is the same for either order).
func TestProgramRead(t *testing.T) {
	data := make([]byte, 700)
	for i := range data {
		data[i] = byte(i*7 + 3)
	}
	data[300] = 0xff
	const at = 0x10000 + 0xf3
	for _, be := range []bool{false, true} {
		for seed := uint64(1); seed <= 6; seed++ {
			r := newRig(t, seed, be, small, nil)
			if err := r.f.Erase(0x10000); err != nil {
				t.Fatal(err)
			}
			if err := r.f.Program(at, data); err != nil {
				t.Fatalf("be=%v seed %d: %v", be, seed, err)
			}
			got := make([]byte, len(data)+2)
			if _, err := r.f.ReadAt(got, at-1); err != nil {
				t.Fatal(err)
			}
			if got[0] != 0xff || !bytes.Equal(got[1:len(data)+1], data) || got[len(data)+1] != 0xff {
				t.Fatalf("be=%v seed %d: read back differs", be, seed)
			}
			if img := r.sim.Image(); !bytes.Equal(img[at:at+len(data)], data) {
				t.Fatalf("be=%v: array differs", be)
			}
			if r.f.Stats.Programs != 4 { // 0x0f3..0x3af: pages 0, 1, 2, 3 (partial)
				t.Errorf("%d page programs, want 4", r.f.Stats.Programs)
			}
			r.noMisuse(t)
		}
	}
}

func TestEraseSector(t *testing.T) {
	r := newRig(t, 3, true, small, nil)
	if err := r.f.Program(0x1ff0, make([]byte, 0x20)); err != nil {
		t.Fatal(err)
	}
	if err := r.f.EraseSector(0x1000); err != nil {
		t.Fatal(err)
	}
	img := r.sim.Image()
	if !bytes.Equal(img[0x1ff0:0x2000], bytes.Repeat([]byte{0xff}, 16)) || !bytes.Equal(img[0x2000:0x2010], make([]byte, 16)) {
		t.Fatalf("sector erase touched the wrong bytes: % x", img[0x1ff0:0x2010])
	}
	if err := r.f.EraseSector(0x1800); !errors.Is(err, spinor.ErrRange) {
		t.Errorf("unaligned sector erase: %v", err)
	}
	r.noMisuse(t)
}

func TestRangeErrors(t *testing.T) {
	r := newRig(t, 1, false, small, nil)
	size := r.f.Size()
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"erase unaligned", r.f.Erase(0x1000)},
		{"erase past end", r.f.Erase(size)},
		{"program past end", r.f.Program(size-2, make([]byte, 4))},
		{"program negative", r.f.Program(-1, make([]byte, 1))},
		{"read past end", func() error { _, err := r.f.ReadAt(make([]byte, 4), size-3); return err }()},
	} {
		if !errors.Is(tc.err, spinor.ErrRange) {
			t.Errorf("%s: %v, want ErrRange", tc.name, tc.err)
		}
	}
}

// TestConcurrent: two goroutines erase/program/read different blocks; the
// lock keeps their command sequences from interleaving (the model would
// report a command mid-transaction or a window read in command mode).
func TestConcurrent(t *testing.T) {
	r := newRig(t, 9, true, small, nil)
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for g := 0; g < 2; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			base := int64(g+1) * 0x10000
			data := bytes.Repeat([]byte{byte(0x10 + g)}, 300)
			buf := make([]byte, 300)
			for i := 0; i < 3; i++ {
				if err := r.f.Erase(base); err != nil {
					errs <- err
					return
				}
				if err := r.f.Program(base+int64(i), data); err != nil {
					errs <- err
					return
				}
				if _, err := r.f.ReadAt(buf, base+int64(i)); err != nil || !bytes.Equal(buf, data) {
					errs <- fmt.Errorf("goroutine %d: read back %v", g, err)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	r.noMisuse(t)
}

// TestPowerLoss: after a cut every operation fails promptly with an error.
func TestPowerLoss(t *testing.T) {
	r := newRig(t, 5, true, small, nil)
	r.sim.CutPowerAfter(40)
	if err := r.f.Erase(0); err == nil {
		t.Fatal("erase with power cut succeeded")
	}
	if err := r.f.Program(0, []byte{1, 2, 3}); err == nil {
		t.Fatal("program on a dead chip succeeded")
	}
	if !r.sim.Dead() {
		t.Fatal("model not dead")
	}
}

// TestTimeout: a chip that stays busy longer than the poll budget gives
// ErrTimeout, not a hang.
func TestTimeout(t *testing.T) {
	r := bare(2, false, spinorsim.Config{JEDEC: small.JEDEC, BlockEraseBusy: 1000}, nil)
	slept := 0
	f, err := spinor.New(spinor.Config{Regs: r.regs, Mem: r.win, ErasePolls: 20, Sleep: func(d time.Duration) { slept++ }})
	if err != nil {
		t.Fatal(err)
	}
	caught := false
	for i := 0; i < 5 && !caught; i++ {
		err = f.Erase(0)
		caught = errors.Is(err, spinor.ErrTimeout)
	}
	if !caught {
		t.Fatalf("erase: %v, want ErrTimeout", err)
	}
	if slept == 0 {
		t.Error("Sleep never called while polling")
	}
}
