package ie

// TIM element (802.11-2016 9.4.2.6): DTIM count, DTIM period, Bitmap
// Control (bit 0: group-addressed traffic buffered, bits 1-7: the bitmap
// offset N1/2), and the partial virtual bitmap, octets N1..N2 of the
// traffic indication virtual bitmap where bit n is AID n.

// VirtualBitmapLen is the size of the traffic indication virtual bitmap:
// AIDs 0..2007 in 251 octets.
const VirtualBitmapLen = 251

const (
	maxAID        = 2007
	timFixedLen   = 3
	timMulticast  = 0x01
	timOffsetMask = 0xfe
)

// VirtualBitmap is the traffic indication virtual bitmap an AP keeps: bit
// n set means frames are buffered for the station with AID n. AID 0 is not
// used; group traffic is signalled by AppendTIM's multicast argument.
type VirtualBitmap [VirtualBitmapLen]byte

// Set marks aid (1..2007) as having buffered frames; other values are
// ignored.
func (v *VirtualBitmap) Set(aid uint16) {
	if aid >= 1 && aid <= maxAID {
		v[aid/8] |= 1 << (aid % 8)
	}
}

// Clear unmarks aid.
func (v *VirtualBitmap) Clear(aid uint16) {
	if aid >= 1 && aid <= maxAID {
		v[aid/8] &^= 1 << (aid % 8)
	}
}

// Has reports whether aid is marked.
func (v *VirtualBitmap) Has(aid uint16) bool {
	return aid >= 1 && aid <= maxAID && v[aid/8]&(1<<(aid%8)) != 0
}

// AppendTIM appends a TIM element for v. Following 9.4.2.6, N1 is the
// largest even octet number with every bit before it (AIDs 1..8·N1−1)
// clear, N2 the last non-zero octet; with nothing buffered the partial
// bitmap is the single octet 0 at offset 0.
func AppendTIM(dst []byte, dtimCount, dtimPeriod uint8, multicast bool, v *VirtualBitmap) []byte {
	first, last := -1, -1
	for i, b := range v {
		if i == 0 {
			b &^= 1 // AID 0's bit is carried by Bitmap Control
		}
		if b != 0 {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	n1, n2 := 0, 0
	if first >= 0 {
		n1, n2 = first&^1, last
	}
	ctl := byte(n1) & timOffsetMask
	if multicast {
		ctl |= timMulticast
	}
	dst = appendHeader(dst, IDTIM, timFixedLen+n2-n1+1)
	dst = append(dst, dtimCount, dtimPeriod, ctl)
	if first < 0 {
		return append(dst, 0)
	}
	start := len(dst)
	dst = append(dst, v[n1:n2+1]...)
	if n1 == 0 {
		dst[start] &^= 1
	}
	return dst
}

// TIM is a parsed TIM element; Partial aliases the frame.
type TIM struct {
	DTIMCount  uint8
	DTIMPeriod uint8
	Multicast  bool // group-addressed frames buffered at the AP
	Offset     int  // N1: the virtual bitmap octet Partial[0] is
	Partial    []byte
}

// ParseTIM parses a TIM element body.
func ParseTIM(body []byte) (TIM, error) {
	if len(body) < timFixedLen+1 {
		return TIM{}, ErrLength
	}
	t := TIM{
		DTIMCount:  body[0],
		DTIMPeriod: body[1],
		Multicast:  body[2]&timMulticast != 0,
		Offset:     int(body[2] & timOffsetMask),
		Partial:    body[timFixedLen:],
	}
	if t.Offset+len(t.Partial) > VirtualBitmapLen {
		return TIM{}, ErrLength
	}
	if t.DTIMPeriod == 0 {
		return TIM{}, ErrValue
	}
	return t, nil
}

// Has reports whether the TIM marks aid as having buffered frames.
func (t *TIM) Has(aid uint16) bool {
	if aid < 1 || aid > maxAID {
		return false
	}
	i := int(aid/8) - t.Offset
	return i >= 0 && i < len(t.Partial) && t.Partial[i]&(1<<(aid%8)) != 0
}
