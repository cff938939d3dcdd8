package arswitch

import (
	"fmt"
)

// decodeVTU16 parses an AR8216-family VTU get-next result: VTU (0x40) with
// the VID, VTU_DATA (0x44) with the member bitmap and VALID. ok is false
// at the end of the table. The input comes from hardware: malformed values
// are errors, never panics.
func decodeVTU16(vtu, data uint32, nports int) (vtuEntry, bool, error) {
	if data&vtuDataValid == 0 {
		return vtuEntry{}, false, nil
	}
	vid := int(vtu>>vtuVIDShift) & 0xfff
	// Uncertain: the AR7240 member field is 10 bits wide in OpenWrt; only
	// one bit per port is used here.
	members := data & (vtuDataValid - 1)
	if vid == 0 || vid > maxVID || members>>uint(nports) != 0 {
		return vtuEntry{}, false, fmt.Errorf("%w: VTU entry VID %d members %#x", ErrBadEntry, vid, members)
	}
	return vtuEntry{vid: vid, members: PortMask(members)}, true, nil
}

// decodeVTU27 parses an AR8327 VTU get-next result: VTU_FUNC1 with the VID
// and VTU_FUNC0 with VALID and a 2-bit egress mode per port.
func decodeVTU27(f1, f0 uint32) (vtuEntry, bool, error) {
	if f0&vtu27Valid == 0 {
		return vtuEntry{}, false, nil
	}
	vid := int(f1>>vtuVIDShift) & 0xfff
	if vid == 0 || vid > maxVID {
		return vtuEntry{}, false, fmt.Errorf("%w: VTU entry VID %d", ErrBadEntry, vid)
	}
	e := vtuEntry{vid: vid}
	for p := 0; p < r27Ports; p++ {
		switch f0 >> (vtu27ModeShift + 2*p) & 3 {
		case vtu27Untag:
			e.members |= 1 << p
			e.untagged |= 1 << p
		case vtu27Tag, vtu27Unmodified:
			e.members |= 1 << p
		}
	}
	return e, true, nil
}

// VTUEntry is a VLAN as the chip holds it, read back from hardware.
type VTUEntry struct {
	VID     int
	Members PortMask
	// Untagged members (AR8327); the AR8216 family tags per port, so
	// its entries carry no untagged set.
	Untagged PortMask
}

// VTU reads the chip's VLAN table (not the driver's configuration: this is
// what the hardware holds, for diagnostics).
func (s *Switch) VTU() ([]VTUEntry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []VTUEntry
	vid := 0
	for {
		e, ok, err := s.ops.vtuNext(vid)
		if err != nil || !ok {
			return out, err
		}
		if e.vid <= vid {
			return out, fmt.Errorf("%w: VTU get-next went from VID %d to %d", ErrBadEntry, vid, e.vid)
		}
		out = append(out, VTUEntry{VID: e.vid, Members: e.members, Untagged: e.untagged})
		vid = e.vid
	}
}
