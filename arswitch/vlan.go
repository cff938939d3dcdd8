package arswitch

import (
	"fmt"
	"slices"
)

// hwState is the complete forwarding setup computed from a configuration:
// one image per port and the VTU contents (sorted by VID; empty outside
// ModeDot1Q).
type hwState struct {
	ports []portHW
	vlans []vtuEntry
}

const maxVID = 4094

// compute validates a configuration against the chip and turns it into
// hardware state. It touches no register, so a configuration it rejects
// leaves the switch exactly as it was.
func (s *Switch) compute(mode VLANMode, ports []PortConfig, groups []VLANGroup) (*hwState, error) {
	n := s.ops.nports()
	const knownFlags = FlagIngressFilter | FlagNoLearn | FlagDisabled | FlagAddTag | FlagStripTag
	for p, c := range ports {
		if c.PVID < 1 || c.PVID > maxVID {
			return nil, fmt.Errorf("%w: port %d PVID %d", ErrBadVID, p, c.PVID)
		}
		if c.Flags&^knownFlags != 0 {
			return nil, fmt.Errorf("%w: port %d: unknown flags %#x", ErrUnsupported, p, uint32(c.Flags&^knownFlags))
		}
		if c.Flags&(FlagAddTag|FlagStripTag) == FlagAddTag|FlagStripTag {
			return nil, fmt.Errorf("%w: port %d cannot both add and strip tags", ErrUnsupported, p)
		}
	}
	for i, g := range groups {
		if g.Members&^s.all != 0 {
			return nil, fmt.Errorf("%w: group %d names ports %v; %v has ports 0-%d", ErrBadPort, i, g.Members&^s.all, s.ops.id(), n-1)
		}
		if g.Untagged&^g.Members != 0 {
			return nil, fmt.Errorf("%w: group %d: untagged ports %v are not members", ErrBadPort, i, g.Untagged&^g.Members)
		}
	}
	hw := &hwState{ports: make([]portHW, n)}
	for p := range hw.ports {
		h := &hw.ports[p]
		h.state = portStateForward
		if ports[p].Flags&FlagDisabled != 0 {
			h.state = portStateDisabled
		}
		h.learn = ports[p].Flags&FlagNoLearn == 0
		// Port-based modes share one VID on every port: with one VID
		// per port the AR8327 learns each address under the sender
		// port's VID and never finds it from another port, so every
		// unicast floods (the ModeSingle hazard).
		h.pvid = 1
		h.dot1q = dot1qPortOnly
	}
	switch mode {
	case ModeSingle:
		for p := range hw.ports {
			hw.ports[p].dest = s.all &^ (1 << p)
		}
	case ModePort:
		for p := range hw.ports {
			hw.ports[p].dest = groups[p].Members &^ (1 << p)
		}
	case ModeDot1Q:
		if err := s.computeDot1Q(hw, ports, groups); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("%w: unknown mode %d", ErrMode, int(mode))
	}
	for p := range hw.ports {
		switch {
		case ports[p].Flags&FlagAddTag != 0:
			hw.ports[p].egress = egressTag
		case ports[p].Flags&FlagStripTag != 0:
			hw.ports[p].egress = egressUntag
		}
	}
	return hw, nil
}

func (s *Switch) computeDot1Q(hw *hwState, ports []PortConfig, groups []VLANGroup) error {
	n := s.ops.nports()
	seen := make(map[int]int)
	tagged := make([]int, n)   // a VID the port is tagged in, 0 if none
	untagged := make([]int, n) // a VID the port is untagged in, 0 if none
	for i, g := range groups {
		if g.VID == 0 && g.Members == 0 {
			continue // unused group
		}
		if g.VID < 1 || g.VID > maxVID {
			return fmt.Errorf("%w: group %d VID %d", ErrBadVID, i, g.VID)
		}
		if j, dup := seen[g.VID]; dup {
			return fmt.Errorf("%w: VID %d in groups %d and %d", ErrDupVID, g.VID, j, i)
		}
		seen[g.VID] = i
		for p := 0; p < n; p++ {
			if !g.Members.Has(p) {
				continue
			}
			hw.ports[p].dest |= g.Members &^ (1 << p)
			if !g.Untagged.Has(p) {
				tagged[p] = g.VID
				continue
			}
			if !s.ops.perVLANTagging() && untagged[p] != 0 {
				return fmt.Errorf("%w: port %d untagged in VLANs %d and %d; %v cannot tell them apart (egress tagging is per port)",
					ErrUnsupported, p, untagged[p], g.VID, s.ops.id())
			}
			untagged[p] = g.VID
		}
		hw.vlans = append(hw.vlans, vtuEntry{vid: g.VID, members: g.Members, untagged: g.Untagged})
	}
	slices.SortFunc(hw.vlans, func(a, b vtuEntry) int { return a.vid - b.vid })
	for p := range hw.ports {
		h := &hw.ports[p]
		h.pvid = ports[p].PVID
		h.dot1q = dot1qCheck
		if ports[p].Flags&FlagIngressFilter != 0 {
			h.dot1q = dot1qSecure
		}
		switch {
		case s.ops.perVLANTagging():
			h.egress = egressPerVLAN
		case tagged[p] != 0 && untagged[p] != 0:
			return fmt.Errorf("%w: port %d tagged in VLAN %d and untagged in VLAN %d; %v tags per port, not per VLAN",
				ErrUnsupported, p, tagged[p], untagged[p], s.ops.id())
		case tagged[p] != 0:
			h.egress = egressTag
		case untagged[p] != 0:
			h.egress = egressUntag
		}
	}
	return nil
}

// applyLocked validates and programs a configuration, writing only what
// differs from the last programmed state. On a validation error nothing is
// written. On a hardware error the cached state is dropped so the next
// call reprograms everything.
func (s *Switch) applyLocked(mode VLANMode, ports []PortConfig, groups []VLANGroup) error {
	hw, err := s.compute(mode, ports, groups)
	if err != nil {
		return err
	}
	old := s.hw
	s.hw = nil
	if err := s.program(old, hw); err != nil {
		return err
	}
	s.mode, s.ports, s.groups, s.hw = mode, ports, groups, hw
	return nil
}

func (s *Switch) program(old, hw *hwState) error {
	if old == nil {
		if err := s.ops.vtuFlush(); err != nil {
			return err
		}
		for _, v := range hw.vlans {
			if err := s.ops.vtuLoad(v); err != nil {
				return err
			}
		}
	} else {
		for _, v := range old.vlans {
			if !slices.ContainsFunc(hw.vlans, func(e vtuEntry) bool { return e.vid == v.vid }) {
				if err := s.ops.vtuPurge(v.vid); err != nil {
					return err
				}
			}
		}
		for _, v := range hw.vlans {
			if !slices.Contains(old.vlans, v) {
				if err := s.ops.vtuLoad(v); err != nil {
					return err
				}
			}
		}
	}
	for p, h := range hw.ports {
		if old != nil && old.ports[p] == h {
			continue
		}
		if err := s.ops.writePort(p, h); err != nil {
			return err
		}
	}
	return nil
}
