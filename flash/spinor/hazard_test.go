package spinor_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/gowrt/gowrt/flash/spinor"
	"github.com/gowrt/gowrt/flash/spinor/spinorsim"
	"github.com/gowrt/gowrt/hwsim"
)

// Deliberately wrong driver code, bit-banged the right way at the pin
// level (so only the mistake under test differs from the driver), and the
// model catching it. Each test also shows the real driver staying clean.

// bang is a minimal command-mode helper for wrong drivers.
type bang struct{ s *hwsim.Region }

func (b bang) enter() {
	b.s.Write32(spinor.RegFS, spinor.FSGPIO)
	b.s.Barrier()
	b.s.Write32(spinor.RegIOCtrl, spinor.IOCtrlCSMask)
	b.s.Barrier()
}

func (b bang) leave() {
	b.s.Barrier()
	b.s.Write32(spinor.RegFS, 0)
	b.s.Barrier()
}

// tx runs one transaction: CS low, out clocked MSB first, CS high; it
// returns the bytes clocked in.
func (b bang) tx(out ...byte) []byte {
	const sel = spinor.IOCtrlCSMask &^ spinor.IOCtrlCS0
	in := make([]byte, len(out))
	b.s.Barrier()
	b.s.Write32(spinor.RegIOCtrl, sel)
	for i, o := range out {
		var v uint32
		for bit := 7; bit >= 0; bit-- {
			v = sel | uint32(o>>bit&1)*spinor.IOCtrlDO
			b.s.Write32(spinor.RegIOCtrl, v)
			b.s.Write32(spinor.RegIOCtrl, v|spinor.IOCtrlCLK)
		}
		b.s.Write32(spinor.RegIOCtrl, v)
		b.s.Barrier()
		in[i] = uint8(b.s.Read32(spinor.RegRDS))
	}
	b.s.Write32(spinor.RegIOCtrl, spinor.IOCtrlCSMask)
	b.s.Barrier()
	return in
}

func (b bang) waitReady(t *testing.T) {
	t.Helper()
	for i := 0; i < 1000; i++ {
		if b.tx(spinor.CmdRDSR, 0)[1]&spinor.SRWIP == 0 {
			return
		}
	}
	t.Fatal("chip stayed busy")
}

// TestHazardNoWriteEnable: a page program without WREN first is ignored by
// the chip; the model reports it and the array is unchanged.
func TestHazardNoWriteEnable(t *testing.T) {
	r := bare(1, true, small, nil)
	b := bang{r.regs}
	b.enter()
	b.tx(spinor.CmdPageProgram, 0, 0x10, 0, 0x12, 0x34)
	b.tx(spinor.CmdBlockErase, 0, 0, 0)
	b.waitReady(t)
	b.leave()
	if !r.misused("without WREN") {
		t.Error("program/erase without WREN not reported")
	}
	if img := r.sim.Image(); img[0x1000] != 0xff {
		t.Error("program without WREN changed the array")
	}
	r2 := newRig(t, 1, true, small, nil)
	if err := r2.f.Program(0x1000, []byte{0x12, 0x34}); err != nil {
		t.Fatal(err)
	}
	r2.noMisuse(t)
}

// TestHazardCommandWhileBusy: the next WREN + program sent right after an
// erase, without polling WIP, hits a busy chip that ignores it.
func TestHazardCommandWhileBusy(t *testing.T) {
	r := bare(2, false, small, nil)
	b := bang{r.regs}
	b.enter()
	b.tx(spinor.CmdWREN)
	b.tx(spinor.CmdBlockErase, 0, 0, 0)
	b.tx(spinor.CmdWREN)
	b.tx(spinor.CmdPageProgram, 0, 0, 0, 0x00)
	b.waitReady(t)
	b.leave()
	if !r.misused("while the chip is busy") {
		t.Error("command while busy not reported")
	}
	if r.sim.Image()[0] != 0xff {
		t.Error("program issued while busy took effect")
	}
	r2 := newRig(t, 2, false, small, nil)
	if err := r2.f.Erase(0); err != nil {
		t.Fatal(err)
	}
	if err := r2.f.Program(0, []byte{0}); err != nil {
		t.Fatal(err)
	}
	r2.noMisuse(t)
}

// TestHazardWindowInCommandMode: a driver that forgets to switch back to
// memory-mapped mode (FS=0) reads garbage from the window.
func TestHazardWindowInCommandMode(t *testing.T) {
	r := bare(3, true, small, nil)
	b := bang{r.regs}
	b.enter()
	b.tx(spinor.CmdRDID, 0, 0, 0)
	// no leave(): FS still 1
	r.win.Read32(0)
	if !r.misused("command mode (FS=1)") {
		t.Error("window read in command mode not reported")
	}
	r2 := newRig(t, 3, true, small, nil)
	buf := make([]byte, 64)
	if _, err := r2.f.ReadAt(buf, 0); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf, bytes.Repeat([]byte{0xff}, 64)) {
		t.Errorf("driver read % x from erased flash", buf)
	}
	r2.noMisuse(t)
}

// TestHazardReadWhileBusy: returning to memory-mapped mode right after an
// erase command, without waiting for WIP to clear, reads garbage.
func TestHazardReadWhileBusy(t *testing.T) {
	caught := 0
	for seed := uint64(1); seed <= 5; seed++ {
		r := bare(seed, false, small, nil)
		b := bang{r.regs}
		b.enter()
		b.tx(spinor.CmdWREN)
		b.tx(spinor.CmdSectorErase, 0, 0, 0)
		b.leave()
		r.win.Read32(0)
		if r.misused("while the chip is busy") {
			caught++
		}
		r2 := newRig(t, seed, false, small, nil)
		if err := r2.f.EraseSector(0); err != nil {
			t.Fatal(err)
		}
		r2.noMisuse(t)
	}
	if caught != 5 {
		t.Errorf("read while busy caught under %d/5 seeds", caught)
	}
}

// TestHazardPageWrap: one page program of 32 bytes starting 16 bytes
// before a page end wraps: the last 16 bytes land at the start of the same
// page, not in the next one. The driver splits at the page boundary.
func TestHazardPageWrap(t *testing.T) {
	data := make([]byte, 32)
	for i := range data {
		data[i] = byte(i)
	}
	const at = 0x2f0
	r := bare(4, true, small, nil)
	b := bang{r.regs}
	b.enter()
	b.tx(spinor.CmdWREN)
	b.tx(append([]byte{spinor.CmdPageProgram, 0, at >> 8, at & 0xff}, data...)...)
	b.waitReady(t)
	b.leave()
	img := r.sim.Image()
	if !r.misused("crosses the 256-byte page") {
		t.Error("page wrap not reported")
	}
	if !bytes.Equal(img[0x200:0x210], data[16:]) || img[0x300] != 0xff {
		t.Errorf("wrap not modelled: page start % x, next page %#x", img[0x200:0x210], img[0x300])
	}
	r2 := newRig(t, 4, true, small, nil)
	if err := r2.f.Program(at, data); err != nil {
		t.Fatal(err)
	}
	img = r2.sim.Image()
	if !bytes.Equal(img[at:at+32], data) || img[0x200] != 0xff {
		t.Error("driver's split program landed wrongly")
	}
	r2.noMisuse(t)
}

// TestHazardProgramWithoutErase: programming can only clear bits; the
// model stores old AND new and reports it, the driver's read-back catches it.
func TestHazardProgramWithoutErase(t *testing.T) {
	r := newRig(t, 5, false, small, nil)
	if err := r.f.Program(0, []byte{0x0f}); err != nil {
		t.Fatal(err)
	}
	if err := r.f.Program(0, []byte{0xf0}); !errors.Is(err, spinor.ErrVerify) {
		t.Errorf("reprogram without erase: %v, want ErrVerify", err)
	}
	if !r.misused("can only clear bits") {
		t.Error("program over unerased bits not reported")
	}
	if r.sim.Image()[0] != 0x00 {
		t.Errorf("array holds %#x, want 0x0f AND 0xf0", r.sim.Image()[0])
	}
}

// TestHazardPowerCut cuts the power at every bus write of a two-page
// program (stride 13, on a 64 KiB part) and reboots from the image: every byte is old (erased),
// new, or torn with only some of its zero bits programmed; the driver reports an error for
// every cut before the last status poll, and the model tears under some cut.
func TestHazardPowerCut(t *testing.T) {
	data := bytes.Repeat([]byte{0x5a, 0x00, 0xa5, 0x3c}, 96) // 384 bytes, 2 pages
	const at = 0x180
	tiny := spinorsim.Config{JEDEC: [3]byte{0xc2, 0x20, 0x10}}
	probe := newRig(t, 7, true, tiny, nil)
	w0 := probe.sim.Writes()
	if err := probe.f.Program(at, data); err != nil {
		t.Fatal(err)
	}
	total := probe.sim.Writes() - w0
	torn, fails := 0, 0
	for k := uint64(1); k <= total; k += 13 {
		r := newRig(t, 7, true, tiny, nil)
		r.sim.CutPowerAfter(k)
		err := r.f.Program(at, data)
		if err != nil {
			fails++
		}
		torn += int(r.sim.Torn)
		img := r.sim.Image()
		for i, b := range img[at : at+len(data)] {
			if data[i]&^b != 0 {
				t.Fatalf("cut %d: byte %#x is %#02x: bits cleared that the program does not clear (%#02x)", k, at+i, b, data[i])
			}
		}
		if err == nil && !bytes.Equal(img[at:at+len(data)], data) {
			t.Fatalf("cut %d: Program succeeded but the array differs", k)
		}
		// Reboot: a fresh driver on the surviving image sees it.
		r2 := newRig(t, 8, true, tiny, img)
		got := make([]byte, len(data))
		if _, err := r2.f.ReadAt(got, at); err != nil || !bytes.Equal(got, img[at:at+len(data)]) {
			t.Fatalf("cut %d: reboot reads differ: %v", k, err)
		}
	}
	if torn == 0 {
		t.Error("no cut tore a page program")
	}
	if fails == 0 {
		t.Error("no cut made Program fail")
	}
	t.Logf("%d cut points over %d writes: %d failed, %d torn", (total+12)/13, total, fails, torn)
}
