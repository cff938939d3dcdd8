// Package wlan parses and builds IEEE 802.11 MAC frames, independent of any
// chip: frame control, the management, control and data frame headers
// (QoS and 4-address), management frame bodies, Block Ack frames and
// A-MSDU subframes, plus transmit sequence number allocation.
//
// Field layouts follow IEEE 802.11-2016 clause 9 (9.2 frame format, 9.3
// frame types, 9.4.1 fixed fields, 9.6.5 Block Ack action frames). Frames
// are handled without the FCS: drivers strip or append it.
//
// Parsing returns values and zero-copy sub-slices of the input; builders
// append to a caller's buffer and allocate nothing when it has room.
// Information elements live in package wlan/ie.
package wlan

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// MAC is an IEEE 802 MAC address.
type MAC [6]byte

// Broadcast is the all-ones group address.
var Broadcast = MAC{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

// IsGroup reports whether m is a group (multicast or broadcast) address.
func (m MAC) IsGroup() bool { return m[0]&1 != 0 }

func (m MAC) String() string {
	return fmt.Sprintf("%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5])
}

// Frame types (802.11-2016 9.2.4.1.3, Table 9-1).
const (
	TypeManagement = 0
	TypeControl    = 1
	TypeData       = 2
	TypeExtension  = 3
)

// Kind is a frame's type and subtype as type<<4 | subtype, the numbering
// Wireshark shows as wlan.fc.type_subtype.
type Kind uint8

// Frame kinds (802.11-2016 Table 9-1).
const (
	KindAssocReq    Kind = 0x00
	KindAssocResp   Kind = 0x01
	KindReassocReq  Kind = 0x02
	KindReassocResp Kind = 0x03
	KindProbeReq    Kind = 0x04
	KindProbeResp   Kind = 0x05
	KindBeacon      Kind = 0x08
	KindATIM        Kind = 0x09
	KindDisassoc    Kind = 0x0a
	KindAuth        Kind = 0x0b
	KindDeauth      Kind = 0x0c
	KindAction      Kind = 0x0d
	KindActionNoAck Kind = 0x0e

	KindBlockAckReq Kind = 0x18
	KindBlockAck    Kind = 0x19
	KindPSPoll      Kind = 0x1a
	KindRTS         Kind = 0x1b
	KindCTS         Kind = 0x1c
	KindAck         Kind = 0x1d
	KindCFEnd       Kind = 0x1e

	KindData    Kind = 0x20
	KindNull    Kind = 0x24
	KindQoSData Kind = 0x28
	KindQoSNull Kind = 0x2c
)

// Type returns the frame type (TypeManagement...).
func (k Kind) Type() uint8 { return uint8(k) >> 4 }

// Subtype returns the 4-bit subtype.
func (k Kind) Subtype() uint8 { return uint8(k) & 0x0f }

// Frame control flag bits, the second octet of the field
// (802.11-2016 9.2.4.1.1, Figure 9-3), shifted into FrameControl.
const (
	FlagToDS      FrameControl = 0x0100
	FlagFromDS    FrameControl = 0x0200
	FlagMoreFrag  FrameControl = 0x0400
	FlagRetry     FrameControl = 0x0800
	FlagPwrMgt    FrameControl = 0x1000
	FlagMoreData  FrameControl = 0x2000
	FlagProtected FrameControl = 0x4000
	FlagOrder     FrameControl = 0x8000 // +HTC in QoS data and management frames
)

// FrameControl is the 2-octet frame control field as a little-endian value:
// octet 0 (version, type, subtype) in the low byte, the flags in the high.
type FrameControl uint16

// NewFrameControl returns the field for a frame kind with flags set.
func NewFrameControl(k Kind, flags FrameControl) FrameControl {
	octet0 := uint16(k.Subtype())<<4 | uint16(k.Type())<<2
	return FrameControl(octet0) | flags&0xff00
}

// Version is the protocol version, 0 for every frame this package knows.
func (fc FrameControl) Version() uint8 { return uint8(fc) & 3 }

// Kind returns the frame's type and subtype.
func (fc FrameControl) Kind() Kind {
	return Kind((uint8(fc)>>2&3)<<4 | uint8(fc)>>4)
}

// Has reports whether all of flags are set.
func (fc FrameControl) Has(flags FrameControl) bool { return fc&flags == flags }

// ToDS, FromDS, ... read single flags.
func (fc FrameControl) ToDS() bool      { return fc&FlagToDS != 0 }
func (fc FrameControl) FromDS() bool    { return fc&FlagFromDS != 0 }
func (fc FrameControl) MoreFrag() bool  { return fc&FlagMoreFrag != 0 }
func (fc FrameControl) Retry() bool     { return fc&FlagRetry != 0 }
func (fc FrameControl) PwrMgt() bool    { return fc&FlagPwrMgt != 0 }
func (fc FrameControl) MoreData() bool  { return fc&FlagMoreData != 0 }
func (fc FrameControl) Protected() bool { return fc&FlagProtected != 0 }
func (fc FrameControl) Order() bool     { return fc&FlagOrder != 0 }

// IsQoSData reports whether the frame is a data frame with a QoS Control
// field (subtypes with bit 3 set, 802.11-2016 9.2.4.1.3).
func (fc FrameControl) IsQoSData() bool {
	k := fc.Kind()
	return k.Type() == TypeData && k.Subtype()&0x8 != 0
}

// HasBody reports whether a data frame subtype carries a body: the "Null"
// subtypes (bit 2 set) do not.
func (fc FrameControl) HasBody() bool {
	k := fc.Kind()
	return k.Type() != TypeData || k.Subtype()&0x4 == 0
}

// SeqControl is the sequence control field: fragment number in bits 0-3,
// sequence number in bits 4-15 (802.11-2016 9.2.4.4).
type SeqControl uint16

// SeqModulo is the sequence number space, 2^12.
const SeqModulo = 4096

// NewSeqControl packs a sequence and fragment number.
func NewSeqControl(seq uint16, frag uint8) SeqControl {
	return SeqControl(seq%SeqModulo)<<4 | SeqControl(frag&0xf)
}

// Seq returns the 12-bit sequence number.
func (s SeqControl) Seq() uint16 { return uint16(s) >> 4 }

// Frag returns the 4-bit fragment number.
func (s SeqControl) Frag() uint8 { return uint8(s) & 0xf }

// Ack policies of the QoS Control field (802.11-2016 Table 9-6).
const (
	AckNormal   = 0 // normal Ack or implicit BlockAckReq in an A-MPDU
	AckNoAck    = 1
	AckNoExplic = 2 // no explicit acknowledgment / PSMP Ack
	AckBlockAck = 3
)

// QoSControl is the QoS Control field (802.11-2016 9.2.4.5): TID bits 0-3,
// EOSP bit 4, ack policy bits 5-6, A-MSDU present bit 7, and bits 8-15
// (TXOP limit, queue size or mesh fields, by context).
type QoSControl uint16

const (
	qosEOSP  = 0x0010
	qosAMSDU = 0x0080
)

// NewQoSControl packs the fields an access point sets.
func NewQoSControl(tid uint8, ackPolicy uint8, amsdu, eosp bool) QoSControl {
	q := QoSControl(tid&0xf) | QoSControl(ackPolicy&3)<<5
	if amsdu {
		q |= qosAMSDU
	}
	if eosp {
		q |= qosEOSP
	}
	return q
}

func (q QoSControl) TID() uint8       { return uint8(q) & 0xf }
func (q QoSControl) EOSP() bool       { return q&qosEOSP != 0 }
func (q QoSControl) AckPolicy() uint8 { return uint8(q) >> 5 & 3 }
func (q QoSControl) AMSDU() bool      { return q&qosAMSDU != 0 }
func (q QoSControl) High() uint8      { return uint8(q >> 8) }

// Header lengths (802.11-2016 9.3).
const (
	ShortCtrlHeaderLen = 10 // ACK, CTS: FC, Duration, RA
	CtrlHeaderLen      = 16 // RTS, PS-Poll, BAR, BA: FC, Duration/AID, RA, TA
	MgmtHeaderLen      = 24
	DataHeaderLen      = 24 // 3-address, no QoS
	addr4Len           = 6
	qosLen             = 2
	htcLen             = 4
)

// Errors of header parsing.
var (
	ErrShort   = errors.New("wlan: frame shorter than its header")
	ErrVersion = errors.New("wlan: unknown protocol version")
	ErrKind    = errors.New("wlan: frame kind not handled")
)

// Header is a parsed MAC header. Addresses are copied (12-byte values, no
// allocation); fields absent from the frame's kind are zero.
type Header struct {
	FC       FrameControl
	Duration uint16 // for PS-Poll: the AID field
	Addr1    MAC    // RA / DA
	Addr2    MAC    // TA / SA
	Addr3    MAC
	Seq      SeqControl
	Addr4    MAC // present when ToDS and FromDS are set in a data frame
	QoS      QoSControl
	HTC      uint32 // HT Control, present with Order in QoS data and management frames
	Len      int    // header length in bytes
}

// HeaderLen returns the header length a frame with fc has, or 0 for a
// kind this package does not handle.
func HeaderLen(fc FrameControl) int {
	k := fc.Kind()
	switch k.Type() {
	case TypeManagement:
		n := MgmtHeaderLen
		if fc.Order() {
			n += htcLen
		}
		return n
	case TypeControl:
		switch k {
		case KindAck, KindCTS:
			return ShortCtrlHeaderLen
		case KindRTS, KindPSPoll, KindBlockAckReq, KindBlockAck, KindCFEnd:
			return CtrlHeaderLen
		}
		return 0
	case TypeData:
		n := DataHeaderLen
		if fc.ToDS() && fc.FromDS() {
			n += addr4Len
		}
		if fc.IsQoSData() {
			n += qosLen
			if fc.Order() {
				n += htcLen
			}
		}
		return n
	}
	return 0
}

// ParseHeader parses the MAC header at the start of b.
func ParseHeader(b []byte) (Header, error) {
	var h Header
	if len(b) < 2 {
		return h, ErrShort
	}
	h.FC = FrameControl(binary.LittleEndian.Uint16(b))
	if h.FC.Version() != 0 {
		return h, ErrVersion
	}
	n := HeaderLen(h.FC)
	if n == 0 {
		return h, ErrKind
	}
	if len(b) < n {
		return h, ErrShort
	}
	h.Len = n
	h.Duration = binary.LittleEndian.Uint16(b[2:])
	copy(h.Addr1[:], b[4:10])
	if n == ShortCtrlHeaderLen {
		return h, nil
	}
	copy(h.Addr2[:], b[10:16])
	if h.FC.Kind().Type() == TypeControl {
		return h, nil
	}
	copy(h.Addr3[:], b[16:22])
	h.Seq = SeqControl(binary.LittleEndian.Uint16(b[22:]))
	off := 24
	if h.FC.Kind().Type() == TypeData {
		if h.FC.ToDS() && h.FC.FromDS() {
			copy(h.Addr4[:], b[off:off+6])
			off += addr4Len
		}
		if !h.FC.IsQoSData() {
			return h, nil
		}
		h.QoS = QoSControl(binary.LittleEndian.Uint16(b[off:]))
		off += qosLen
	}
	if h.FC.Order() {
		h.HTC = binary.LittleEndian.Uint32(b[off:])
	}
	return h, nil
}

// TID returns the traffic identifier a frame's sequence number belongs to:
// the QoS TID for QoS data, NonQoSTID for everything else.
func (h *Header) TID() uint8 {
	if h.FC.IsQoSData() {
		return h.QoS.TID()
	}
	return NonQoSTID
}

// Address roles by the To/From DS bits (802.11-2016 Table 9-26).

// TA returns the transmitter address (Addr2), zero for ACK and CTS.
func (h *Header) TA() MAC { return h.Addr2 }

// DA returns the destination address of a data or management frame.
func (h *Header) DA() MAC {
	if h.FC.Kind().Type() == TypeData && h.FC.ToDS() {
		return h.Addr3
	}
	return h.Addr1
}

// SA returns the source address of a data or management frame.
func (h *Header) SA() MAC {
	if h.FC.Kind().Type() != TypeData {
		return h.Addr2
	}
	switch {
	case h.FC.ToDS() && h.FC.FromDS():
		return h.Addr4
	case h.FC.FromDS():
		return h.Addr3
	}
	return h.Addr2
}

// BSSID returns the BSSID of a management frame or a non-WDS data frame.
func (h *Header) BSSID() MAC {
	if h.FC.Kind().Type() == TypeData {
		switch {
		case h.FC.ToDS() && !h.FC.FromDS():
			return h.Addr1
		case h.FC.FromDS() && !h.FC.ToDS():
			return h.Addr2
		}
	}
	return h.Addr3
}

// AppendHeader appends h's header to dst, the fields present being those
// of h.FC's kind (h.Len is ignored). A kind this package does not handle
// appends nothing.
func AppendHeader(dst []byte, h *Header) []byte {
	n := HeaderLen(h.FC)
	if n == 0 {
		return dst
	}
	dst = binary.LittleEndian.AppendUint16(dst, uint16(h.FC))
	dst = binary.LittleEndian.AppendUint16(dst, h.Duration)
	dst = append(dst, h.Addr1[:]...)
	if n == ShortCtrlHeaderLen {
		return dst
	}
	dst = append(dst, h.Addr2[:]...)
	if h.FC.Kind().Type() == TypeControl {
		return dst
	}
	dst = append(dst, h.Addr3[:]...)
	dst = binary.LittleEndian.AppendUint16(dst, uint16(h.Seq))
	if h.FC.Kind().Type() == TypeData {
		if h.FC.ToDS() && h.FC.FromDS() {
			dst = append(dst, h.Addr4[:]...)
		}
		if !h.FC.IsQoSData() {
			return dst
		}
		dst = binary.LittleEndian.AppendUint16(dst, uint16(h.QoS))
	}
	if h.FC.Order() {
		dst = binary.LittleEndian.AppendUint32(dst, h.HTC)
	}
	return dst
}

// Frame is a parsed frame: its header and a zero-copy view of its body.
type Frame struct {
	Header
	Body []byte
}

// Parse splits a frame (without FCS) into header and body.
func Parse(b []byte) (Frame, error) {
	h, err := ParseHeader(b)
	if err != nil {
		return Frame{}, err
	}
	return Frame{Header: h, Body: b[h.Len:]}, nil
}
