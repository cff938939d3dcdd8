package boardflash_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"testing"

	"github.com/gowrt/gowrt/board/ar71xx/boardfile"
	"github.com/gowrt/gowrt/board/ar71xx/boardflash"
	"github.com/gowrt/gowrt/flash/part"
	"github.com/gowrt/gowrt/flash/spinor"
	"github.com/gowrt/gowrt/flash/spinor/spinorsim"
	"github.com/gowrt/gowrt/hwsim"
	"github.com/gowrt/gowrt/sysupgrade"
)

// chip is a board's SPI NOR on the hostile model: image is what the chip
// held at power-up (nil: erased), as after a reboot.
type chip struct {
	sys *hwsim.System
	sim *spinorsim.Flash
	nor *spinor.Flash
}

func powerUp(t testing.TB, b *boardfile.Board, seed uint64, image []byte) *chip {
	t.Helper()
	sys := hwsim.New(hwsim.Config{Seed: seed, BigEndianCPU: true})
	capByte := byte(0)
	for 1<<capByte < b.Flash.Size {
		capByte++
	}
	sim := spinorsim.New(sys, spinorsim.Config{JEDEC: [3]byte{0xef, 0x40, capByte}}, image) // Winbond W25Q-style ID
	nor, err := spinor.New(spinor.Config{Regs: sim.MapRegs("spi"), Mem: sim.MapWindow("flash"), BigEndian: true})
	if err != nil {
		t.Fatal(err)
	}
	return &chip{sys: sys, sim: sim, nor: nor}
}

// TestStorageSurvivesReboot: on every board's flash layout, a value saved
// in the configuration store is there after a power cycle, next to the
// untouched boot loader; the calibration partition reads and refuses
// writes.
func TestStorageSurvivesReboot(t *testing.T) {
	for _, b := range boardfile.All {
		t.Run(b.Name, func(t *testing.T) {
			c := powerUp(t, b, 1, nil)
			f, err := boardflash.Open(b, c.nor, t.Logf)
			if err != nil {
				t.Fatal(err)
			}
			st, err := f.Store("config")
			if err != nil {
				t.Fatal(err)
			}
			if v, err := st.Load(); err != nil || v != nil {
				t.Fatalf("fresh store: %q %v", v, err)
			}
			if err := st.Save([]byte("config system\n\toption hostname 'den'\n")); err != nil {
				t.Fatal(err)
			}
			c2 := powerUp(t, b, 2, c.sim.Image())
			f2, err := boardflash.Open(b, c2.nor, t.Logf)
			if err != nil {
				t.Fatal(err)
			}
			st2, _ := f2.Store("config")
			if v, err := st2.Load(); err != nil || !bytes.Contains(v, []byte("'den'")) {
				t.Fatalf("after reboot: %q %v", v, err)
			}
			if art, err := f2.ART(); err == nil {
				if err := art.Program(0, []byte{0}); !errors.Is(err, part.ErrReadOnly) {
					t.Fatalf("art program: %v", err)
				}
				if err := art.Erase(0); !errors.Is(err, part.ErrReadOnly) {
					t.Fatalf("art erase: %v", err)
				}
			} else if b.Name != "rspro" {
				t.Fatalf("no ART: %v", err)
			}
		})
	}
}

// TestOpenRefusesWrongChip: a chip of another size than the description
// is refused before anything is read as configuration.
func TestOpenRefusesWrongChip(t *testing.T) {
	c := powerUp(t, boardfile.ArcherC7v2, 1, nil) // 16 MiB
	if _, err := boardflash.Open(boardfile.TLWDR4300, c.nor, nil); !errors.Is(err, boardflash.ErrLayout) {
		t.Fatalf("8 MiB board on a 16 MiB chip: %v", err)
	}
}

// TestUpgradeOnSPI: a signed image written through the board's upgrade
// target on the SPI model lands in the firmware partition, keeps the
// configuration and leaves the boot loader and ART alone; a power cut at
// sampled points of the write leaves the configuration intact.
func TestUpgradeOnSPI(t *testing.T) {
	b := boardfile.TLWDR4300
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	base := powerUp(t, b, 1, nil)
	f, err := boardflash.Open(b, base.nor, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	// The boot loader, written through the chip (its partition is
	// read-only to gowrt).
	if err := base.nor.Erase(0); err != nil {
		t.Fatal(err)
	}
	if err := base.nor.Program(0, []byte("U-Boot 1.1.4")); err != nil {
		t.Fatal(err)
	}
	st, _ := f.Store("config")
	if err := st.Save([]byte("kept")); err != nil {
		t.Fatal(err)
	}
	before := base.sim.Image()
	fw := bytes.Repeat([]byte{0x27, 0x05, 0x19, 0x56}, 0x4000) // one 64 KiB block
	img, err := sysupgrade.Sign(fw, sysupgrade.Metadata{Board: b.Name, Version: "2"}, priv)
	if err != nil {
		t.Fatal(err)
	}
	apply := func(c *chip) error {
		f, err := boardflash.Open(b, c.nor, t.Logf)
		if err != nil {
			t.Fatal(err)
		}
		ff, _ := f.FirmwareFlash()
		return sysupgrade.Apply(img, b.Name, pub, sysupgrade.Target{Flash: ff.Flash, FirmwareOff: ff.FirmwareOff,
			FirmwareLen: ff.FirmwareLen, ConfigOff: ff.ConfigOff, ConfigLen: ff.ConfigLen}, sysupgrade.Options{KeepConfig: true}, nil)
	}
	c := powerUp(t, b, 3, before)
	w0 := c.sim.Writes()
	if err := apply(c); err != nil {
		t.Fatal(err)
	}
	total := c.sim.Writes() - w0
	after := c.sim.Image()
	fwPart, _ := b.Part(boardfile.PartFirmware)
	if !bytes.Equal(after[fwPart.Offset:fwPart.Offset+int64(len(fw))], fw) {
		t.Fatal("firmware not in the firmware partition")
	}
	if !bytes.HasPrefix(after, []byte("U-Boot 1.1.4")) {
		t.Fatal("boot loader touched")
	}
	check := func(image []byte, what string) {
		c := powerUp(t, b, 4, image)
		f, err := boardflash.Open(b, c.nor, t.Logf)
		if err != nil {
			t.Fatal(err)
		}
		st, _ := f.Store("config")
		if v, err := st.Load(); err != nil || string(v) != "kept" {
			t.Fatalf("%s: configuration %q %v", what, v, err)
		}
	}
	check(after, "after the upgrade")
	for i := uint64(1); i <= 8; i++ {
		cut := total * i / 9
		c := powerUp(t, b, 10+i, before)
		c.sim.CutPowerAfter(cut)
		if err := apply(c); err == nil {
			t.Fatalf("cut at %d/%d: Apply succeeded", cut, total)
		}
		check(c.sim.Image(), "after a power cut")
	}
}
