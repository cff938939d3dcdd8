package sysupgrade_test

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gowrt/gowrt/flash"
	"github.com/gowrt/gowrt/flash/cfi"
	"github.com/gowrt/gowrt/flash/cfi/cfisim"
	"github.com/gowrt/gowrt/flash/confstore"
	"github.com/gowrt/gowrt/hwsim"
	"github.com/gowrt/gowrt/sysupgrade"
)

// A small flash with a real board's partition order (U-Boot, firmware,
// config, ART): 32 blocks of 1 KiB, so that a power-cut sweep can afford a
// cut at every bus write of an upgrade.
const bs = 1024

var geom = cfisim.Config{Blocks: 32, BlockSize: bs}

const (
	bootOff, bootLen = 0, 2 * bs
	fwOff, fwLen     = 2 * bs, 26 * bs
	cfgOff, cfgLen   = 28 * bs, 2 * bs
	artOff, artLen   = 30 * bs, 2 * bs
)

type rig struct {
	sys  *hwsim.System
	sim  *cfisim.Flash
	chip *cfi.Chip
}

func boot(t testing.TB, seed uint64, be bool, img []byte) *rig {
	t.Helper()
	sys := hwsim.New(hwsim.Config{Seed: seed, BigEndianCPU: be})
	sim := cfisim.New(sys, geom, img)
	chip, err := cfi.Probe(sim.Map("flash"), be)
	if err != nil {
		t.Fatal(err)
	}
	return &rig{sys, sim, chip}
}

func (r *rig) target() sysupgrade.Target {
	return sysupgrade.Target{Flash: r.chip, FirmwareOff: fwOff, FirmwareLen: fwLen, ConfigOff: cfgOff, ConfigLen: cfgLen}
}

func (r *rig) misuses(t testing.TB) {
	t.Helper()
	for _, m := range r.sys.Misuses() {
		t.Error(m)
	}
}

var (
	oldFW = mkUImage(randBytes(10, 2000), "gowrt 1.0")
	newFW = mkUImage(randBytes(11, 3301), "gowrt 1.1") // 3365 bytes: 4 blocks, the last partial and not whole words
	conf  = confstore.Values{"lan.ipaddr": "192.168.7.1", "system.name": "kept", "wifi.key": "correct horse"}
)

// installed is a flash as a board has it before the upgrade: bootloader,
// the old firmware, a saved configuration, calibration data.
func installed(t testing.TB, be bool) []byte {
	t.Helper()
	img := bytes.Repeat([]byte{0xff}, bs*geom.Blocks)
	copy(img[bootOff:bootOff+bootLen], randBytes(20, bootLen))
	copy(img[fwOff:], oldFW)
	copy(img[artOff:artOff+artLen], randBytes(21, artLen))
	r := boot(t, 1, be, img)
	s, _, err := confstore.Open(r.chip, cfgOff, cfgOff+bs)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Save(conf); err != nil {
		t.Fatal(err)
	}
	return r.sim.Image()
}

func sameOutside(t testing.TB, a, b []byte, parts ...[2]int) {
	t.Helper()
	a, b = bytes.Clone(a), bytes.Clone(b)
	for _, p := range parts {
		clear(a[p[0]:p[1]])
		clear(b[p[0]:p[1]])
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("flash changed at %#x, outside the partitions written", i)
		}
	}
}

var (
	fwPart  = [2]int{fwOff, fwOff + fwLen}
	cfgPart = [2]int{cfgOff, cfgOff + cfgLen}
)

func TestApply(t *testing.T) {
	pub, _ := testKey(1)
	img := signed(t, newFW, board, "1.1")
	for _, be := range []bool{false, true} {
		for _, keep := range []bool{true, false} {
			before := installed(t, be)
			r := boot(t, 2, be, before)
			w0 := r.sim.Writes()
			var calls []int64
			var total int64
			err := sysupgrade.Apply(img, board, pub, r.target(), sysupgrade.Options{KeepConfig: keep}, func(done, tot int64) {
				calls, total = append(calls, done), tot
			})
			if err != nil {
				t.Fatal(err)
			}
			after := r.sim.Image()
			part := after[fwOff : fwOff+fwLen]
			if !bytes.Equal(part[:len(newFW)], newFW) || !sysupgrade.BootCheck(part) {
				t.Fatalf("be=%v keep=%v: firmware partition does not hold the new image", be, keep)
			}
			if keep {
				sameOutside(t, before, after, fwPart)
			} else {
				sameOutside(t, before, after, fwPart, cfgPart)
				for i, b := range after[cfgOff : cfgOff+cfgLen] {
					if b != 0xff {
						t.Fatalf("config byte %#x is %#02x after -n", cfgOff+i, b)
					}
				}
			}
			r2 := boot(t, 3, be, after)
			_, got, err := confstore.Open(r2.chip, cfgOff, cfgOff+bs)
			want := conf
			if !keep {
				want = confstore.Values{}
			}
			if err != nil || !maps.Equal(got, want) {
				t.Fatalf("be=%v keep=%v: config after upgrade %v %v", be, keep, got, err)
			}
			wantTotal := int64(len(newFW))
			if !keep {
				wantTotal += cfgLen
			}
			if total != wantTotal || calls[len(calls)-1] != total || !slices.IsSorted(calls) {
				t.Fatalf("progress %v of %d", calls, total)
			}
			st := r.chip.Stats
			t.Logf("be=%v keep=%v: %d-byte firmware: %d block erases, %d word programs, %d bus writes, %d status polls; progress %v/%d",
				be, keep, len(newFW), st.Erases, st.Programs, r.sim.Writes()-w0, st.Polls, calls, total)
			r.misuses(t)

			// The same image again: every block already holds it.
			r3 := boot(t, 4, be, after)
			if err := sysupgrade.Apply(img, board, pub, r3.target(), sysupgrade.Options{KeepConfig: keep}, nil); err != nil {
				t.Fatal(err)
			}
			if r3.chip.Stats.Erases != 0 || r3.chip.Stats.Programs != 0 || !bytes.Equal(r3.sim.Image(), after) {
				t.Fatalf("reapplying: %+v", r3.chip.Stats)
			}
		}
	}
}

// TestApplyRefusesWritesNothing: every refusal happens before the first
// bus write to the chip, and the flash is unchanged.
func TestApplyRefusesWritesNothing(t *testing.T) {
	pub, _ := testKey(1)
	otherPub, _ := testKey(9)
	img := signed(t, newFW, board, "1.1")
	tooBig := signed(t, mkUImage(randBytes(12, fwLen), "huge"), board, "9.9")
	badBit := bytes.Clone(img)
	badBit[len(badBit)-100] ^= 1
	before := installed(t, true)
	for _, c := range []struct {
		name string
		img  []byte
		pub  []byte
		tgt  func(*sysupgrade.Target)
		keep bool
		want error
		text string
	}{
		{"wrong board", signed(t, newFW, "carambola2", "1.1"), pub, nil, true, sysupgrade.ErrBoard, `"carambola2", this is "tl-wdr4300"`},
		{"truncated", img[:len(img)-1], pub, nil, true, sysupgrade.ErrTruncated, "1 bytes missing"},
		{"truncated 2k", img[:len(img)-2048], pub, nil, false, sysupgrade.ErrTruncated, "2048 bytes missing"},
		{"truncated header", img[:40], pub, nil, false, sysupgrade.ErrTruncated, "missing"},
		{"bit in firmware", badBit, pub, nil, true, sysupgrade.ErrHash, ""},
		{"wrong key", img, otherPub, nil, true, sysupgrade.ErrSignature, ""},
		{"too big", tooBig, pub, nil, true, sysupgrade.ErrTooBig, fmt.Sprintf("is %d bytes, the firmware partition holds %d", fwLen+64, fwLen)},
		{"misaligned firmware", img, pub, func(t *sysupgrade.Target) { t.FirmwareOff += 512 }, true, sysupgrade.ErrTarget, "erase blocks"},
		{"odd firmware length", img, pub, func(t *sysupgrade.Target) { t.FirmwareLen -= 4 }, true, sysupgrade.ErrTarget, "erase blocks"},
		{"past the end", img, pub, func(t *sysupgrade.Target) { t.ConfigOff = 31 * bs }, false, sysupgrade.ErrTarget, "outside"},
		{"overlap", img, pub, func(t *sysupgrade.Target) { t.ConfigOff = fwOff + 25*bs }, false, sysupgrade.ErrTarget, "overlaps"},
		{"-n without config", img, pub, func(t *sysupgrade.Target) { t.ConfigLen = 0 }, false, sysupgrade.ErrTarget, "needs a config partition"},
	} {
		r := boot(t, 5, true, before)
		w0 := r.sim.Writes()
		tgt := r.target()
		if c.tgt != nil {
			c.tgt(&tgt)
		}
		err := sysupgrade.Apply(c.img, board, c.pub, tgt, sysupgrade.Options{KeepConfig: c.keep}, func(int64, int64) { t.Errorf("%s: progress called", c.name) })
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.text) {
			t.Errorf("%s: %v, want %v %q", c.name, err, c.want, c.text)
		}
		if r.sim.Writes() != w0 || !bytes.Equal(r.sim.Image(), before) {
			t.Errorf("%s: %d bus writes reached the flash", c.name, r.sim.Writes()-w0)
		}
		t.Logf("%s: %v", c.name, err)
	}
}

// stuckFlash is a RAM flash.Device whose bytes in [stuckFrom, stuckTo)
// ignore programming (a program that did not take, reported as success).
type stuckFlash struct {
	mem                []byte
	stuckFrom, stuckTo int64
}

func (f *stuckFlash) Size() int64      { return int64(len(f.mem)) }
func (f *stuckFlash) BlockSize() int   { return bs }
func (f *stuckFlash) ProgramUnit() int { return 4 }
func (f *stuckFlash) ReadAt(p []byte, off int64) (int, error) {
	return copy(p, f.mem[off:]), nil
}
func (f *stuckFlash) Erase(off int64) error {
	for i := range bs {
		f.mem[off+int64(i)] = 0xff
	}
	return nil
}
func (f *stuckFlash) Program(off int64, p []byte) error {
	for i, b := range p {
		if a := off + int64(i); a < f.stuckFrom || a >= f.stuckTo {
			f.mem[a] &= b
		}
	}
	return nil
}

var _ flash.Device = (*stuckFlash)(nil)

func TestApplyReadBack(t *testing.T) {
	pub, _ := testKey(1)
	img := signed(t, newFW, board, "1.1")
	f := &stuckFlash{mem: bytes.Repeat([]byte{0xff}, 32*bs), stuckFrom: fwOff + 3*bs + 100, stuckTo: fwOff + 3*bs + 104}
	tgt := sysupgrade.Target{Flash: f, FirmwareOff: fwOff, FirmwareLen: fwLen, ConfigOff: cfgOff, ConfigLen: cfgLen}
	err := sysupgrade.Apply(img, board, pub, tgt, sysupgrade.Options{}, nil)
	if !errors.Is(err, sysupgrade.ErrVerify) || !strings.Contains(err.Error(), fmt.Sprintf("byte at %#x", fwOff+3*bs+100)) {
		t.Fatalf("%v", err)
	}
	t.Log(err)
	// The config partition was not erased after a failed firmware write.
	f.stuckFrom = 0
	f.stuckTo = 0
	for i := range cfgLen {
		f.mem[cfgOff+i] = 0
	}
	if err := sysupgrade.Apply(img, board, pub, tgt, sysupgrade.Options{}, nil); err != nil {
		t.Fatal(err)
	}
	if f.mem[cfgOff] != 0xff || !bytes.Equal(f.mem[fwOff:fwOff+len(newFW)], newFW) {
		t.Fatal("retry did not complete")
	}
}

// eraseSpy records the bus write count at the start of every erase.
type eraseSpy struct {
	flash.Device
	at func()
}

func (s eraseSpy) Erase(off int64) error { s.at(); return s.Device.Erase(off) }

// TestPowerCut cuts the power during an upgrade, reboots the flash image
// that survives and checks what the bootloader would find: the old
// firmware, the new one, or one that BootCheck refuses (then the board
// waits in U-Boot for TFTP recovery), never a firmware that boots but is
// neither. The bootloader and ART partitions never change, a kept
// configuration never changes, a discarded one is only erased once the new
// firmware is complete, and an upgrade retried after the cut succeeds.
//
// Big-endian (the AR71xx family) is cut at every bus write of the upgrade;
// little-endian at a seeded sample of 200 writes. The retry after the cut
// runs for every cut inside an erase command, every cut that did not leave
// a recovery case, and every 8th other cut (each retry is a whole upgrade).
func TestPowerCut(t *testing.T) {
	for _, be := range []bool{true, false} {
		for _, keep := range []bool{true, false} {
			powerCutSweep(t, be, keep)
		}
	}
}

func powerCutSweep(t *testing.T, be, keep bool) {
	pub, _ := testKey(1)
	img := signed(t, newFW, board, "1.1")
	before := installed(t, be)
	r := boot(t, 1, be, before)
	tgt := r.target()
	w0 := r.sim.Writes()
	var erases []uint64
	tgt.Flash = eraseSpy{r.chip, func() { erases = append(erases, r.sim.Writes()-w0) }}
	if err := sysupgrade.Apply(img, board, pub, tgt, sysupgrade.Options{KeepConfig: keep}, nil); err != nil {
		t.Fatal(err)
	}
	total := r.sim.Writes() - w0
	var cuts []uint64
	if be {
		for k := uint64(1); k <= total; k++ {
			cuts = append(cuts, k)
		}
	} else {
		rnd := rand.New(rand.NewPCG(uint64(total), 7))
		for _, i := range rnd.Perm(int(total))[:200] {
			cuts = append(cuts, uint64(i)+1)
		}
		slices.Sort(cuts)
	}
	inErase := func(k uint64) bool {
		for _, e := range erases {
			if k > e && k <= e+4 { // clear status, setup, confirm, read array
				return true
			}
		}
		return false
	}
	wantCfg := conf
	if !keep {
		wantCfg = confstore.Values{}
	}
	outcome := map[string]int{}
	retries := 0
	for _, k := range cuts {
		r := boot(t, k, be, before)
		r.sim.CutPowerAfter(k)
		applyErr := sysupgrade.Apply(img, board, pub, r.target(), sysupgrade.Options{KeepConfig: keep}, nil)
		after := r.sim.Image()
		part := after[fwOff : fwOff+fwLen]
		var got string
		switch {
		case bytes.HasPrefix(part, newFW) && sysupgrade.BootCheck(part):
			got = "new"
		case bytes.HasPrefix(part, oldFW) && sysupgrade.BootCheck(part):
			got = "old"
		case sysupgrade.BootCheck(part):
			t.Fatalf("be=%v keep=%v cut at %d/%d: the bootloader would boot a firmware that is neither", be, keep, k, total)
		default:
			got = "recovery"
		}
		if applyErr == nil && got != "new" {
			t.Fatalf("cut at %d: Apply succeeded but the flash holds %s", k, got)
		}
		sameOutside(t, before, after, fwPart, cfgPart)
		cfgSame := bytes.Equal(after[cfgOff:cfgOff+cfgLen], before[cfgOff:cfgOff+cfgLen])
		r2 := boot(t, k+1, be, after)
		_, vals, cerr := confstore.Open(r2.chip, cfgOff, cfgOff+bs)
		switch {
		case keep && !cfgSame:
			t.Fatalf("cut at %d: kept config partition changed", k)
		case !keep && got != "new" && !cfgSame:
			t.Fatalf("cut at %d: config touched before the firmware was complete", k)
		case !keep && got == "new" && !cfgSame && len(vals) != 0:
			t.Fatalf("cut at %d: config half erased reads as %v", k, vals)
		}
		if !keep && got == "new" {
			switch {
			case cfgSame:
				got = "new, config still there"
			case cerr != nil:
				got = "new, config torn (defaults)"
			default:
				got = "new, config erased"
			}
		}
		outcome[got]++
		if got != "recovery" || inErase(k) || k%8 == 0 {
			// What TFTP recovery or a retry leads to: the upgrade completes.
			retries++
			if err := sysupgrade.Apply(img, board, pub, r2.target(), sysupgrade.Options{KeepConfig: keep}, nil); err != nil {
				t.Fatalf("cut at %d: retry: %v", k, err)
			}
			fin := r2.sim.Image()
			if !bytes.HasPrefix(fin[fwOff:], newFW) {
				t.Fatalf("cut at %d: retry left no new firmware", k)
			}
			if _, v, err := confstore.Open(boot(t, 0, be, fin).chip, cfgOff, cfgOff+bs); err != nil || !maps.Equal(v, wantCfg) {
				t.Fatalf("cut at %d: config after retry %v %v", k, v, err)
			}
		}
		r2.misuses(t)
	}
	if outcome["recovery"] == 0 || (be && (outcome["old"] == 0 || outcome["new"]+outcome["new, config erased"] == 0)) {
		t.Fatalf("be=%v keep=%v: outcomes %v do not cover old, recovery and new", be, keep, outcome)
	}
	t.Logf("be=%v keep=%v: %d bus writes per upgrade (erases start after writes %v); %d cuts, %d retried: %v",
		be, keep, total, erases, len(cuts), retries, outcome)
}
