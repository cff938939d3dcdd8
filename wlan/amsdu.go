package wlan

import (
	"encoding/binary"
	"errors"
)

// A-MSDU subframes (802.11-2016 9.3.2.2.2, Figure 9-60): DA, SA, a
// big-endian length of the MSDU, the MSDU, and padding so that the next
// subframe starts at a multiple of 4 bytes from the A-MSDU start. The last
// subframe is not padded.
const (
	AMSDUSubframeHeaderLen = 14
	// MaxMSDU is the largest MSDU (802.11-2016 Table 9-19: 2304 octets).
	MaxMSDU    = 2304
	amsduAlign = 4
)

// Errors of A-MSDU decapsulation.
var (
	ErrAMSDUTruncated = errors.New("wlan: A-MSDU subframe runs past the frame")
	ErrAMSDULength    = errors.New("wlan: A-MSDU subframe longer than the largest MSDU")
	ErrAMSDUPadding   = errors.New("wlan: A-MSDU padding runs past the frame")
)

// AppendAMSDUSubframe appends one subframe to an A-MSDU being built in dst
// whose first byte is dst[start], first padding the previous subframe.
func AppendAMSDUSubframe(dst []byte, start int, da, sa MAC, msdu []byte) []byte {
	if n := len(dst) - start; n > 0 {
		for ; n%amsduAlign != 0; n++ {
			dst = append(dst, 0)
		}
	}
	dst = append(dst, da[:]...)
	dst = append(dst, sa[:]...)
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(msdu)))
	return append(dst, msdu...)
}

// AMSDUSubframe is one decapsulated subframe; MSDU aliases the frame.
type AMSDUSubframe struct {
	DA, SA MAC
	MSDU   []byte
}

// AMSDUReader walks the subframes of an A-MSDU body without copying.
type AMSDUReader struct {
	b   []byte
	off int
	err error
}

// NewAMSDUReader returns a reader over the body of a data frame whose QoS
// Control field has the A-MSDU present bit set.
func NewAMSDUReader(body []byte) AMSDUReader { return AMSDUReader{b: body} }

// Next returns the next subframe; false at the end or on malformed input
// (then Err says which). Subframes before a malformed one are returned.
func (r *AMSDUReader) Next() (AMSDUSubframe, bool) {
	if r.err != nil || r.off >= len(r.b) {
		return AMSDUSubframe{}, false
	}
	if r.off > 0 {
		pad := (amsduAlign - r.off%amsduAlign) % amsduAlign
		if r.off+pad > len(r.b) {
			r.err = ErrAMSDUPadding
			return AMSDUSubframe{}, false
		}
		r.off += pad
		if r.off == len(r.b) {
			// The last subframe was padded although nothing follows:
			// tolerated, as receivers do.
			return AMSDUSubframe{}, false
		}
	}
	rest := r.b[r.off:]
	if len(rest) < AMSDUSubframeHeaderLen {
		r.err = ErrAMSDUTruncated
		return AMSDUSubframe{}, false
	}
	n := int(binary.BigEndian.Uint16(rest[12:]))
	if n > MaxMSDU {
		r.err = ErrAMSDULength
		return AMSDUSubframe{}, false
	}
	if AMSDUSubframeHeaderLen+n > len(rest) {
		r.err = ErrAMSDUTruncated
		return AMSDUSubframe{}, false
	}
	var s AMSDUSubframe
	copy(s.DA[:], rest[0:6])
	copy(s.SA[:], rest[6:12])
	s.MSDU = rest[AMSDUSubframeHeaderLen : AMSDUSubframeHeaderLen+n : AMSDUSubframeHeaderLen+n]
	r.off += AMSDUSubframeHeaderLen + n
	return s, true
}

// Err returns the error that stopped Next, nil at a clean end.
func (r *AMSDUReader) Err() error { return r.err }
