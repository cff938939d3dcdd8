package confstore_test

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"testing"

	"github.com/gowrt/gowrt/flash/cfi"
	"github.com/gowrt/gowrt/flash/cfi/cfisim"
	"github.com/gowrt/gowrt/flash/confstore"
	"github.com/gowrt/gowrt/hwsim"
)

// The model: 4 blocks of 4 KiB; the configuration lives in the last two,
// as on Malta (0x3E0000 and 0x3F0000 of a 4 MiB flash).
var geom = cfisim.Config{Blocks: 4, BlockSize: 4096}

const slotA, slotB = 2 * 4096, 3 * 4096

type rig struct {
	sys  *hwsim.System
	sim  *cfisim.Flash
	chip *cfi.Chip
}

func boot(t *testing.T, seed uint64, be bool, img []byte) *rig {
	t.Helper()
	sys := hwsim.New(hwsim.Config{Seed: seed, BigEndianCPU: be})
	sim := cfisim.New(sys, geom, img)
	chip, err := cfi.Probe(sim.Map("flash"), be)
	if err != nil {
		t.Fatal(err)
	}
	return &rig{sys, sim, chip}
}

func (r *rig) open(t *testing.T) (*confstore.Store, confstore.Values, error) {
	t.Helper()
	return confstore.Open(r.chip, slotA, slotB)
}

func cfgN(n int) confstore.Values {
	return confstore.Values{
		"lan.ipaddr":   fmt.Sprintf("192.168.%d.1", n),
		"lan.netmask":  "255.255.255.0",
		"system.name":  fmt.Sprintf("gowrt-%d", n),
		"wifi.ssid":    "gowrt",
		"wifi.key":     "correct horse battery staple",
		"boot.counter": fmt.Sprint(n),
	}
}

func TestSaveLoad(t *testing.T) {
	for _, be := range []bool{false, true} {
		r := boot(t, 1, be, nil)
		s, v, err := r.open(t)
		if err != nil || len(v) != 0 {
			t.Fatalf("blank region: %v %v", v, err)
		}
		for i := 1; i <= 5; i++ {
			if err := s.Save(cfgN(i)); err != nil {
				t.Fatal(err)
			}
			r2 := boot(t, 2, be, r.sim.Image())
			s2, v2, err := r2.open(t)
			if err != nil || !maps.Equal(v2, cfgN(i)) || s2.Seq() != uint32(i) {
				t.Fatalf("be=%v save %d: reopened %v seq %d err %v", be, i, v2, s2.Seq(), err)
			}
			if !s2.Copies[0].Valid || (i > 1 && !s2.Copies[1].Valid) {
				t.Fatalf("copies after save %d: %v", i, s2.Copies)
			}
		}
		for _, m := range r.sys.Misuses() {
			t.Error(m)
		}
	}
}

// TestFlashImageEndianFree: the flash image is byte-identical whichever
// endian wrote it.
func TestFlashImageEndianFree(t *testing.T) {
	var imgs [2][]byte
	for i, be := range []bool{false, true} {
		r := boot(t, 1, be, nil)
		s, _, _ := r.open(t)
		if err := s.Save(cfgN(7)); err != nil {
			t.Fatal(err)
		}
		imgs[i] = r.sim.Image()
	}
	if !bytes.Equal(imgs[0], imgs[1]) {
		t.Fatal("LE and BE wrote different flash images")
	}
}

// TestSaveCost measures what one save costs the flash: one block erase and
// one word program per non-0xFF word of the copy.
func TestSaveCost(t *testing.T) {
	r := boot(t, 1, true, nil)
	s, _, _ := r.open(t)
	if err := s.Save(cfgN(1)); err != nil {
		t.Fatal(err)
	}
	before, w0 := r.chip.Stats, r.sim.Writes()
	v := cfgN(2)
	if err := s.Save(v); err != nil {
		t.Fatal(err)
	}
	st := r.chip.Stats
	b, _ := confstore.Encode(v, 2)
	words := 0
	for i := 0; i < len(b); i += 4 {
		if !bytes.Equal(b[i:i+4], []byte{0xff, 0xff, 0xff, 0xff}) {
			words++
		}
	}
	if e, p := st.Erases-before.Erases, st.Programs-before.Programs; e != 1 || p != uint64(words) {
		t.Fatalf("save: %d erases, %d word programs; want 1 and %d", e, p, words)
	}
	t.Logf("one save of %d bytes (%d keys): 1 block erase, %d word programs, %d bus write cycles, %d status polls",
		len(b), len(v), words, r.sim.Writes()-w0, st.Polls-before.Polls)
}

// TestPowerCutEverywhere cuts the power at every write cycle of a save, on
// both endians, for a first save (old = nothing) and for a save that
// overwrites the older of two valid copies. After each cut the flash is
// "rebooted": it must hold the old or the new configuration (never a mix,
// never garbage accepted), a save that reported success must be the new
// one, and a later save must succeed.
func TestPowerCutEverywhere(t *testing.T) {
	for _, be := range []bool{false, true} {
		for _, prior := range []int{0, 2} {
			// Baseline image with `prior` completed saves.
			r := boot(t, 1, be, nil)
			s, _, _ := r.open(t)
			for i := 1; i <= prior; i++ {
				if err := s.Save(cfgN(i)); err != nil {
					t.Fatal(err)
				}
			}
			base := r.sim.Image()
			var old confstore.Values
			if prior > 0 {
				old = cfgN(prior)
			}
			newV := cfgN(100)

			// How many write cycles a save takes.
			r = boot(t, 1, be, base)
			s, _, _ = r.open(t)
			w0 := r.sim.Writes()
			if err := s.Save(newV); err != nil {
				t.Fatal(err)
			}
			total := r.sim.Writes() - w0

			sawOld, sawNew := 0, 0
			for k := uint64(1); k <= total; k++ {
				r := boot(t, k, be, base)
				s, _, err := r.open(t)
				if err != nil && prior > 0 {
					t.Fatal(err)
				}
				r.sim.CutPowerAfter(k)
				saveErr := s.Save(newV)

				r2 := boot(t, k+1000, be, r.sim.Image())
				s2, got, err := r2.open(t)
				switch {
				case maps.Equal(got, newV) && err == nil:
					sawNew++
				case old != nil && maps.Equal(got, old) && err == nil:
					sawOld++
				case old == nil && len(got) == 0:
					// Nothing was saved before: defaults, possibly with
					// ErrNoValidCopy for the half-written first copy.
					if err != nil && !errors.Is(err, confstore.ErrNoValidCopy) {
						t.Fatalf("be=%v prior=%d cut at %d/%d: %v", be, prior, k, total, err)
					}
					sawOld++
				default:
					t.Fatalf("be=%v prior=%d cut at %d/%d: got %v err %v (copies %v)", be, prior, k, total, got, err, s2.Copies)
				}
				if saveErr == nil && !maps.Equal(got, newV) {
					t.Fatalf("cut at %d: Save succeeded but reboot found %v", k, got)
				}
				if err := s2.Save(cfgN(200)); err != nil {
					t.Fatalf("cut at %d: save after reboot: %v", k, err)
				}
				r3 := boot(t, k+2000, be, r2.sim.Image())
				if _, got, err := r3.open(t); err != nil || !maps.Equal(got, cfgN(200)) {
					t.Fatalf("cut at %d: recovery save not read back: %v %v", k, got, err)
				}
			}
			if sawOld == 0 || sawNew == 0 {
				t.Fatalf("be=%v prior=%d: old %d new %d: cut points did not cover both outcomes", be, prior, sawOld, sawNew)
			}
			t.Logf("be=%v prior=%d: %d cut points: %d old, %d new", be, prior, total, sawOld, sawNew)
		}
	}
}

func TestCorruptRegion(t *testing.T) {
	r := boot(t, 1, true, nil)
	s, _, _ := r.open(t)
	for i := 1; i <= 2; i++ {
		if err := s.Save(cfgN(i)); err != nil {
			t.Fatal(err)
		}
	}
	img := r.sim.Image()
	// Damage the newer copy (seq 2 in slot B): the older one is used.
	img[slotB+HeaderPlus(3)] ^= 0x40
	r = boot(t, 1, true, img)
	s, v, err := r.open(t)
	if err != nil || !maps.Equal(v, cfgN(1)) {
		t.Fatalf("one copy damaged: %v %v", v, err)
	}
	if s.Copies[1].Valid || !errors.Is(s.Copies[1].Err, confstore.ErrCRC) {
		t.Fatalf("damaged copy state: %v", s.Copies[1])
	}
	// Damage both: no valid copy, clear error, empty configuration.
	img[slotA+1] = 'X'
	r = boot(t, 1, true, img)
	s, v, err = r.open(t)
	if !errors.Is(err, confstore.ErrNoValidCopy) || len(v) != 0 {
		t.Fatalf("both damaged: %v %v", v, err)
	}
	t.Logf("report: %v", err)
	// The store still saves, and the region heals.
	if err := s.Save(cfgN(9)); err != nil {
		t.Fatal(err)
	}
	r = boot(t, 1, true, r.sim.Image())
	if _, v, err := r.open(t); err != nil || !maps.Equal(v, cfgN(9)) {
		t.Fatalf("after healing save: %v %v", v, err)
	}
}

// HeaderPlus is an offset into a copy's payload.
func HeaderPlus(n int) int { return confstore.HeaderSize + n }

func TestLockedSlotsUnlocked(t *testing.T) {
	sys := hwsim.New(hwsim.Config{Seed: 1})
	sim := cfisim.New(sys, cfisim.Config{Blocks: 4, BlockSize: 4096, LockedAtPowerUp: true}, nil)
	chip, err := cfi.Probe(sim.Map("flash"), false)
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := confstore.Open(chip, slotA, slotB)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Save(cfgN(1)); err != nil {
		t.Fatalf("save to locked flash: %v", err)
	}
}

func TestSeqWrap(t *testing.T) {
	// Copies with seq 0xFFFFFFFF (slot A) and 0 (slot B): 0 is newer.
	img := bytes.Repeat([]byte{0xff}, 4*4096)
	a, _ := confstore.Encode(cfgN(1), 0xffffffff)
	b, _ := confstore.Encode(cfgN(2), 0)
	copy(img[slotA:], a)
	copy(img[slotB:], b)
	r := boot(t, 1, false, img)
	s, v, err := r.open(t)
	if err != nil || !maps.Equal(v, cfgN(2)) {
		t.Fatalf("wrapped seq: %v %v", v, err)
	}
	if err := s.Save(cfgN(3)); err != nil || s.Seq() != 1 {
		t.Fatalf("save after wrap: seq %d %v", s.Seq(), err)
	}
}

func TestOpenBadSlots(t *testing.T) {
	r := boot(t, 1, false, nil)
	for _, o := range [][2]int64{{100, slotB}, {slotA, slotA}, {slotA, 4 * 4096}, {-4096, slotB}} {
		if _, _, err := confstore.Open(r.chip, o[0], o[1]); err == nil {
			t.Errorf("Open(%#x, %#x) accepted", o[0], o[1])
		}
	}
}

func TestSaveRejects(t *testing.T) {
	r := boot(t, 1, false, nil)
	s, _, _ := r.open(t)
	big := confstore.Values{}
	for i := 0; i < 8; i++ {
		big[fmt.Sprintf("k%d", i)] = string(bytes.Repeat([]byte{'v'}, 1000))
	}
	for _, tc := range []struct {
		v    confstore.Values
		want error
	}{
		{confstore.Values{"": "x"}, confstore.ErrKey},
		{confstore.Values{"a=b": "x"}, confstore.ErrKey},
		{confstore.Values{"a b": "x"}, confstore.ErrKey},
		{confstore.Values{"k": string(make([]byte, 1025))}, confstore.ErrValue},
		{big, confstore.ErrTooLarge},
	} {
		if err := s.Save(tc.v); !errors.Is(err, tc.want) {
			t.Errorf("Save: %v, want %v", err, tc.want)
		}
	}
	if r.chip.Stats.Erases != 0 {
		t.Error("a rejected save touched the flash")
	}
}
