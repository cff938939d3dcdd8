package profiles

import (
	"testing"

	"github.com/gowrt/gowrt/arswitch"
	"github.com/gowrt/gowrt/arswitch/arswitchsim"
)

// TestProfilesAttach: every profile is one its board's switch accepts
// (arswitch validates the wiring against the chip at Attach).
func TestProfilesAttach(t *testing.T) {
	for _, c := range []struct {
		b    arswitch.Board
		chip arswitchsim.Chip
	}{
		{DB120, arswitchsim.AR8327},
		{AP135, arswitchsim.AR8327},
		{TLWDR4300, arswitchsim.AR8327},
		{AR934xBuiltIn, arswitchsim.AR934x},
	} {
		m := arswitchsim.New(c.chip, arswitchsim.Options{})
		b := c.b.Clone()
		sw, err := arswitch.Attach(arswitch.Config{Bus: m, Board: &b, BuiltIn: c.chip == arswitchsim.AR934x, Sleep: m.Clock().Sleep})
		if err != nil {
			t.Errorf("%s: %v", c.b.Name, err)
			continue
		}
		for _, cp := range c.b.CPU {
			if !sw.Info().CPUPorts.Has(cp.Port) {
				t.Errorf("%s: CPU ports %v lack %d", c.b.Name, sw.Info().CPUPorts, cp.Port)
			}
		}
	}
}
