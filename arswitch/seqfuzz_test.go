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
	// Port flag changes in each mode (disable, tag, strip, then back).
	f.Add(byte(0), []byte{3, 3, 0, 4, 3, 3, 0, 0, 3, 0, 0, 8, 3, 0, 0, 16, 0, 1, 0, 0, 1, 3, 0, 0x0b, 3, 2, 0, 4})
	f.Add(byte(3), []byte{0, 2, 0, 0, 1, 2, 1, 0x31, 3, 3, 1, 5, 3, 5, 0, 1, 1, 1, 1, 0x7f, 2, 1, 0, 0, 3, 3, 1, 1})
	f.Add(byte(5), []byte{0, 2, 0, 0, 1, 1, 1, 0x1e, 1, 2, 2, 0x21, 3, 5, 2, 1, 3, 1, 1, 0, 0, 1, 0, 0, 1, 1, 0, 0x06})
	f.Fuzz(func(t *testing.T, chip byte, ops []byte) {
		c := arswitchsim.Chips[int(chip)%len(arswitchsim.Chips)]
		m := newModel(c)
		sw, err := Attach(cfgFor(m))
		if err != nil {
			t.Fatal(err)
		}
		rec := &arswitchsim.Recorder{}
		rec.Record(m)
		for p := 1; p < m.NumPorts(); p++ {
			m.SetLink(p, true)
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
			checkBroadcasts(t, sw, m, rec)
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

// checkBroadcasts injects an untagged broadcast at every port and compares
// where it leaves, and tagged how, with what the configuration means
// (computed here from the API's definitions, not from the driver's
// register images).
func checkBroadcasts(t *testing.T, sw *Switch, m *arswitchsim.Switch, rec *arswitchsim.Recorder) {
	t.Helper()
	sw.mu.Lock()
	mode, ports, groups := sw.mode, sw.ports, sw.groups
	perVLAN := sw.ops.perVLANTagging()
	sw.mu.Unlock()
	n := m.NumPorts()
	disabled := func(p int) bool { return ports[p].Flags&FlagDisabled != 0 }
	for p := 0; p < n; p++ {
		want := map[int]int{} // port → tag (-1 untagged)
		var out PortMask
		vid := 1 // port-based modes classify everything into VID 1
		var g VLANGroup
		switch mode {
		case ModeSingle:
			out = PortMask(1<<n-1) &^ (1 << p)
		case ModePort:
			out = groups[p].Members &^ (1 << p)
		case ModeDot1Q:
			vid = ports[p].PVID
			found := false
			for _, gg := range groups {
				if gg.VID == vid && vid != 0 {
					g, found = gg, true
				}
			}
			if !found || ports[p].Flags&FlagIngressFilter != 0 && !g.Members.Has(p) {
				break
			}
			var dest PortMask
			for _, gg := range groups {
				if gg.VID != 0 && gg.Members.Has(p) {
					dest |= gg.Members
				}
			}
			out = g.Members & dest &^ (1 << p)
		}
		if disabled(p) {
			out = 0
		}
		for e := 0; e < n; e++ {
			if !out.Has(e) || disabled(e) {
				continue
			}
			tag := -1
			switch {
			case ports[e].Flags&FlagAddTag != 0:
				tag = vid
			case ports[e].Flags&FlagStripTag != 0:
			case mode != ModeDot1Q:
			case perVLAN:
				if !g.Untagged.Has(e) {
					tag = vid
				}
			default:
				for _, gg := range groups {
					if gg.VID != 0 && gg.Members.Has(e) && !gg.Untagged.Has(e) {
						tag = vid
					}
				}
			}
			want[e] = tag
		}
		rec.Reset()
		m.Inject(p, frame(bcast, mac(byte(0x40+p)), -1, "oracle"))
		for e := 0; e < n; e++ {
			got := rec.Take(e)
			tag, ok := want[e]
			switch {
			case !ok && len(got) != 0:
				t.Fatalf("mode %v: broadcast from port %d left port %d (want %v)", mode, p, e, want)
			case ok && len(got) != 1:
				t.Fatalf("mode %v: broadcast from port %d: %d frames on port %d (want %v)", mode, p, len(got), e, want)
			case ok && tagOf(got[0]) != tag:
				t.Fatalf("mode %v: broadcast from port %d left port %d with tag %d, want %d", mode, p, e, tagOf(got[0]), tag)
			}
		}
	}
}
