package bridge

import "encoding/binary"

// IEEE 802.1Q / 802.3 constants.
const (
	tpid8021Q    = 0x8100 // IEEE 802.1Q C-tag TPID
	ethHdrLen    = 14
	tagLen       = 4
	maxLenField  = 1500   // type/length values <= 1500 are 802.3 lengths
	minTypeField = 0x0600 // values >= 0x0600 are EtherTypes (802.3 clause 3.2.6)
	vidMask      = 0x0fff
	vidReserved  = 0x0fff // IEEE 802.1Q table 9-2: VID FFF is reserved
	// MaxVID is the largest VLAN ID a port can be a member of.
	MaxVID = 4094
)

// Reason says why a frame was dropped.
type Reason uint8

// Drop reasons; each has a counter in Stats.Drops.
const (
	ReasonZeroLength    Reason = iota // empty buffer
	ReasonTruncated                   // shorter than its Ethernet (+ tag) header
	ReasonOversize                    // longer than MTU + header (+ tag)
	ReasonBadVLAN                     // tag carries the reserved VID 0xFFF
	ReasonBadLengthType               // type/length field in 1501..1535
	ReasonBadSource                   // multicast or all-zero source MAC
	ReasonOwnSource                   // our own MAC as source from outside: a loop
	ReasonVLANFiltered                // ingress port not a member of the frame's VLAN
	ReasonPortDown                    // ingress port not forwarding
	ReasonHairpin                     // destination lives on the ingress port
	ReasonLinkLocal                   // 01:80:C2:00:00:0x never forwarded (802.1D 7.12.6)
	ReasonNoPort                      // Input with an unknown port number
	ReasonStorm                       // over the ingress port's flood rate (storm control)
	numReasons
)

var reasonNames = [numReasons]string{
	"zero-length", "truncated", "oversize", "bad-vlan-tag", "bad-length-type",
	"bad-source", "own-source", "vlan-filtered", "port-down", "hairpin",
	"link-local", "no-port", "storm",
}

func (r Reason) String() string {
	if r < numReasons {
		return reasonNames[r]
	}
	return "unknown"
}

// Frame is the parsed view of an Ethernet frame the bridge needs. It
// refers to the frame by offsets; parsing never copies or allocates.
type Frame struct {
	Tagged    bool   // carries an 802.1Q tag
	TCI       uint16 // tag control information (PCP, DEI, VID) when Tagged
	EtherType uint16 // the type/length field after any tag
	// Rest is the offset of the type/length field that follows the tag
	// (12 untagged, 16 tagged): frame[Rest:] is what egress re-tagging
	// appends after the addresses and the new tag.
	Rest int
}

// VID is the tag's VLAN ID (0 for untagged and priority-tagged frames).
func (f *Frame) VID() uint16 {
	if !f.Tagged {
		return 0
	}
	return f.TCI & vidMask
}

// Parse validates the framing of b (no FCS) against mtu and returns its
// parsed form, or the reason it must be dropped. It checks only what is
// visible without state: the bridge adds the policy checks.
func Parse(b []byte, mtu int) (Frame, Reason, bool) {
	var f Frame
	n := len(b)
	if n == 0 {
		return f, ReasonZeroLength, false
	}
	if n < ethHdrLen {
		return f, ReasonTruncated, false
	}
	if b[6]&1 != 0 || (b[6]|b[7]|b[8]|b[9]|b[10]|b[11]) == 0 {
		return f, ReasonBadSource, false
	}
	typ := binary.BigEndian.Uint16(b[12:14])
	f.Rest = 12
	max := ethHdrLen + mtu
	if typ == tpid8021Q {
		if n < ethHdrLen+tagLen {
			return f, ReasonTruncated, false
		}
		f.Tagged = true
		f.TCI = binary.BigEndian.Uint16(b[14:16])
		if f.TCI&vidMask == vidReserved {
			return f, ReasonBadVLAN, false
		}
		typ = binary.BigEndian.Uint16(b[16:18])
		f.Rest = 16
		max += tagLen
		// Further stacked C-tags travel as payload, but untagging on
		// egress promotes the next one to the outer tag: each must be
		// complete and valid, or the bridge would emit a malformed frame.
		for k := 16; binary.BigEndian.Uint16(b[k:k+2]) == tpid8021Q; k += tagLen {
			if n < k+2+tagLen {
				return f, ReasonTruncated, false
			}
			if binary.BigEndian.Uint16(b[k+2:k+4])&vidMask == vidReserved {
				return f, ReasonBadVLAN, false
			}
		}
	}
	if n > max {
		return f, ReasonOversize, false
	}
	if typ > maxLenField && typ < minTypeField {
		return f, ReasonBadLengthType, false
	}
	f.EtherType = typ
	return f, 0, true
}
