package arswitch

import (
	"errors"
	"testing"
	"time"

	"github.com/gowrt/gowrt/arswitch/arswitchsim"
)

// TestBadConfigLeavesSwitchUnchanged: every rejected configuration returns
// a clear error and writes nothing (checked against a register, VTU and
// static-ATU snapshot of the model).
func TestBadConfigLeavesSwitchUnchanged(t *testing.T) {
	forEachChip(t, func(t *testing.T, c arswitchsim.Chip) {
		r := newRig(t, c)
		sw := r.sw
		// In ModeSingle nothing about groups can change.
		before := r.m.Snapshot()
		if err := sw.SetVLANGroup(0, VLANGroup{Members: Ports(1)}); !errors.Is(err, ErrMode) {
			t.Errorf("SetVLANGroup in single mode: %v", err)
		}
		if err := sw.DelVLANGroup(0); !errors.Is(err, ErrMode) {
			t.Errorf("DelVLANGroup in single mode: %v", err)
		}
		if d := before.Diff(r.m.Snapshot()); d != "" {
			t.Fatalf("changed:\n%s", d)
		}

		lanWAN(t, sw)
		maxG := sw.Info().VLANGroups
		all := PortMask(1<<r.m.NumPorts() - 1)
		cases := []struct {
			name string
			do   func() error
			want error
		}{
			{"VID 0", func() error { return sw.SetVLANGroup(2, VLANGroup{VID: 0, Members: Ports(3)}) }, ErrBadVID},
			{"VID 4095", func() error { return sw.SetVLANGroup(2, VLANGroup{VID: 4095, Members: Ports(3)}) }, ErrBadVID},
			{"VID -1", func() error { return sw.SetVLANGroup(2, VLANGroup{VID: -1, Members: Ports(3)}) }, ErrBadVID},
			{"change VID to 0", func() error { return sw.SetVLANGroup(1, VLANGroup{VID: 0, Members: Ports(0, 5)}) }, ErrBadVID},
			{"duplicate VID", func() error { return sw.SetVLANGroup(2, VLANGroup{VID: 2, Members: Ports(3)}) }, ErrDupVID},
			{"group past the chip's VTU", func() error { return sw.SetVLANGroup(maxG, VLANGroup{VID: 100, Members: Ports(3)}) }, ErrBadGroup},
			{"negative group", func() error { return sw.SetVLANGroup(-1, VLANGroup{VID: 100, Members: Ports(3)}) }, ErrBadGroup},
			{"nonexistent port", func() error { return sw.SetVLANGroup(2, VLANGroup{VID: 100, Members: all + 1}) }, ErrBadPort},
			{"PVID 0", func() error { return sw.SetPort(1, PortConfig{PVID: 0}) }, ErrBadVID},
			{"PVID 4095", func() error { return sw.SetPort(1, PortConfig{PVID: 4095}) }, ErrBadVID},
			{"port out of range", func() error { return sw.SetPort(r.m.NumPorts(), PortConfig{PVID: 1}) }, ErrBadPort},
			{"add and strip", func() error { return sw.SetPort(1, PortConfig{PVID: 1, Flags: FlagAddTag | FlagStripTag}) }, ErrUnsupported},
			{"bad mode", func() error { return sw.SetVLANMode(VLANMode(7)) }, ErrMode},
		}
		if !sw.Info().PerVLANTagging {
			cases = append(cases,
				struct {
					name string
					do   func() error
					want error
				}{"port in two untagged VLANs", func() error {
					return sw.SetVLANGroup(2, VLANGroup{VID: 3, Members: Ports(4, 5), Untagged: Ports(4)})
				}, ErrUnsupported},
				struct {
					name string
					do   func() error
					want error
				}{"port tagged and untagged", func() error {
					return sw.SetVLANGroup(2, VLANGroup{VID: 3, Members: Ports(0, 4)})
				}, ErrUnsupported})
		}
		for _, tc := range cases {
			before := r.m.Snapshot()
			err := tc.do()
			if !errors.Is(err, tc.want) {
				t.Errorf("%s: err %v, want %v", tc.name, err, tc.want)
			}
			if d := before.Diff(r.m.Snapshot()); d != "" {
				t.Errorf("%s: rejected configuration changed the switch:\n%s", tc.name, d)
			}
		}
		// The switch still forwards as configured.
		r.expect("LAN broadcast after rejects", r.send(1, frame(bcast, mac(1), -1, "ok")),
			map[int]int{0: 1, 2: -1, 3: -1, 4: -1}, "ok")
		r.noViolations()
	})
}

// TestVLANGroupLimit: a chip with a small VTU (16 entries on the AR8216
// family) takes exactly that many VLANs; the next is refused unchanged.
func TestVLANGroupLimit(t *testing.T) {
	for _, c := range []arswitchsim.Chip{arswitchsim.AR8216, arswitchsim.AR934x} {
		t.Run(c.String(), func(t *testing.T) {
			r := newRig(t, c)
			must(t, r.sw.SetVLANMode(ModeDot1Q))
			n := r.sw.Info().VLANGroups
			if n != 16 {
				t.Fatalf("VLAN groups %d, want 16", n)
			}
			// CPU port tagged everywhere: the AR8216 family tags per port.
			must(t, r.sw.SetVLANGroup(0, VLANGroup{VID: 1, Members: Ports(0, 1), Untagged: Ports(1)}))
			for i := 1; i < n; i++ {
				must(t, r.sw.SetVLANGroup(i, VLANGroup{VID: 100 + i, Members: Ports(0), Untagged: 0}))
			}
			if got := len(r.m.VLANs()); got != n {
				t.Fatalf("VTU holds %d VLANs, want %d", got, n)
			}
			before := r.m.Snapshot()
			if err := r.sw.SetVLANGroup(n, VLANGroup{VID: 99, Members: Ports(0)}); !errors.Is(err, ErrBadGroup) {
				t.Fatalf("17th group: %v", err)
			}
			if d := before.Diff(r.m.Snapshot()); d != "" {
				t.Fatalf("changed:\n%s", d)
			}
			// Delete one, reuse its slot.
			must(t, r.sw.DelVLANGroup(5))
			must(t, r.sw.SetVLANGroup(5, VLANGroup{VID: 99, Members: Ports(0)}))
			vl := r.m.VLANs()
			if len(vl) != n || vl[0].VID != 1 {
				t.Fatalf("VTU after delete+add: %+v", vl)
			}
			for _, v := range vl {
				if v.VID == 105 {
					t.Fatalf("deleted VLAN 105 still in VTU")
				}
			}
			r.noViolations()
		})
	}
}

// TestVTUFullReported: if the chip's VTU fills (e.g. entries loaded behind
// the driver's back) the load error is reported, not ignored.
func TestVTUFullReported(t *testing.T) {
	r := newRig(t, arswitchsim.AR8316)
	must(t, r.sw.SetVLANMode(ModeDot1Q))
	must(t, r.sw.SetVLANGroup(0, VLANGroup{VID: 1, Members: Ports(0, 1), Untagged: Ports(1)}))
	// Fill the VTU with raw operations.
	for vid := 200; vid < 215; vid++ {
		must(t, r.sw.WriteReg(r16VTUData, 1|vtuDataValid))
		must(t, r.sw.WriteReg(r16VTU, vtuOpLoad|uint32(vid)<<vtuVIDShift|vtuActive))
		r.m.Clock().Sleep(time.Millisecond)
	}
	err := r.sw.SetVLANGroup(1, VLANGroup{VID: 2, Members: Ports(0)})
	if !errors.Is(err, ErrVTUFull) {
		t.Fatalf("err %v, want ErrVTUFull", err)
	}
}
