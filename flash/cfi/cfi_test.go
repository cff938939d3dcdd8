package cfi_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/gowrt/gowrt/flash"
	"github.com/gowrt/gowrt/flash/cfi"
	"github.com/gowrt/gowrt/flash/cfi/cfisim"
	"github.com/gowrt/gowrt/hwsim"
)

var small = cfisim.Config{Blocks: 8, BlockSize: 4096}

type rig struct {
	sys  *hwsim.System
	sim  *cfisim.Flash
	reg  *hwsim.Region
	chip *cfi.Chip
}

func newRig(t *testing.T, seed uint64, be bool, cfg cfisim.Config, img []byte) *rig {
	t.Helper()
	sys := hwsim.New(hwsim.Config{Seed: seed, BigEndianCPU: be})
	sim := cfisim.New(sys, cfg, img)
	reg := sim.Map("flash")
	chip, err := cfi.Probe(reg, be)
	if err != nil {
		t.Fatalf("probe: %v", err)
	}
	return &rig{sys, sim, reg, chip}
}

func (r *rig) noMisuse(t *testing.T) {
	t.Helper()
	for _, m := range r.sys.Misuses() {
		t.Errorf("misuse: %v", m)
	}
}

func TestProbe(t *testing.T) {
	for _, be := range []bool{false, true} {
		r := newRig(t, 1, be, cfisim.Config{Blocks: 64, BlockSize: 64 << 10}, nil)
		g := r.chip.Geometry()
		if g.Size != 4<<20 || g.BlockSize != 64<<10 || g.Blocks != 64 || g.Interleave != 1 || g.CmdSet != 1 {
			t.Errorf("be=%v: geometry %+v", be, g)
		}
		r.noMisuse(t)
	}
}

func TestProbeNotCFI(t *testing.T) {
	sys := hwsim.New(hwsim.Config{Seed: 1})
	reg := sys.Bus.Map("ram", 4096, &ram{})
	if _, err := cfi.Probe(reg, false); !errors.Is(err, cfi.ErrNoCFI) {
		t.Fatalf("probe of RAM: %v, want ErrNoCFI", err)
	}
}

type ram struct{ w [1024]uint32 }

func (m *ram) ReadReg(off uint32, _ int) uint32     { return m.w[off/4] }
func (m *ram) WriteReg(off uint32, _ int, v uint32) { m.w[off/4] = v }

// TestProgramRead: data programmed through the driver reads back and lands
// in the array byte for byte on either CPU endian (the flash file is the
// same for malta-be and malta-le).
func TestProgramRead(t *testing.T) {
	data := []byte("gowrt flash test: 0123456789abcdef")
	data = append(data, make([]byte, (4-len(data)%4)%4)...)
	for _, be := range []bool{false, true} {
		for seed := uint64(1); seed <= 20; seed++ {
			r := newRig(t, seed, be, small, nil)
			if err := r.chip.Erase(4096); err != nil {
				t.Fatal(err)
			}
			if err := r.chip.Program(4096+8, data); err != nil {
				t.Fatalf("be=%v seed %d: %v", be, seed, err)
			}
			got := make([]byte, len(data)+3)
			if _, err := r.chip.ReadAt(got, 4096+7); err != nil {
				t.Fatal(err)
			}
			if got[0] != 0xff || !bytes.Equal(got[1:len(data)+1], data) || got[len(data)+1] != 0xff {
				t.Fatalf("be=%v seed %d: read % x", be, seed, got)
			}
			if img := r.sim.Image(); !bytes.Equal(img[4096+8:4096+8+len(data)], data) {
				t.Fatalf("be=%v: array holds % x", be, img[4096+8:4096+8+len(data)])
			}
			r.noMisuse(t)
		}
	}
}

func TestRangeErrors(t *testing.T) {
	r := newRig(t, 1, true, small, nil)
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"erase unaligned", r.chip.Erase(100)},
		{"erase past end", r.chip.Erase(8 * 4096)},
		{"program odd length", r.chip.Program(0, []byte{1, 2, 3})},
		{"program unaligned", r.chip.Program(2, []byte{1, 2, 3, 4})},
		{"program past end", r.chip.Program(8*4096-4, make([]byte, 8))},
		{"read negative", func() error { _, err := r.chip.ReadAt(make([]byte, 4), -4); return err }()},
	} {
		if !errors.Is(tc.err, cfi.ErrRange) {
			t.Errorf("%s: %v, want ErrRange", tc.name, tc.err)
		}
	}
}

func TestLockBits(t *testing.T) {
	r := newRig(t, 3, false, cfisim.Config{Blocks: 8, BlockSize: 4096, LockedAtPowerUp: true}, nil)
	if l, err := r.chip.Locked(0); err != nil || !l {
		t.Fatalf("locked at power-up: %v %v", l, err)
	}
	err := r.chip.Erase(0)
	if !errors.Is(err, cfi.ErrLocked) || !errors.Is(err, flash.ErrLocked) {
		t.Fatalf("erase of locked block: %v", err)
	}
	if err := r.chip.Program(0, []byte{0, 0, 0, 0}); !errors.Is(err, cfi.ErrLocked) {
		t.Fatalf("program of locked block: %v", err)
	}
	if err := r.chip.Unlock(0); err != nil {
		t.Fatal(err)
	}
	if l, _ := r.chip.Locked(0); l {
		t.Fatal("still locked after Unlock")
	}
	if err := r.chip.Erase(0); err != nil {
		t.Fatalf("erase after unlock (stale error bits?): %v", err)
	}
	if err := r.chip.Lock(0); err != nil {
		t.Fatal(err)
	}
	if !r.sim.Locked(0) {
		t.Fatal("model not locked after Lock")
	}
	r.noMisuse(t)
}

// TestPowerLoss: after the cut every operation fails promptly with an error
// instead of hanging or claiming success.
func TestPowerLoss(t *testing.T) {
	r := newRig(t, 5, true, small, nil)
	r.sim.CutPowerAfter(3)
	if err := r.chip.Erase(0); err == nil {
		t.Fatal("erase with power cut mid-sequence succeeded")
	}
	if err := r.chip.Program(0, []byte{1, 2, 3, 4}); err == nil {
		t.Fatal("program on a dead chip succeeded")
	}
	if !r.sim.Dead() {
		t.Fatal("model not dead")
	}
}

// --- hazards: deliberately wrong driver code, caught by the model ---

// TestHazardProgramWithoutErase: programming over data that was not erased
// cannot set bits on real flash; the model stores old AND new and reports
// it. The driver's Erase-then-Program is clean.
func TestHazardProgramWithoutErase(t *testing.T) {
	r := newRig(t, 1, false, small, nil)
	if err := r.chip.Erase(0); err != nil {
		t.Fatal(err)
	}
	if err := r.chip.Program(0, []byte{0x0f, 0x0f, 0x0f, 0x0f}); err != nil {
		t.Fatal(err)
	}
	err := r.chip.Program(0, []byte{0xf0, 0xf0, 0xf0, 0xf0})
	if !errors.Is(err, cfi.ErrVerify) {
		t.Errorf("reprogram without erase: %v, want ErrVerify", err)
	}
	if len(r.sys.Misuses()) == 0 {
		t.Error("model did not report programming over unerased bits")
	}
	r2 := newRig(t, 1, false, small, nil)
	for _, b := range []byte{0x0f, 0xf0} {
		if err := r2.chip.Erase(0); err != nil {
			t.Fatal(err)
		}
		if err := r2.chip.Program(0, []byte{b, b, b, b}); err != nil {
			t.Fatal(err)
		}
	}
	r2.noMisuse(t)
}

// TestHazardReadWithoutReadArray: after a program the chip answers reads
// with its status register until Read Array is written. Code that reads
// straight away gets status bytes, not data.
func TestHazardReadWithoutReadArray(t *testing.T) {
	r := newRig(t, 2, false, small, nil)
	r.reg.Write32(0, cfi.CmdProgram)
	r.reg.Write32(0, 0x12345678)
	r.reg.Barrier()
	var got uint32
	for i := 0; i < 32; i++ {
		r.reg.Barrier()
		if got = r.reg.Read32(0); got&cfi.SRReady != 0 {
			break
		}
	}
	r.reg.Barrier()
	if got = r.reg.Read32(0); got == 0x12345678 {
		t.Fatal("wrong code read data without Read Array: model too lenient")
	}
	r2 := newRig(t, 2, false, small, nil)
	if err := r2.chip.Program(0, []byte{0x78, 0x56, 0x34, 0x12}); err != nil {
		t.Fatal(err)
	}
	r2.reg.Barrier()
	if v := r2.reg.Read32(0); v != 0x12345678 {
		t.Fatalf("driver left chip out of read-array mode: %#x", v)
	}
}

// TestHazardCommandWhileBusy: issuing the next program without polling the
// status register hits a busy chip, which ignores it; the model reports it.
func TestHazardCommandWhileBusy(t *testing.T) {
	caught := 0
	for seed := uint64(1); seed <= 10; seed++ {
		r := newRig(t, seed, true, small, nil)
		for i := uint32(0); i < 4; i++ {
			r.reg.Write32(i*4, cfi.CmdProgram)
			r.reg.Write32(i*4, 0)
		}
		r.reg.Barrier()
		if len(r.sys.Misuses()) > 0 {
			caught++
		}
		r2 := newRig(t, seed, true, small, nil)
		if err := r2.chip.Program(0, make([]byte, 16)); err != nil {
			t.Fatal(err)
		}
		r2.noMisuse(t)
	}
	if caught == 0 {
		t.Fatal("no seed caught programs issued while busy")
	}
}

// TestHazardStaleErrorBits: status error bits are sticky. Code that does
// not clear them after a failure sees the old failure on the next,
// successful, operation.
func TestHazardStaleErrorBits(t *testing.T) {
	r := newRig(t, 4, false, cfisim.Config{Blocks: 8, BlockSize: 4096, LockedAtPowerUp: true}, nil)
	r.reg.Write32(0, cfi.CmdErase)
	r.reg.Write32(0, cfi.CmdConfirm) // block 0 locked: fails
	r.reg.Write32(4096, cfi.CmdLockSetup)
	r.reg.Write32(4096, cfi.CmdConfirm) // unlock block 1
	r.reg.Write32(4096, cfi.CmdErase)   // no Clear Status in between
	r.reg.Write32(4096, cfi.CmdConfirm)
	var sr uint32
	for i := 0; i < 64; i++ {
		r.reg.Barrier()
		if sr = r.reg.Read32(4096); sr&cfi.SRReady != 0 {
			break
		}
	}
	if sr&cfi.SRLocked == 0 {
		t.Fatalf("status %#x: model did not keep the earlier lock error", sr)
	}
	// The driver clears status before each operation and after an error.
	r2 := newRig(t, 4, false, cfisim.Config{Blocks: 8, BlockSize: 4096, LockedAtPowerUp: true}, nil)
	if err := r2.chip.Erase(0); !errors.Is(err, cfi.ErrLocked) {
		t.Fatal(err)
	}
	if err := r2.chip.Unlock(4096); err != nil {
		t.Fatal(err)
	}
	if err := r2.chip.Erase(4096); err != nil {
		t.Fatalf("erase of unlocked block after an earlier failure: %v", err)
	}
}

// TestHazardMissingBarrier: posted writes to one address may lag behind a
// read of another. Polling status at a different address without a barrier
// can see "ready" before the erase confirm reached the chip; the write that
// follows then lands in the middle of the erase sequence. Some seed catches
// it (misuse or data not erased); the driver never trips.
func TestHazardMissingBarrier(t *testing.T) {
	caught := 0
	for seed := uint64(1); seed <= 40; seed++ {
		r := newRig(t, seed, false, small, nil)
		if err := r.chip.Program(0, []byte{0, 0, 0, 0}); err != nil {
			t.Fatal(err)
		}
		r.reg.Write32(0, cfi.CmdErase)
		r.reg.Write32(0, cfi.CmdConfirm)
		for i := 0; i < 64 && r.reg.Read32(8)&cfi.SRReady == 0; i++ {
		}
		r.reg.Write32(4, cfi.CmdReadArray)
		r.reg.Barrier()
		if len(r.sys.Misuses()) > 0 || r.reg.Read32(0) != 0xffffffff {
			caught++
		}
		r2 := newRig(t, seed, false, small, nil)
		if err := r2.chip.Program(0, []byte{0, 0, 0, 0}); err != nil {
			t.Fatal(err)
		}
		if err := r2.chip.Erase(0); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		r2.noMisuse(t)
	}
	if caught == 0 {
		t.Fatal("no seed caught the missing barrier")
	}
	t.Logf("missing barrier caught under %d/40 seeds", caught)
}

func Example() {
	sys := hwsim.New(hwsim.Config{Seed: 1, BigEndianCPU: true})
	sim := cfisim.New(sys, cfisim.Config{Blocks: 64, BlockSize: 64 << 10}, nil)
	chip, err := cfi.Probe(sim.Map("flash"), true)
	if err != nil {
		panic(err)
	}
	g := chip.Geometry()
	fmt.Printf("%d KiB, %d blocks of %d KiB\n", g.Size>>10, g.Blocks, g.BlockSize>>10)
	// Output: 4096 KiB, 64 blocks of 64 KiB
}

// TestReadAtAlignments: reads of every length up to 3 words from every
// byte offset within a word return the array's bytes on either CPU
// endian.
func TestReadAtAlignments(t *testing.T) {
	img := make([]byte, 8*4096)
	for i := range img {
		img[i] = byte(i*7 + i>>8)
	}
	for _, be := range []bool{false, true} {
		r := newRig(t, 1, be, small, img)
		for off := 4096 - 4; off < 4096+4; off++ {
			for n := 0; n <= 12; n++ {
				got := make([]byte, n)
				if k, err := r.chip.ReadAt(got, int64(off)); err != nil || k != n {
					t.Fatalf("be=%v: %d bytes at %#x: %d, %v", be, n, off, k, err)
				}
				if !bytes.Equal(got, img[off:off+n]) {
					t.Fatalf("be=%v: %d bytes at %#x read % x, array holds % x", be, n, off, got, img[off:off+n])
				}
			}
		}
		r.noMisuse(t)
	}
}

// TestReadAtAllocatesNothing: a bulk read (the configuration slots at
// boot) allocates nothing per word.
func TestReadAtAllocatesNothing(t *testing.T) {
	r := newRig(t, 1, true, small, nil)
	buf := make([]byte, 4096+3)
	if n := testing.AllocsPerRun(10, func() {
		if _, err := r.chip.ReadAt(buf, 4096+1); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("ReadAt of %d bytes: %.0f allocations", len(buf), n)
	}
}
