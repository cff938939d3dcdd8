package arswitch

import (
	"errors"
	"testing"

	"github.com/gowrt/gowrt/arswitch/arswitchsim"
)

// FuzzConfigSequence drives random sequences of configuration calls. After
// each call: a rejected call wrote nothing (register snapshot unchanged) and
// returned one of the package's errors; an accepted call left the chip's VLAN
// table equal to the driver's configuration; the model saw no register-level
// violation.
func FuzzConfigSequence(f *testing.F) {
	f.Add(byte(0), []byte{0, 2, 0, 0, 1, 1, 10, 0x07, 3, 1, 1, 0})
	f.Add(byte(2), []byte{0, 2, 0, 0, 1, 2, 20, 0x61, 1, 3, 20, 0x23, 2, 3, 0, 0, 3, 1, 0, 1})
	f.Add(byte(4), []byte{0, 1, 0, 0, 1, 2, 0, 0x03, 1, 3, 0, 0xff, 0, 0, 0, 0})
	f.Add(byte(1), []byte{0, 2, 0, 0, 1, 17, 3, 1, 1, 2, 240, 1, 1, 3, 241, 0x20})
	f.Fuzz(func(t *testing.T, chip byte, ops []byte) {
		c := arswitchsim.Chips[int(chip)%len(arswitchsim.Chips)]
		m := newModel(c)
		sw, err := Attach(cfgFor(m))
		if err != nil {
			t.Fatal(err)
		}
		known := []error{ErrBadPort, ErrBadVID, ErrBadGroup, ErrDupVID, ErrMode, ErrUnsupported}
		for i := 0; i+4 <= len(ops) && i < 4*48; i += 4 {
			op, a, b, x := ops[i], ops[i+1], ops[i+2], ops[i+3]
			before := m.Snapshot()
			var err error
			switch op % 5 {
			case 0:
				err = sw.SetVLANMode(VLANMode(a % 4))
			case 1:
				err = sw.SetVLANGroup(int(a%20)-1, VLANGroup{VID: int(b)*17 - 1, Members: PortMask(x), Untagged: PortMask(x & b)})
			case 2:
				err = sw.DelVLANGroup(int(a % 20))
			case 3:
				err = sw.SetPort(int(a%8), PortConfig{PVID: int(b) * 17, Flags: PortFlags(x & 0x3f)})
			case 4:
				_, err = sw.PollLinks()
			}
			if err != nil {
				ok := false
				for _, k := range known {
					ok = ok || errors.Is(err, k)
				}
				if !ok {
					t.Fatalf("op %d: unexpected error %v", i/4, err)
				}
				if d := before.Diff(m.Snapshot()); d != "" {
					t.Fatalf("op %d rejected (%v) but changed the switch:\n%s", i/4, err, d)
				}
			}
			checkVTU(t, sw, m)
			if v := m.Violations(); len(v) > 0 {
				t.Fatalf("op %d: violations %v", i/4, v)
			}
		}
	})
}

// checkVTU compares the model's VLAN table with the driver's groups.
func checkVTU(t *testing.T, sw *Switch, m *arswitchsim.Switch) {
	t.Helper()
	want := map[int]VLANGroup{}
	sw.mu.Lock()
	if sw.mode == ModeDot1Q {
		for _, g := range sw.groups {
			if g.VID != 0 {
				want[g.VID] = g
			}
		}
	}
	perVLAN := sw.ops.perVLANTagging()
	sw.mu.Unlock()
	got := m.VLANs()
	if len(got) != len(want) {
		t.Fatalf("VTU has %d VLANs, configuration %d: %+v vs %+v", len(got), len(want), got, want)
	}
	for _, v := range got {
		g, ok := want[v.VID]
		if !ok || PortMask(v.Members) != g.Members {
			t.Fatalf("VTU VLAN %+v, configured %+v", v, g)
		}
		if perVLAN && (PortMask(v.Untagged) != g.Untagged || PortMask(v.Tagged) != g.Members&^g.Untagged) {
			t.Fatalf("VTU VLAN %+v tagging, configured %+v", v, g)
		}
	}
}
