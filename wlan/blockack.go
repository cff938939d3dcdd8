package wlan

import (
	"encoding/binary"
	"errors"
)

// Action frame categories and Block Ack actions (802.11-2016 9.4.1.11
// Table 9-47, 9.6.5.1 Table 9-323).
const (
	CategoryBlockAck = 3
	ActionADDBAReq   = 0
	ActionADDBAResp  = 1
	ActionDELBA      = 2
)

// MaxBAWindow is the largest Block Ack buffer size HT uses (802.11-2016
// 10.24: 64 with a compressed bitmap).
const MaxBAWindow = 64

// Errors of action and Block Ack parsing.
var ErrBARVariant = errors.New("wlan: only the compressed Block Ack variant is handled")

// ParseAction splits an action frame body into category, action and the
// rest (802.11-2016 9.3.3.14).
func ParseAction(body []byte) (category, action uint8, rest []byte, err error) {
	if len(body) < 2 {
		return 0, 0, nil, ErrBody
	}
	return body[0], body[1], body[2:], nil
}

// BAParams is the Block Ack Parameter Set field (802.11-2016 9.4.1.14):
// A-MSDU supported bit 0, Block Ack policy bit 1 (1 = immediate), TID
// bits 2-5, buffer size bits 6-15.
type BAParams uint16

// NewBAParams packs the field for an immediate Block Ack agreement.
func NewBAParams(tid uint8, bufSize uint16, amsdu bool) BAParams {
	p := BAParams(1<<1) | BAParams(tid&0xf)<<2 | BAParams(bufSize&0x3ff)<<6
	if amsdu {
		p |= 1
	}
	return p
}

func (p BAParams) AMSDU() bool     { return p&1 != 0 }
func (p BAParams) Immediate() bool { return p&2 != 0 }
func (p BAParams) TID() uint8      { return uint8(p>>2) & 0xf }
func (p BAParams) BufSize() uint16 { return uint16(p >> 6) }

// ADDBAReq is the body of an ADDBA Request after category and action
// (802.11-2016 9.6.5.2).
type ADDBAReq struct {
	Dialog   uint8
	Params   BAParams
	Timeout  uint16     // Block Ack timeout in TU, 0 = none
	StartSeq SeqControl // starting sequence number; fragment 0
}

// ADDBAResp is the body of an ADDBA Response after category and action
// (802.11-2016 9.6.5.3).
type ADDBAResp struct {
	Dialog  uint8
	Status  uint16
	Params  BAParams
	Timeout uint16
}

// DELBA is the body of a DELBA after category and action (802.11-2016
// 9.6.5.4): DELBA parameter set (initiator bit 11, TID bits 12-15), reason.
type DELBA struct {
	Initiator bool
	TID       uint8
	Reason    uint16
}

const (
	addbaReqLen  = 7
	addbaRespLen = 7
	delbaLen     = 4
)

// ParseADDBAReq parses the rest of an ADDBA Request action frame.
func ParseADDBAReq(rest []byte) (ADDBAReq, error) {
	if len(rest) < addbaReqLen {
		return ADDBAReq{}, ErrBody
	}
	return ADDBAReq{
		Dialog:   rest[0],
		Params:   BAParams(binary.LittleEndian.Uint16(rest[1:])),
		Timeout:  binary.LittleEndian.Uint16(rest[3:]),
		StartSeq: SeqControl(binary.LittleEndian.Uint16(rest[5:])),
	}, nil
}

// Append appends the whole action body, category and action included.
func (r *ADDBAReq) Append(dst []byte) []byte {
	dst = append(dst, CategoryBlockAck, ActionADDBAReq, r.Dialog)
	dst = binary.LittleEndian.AppendUint16(dst, uint16(r.Params))
	dst = binary.LittleEndian.AppendUint16(dst, r.Timeout)
	return binary.LittleEndian.AppendUint16(dst, uint16(r.StartSeq))
}

// ParseADDBAResp parses the rest of an ADDBA Response action frame.
func ParseADDBAResp(rest []byte) (ADDBAResp, error) {
	if len(rest) < addbaRespLen {
		return ADDBAResp{}, ErrBody
	}
	return ADDBAResp{
		Dialog:  rest[0],
		Status:  binary.LittleEndian.Uint16(rest[1:]),
		Params:  BAParams(binary.LittleEndian.Uint16(rest[3:])),
		Timeout: binary.LittleEndian.Uint16(rest[5:]),
	}, nil
}

// Append appends the whole action body, category and action included.
func (r *ADDBAResp) Append(dst []byte) []byte {
	dst = append(dst, CategoryBlockAck, ActionADDBAResp, r.Dialog)
	dst = binary.LittleEndian.AppendUint16(dst, r.Status)
	dst = binary.LittleEndian.AppendUint16(dst, uint16(r.Params))
	return binary.LittleEndian.AppendUint16(dst, r.Timeout)
}

const delbaInitiator = 1 << 11

// ParseDELBA parses the rest of a DELBA action frame.
func ParseDELBA(rest []byte) (DELBA, error) {
	if len(rest) < delbaLen {
		return DELBA{}, ErrBody
	}
	p := binary.LittleEndian.Uint16(rest)
	return DELBA{
		Initiator: p&delbaInitiator != 0,
		TID:       uint8(p >> 12),
		Reason:    binary.LittleEndian.Uint16(rest[2:]),
	}, nil
}

// Append appends the whole action body, category and action included.
func (d *DELBA) Append(dst []byte) []byte {
	p := uint16(d.TID&0xf) << 12
	if d.Initiator {
		p |= delbaInitiator
	}
	dst = append(dst, CategoryBlockAck, ActionDELBA)
	dst = binary.LittleEndian.AppendUint16(dst, p)
	return binary.LittleEndian.AppendUint16(dst, d.Reason)
}

// BAR / BA control field bits (802.11-2016 9.3.1.8.2 and 9.3.1.9.2):
// ack policy bit 0, Multi-TID bit 1, Compressed Bitmap bit 2, TID_INFO
// bits 12-15. Multi-TID 0 and Compressed 1 is the compressed variant.
const (
	barNoAck      = 1 << 0
	barMultiTID   = 1 << 1
	barCompressed = 1 << 2
	barGCR        = 1 << 3
	barVariant    = barMultiTID | barCompressed | barGCR
)

// BlockAckReq is the body of a compressed BlockAckReq.
type BlockAckReq struct {
	NoAck    bool // BAR Ack Policy: 1 = no acknowledgment wanted
	TID      uint8
	StartSeq uint16
}

const barBodyLen = 4

// ParseBlockAckReq parses the body (after the 16-byte header) of a
// BlockAckReq; only the compressed variant HT uses is accepted.
func ParseBlockAckReq(body []byte) (BlockAckReq, error) {
	if len(body) < barBodyLen {
		return BlockAckReq{}, ErrBody
	}
	ctl := binary.LittleEndian.Uint16(body)
	if ctl&barVariant != barCompressed {
		return BlockAckReq{}, ErrBARVariant
	}
	return BlockAckReq{
		NoAck:    ctl&barNoAck != 0,
		TID:      uint8(ctl >> 12),
		StartSeq: SeqControl(binary.LittleEndian.Uint16(body[2:])).Seq(),
	}, nil
}

// AppendBlockAckReq appends a whole compressed BlockAckReq frame.
func AppendBlockAckReq(dst []byte, duration uint16, ra, ta MAC, r *BlockAckReq) []byte {
	h := Header{FC: NewFrameControl(KindBlockAckReq, 0), Duration: duration, Addr1: ra, Addr2: ta}
	dst = AppendHeader(dst, &h)
	ctl := uint16(barCompressed) | uint16(r.TID&0xf)<<12
	if r.NoAck {
		ctl |= barNoAck
	}
	dst = binary.LittleEndian.AppendUint16(dst, ctl)
	return binary.LittleEndian.AppendUint16(dst, uint16(NewSeqControl(r.StartSeq, 0)))
}

// BlockAck is the body of a compressed BlockAck: bit i of Bitmap
// acknowledges sequence number StartSeq+i.
type BlockAck struct {
	NoAck    bool
	TID      uint8
	StartSeq uint16
	Bitmap   uint64
}

const baBodyLen = 4 + 8

// ParseBlockAck parses the body (after the 16-byte header) of a compressed
// BlockAck.
func ParseBlockAck(body []byte) (BlockAck, error) {
	if len(body) < barBodyLen {
		return BlockAck{}, ErrBody
	}
	ctl := binary.LittleEndian.Uint16(body)
	if ctl&barVariant != barCompressed {
		return BlockAck{}, ErrBARVariant
	}
	if len(body) < baBodyLen {
		return BlockAck{}, ErrBody
	}
	return BlockAck{
		NoAck:    ctl&barNoAck != 0,
		TID:      uint8(ctl >> 12),
		StartSeq: SeqControl(binary.LittleEndian.Uint16(body[2:])).Seq(),
		Bitmap:   binary.LittleEndian.Uint64(body[4:]),
	}, nil
}

// Acked reports whether the BlockAck acknowledges sequence number sn.
func (b *BlockAck) Acked(sn uint16) bool {
	d := SeqSub(sn, b.StartSeq)
	return d < MaxBAWindow && b.Bitmap>>d&1 != 0
}

// AppendBlockAck appends a whole compressed BlockAck frame.
func AppendBlockAck(dst []byte, duration uint16, ra, ta MAC, b *BlockAck) []byte {
	h := Header{FC: NewFrameControl(KindBlockAck, 0), Duration: duration, Addr1: ra, Addr2: ta}
	dst = AppendHeader(dst, &h)
	ctl := uint16(barCompressed) | uint16(b.TID&0xf)<<12
	if b.NoAck {
		ctl |= barNoAck
	}
	dst = binary.LittleEndian.AppendUint16(dst, ctl)
	dst = binary.LittleEndian.AppendUint16(dst, uint16(NewSeqControl(b.StartSeq, 0)))
	return binary.LittleEndian.AppendUint64(dst, b.Bitmap)
}

// AppendPSPoll appends a PS-Poll frame (802.11-2016 9.3.1.5) from station
// ta with association ID aid to the AP bssid.
func AppendPSPoll(dst []byte, aid uint16, bssid, ta MAC) []byte {
	h := Header{FC: NewFrameControl(KindPSPoll, 0), Duration: aid&^aidFlags | aidFlags, Addr1: bssid, Addr2: ta}
	return AppendHeader(dst, &h)
}

// PSPollAID returns the association ID a parsed PS-Poll carries.
func PSPollAID(h *Header) uint16 { return h.Duration &^ aidFlags }
