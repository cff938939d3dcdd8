// Package reorder holds the receive side of 802.11 sequence numbers: the
// duplicate filter every frame passes (802.11-2016 10.3.2.14) and the
// Block Ack reorder buffer of an HT Block Ack agreement (10.24, the
// receive reordering buffer control).
//
// Both know that the subframes of one A-MSDU share one MPDU and so one
// sequence number. Hardware that splits an A-MSDU into one receive
// descriptor per subframe (ath10k does) hands the same sequence number up
// several times; treating each as a new MPDU tosses every subframe but the
// first as a duplicate, a bug Linux's ath10k had. Here the first subframe
// decides and the rest follow its verdict (DupFilter.CheckSubframe,
// Buffer.AddSubframe).
package reorder

import "github.com/gowrt/gowrt/wlan"

// DupFilter is the duplicate detection cache of one transmitter (the
// station entry that owns it is the TA): the last sequence control seen
// per TID for QoS data, and one shared entry for management and non-QoS
// data (wlan.NonQoSTID). A frame with the Retry bit whose sequence and
// fragment number equal the cached ones is a duplicate (10.3.2.14). The
// zero value is ready.
type DupFilter struct {
	last [wlan.NumTIDs + 1]dupEntry
	// Duplicates counts frames (or subframes) reported as duplicates.
	Duplicates uint64
}

type dupEntry struct {
	sc    wlan.SeqControl
	valid bool
	dup   bool // the verdict on that MPDU, for its later A-MSDU subframes
}

func tidIndex(tid uint8) int {
	if int(tid) > wlan.NonQoSTID {
		return wlan.NonQoSTID
	}
	return int(tid)
}

// Check reports whether a received MPDU of tid (wlan.NonQoSTID for
// non-QoS) with sequence control sc is a duplicate of the last one, and
// records it. An MPDU carrying an A-MSDU is checked once, before
// decapsulation.
func (d *DupFilter) Check(tid uint8, sc wlan.SeqControl, retry bool) bool {
	e := &d.last[tidIndex(tid)]
	dup := retry && e.valid && e.sc == sc
	*e = dupEntry{sc: sc, valid: true, dup: dup}
	if dup {
		d.Duplicates++
	}
	return dup
}

// CheckSubframe is Check for hardware that delivers each A-MSDU subframe
// separately with the MPDU's header: first marks the first subframe of an
// A-MSDU. A later subframe takes the verdict of its MPDU's first subframe
// instead of being compared with it; if that first subframe was lost (the
// cache holds another sequence control), it is checked as a new MPDU.
func (d *DupFilter) CheckSubframe(tid uint8, sc wlan.SeqControl, retry, first bool) bool {
	e := &d.last[tidIndex(tid)]
	if first || !e.valid || e.sc != sc {
		return d.Check(tid, sc, retry)
	}
	if e.dup {
		d.Duplicates++
	}
	return e.dup
}

// Reset forgets the cache, as on (re)association.
func (d *DupFilter) Reset() { *d = DupFilter{} }
