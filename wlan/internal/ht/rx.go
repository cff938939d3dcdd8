package ht

import (
	"errors"
	"time"

	"github.com/gowrt/gowrt/wlan"
	"github.com/gowrt/gowrt/wlan/ba"
	"github.com/gowrt/gowrt/wlan/radio"
	"github.com/gowrt/gowrt/wlan/reorder"
)

const (
	// numTIDs: the eight user priorities (802.11-2016 10.2.4.2).
	numTIDs = 8
	// ReorderTimeout gives up on a hole in the reorder window after
	// this long (mac80211's HT_RX_REORDER_BUF_TIMEOUT is 100 ms).
	ReorderTimeout = 100 * time.Millisecond
)

// ErrFrameSize: a frame larger than the receive buffers.
var ErrFrameSize = errors.New("ht: frame larger than the reorder buffers")

// RxStats count what the reorder stage did.
type RxStats struct {
	Reordered uint64 // frames that went through a reorder buffer
	Dropped   uint64 // old, duplicate, or no room
	TooLarge  uint64
}

// Rx is the receive side of the Block Ack agreements with one peer: a
// wlan/ba recipient per TID whose reorder buffer holds copies of the
// received MPDUs (the radio's frames are borrowed), delivered in
// sequence order to the function given to NewRx. Decryption and the PN
// replay check come after it, so frames retransmitted inside the window
// are not taken for replays (802.11-2016 12.5.3.4.4 checks the PN of
// frames in the order the reorder buffer releases them).
//
// Buffers are allocated at the first agreement and grow to the frames
// they hold; frames then go through without allocation. Not safe for concurrent use: the owner's lock
// guards it.
type Rx struct {
	Peer    ba.Peer[int32]
	Stats   RxStats
	deliver func(frame []byte, st *radio.RxStatus)
	entries int
	size    int
	slots   []rxSlot
	free    []int32
}

type rxSlot struct {
	buf []byte
	st  radio.RxStatus
}

// NewRx makes the recipient side for every TID, accepting A-MSDUs in
// A-MPDUs, with entries receive buffers of maxFrame bytes shared by the
// TIDs (a window of 64 needs 64 to never drop for lack of room).
func NewRx(maxFrame, entries int, deliver func(frame []byte, st *radio.RxStatus)) *Rx {
	r := &Rx{deliver: deliver, entries: entries, size: maxFrame}
	for tid := range r.Peer.Recip {
		r.Peer.Recip[tid], _ = ba.NewRecipient[int32](uint8(tid), wlan.MaxBAWindow, entries, ReorderTimeout, true)
	}
	return r
}

// HandleAction takes a Block Ack action frame body from the peer and
// appends the answer (an ADDBA Response) to dst. A new agreement for a
// TID first releases the old one's frames in order.
func (r *Rx) HandleAction(dst, body []byte, now time.Time) ([]byte, error) {
	if cat, act, rest, err := wlan.ParseAction(body); err == nil && cat == wlan.CategoryBlockAck && act == wlan.ActionADDBAReq {
		if req, err := wlan.ParseADDBAReq(rest); err == nil && req.Params.TID() < numTIDs {
			if b := r.Peer.Recip[req.Params.TID()].Reorder(); b != nil {
				b.Flush()
				r.drain(req.Params.TID())
			}
		}
	}
	dst, err := r.Peer.HandleAction(dst, body, now)
	if r.slots == nil && r.established() {
		r.slots = make([]rxSlot, r.entries)
		r.free = make([]int32, r.entries)
		// The buffers grow to the frames they hold when first used, so
		// a station's memory follows its traffic (small frames, few
		// TIDs), and the steady state allocates nothing.
		for i := range r.slots {
			r.free[i] = int32(r.entries - 1 - i)
		}
	}
	for tid := uint8(0); tid < numTIDs; tid++ {
		r.drain(tid) // a DELBA released its frames
	}
	return dst, err
}

func (r *Rx) established() bool {
	for _, x := range r.Peer.Recip {
		if x.State() == ba.Established {
			return true
		}
	}
	return false
}

// Established reports whether tid has an agreement.
func (r *Rx) Established(tid uint8) bool {
	return tid < numTIDs && r.Peer.Recip[tid].State() == ba.Established
}

// Offer takes a QoS data MPDU for tid with sequence number sn. It
// reports false when tid has no agreement (the caller handles the frame
// itself); otherwise the frame is copied into the reorder buffer and
// everything now in order is delivered.
func (r *Rx) Offer(tid uint8, sn uint16, frame []byte, st *radio.RxStatus, now time.Time) bool {
	if !r.Established(tid) || r.slots == nil {
		return false
	}
	rc := r.Peer.Recip[tid]
	rc.Activity(now)
	if len(frame) > r.size {
		r.Stats.TooLarge++
		return true
	}
	if len(r.free) == 0 {
		r.Stats.Dropped++
		return true
	}
	i := r.free[len(r.free)-1]
	s := &r.slots[i]
	if rc.Reorder().Add(sn, i, now) != reorder.Queued {
		r.Stats.Dropped++
		return true
	}
	r.free = r.free[:len(r.free)-1]
	s.buf = append(s.buf[:0], frame...)
	if st != nil {
		s.st = *st
	} else {
		s.st = radio.RxStatus{}
	}
	r.Stats.Reordered++
	r.drain(tid)
	return true
}

// BAR handles a BlockAckReq for tid: the window moves to ssn and the
// frames before it are delivered. False: no agreement (answer with a
// DELBA, reason ba.ReasonUnknownBA).
func (r *Rx) BAR(tid uint8, ssn uint16, now time.Time) bool {
	if tid >= numTIDs || !r.Peer.Recip[tid].HandleBAR(ssn, now) {
		return false
	}
	r.drain(tid)
	return true
}

// Tick runs tid's timers: holes given up on release frames; an
// agreement idle past its timeout ends and its DELBA body is appended
// to dst.
func (r *Rx) Tick(dst []byte, tid uint8, now time.Time) []byte {
	dst = r.Peer.Recip[tid].Tick(dst, now)
	r.drain(tid)
	return dst
}

// Stop ends every agreement (disassociation), delivering what was
// buffered.
func (r *Rx) Stop() {
	for tid := uint8(0); tid < numTIDs; tid++ {
		var none [0]byte
		r.Peer.Recip[tid].Stop(none[:0], ba.ReasonEndBA)
		r.drain(tid)
	}
}

// drain delivers tid's frames that are in order.
func (r *Rx) drain(tid uint8) {
	b := r.Peer.Recip[tid].Reorder()
	if b == nil {
		return
	}
	for {
		i, ok := b.Pop()
		if !ok {
			return
		}
		s := &r.slots[i]
		r.deliver(s.buf, &s.st)
		r.free = append(r.free, i)
	}
}

// LLCMimicDA is the destination address an A-MSDU's first subframe has
// when an attacker flipped the A-MSDU Present bit of a plain MSDU (the
// bit is not covered by CCMP without SPP A-MSDUs): the LLC/SNAP header
// read as an address. mac80211 drops such A-MSDUs (the FragAttacks
// A-MSDU injection defence, Vanhoef 2021, CVE-2020-24588).
var LLCMimicDA = [6]byte{0xaa, 0xaa, 0x03, 0x00, 0x00, 0x00}
