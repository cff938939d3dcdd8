package arswitch

import (
	"errors"
	"testing"

	"github.com/gowrt/gowrt/arswitch/arswitchsim"
)

// allBut lists every port of the rig except the given ones, untagged.
func (r *rig) allBut(except ...int) map[int]int {
	m := map[int]int{}
	for p := 0; p < r.m.NumPorts(); p++ {
		m[p] = -1
	}
	for _, p := range except {
		delete(m, p)
	}
	return m
}

// TestBridgingSingleGroup: the default mode is an untagged learning bridge
// across all ports: broadcast and unknown unicast flood, known unicast goes
// to one port only.
func TestBridgingSingleGroup(t *testing.T) {
	forEachChip(t, func(t *testing.T, c arswitchsim.Chip) {
		r := newRig(t, c)
		a, b, x := mac(1), mac(2), mac(9)
		r.expect("A broadcast", r.send(1, frame(bcast, a, -1, "arp-a")), r.allBut(1), "arp-a")
		r.expect("B→A (A learned)", r.send(2, frame(a, b, -1, "b-to-a")), ports(1), "b-to-a")
		r.expect("A→B (B learned)", r.send(1, frame(b, a, -1, "a-to-b")), ports(2), "a-to-b")
		r.expect("A→unknown floods", r.send(1, frame(x, a, -1, "a-to-x")), r.allBut(1), "a-to-x")
		r.expect("CPU→A", r.send(0, frame(a, mac(0x10), -1, "cpu-a")), ports(1), "cpu-a")
		// Tagged frames pass through unchanged in port-based modes.
		r.expect("tagged A→B kept", r.send(1, frame(b, a, 42, "tag42")), map[int]int{2: 42}, "tag42")
		// Link down on B's port: frames to B are not delivered there.
		r.m.SetLink(2, false)
		r.expect("A→B, B unplugged", r.send(1, frame(b, a, -1, "lost")), nil, "lost")
		r.noViolations()
	})
}

// lanWAN programs the classic split: VLAN 1 = CPU (tagged) + LAN ports 1-4,
// VLAN 2 = CPU (tagged) + WAN port 5.
func lanWAN(t *testing.T, sw *Switch) {
	must(t, sw.SetVLANMode(ModeDot1Q))
	must(t, sw.SetVLANGroup(0, VLANGroup{VID: 1, Members: Ports(0, 1, 2, 3, 4), Untagged: Ports(1, 2, 3, 4)}))
	must(t, sw.SetVLANGroup(1, VLANGroup{VID: 2, Members: Ports(0, 5), Untagged: Ports(5)}))
	p, err := sw.Port(5)
	must(t, err)
	p.PVID = 2
	must(t, sw.SetPort(5, p.PortConfig))
}

func TestDot1QLANWANSplit(t *testing.T) {
	forEachChip(t, func(t *testing.T, c arswitchsim.Chip) {
		r := newRig(t, c)
		lanWAN(t, r.sw)
		a, b, w, cpu := mac(1), mac(2), mac(5), mac(0x10)
		r.expect("LAN broadcast", r.send(1, frame(bcast, a, -1, "lan-bc")),
			map[int]int{0: 1, 2: -1, 3: -1, 4: -1}, "lan-bc")
		r.expect("WAN broadcast", r.send(5, frame(bcast, w, -1, "wan-bc")), map[int]int{0: 2}, "wan-bc")
		r.expect("CPU VLAN 2 broadcast", r.send(0, frame(bcast, cpu, 2, "cpu-wan")), ports(5), "cpu-wan")
		r.expect("CPU VLAN 1 broadcast", r.send(0, frame(bcast, cpu, 1, "cpu-lan")), ports(1, 2, 3, 4), "cpu-lan")
		r.expect("CPU VLAN 1 → A", r.send(0, frame(a, cpu, 1, "cpu-a")), ports(1), "cpu-a")
		r.expect("B → A", r.send(2, frame(a, b, -1, "b-a")), ports(1), "b-a")
		r.expect("A → CPU", r.send(1, frame(cpu, a, -1, "a-cpu")), map[int]int{0: 1}, "a-cpu")
		// Ingress filtering: LAN port injecting into the WAN VLAN.
		r.expect("LAN port tagged VLAN 2", r.send(1, frame(bcast, a, 2, "leak")), nil, "leak")
		// Untagged CPU frame (PVID 1, CPU tagged member) stays in VLAN 1.
		r.expect("WAN → CPU", r.send(5, frame(cpu, w, -1, "w-cpu")), map[int]int{0: 2}, "w-cpu")
		r.noViolations()
	})
}

func TestDot1QTrunkAndAccess(t *testing.T) {
	forEachChip(t, func(t *testing.T, c arswitchsim.Chip) {
		r := newRig(t, c)
		sw := r.sw
		must(t, sw.SetVLANMode(ModeDot1Q))
		// Port 1 trunk (tagged 10, 20), port 2 access 10, port 3 access 20,
		// CPU tagged in both; VLAN 1 removed.
		must(t, sw.SetVLANGroup(0, VLANGroup{VID: 10, Members: Ports(0, 1, 2), Untagged: Ports(2)}))
		must(t, sw.SetVLANGroup(1, VLANGroup{VID: 20, Members: Ports(0, 1, 3), Untagged: Ports(3)}))
		for p, vid := range map[int]int{2: 10, 3: 20} {
			pc, err := sw.Port(p)
			must(t, err)
			pc.PVID = vid
			must(t, sw.SetPort(p, pc.PortConfig))
		}
		h2, h3, tr := mac(2), mac(3), mac(1)
		r.expect("access 10 broadcast", r.send(2, frame(bcast, h2, -1, "a10")), map[int]int{0: 10, 1: 10}, "a10")
		r.expect("access 20 broadcast", r.send(3, frame(bcast, h3, -1, "a20")), map[int]int{0: 20, 1: 20}, "a20")
		r.expect("trunk VLAN 20", r.send(1, frame(bcast, tr, 20, "t20")), map[int]int{0: 20, 3: -1}, "t20")
		r.expect("trunk VLAN 10 → h2", r.send(1, frame(h2, tr, 10, "t10")), ports(2), "t10")
		r.expect("trunk untagged (PVID 1, no VLAN 1)", r.send(1, frame(bcast, tr, -1, "u")), nil, "u")
		r.expect("port 4 in no VLAN", r.send(4, frame(bcast, mac(4), -1, "p4")), nil, "p4")
		r.expect("trunk unknown VLAN 30", r.send(1, frame(bcast, tr, 30, "t30")), nil, "t30")
		r.noViolations()
	})
}

func TestPortIsolation(t *testing.T) {
	forEachChip(t, func(t *testing.T, c arswitchsim.Chip) {
		r := newRig(t, c)
		sw := r.sw
		must(t, sw.SetVLANMode(ModePort))
		n := r.m.NumPorts()
		for p := 1; p < n; p++ {
			must(t, sw.SetVLANGroup(p, VLANGroup{Members: Ports(0)}))
		}
		h1, h2, cpu := mac(1), mac(2), mac(0x10)
		r.expect("h1 broadcast only to CPU", r.send(1, frame(bcast, h1, -1, "b1")), ports(0), "b1")
		r.expect("h2 broadcast only to CPU", r.send(2, frame(bcast, h2, -1, "b2")), ports(0), "b2")
		r.expect("h1 → h2 (known) blocked", r.send(1, frame(h2, h1, -1, "x")), nil, "x")
		r.expect("CPU broadcast", r.send(0, frame(bcast, cpu, -1, "cb")), r.allBut(0), "cb")
		r.expect("CPU → h2", r.send(0, frame(h2, cpu, -1, "c2")), ports(2), "c2")
		g, err := sw.VLANGroup(1)
		must(t, err)
		if g.Members != Ports(0) {
			t.Errorf("group 1 members %v", g.Members)
		}
		r.noViolations()
	})
}

// TestPerVLANEgress: a hybrid port, untagged in one VLAN and tagged in
// another. The AR8327 tags per port per VLAN; the AR8216 family cannot and
// must refuse.
func TestPerVLANEgress(t *testing.T) {
	forEachChip(t, func(t *testing.T, c arswitchsim.Chip) {
		r := newRig(t, c)
		sw := r.sw
		must(t, sw.SetVLANMode(ModeDot1Q))
		must(t, sw.SetVLANGroup(0, VLANGroup{VID: 10, Members: Ports(0, 1, 2), Untagged: Ports(1)}))
		before := r.m.Snapshot()
		err := sw.SetVLANGroup(1, VLANGroup{VID: 20, Members: Ports(0, 1, 3), Untagged: Ports(3)})
		if !sw.Info().PerVLANTagging {
			if !errors.Is(err, ErrUnsupported) {
				t.Fatalf("hybrid port on %v: err %v, want ErrUnsupported", c, err)
			}
			if d := before.Diff(r.m.Snapshot()); d != "" {
				t.Fatalf("rejected config changed the switch:\n%s", d)
			}
			return
		}
		must(t, err)
		pc, _ := sw.Port(1)
		pc.PVID = 10
		must(t, sw.SetPort(1, pc.PortConfig))
		pc, _ = sw.Port(3)
		pc.PVID = 20
		must(t, sw.SetPort(3, pc.PortConfig))
		r.expect("VLAN 10 tagged in on 2", r.send(2, frame(bcast, mac(2), 10, "v10")), map[int]int{0: 10, 1: -1}, "v10")
		r.expect("VLAN 20 from 3", r.send(3, frame(bcast, mac(3), -1, "v20")), map[int]int{0: 20, 1: 20}, "v20")
		r.expect("hybrid port untagged", r.send(1, frame(bcast, mac(1), -1, "h")), map[int]int{0: 10, 2: 10}, "h")
		vl := r.m.VLANs()
		if len(vl) != 2 || vl[0].Untagged != 1<<1 || vl[1].Tagged != 1<<0|1<<1 {
			t.Errorf("VTU %+v", vl)
		}
		r.noViolations()
	})
}

// TestTwoUntaggedVLANs: a port untagged in two VLANs is expressible on the
// AR8327 (per-VLAN egress) but not on the AR8216 family.
func TestTwoUntaggedVLANs(t *testing.T) {
	forEachChip(t, func(t *testing.T, c arswitchsim.Chip) {
		r := newRig(t, c)
		must(t, r.sw.SetVLANMode(ModeDot1Q))
		must(t, r.sw.SetVLANGroup(0, VLANGroup{VID: 1, Members: Ports(0, 1), Untagged: Ports(1)}))
		must(t, r.sw.SetVLANGroup(1, VLANGroup{VID: 10, Members: Ports(2, 3), Untagged: Ports(2, 3)}))
		before := r.m.Snapshot()
		err := r.sw.SetVLANGroup(2, VLANGroup{VID: 20, Members: Ports(3, 4), Untagged: Ports(3, 4)})
		if r.sw.Info().PerVLANTagging {
			must(t, err)
			return
		}
		if !errors.Is(err, ErrUnsupported) {
			t.Fatalf("err %v, want ErrUnsupported", err)
		}
		if d := before.Diff(r.m.Snapshot()); d != "" {
			t.Fatalf("rejected config changed the switch:\n%s", d)
		}
	})
}
