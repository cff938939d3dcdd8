package arswitch

import (
	"testing"

	"github.com/gowrt/gowrt/arswitch/arswitchsim"
)

// TestPortFlags: per-port egress tagging in port-based mode (how the older
// chips tag towards the CPU), disabled ports, learning off, and 802.1Q
// without ingress filtering ("check" mode).
func TestPortFlags(t *testing.T) {
	forEachChip(t, func(t *testing.T, c arswitchsim.Chip) {
		r := newRig(t, c)
		sw := r.sw
		a, b := mac(1), mac(2)

		// CPU port always tagged (PVID 1 in port-based modes).
		must(t, sw.SetPort(0, PortConfig{PVID: 1, Flags: FlagAddTag}))
		r.expect("tag towards CPU", r.send(1, frame(bcast, a, -1, "t")), map[int]int{0: 1, 2: -1, 3: -1, 4: -1, 5: -1, 6: -1}, "t")
		must(t, sw.SetPort(0, PortConfig{PVID: 1, Flags: FlagStripTag}))
		r.expect("strip towards CPU", r.send(1, frame(bcast, a, 7, "s")), map[int]int{0: -1, 2: 7, 3: 7, 4: 7, 5: 7, 6: 7}, "s")
		must(t, sw.SetPort(0, PortConfig{PVID: 1}))

		// Disabled port neither receives nor sends.
		must(t, sw.SetPort(3, PortConfig{PVID: 1, Flags: FlagDisabled}))
		r.expect("from disabled port", r.send(3, frame(bcast, mac(3), -1, "d")), nil, "d")
		got := r.send(1, frame(bcast, a, -1, "x"))
		if len(got[3]) != 0 {
			t.Error("disabled port received a frame")
		}
		must(t, sw.SetPort(3, PortConfig{PVID: 1}))

		// No learning on port 2: frames to b keep flooding.
		must(t, sw.SetPort(2, PortConfig{PVID: 1, Flags: FlagNoLearn}))
		must(t, sw.FlushATU())
		r.send(2, frame(bcast, b, -1, "b"))
		if n := len(r.send(1, frame(b, a, -1, "to-b"))); n < 2 {
			t.Errorf("unicast to a non-learning port's host reached %d ports, want a flood", n)
		}

		// 802.1Q without ingress filtering: a LAN port may inject into
		// the WAN VLAN (towards its port-VLAN peers only).
		lanWAN(t, sw)
		r.expect("filtered", r.send(1, frame(bcast, a, 2, "f")), nil, "f")
		must(t, sw.SetPort(1, PortConfig{PVID: 1}))
		r.expect("unfiltered", r.send(1, frame(bcast, a, 2, "u")), map[int]int{0: 2}, "u")
		r.expect("unknown VLAN still dropped", r.send(1, frame(bcast, a, 77, "v")), nil, "v")
		r.noViolations()
	})
}
