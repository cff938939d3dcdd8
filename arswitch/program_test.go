package arswitch

import (
	"errors"
	"testing"

	"github.com/gowrt/gowrt/arswitch/arswitchsim"
)

// countBus counts register-window writes and can fail them on demand.
type countBus struct {
	*arswitchsim.Switch
	writes  int
	failAt  int // fail the n-th window write from now (0: never)
	failErr error
}

func (b *countBus) Write(phy, reg int, val uint16) error {
	if phy >= 0x10 && phy <= 0x17 {
		b.writes++
		if b.failAt > 0 {
			b.failAt--
			if b.failAt == 0 {
				return b.failErr
			}
		}
	}
	return b.Switch.Write(phy, reg, val)
}

// TestIncrementalProgramming: changing one VLAN group writes that VTU entry
// and the registers of the ports whose setup changed, not the whole switch.
func TestIncrementalProgramming(t *testing.T) {
	forEachChip(t, func(t *testing.T, c arswitchsim.Chip) {
		m := newModel(c)
		b := &countBus{Switch: m}
		cfg := cfgFor(m)
		cfg.Bus = b
		sw, err := Attach(cfg)
		must(t, err)
		lanWAN(t, sw)
		b.writes = 0
		// Port 4 joins the WAN VLAN untagged and leaves the LAN: VTU entries
		// 1 and 2 change, as do ports 0-5's destination masks at most.
		must(t, sw.SetVLANGroup(0, VLANGroup{VID: 1, Members: Ports(0, 1, 2, 3), Untagged: Ports(1, 2, 3)}))
		full := b.writes
		b.writes = 0
		must(t, sw.SetVLANGroup(0, VLANGroup{VID: 1, Members: Ports(0, 1, 2, 3), Untagged: Ports(1, 2, 3)}))
		if b.writes != 0 {
			t.Errorf("re-applying the same group wrote %d register halves", b.writes)
		}
		// A PVID change is one port.
		must(t, sw.SetPort(4, PortConfig{PVID: 2, Flags: FlagIngressFilter}))
		if b.writes == 0 || b.writes > 8 {
			t.Errorf("one PVID change: %d half-writes", b.writes)
		}
		t.Logf("group change %d half-writes, PVID change %d", full, b.writes)
		r := &rig{t: t, m: m, sw: sw, rec: &arswitchsim.Recorder{}}
		r.rec.Record(m)
		for p := 1; p < m.NumPorts(); p++ {
			m.SetLink(p, true)
		}
		r.expect("LAN after change", r.send(1, frame(bcast, mac(1), -1, "l")), map[int]int{0: 1, 2: -1, 3: -1}, "l")
		r.noViolations()
	})
}

// TestHardwareErrorRecovery: an MDIO failure in the middle of programming
// is reported; the next call reprograms everything and the switch ends up
// as configured.
func TestHardwareErrorRecovery(t *testing.T) {
	forEachChip(t, func(t *testing.T, c arswitchsim.Chip) {
		m := newModel(c)
		b := &countBus{Switch: m}
		cfg := cfgFor(m)
		cfg.Bus = b
		sw, err := Attach(cfg)
		must(t, err)
		boom := errors.New("MDIO write timed out")
		b.failAt, b.failErr = 5, boom
		if err := sw.SetVLANMode(ModeDot1Q); !errors.Is(err, boom) {
			t.Fatalf("SetVLANMode with failing bus: %v", err)
		}
		lanWAN(t, sw)
		r := &rig{t: t, m: m, sw: sw, rec: &arswitchsim.Recorder{}}
		r.rec.Record(m)
		for p := 1; p < m.NumPorts(); p++ {
			m.SetLink(p, true)
		}
		r.expect("LAN broadcast", r.send(1, frame(bcast, mac(1), -1, "x")), map[int]int{0: 1, 2: -1, 3: -1, 4: -1}, "x")
		r.expect("WAN broadcast", r.send(5, frame(bcast, mac(5), -1, "w")), map[int]int{0: 2}, "w")
	})
}

// TestModeRoundTrip: leaving 802.1Q for the single group empties the VTU
// and restores plain bridging; per-port groups read back.
func TestModeRoundTrip(t *testing.T) {
	forEachChip(t, func(t *testing.T, c arswitchsim.Chip) {
		r := newRig(t, c)
		lanWAN(t, r.sw)
		if len(r.m.VLANs()) != 2 {
			t.Fatalf("VTU %+v", r.m.VLANs())
		}
		must(t, r.sw.SetVLANMode(ModeSingle))
		if len(r.m.VLANs()) != 0 {
			t.Fatalf("VTU after ModeSingle %+v", r.m.VLANs())
		}
		r.expect("bridging again", r.send(5, frame(bcast, mac(5), -1, "b")), r.allBut(5), "b")
		must(t, r.sw.SetVLANMode(ModePort))
		if n := r.sw.Info().VLANGroups; n != r.m.NumPorts() {
			t.Errorf("port mode groups %d", n)
		}
		if _, err := r.sw.VLANGroup(r.m.NumPorts()); !errors.Is(err, ErrBadGroup) {
			t.Errorf("group past ports: %v", err)
		}
		if err := r.sw.SetVLANGroup(r.m.NumPorts(), VLANGroup{Members: 1}); !errors.Is(err, ErrBadGroup) {
			t.Errorf("set group past ports: %v", err)
		}
		must(t, r.sw.SetVLANGroup(2, VLANGroup{Members: Ports(0, 3)}))
		g, err := r.sw.VLANGroup(2)
		must(t, err)
		if g.Members != Ports(0, 3) {
			t.Errorf("group 2 %+v", g)
		}
		r.expect("port 2 reaches 0 and 3 only", r.send(2, frame(bcast, mac(2), -1, "p")), ports(0, 3), "p")
		r.noViolations()
	})
}

// TestVTUReadback: the hardware VLAN table read through the VTU get-next
// operation matches the configuration.
func TestVTUReadback(t *testing.T) {
	forEachChip(t, func(t *testing.T, c arswitchsim.Chip) {
		r := newRig(t, c)
		got, err := r.sw.VTU()
		must(t, err)
		if len(got) != 0 {
			t.Fatalf("single mode VTU %+v", got)
		}
		lanWAN(t, r.sw)
		must(t, r.sw.SetVLANGroup(5, VLANGroup{VID: 4094, Members: Ports(0), Untagged: 0}))
		got, err = r.sw.VTU()
		must(t, err)
		want := []VTUEntry{{1, Ports(0, 1, 2, 3, 4), Ports(1, 2, 3, 4)}, {2, Ports(0, 5), Ports(5)}, {4094, Ports(0), 0}}
		if !r.sw.Info().PerVLANTagging {
			for i := range want {
				want[i].Untagged = 0
			}
		}
		if len(got) != len(want) {
			t.Fatalf("VTU %+v, want %+v", got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("VTU[%d] %+v, want %+v", i, got[i], want[i])
			}
		}
		r.noViolations()
	})
}
