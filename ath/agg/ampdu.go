// Package agg decides how 802.11n frames are aggregated: how many MPDUs go
// into one A-MPDU at a given rate and for a given peer, and how MSDUs are
// packed into A-MSDUs inside a TXOP.
//
// A-MPDU rules (IEEE 802.11-2020 9.7 and 10.12, plus Atheros hardware
// limits as documented by FreeBSD sys/dev/ath/if_ath_tx_ht.c and ath9k):
//
//   - each subframe is a 4-byte delimiter, the MPDU, and padding to a
//     4-byte boundary (the last subframe is not padded);
//   - the PSDU is at most the peer's maximum A-MPDU length (HT capabilities:
//     2^(13+exp) − 1 bytes) and 65535 bytes;
//   - the PPDU must fit the duration limit at the chosen rate — 4 ms by
//     Atheros convention, computed here from the airtime model rather than
//     read from a table;
//   - the peer's minimum MPDU start spacing (density) is met by inserting
//     extra zero-length delimiters after short MPDUs;
//   - Atheros MACs need each subframe to be at least 256 bytes long
//     (ATH_AGGR_MINPLEN), again met with delimiters;
//   - at most 64 subframes (the BlockAck window).
//
// A retransmission at a lower rate must re-form the aggregate for that
// rate: ForRate computes the limit of one rate, and rate.FitSchedule
// drops retry series that could not carry an aggregate already formed.
package agg

import (
	"errors"
	"fmt"

	"github.com/gowrt/gowrt/ath/airtime"
)

const (
	// DelimLen is the A-MPDU delimiter length (802.11-2020 9.7.1).
	DelimLen = 4
	// MinSubframe is the Atheros minimum subframe length (delimiter
	// included): ath9k ATH_AGGR_MINPLEN, FreeBSD ath_compute_num_delims.
	MinSubframe = 256
	// MaxPSDU is the largest HT PSDU (the 16-bit HT-SIG length field).
	MaxPSDU = 65535
	// MaxSubframes is the BlockAck window (802.11-2020 10.25.6: 64 MPDUs).
	MaxSubframes = 64
	// DefaultLimitUs is the Atheros A-MPDU duration limit.
	DefaultLimitUs = 4000
)

// PeerMaxAMPDU returns the maximum A-MPDU length announced by an HT peer
// with the given Maximum A-MPDU Length Exponent (0..3): 2^(13+exp) − 1
// (802.11-2020 9.4.2.55.3).
func PeerMaxAMPDU(exp uint8) (int, error) {
	if exp > 3 {
		return 0, fmt.Errorf("agg: A-MPDU length exponent %d out of range 0..3", exp)
	}
	return 1<<(13+exp) - 1, nil
}

// densityNs is the MPDU start spacing encoding (802.11-2020 9.4.2.55.3):
// 0 none, 1 1/4 µs, 2 1/2 µs, 3 1 µs, 4 2 µs, 5 4 µs, 6 8 µs, 7 16 µs.
var densityNs = [8]int{0, 250, 500, 1000, 2000, 4000, 8000, 16000}

// ForRate returns the largest PSDU that keeps a PPDU at r within limitUs,
// capped at MaxPSDU; 0 if not even an empty PSDU fits or r is not HT.
func ForRate(p airtime.PHY, r airtime.Rate, limitUs int) int {
	if r.Mod != airtime.HT || p.TxTime(r, 0) > limitUs {
		return 0
	}
	if p.TxTime(r, MaxPSDU) <= limitUs {
		return MaxPSDU
	}
	// TxTime is monotone in the length: binary search the boundary.
	lo, hi := 0, MaxPSDU // TxTime(lo) fits, TxTime(hi) does not
	for hi-lo > 1 {
		m := (lo + hi) / 2
		if p.TxTime(r, m) <= limitUs {
			lo = m
		} else {
			hi = m
		}
	}
	return lo
}

// Limits are the constraints on one A-MPDU.
type Limits struct {
	MaxBytes  int // PSDU bytes: min(rate duration limit, peer max, MaxPSDU)
	MaxFrames int // subframes, at most MaxSubframes
	// MinSpacing is the minimum subframe length in bytes that meets the
	// peer's MPDU density at the chosen rate (see SpacingBytes).
	MinSpacing int
}

// SpacingBytes converts the peer's MPDU density code into a minimum
// subframe length at rate r: the bytes the PHY carries in the whole
// symbols covering the spacing (as the Atheros TX path computes it).
func SpacingBytes(r airtime.Rate, density uint8) int {
	if density > 7 || r.Mod != airtime.HT {
		return 0
	}
	ns := densityNs[density]
	sym := 4000
	if r.SGI {
		sym = 3600
	}
	nsym := (ns + sym - 1) / sym
	return nsym * r.DataBitsPerSymbol() / 8
}

// ErrTooLong reports an MPDU that cannot be sent in any aggregate.
var ErrTooLong = errors.New("agg: MPDU longer than the A-MPDU limit")

// SubframeLen returns the on-air length of one A-MPDU subframe carrying an
// mpdu-byte MPDU, including its delimiter, the delimiters needed for the
// minimum length and spacing, and (unless last) the padding to 4 bytes.
func SubframeLen(mpdu, minSpacing int, last bool) int {
	n := DelimLen + mpdu
	min := MinSubframe
	if minSpacing > min {
		min = minSpacing
	}
	if !last {
		n = (n + 3) &^ 3
		if n < min {
			// Extra delimiters are 4 bytes each.
			n += (min - n + DelimLen - 1) / DelimLen * DelimLen
		}
	} else if n < min {
		n += (min - n + DelimLen - 1) / DelimLen * DelimLen
	}
	return n
}

// Form takes MPDUs from the front of queue (their lengths in bytes) while
// the aggregate stays within l, and returns how many it took and the PSDU
// length. The first MPDU is always taken if it fits MaxBytes alone; an
// MPDU that does not yields ErrTooLong so the caller can send it without
// aggregation or drop it. Form allocates nothing.
func Form(queue []int, l Limits) (n, psdu int, err error) {
	maxFrames := l.MaxFrames
	if maxFrames <= 0 || maxFrames > MaxSubframes {
		maxFrames = MaxSubframes
	}
	maxBytes := l.MaxBytes
	if maxBytes > MaxPSDU {
		maxBytes = MaxPSDU
	}
	for n < len(queue) && n < maxFrames {
		m := queue[n]
		if m <= 0 {
			return n, psdu, fmt.Errorf("agg: MPDU %d has length %d", n, m)
		}
		// The previous subframe becomes non-last: re-pad it.
		prev := 0
		if n > 0 {
			prev = SubframeLen(queue[n-1], l.MinSpacing, false) - SubframeLen(queue[n-1], l.MinSpacing, true)
		}
		add := prev + SubframeLen(m, l.MinSpacing, true)
		if psdu+add > maxBytes {
			if n == 0 {
				return 0, 0, fmt.Errorf("%w: %d bytes, limit %d", ErrTooLong, m, maxBytes)
			}
			break
		}
		psdu += add
		n++
	}
	return n, psdu, nil
}
