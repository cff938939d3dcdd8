package wlan

import (
	"encoding/binary"
	"errors"
)

// llcSNAP is the LLC/SNAP header of a data frame's MSDU carrying an
// EtherType (RFC 1042 encapsulation, 802.11-2016 5.1.4 and Annex P):
// DSAP and SSAP AA, control 03, OUI 00-00-00; the EtherType follows.
var llcSNAP = [6]byte{0xaa, 0xaa, 0x03, 0, 0, 0}

// MSDUHeaderLen is the bytes RFC 1042 encapsulation puts before the
// payload: LLC/SNAP and the EtherType.
const MSDUHeaderLen = 8

// ErrMSDU is returned for a data frame body that is not an RFC 1042
// encapsulated MSDU.
var ErrMSDU = errors.New("wlan: data frame body is not LLC/SNAP with an EtherType")

// AppendMSDU appends an Ethernet payload as a data frame body: LLC/SNAP,
// etherType, payload.
func AppendMSDU(dst []byte, etherType uint16, payload []byte) []byte {
	dst = append(dst, llcSNAP[:]...)
	dst = binary.BigEndian.AppendUint16(dst, etherType)
	return append(dst, payload...)
}

// ParseMSDU returns the EtherType and payload of a data frame body (a
// view into body).
func ParseMSDU(body []byte) (etherType uint16, payload []byte, err error) {
	if len(body) < MSDUHeaderLen || [6]byte(body[:6]) != llcSNAP {
		return 0, nil, ErrMSDU
	}
	return binary.BigEndian.Uint16(body[6:8]), body[MSDUHeaderLen:], nil
}
