package cfg_test

import (
	"bytes"
	"testing"

	"github.com/gowrt/gowrt/config/cfg"
	"github.com/gowrt/gowrt/flash/cfi"
	"github.com/gowrt/gowrt/flash/cfi/cfisim"
	"github.com/gowrt/gowrt/flash/confstore"
	"github.com/gowrt/gowrt/hwsim"
)

// Malta-like: the configuration in the last two 64 KiB blocks of the flash.
var geom = cfisim.Config{Blocks: 4, BlockSize: 64 << 10}

const slotA, slotB = 2 * 64 << 10, 3 * 64 << 10

// boot opens the configuration through a real confstore on the flash
// model holding img (nil = erased), as the board does.
func boot(t *testing.T, img []byte, be bool) (*cfisim.Flash, *cfg.Config, error) {
	t.Helper()
	sys := hwsim.New(hwsim.Config{Seed: 7, BigEndianCPU: be})
	sim := cfisim.New(sys, geom, img)
	chip, err := cfi.Probe(sim.Map("flash"), be)
	if err != nil {
		t.Fatal(err)
	}
	st, v, err := confstore.Open(chip, slotA, slotB)
	if err != nil {
		t.Fatal(err)
	}
	key, err := confstore.Share(st, v).Key("config")
	if err != nil {
		t.Fatal(err)
	}
	c, err := cfg.Open(key, nil)
	return sim, c, err
}

func TestConfstoreRoundTrip(t *testing.T) {
	for _, be := range []bool{false, true} {
		sim, c, err := boot(t, nil, be)
		if err != nil {
			t.Fatal(err)
		}
		c.Set("dhcp.lan.start", "120")
		c.Set("system.hostname", "flash-test")
		if _, err := c.Commit(); err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		c.Export(&want)
		_, c2, err := boot(t, sim.Image(), be)
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		c2.Export(&got)
		if got.String() != want.String() || c2.Snapshot().DHCP.Start != 120 {
			t.Fatalf("reopened config differs:\n%s", got.String())
		}
		// An empty commit does not touch the flash.
		erases := sim.Erases
		if ch, err := c.Commit(); err != nil || ch != nil || sim.Erases != erases {
			t.Fatalf("empty commit: %v %v erases %d->%d", ch, err, erases, sim.Erases)
		}
		t.Logf("default+changes blob %d bytes", want.Len())
	}
}
