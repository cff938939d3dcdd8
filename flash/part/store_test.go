package part_test

import (
	"errors"
	"fmt"
	"maps"
	"testing"

	"github.com/gowrt/gowrt/flash"
	"github.com/gowrt/gowrt/flash/confstore"
	"github.com/gowrt/gowrt/flash/part"
	"github.com/gowrt/gowrt/flash/spinor"
	"github.com/gowrt/gowrt/flash/spinor/spinorsim"
	"github.com/gowrt/gowrt/hwsim"
)

// A 1 MiB SPI NOR laid out like a small AR71xx board: boot loader, a
// 128 KiB config partition (two 64 KiB confstore slots), firmware, art.
const layout = "spi0.0:64k(u-boot)ro,128k(config),768k(firmware),64k(art)ro"

var chip1M = spinorsim.Config{JEDEC: [3]byte{0xc2, 0x20, 0x14}}

type board struct {
	sys  *hwsim.System
	sim  *spinorsim.Flash
	nor  *spinor.Flash
	cfg  flash.Device
	art  flash.Device
	boot flash.Device
}

func bootBoard(t testing.TB, seed uint64, img []byte) *board {
	t.Helper()
	sys := hwsim.New(hwsim.Config{Seed: seed, BigEndianCPU: true})
	sim := spinorsim.New(sys, chip1M, img)
	nor, err := spinor.New(spinor.Config{Regs: sim.MapRegs("spi"), Mem: sim.MapWindow("flash"), BigEndian: true})
	if err != nil {
		t.Fatal(err)
	}
	_, parts, err := part.ParseMtdparts(layout, nor.Size())
	if err != nil {
		t.Fatal(err)
	}
	b := &board{sys: sys, sim: sim, nor: nor}
	for _, s := range []struct {
		name string
		dst  *flash.Device
	}{{"config", &b.cfg}, {"art", &b.art}, {"u-boot", &b.boot}} {
		p, err := part.Find(parts, s.name)
		if err != nil {
			t.Fatal(err)
		}
		if *s.dst, err = part.Sub(nor, p); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

func (b *board) open(t testing.TB) (*confstore.Store, confstore.Values, error) {
	t.Helper()
	return confstore.Open(b.cfg, 0, 64<<10)
}

func values(n int) confstore.Values {
	return confstore.Values{
		"lan.ipaddr":  fmt.Sprintf("192.168.%d.1", n),
		"system.name": fmt.Sprintf("gowrt-%d", n),
		"wifi.key":    "correct horse battery staple",
	}
}

func TestSubBounds(t *testing.T) {
	b := bootBoard(t, 1, nil)
	if b.cfg.Size() != 128<<10 || b.cfg.BlockSize() != 64<<10 || b.cfg.ProgramUnit() != 1 {
		t.Fatalf("config view geometry %d %d %d", b.cfg.Size(), b.cfg.BlockSize(), b.cfg.ProgramUnit())
	}
	if err := b.cfg.Program(128<<10-1, []byte{1, 2}); !errors.Is(err, part.ErrRange) {
		t.Errorf("program across the partition end: %v", err)
	}
	if err := b.cfg.Erase(128 << 10); !errors.Is(err, part.ErrRange) {
		t.Errorf("erase past the partition: %v", err)
	}
	if _, err := b.cfg.ReadAt(make([]byte, 1), -1); !errors.Is(err, part.ErrRange) {
		t.Errorf("read before the partition: %v", err)
	}
	// Offsets are relative: config byte 0 is flash byte 64 KiB.
	if err := b.cfg.Program(5, []byte{0x42}); err != nil {
		t.Fatal(err)
	}
	if img := b.sim.Image(); img[64<<10+5] != 0x42 {
		t.Errorf("config offset 5 landed elsewhere")
	}
	for _, p := range []part.Partition{
		{"unaligned", 0x1000, 64 << 10, false},
		{"short", 0, 0x8000, false},
		{"past end", 1 << 20, 64 << 10, false},
		{"empty", 0, 0, false},
	} {
		if _, err := part.Sub(b.nor, p); !errors.Is(err, part.ErrLayout) {
			t.Errorf("Sub %v: %v, want ErrLayout", p, err)
		}
	}
	b.noMisuse(t)
}

// TestReadOnlyArt: the calibration partition reads but refuses erase and
// program (and the flash under it is untouched).
func TestReadOnlyArt(t *testing.T) {
	img := make([]byte, 1<<20)
	for i := range img {
		img[i] = 0xff
	}
	copy(img[(1<<20)-(64<<10):], "calibration data")
	b := bootBoard(t, 2, img)
	got := make([]byte, 16)
	if _, err := b.art.ReadAt(got, 0); err != nil || string(got) != "calibration data" {
		t.Fatalf("art read %q %v", got, err)
	}
	if err := b.art.Erase(0); !errors.Is(err, part.ErrReadOnly) {
		t.Errorf("erase art: %v, want ErrReadOnly", err)
	}
	if err := b.art.Program(100, []byte{0}); !errors.Is(err, part.ErrReadOnly) {
		t.Errorf("program art: %v, want ErrReadOnly", err)
	}
	if err := b.boot.Erase(0); !errors.Is(err, part.ErrReadOnly) {
		t.Errorf("erase u-boot: %v, want ErrReadOnly", err)
	}
	if b.nor.Stats.Erases != 0 || b.nor.Stats.Programs != 0 {
		t.Errorf("read-only partitions reached the chip: %+v", b.nor.Stats)
	}
}

func (b *board) noMisuse(t testing.TB) {
	t.Helper()
	for _, m := range b.sys.Misuses() {
		t.Errorf("misuse: %v", m)
	}
}

// TestConfstoreOnSPI: the configuration store works on the config
// partition of a SPI NOR, across reboots from the flash image.
func TestConfstoreOnSPI(t *testing.T) {
	b := bootBoard(t, 3, nil)
	s, v, err := b.open(t)
	if err != nil || len(v) != 0 {
		t.Fatalf("blank config: %v %v", v, err)
	}
	for i := 1; i <= 3; i++ {
		if err := s.Save(values(i)); err != nil {
			t.Fatal(err)
		}
		r := bootBoard(t, uint64(10+i), b.sim.Image())
		s2, v2, err := r.open(t)
		if err != nil || !maps.Equal(v2, values(i)) || s2.Seq() != uint32(i) {
			t.Fatalf("after save %d: %v seq %d %v", i, v2, s2.Seq(), err)
		}
	}
	b.noMisuse(t)
}

// TestConfstorePowerCut cuts the power at spread-out bus writes of a save
// on the SPI NOR and reboots: the store holds either the old values or the
// new ones, never something else and never nothing.
func TestConfstorePowerCut(t *testing.T) {
	base := bootBoard(t, 4, nil)
	s, _, err := base.open(t)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 2; i++ {
		if err := s.Save(values(i)); err != nil {
			t.Fatal(err)
		}
	}
	img := base.sim.Image()
	probe := bootBoard(t, 5, img)
	ps, _, err := probe.open(t)
	if err != nil {
		t.Fatal(err)
	}
	w0 := probe.sim.Writes()
	if err := ps.Save(values(3)); err != nil {
		t.Fatal(err)
	}
	total := probe.sim.Writes() - w0
	step := total / 47
	if step == 0 {
		step = 1
	}
	old, new, torn := 0, 0, uint64(0)
	for k := uint64(1); k <= total+1; k += step {
		r := bootBoard(t, 5+k, img)
		rs, _, err := r.open(t)
		if err != nil {
			t.Fatal(err)
		}
		r.sim.CutPowerAfter(k)
		saveErr := rs.Save(values(3))
		torn += r.sim.Torn
		after := bootBoard(t, 6, r.sim.Image())
		_, v, err := after.open(t)
		switch {
		case err != nil:
			t.Fatalf("cut at write %d/%d: reopen: %v", k, total, err)
		case maps.Equal(v, values(2)):
			old++
		case maps.Equal(v, values(3)):
			new++
		default:
			t.Fatalf("cut at write %d/%d: reopened %v (save: %v)", k, total, v, saveErr)
		}
		if saveErr == nil && !maps.Equal(v, values(3)) {
			t.Fatalf("cut at write %d: Save succeeded but the old values came back", k)
		}
	}
	if old == 0 || new == 0 || torn == 0 {
		t.Errorf("sweep too narrow: %d old, %d new, %d torn", old, new, torn)
	}
	t.Logf("%d writes per save; cuts kept old values %d times, new %d times; %d torn operations", total, old, new, torn)
}
