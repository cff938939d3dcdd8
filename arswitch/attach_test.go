package arswitch

import (
	"testing"

	"github.com/gowrt/gowrt/arswitch/arswitchsim"
)

func TestAttachIdentifies(t *testing.T) {
	want := map[arswitchsim.Chip]ChipID{
		arswitchsim.AR8216: ChipAR8216, arswitchsim.AR8316: ChipAR8316,
		arswitchsim.AR8327: ChipAR8327, arswitchsim.AR8337: ChipAR8337,
		arswitchsim.AR7240: ChipAR7240, arswitchsim.AR934x: ChipAR934x,
	}
	forEachChip(t, func(t *testing.T, c arswitchsim.Chip) {
		r := newRig(t, c)
		info := r.sw.Info()
		if info.Chip != want[c] {
			t.Errorf("chip %v, want %v", info.Chip, want[c])
		}
		if info.Ports != r.m.NumPorts() {
			t.Errorf("ports %d, want %d", info.Ports, r.m.NumPorts())
		}
		if r.sw.VLANMode() != ModeSingle {
			t.Errorf("default mode %v", r.sw.VLANMode())
		}
		r.noViolations()
	})
}
