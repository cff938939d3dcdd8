package arswitch

import (
	"errors"
	"testing"

	"github.com/gowrt/gowrt/arswitch/arswitchsim"
	"github.com/gowrt/gowrt/mdio"
	"github.com/gowrt/gowrt/mdio/phy"
)

// TestPHYBusWithGenericPHYDriver: the generic clause-22 PHY driver manages
// the switch's internal PHYs through PHYBus, on every chip (built-in
// switches go through the MDIO master register).
func TestPHYBusWithGenericPHYDriver(t *testing.T) {
	forEachChip(t, func(t *testing.T, c arswitchsim.Chip) {
		r := newRig(t, c)
		bus := r.sw.PHYBus()
		if _, ok := bus.(mdio.Locker); ok {
			t.Fatal("PHYBus must not offer a Locker (per-transaction locking)")
		}
		p, err := phy.New(bus, 2)
		must(t, err)
		if p.ID>>4 != 0x004dd03 && p.ID>>4 != 0x004dd04 {
			t.Errorf("PHY ID %#08x", p.ID)
		}
		must(t, p.Reset())
		must(t, p.StartAutoneg(phy.All))
		l, _, err := p.Poll()
		must(t, err)
		if !l.Up || l.Speed != 1000 || !l.FullDuplex {
			t.Errorf("link %+v", l)
		}
		r.m.SetLink(3, false) // port 3 = PHY 2
		l, _, err = p.Poll()
		must(t, err)
		if l.Up {
			t.Errorf("link up after unplug: %+v", l)
		}
		if _, err := bus.Read(5, 1); !errors.Is(err, mdio.ErrAddress) {
			t.Errorf("PHY 5: %v", err)
		}
		r.noViolations()
	})
}
