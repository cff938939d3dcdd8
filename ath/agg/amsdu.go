package agg

import (
	"fmt"

	"github.com/gowrt/gowrt/ath/airtime"
)

const (
	// AMSDUSubHdr is the A-MSDU subframe header: DA, SA, Length
	// (802.11-2020 9.3.2.2.2); subframes but the last are padded to 4 bytes.
	AMSDUSubHdr = 14
	// MPDUOverhead is a QoS data MAC header (26) plus FCS (4), no security.
	MPDUOverhead = 30
	// MaxAMSDUShort and MaxAMSDULong are the two HT A-MSDU size limits
	// (HT Capabilities "Maximum A-MSDU Length", 802.11-2020 9.4.2.55.2).
	MaxAMSDUShort = 3839
	MaxAMSDULong  = 7935
)

// PPDU is one planned transmission in a TXOP: MSDUs [First, First+N) of
// the caller's queue, carried as a plain MSDU (N == 1) or an A-MSDU, in one
// MPDU with sequence number Seq.
type PPDU struct {
	Seq     uint16
	First   int
	N       int
	MPDU    int // MPDU bytes (header, A-MSDU subframes, FCS)
	Airtime int // µs: PPDU + SIFS + ACK
}

// TXOP plans A-MSDUs inside one transmit opportunity. The rate is chosen
// first (by rate control); the plan then never lets an A-MSDU run past the
// time left in the TXOP: once the next MSDU would not fit, the A-MSDU is
// closed and the remaining time is filled with further, smaller PPDUs,
// each separated by SIFS (802.11-2020 10.23.2.9 TXOP bursting).
type TXOP struct {
	PHY      airtime.PHY
	Rate     airtime.Rate
	MaxAMSDU int // MaxAMSDUShort or MaxAMSDULong
	LimitUs  int // TXOP limit; the first PPDU may exceed it with one MSDU
}

func amsduLen(body, msdu int, first bool) int {
	if !first {
		body = (body + 3) &^ 3 // pad the previous subframe
	}
	return body + AMSDUSubHdr + msdu
}

// exchange is the airtime of one MPDU of m bytes at the TXOP's rate,
// including SIFS and the ACK.
func (t TXOP) exchange(m int) int {
	return t.PHY.Exchange(t.Rate, m, airtime.NormalAck, false)
}

// Plan fills out with the PPDUs for queue (MSDU lengths in bytes), starting
// at sequence number seq, and returns how many PPDUs it planned and the
// time used. It allocates nothing; it stops when out is full.
func (t TXOP) Plan(queue []int, seq uint16, out []PPDU) (n, used int, err error) {
	if t.MaxAMSDU <= AMSDUSubHdr {
		return 0, 0, fmt.Errorf("agg: A-MSDU limit %d too small", t.MaxAMSDU)
	}
	if err := t.Rate.Validate(); err != nil {
		return 0, 0, err
	}
	i := 0
	for i < len(queue) && n < len(out) {
		if queue[i] <= 0 {
			return n, used, fmt.Errorf("agg: MSDU %d has length %d", i, queue[i])
		}
		gap := 0
		if n > 0 {
			gap = t.PHY.SIFS
		}
		left := t.LimitUs - used - gap
		// One MSDU alone, without A-MSDU framing.
		single := MPDUOverhead + queue[i]
		if n > 0 && t.exchange(single) > left {
			break
		}
		p := PPDU{Seq: seq, First: i, N: 1, MPDU: single}
		body := amsduLen(0, queue[i], true)
		for j := i + 1; j < len(queue); j++ {
			if queue[j] <= 0 {
				break // reported when it reaches the front
			}
			nb := amsduLen(body, queue[j], false)
			if nb > t.MaxAMSDU || t.exchange(MPDUOverhead+nb) > left {
				break
			}
			body = nb
			p.N++
			p.MPDU = MPDUOverhead + nb
		}
		p.Airtime = t.exchange(p.MPDU)
		used += gap + p.Airtime
		out[n] = p
		n++
		i += p.N
		seq = (seq + 1) & 0xfff
	}
	return n, used, nil
}

// Retry returns the retransmission of a failed PPDU: the same MSDUs, whole,
// under the same sequence number, with its airtime at the (possibly new)
// rate of t. Splitting a failed A-MSDU into new sequence numbers would
// deliver duplicates to a receiver that got the first copy but whose ACK
// was lost; the receiver's duplicate filter only works on sequence numbers.
func (t TXOP) Retry(p PPDU) PPDU {
	p.Airtime = t.exchange(p.MPDU)
	return p
}
