// Package radio is the contract between gowrt's 802.11 MAC layer (the AP
// and station state machines of wlan/ap and wlan/sta, and the A-MPDU
// transmit scheduler) and whatever puts their frames on the air: the
// AR9300-family driver on a chip, or a simulated radio on wlan/medium.
//
// The split is the one between net80211 and a FreeBSD driver, or mac80211
// and ath9k: the MAC layer builds MPDUs (headers, sequence numbers, CCMP
// when crypto is in software), picks rates through rate control and forms
// aggregates; the radio transmits a PPDU with the hardware's multi-rate
// retry schedule, reports how it went (ACK, BlockAck bitmap, tries), and
// hands up received MPDUs with their receive status. A radio with a key
// cache (KeyCache) encrypts and decrypts CCMP itself when the MAC layer
// asks it to (the crypto placement of ath10k's cryptmode).
//
// Like the NIC contract (package net), it imports nothing that does I/O:
// only the rate and airtime types shared with rate control.
package radio

import (
	"errors"
	"time"

	"github.com/gowrt/gowrt/ath/airtime"
)

// MaxSeries is the number of entries of a multi-rate retry schedule (the
// Atheros descriptor's four series; ath/rate.MaxSeries).
const MaxSeries = 4

// Series is one entry of a retry schedule: a rate and how often to try it.
type Series struct {
	Rate  airtime.Rate
	Tries uint8
}

// NoKey is TxRequest.Key for a frame the radio must send as it is.
const NoKey = -1

// TxRequest is one PPDU to transmit: a single MPDU, or the MPDUs of one
// A-MPDU (all QoS data of one station and TID, sequence numbers within the
// BlockAck window). Frames are complete MPDUs without FCS; the radio adds
// the FCS, the A-MPDU delimiters and padding.
type TxRequest struct {
	MPDUs [][]byte
	// Series is the retry schedule; entries with Tries 0 are unused.
	Series [MaxSeries]Series
	// Key is the key-cache slot to encrypt with (KeyCache.Install), or
	// NoKey. With a key, each MPDU carries the Protected bit and room for
	// the 8-byte CCMP header after the MAC header and the 8-byte MIC at
	// the end, which the radio fills in (the PN it takes from the slot).
	// The radio writes that PN into the MPDU's CCMP header; an MPDU sent
	// again (a software retry) still carries it and keeps it, so a
	// retransmission never gets a newer PN than subframes sent after it
	// and the receiver's replay check after reordering does not drop it.
	Key int
	// NoAck: a group-addressed frame (or one sent with the No Ack policy);
	// the radio sends it once at Series[0] and reports it done.
	NoAck bool
	// RTS protects the exchange with RTS/CTS.
	RTS bool
	// Queue is the access category's queue (0 BE, 1 BK, 2 VI, 3 VO; the
	// 802.11 EDCA order of wlan's QoS TID mapping).
	Queue uint8
	// Done reports the outcome, once, from the radio's completion context.
	// The radio is done with MPDUs when Done runs.
	Done func(req *TxRequest, st *TxStatus)
	// Cookie is the submitter's; the radio does not touch it.
	Cookie any
}

// TxStatus is the outcome of a TxRequest.
type TxStatus struct {
	// Acked: an ACK (single MPDU) or a BlockAck (aggregate) came back.
	Acked bool
	// BlockAck: for an aggregate, bit i set means MPDUs[i] was
	// acknowledged (already mapped from the BlockAck's starting sequence
	// number to the request's order). For a single MPDU it is 1 if Acked.
	BlockAck uint64
	// FinalSeries is the schedule entry the exchange ended at, and
	// LongTries the data transmissions in total (rate control's
	// Completion).
	FinalSeries int
	LongTries   int
	ShortTries  int
	// Err is set when the radio dropped the request without sending it
	// (flushed queue, reset, stopped); Acked is false then.
	Err error
}

// RxStatus is what the radio knows about a received MPDU.
type RxStatus struct {
	Time    time.Time
	Rate    airtime.Rate
	RSSI    int8 // dB above the noise floor
	Channel uint8
	// Decrypted: the radio decrypted a protected MPDU with a key-cache
	// slot and checked its MIC; the frame handed up is the plaintext with
	// the Protected bit still set and the CCMP header kept, the MIC
	// removed. The MAC layer still checks the PN (replay) itself.
	Decrypted bool
	// DecryptErr: the radio tried and the MIC did not match; the frame is
	// handed up as received so the MAC layer can count it.
	DecryptErr bool
	// InAMPDU and AMPDUFirst/AMPDULast mark subframes of one A-MPDU, so
	// duplicate detection can tell A-MSDUs of one aggregate apart.
	InAMPDU               bool
	AMPDUFirst, AMPDULast bool
}

// Receiver gets the MPDUs a radio received (FCS removed, frames with a
// bad FCS dropped by the radio and counted). The frame is borrowed, valid
// only until the call returns.
type Receiver interface {
	Receive(frame []byte, st *RxStatus)
}

// Radio is one 802.11 interface of a chip.
type Radio interface {
	// Address is the radio's MAC address (the BSSID of an AP).
	Address() [6]byte
	// Start begins delivery of received frames to r.
	Start(r Receiver) error
	// Transmit queues a request; it does not block. ErrQueueFull when
	// the access category's queue has no room: the caller keeps req.
	Transmit(req *TxRequest) error
	// SetChannel tunes the radio (primary channel and width).
	SetChannel(ch Channel) error
	// SetBeacon installs the beacon the radio sends every interval TU at
	// TBTT, or replaces it (a new TIM) before the next one; interval 0
	// stops beaconing. The radio fills in the timestamp field.
	SetBeacon(frame []byte, intervalTU uint16) error
	// TSF is the radio's timing synchronisation function now, in µs.
	TSF() uint64
	// KeyCache is the radio's hardware crypto, or nil without one.
	KeyCache() KeyCache
	// Stop stops transmission and reception; queued requests complete
	// with ErrStopped.
	Stop()
}

// Channel is a tuning: primary channel number, band and width.
type Channel struct {
	Number uint8
	Band5G bool
	// Width40 with Above: the secondary channel is above (HT40+) or
	// below (HT40-) the primary.
	Width40, Above bool
}

// KeyCache is a radio's hardware key table (Atheros key cache).
type KeyCache interface {
	// Slots is the number of slots.
	Slots() int
	// Install loads a CCMP-128 key into slot for frames from or to
	// addr (the broadcast address for a group key, with keyID 1..3);
	// pn is the next transmit PN.
	Install(slot int, addr [6]byte, keyID uint8, tk [16]byte, pn uint64) error
	// Clear empties a slot.
	Clear(slot int) error
}

// Errors.
var (
	ErrQueueFull = errors.New("radio: transmit queue full")
	ErrStopped   = errors.New("radio: stopped")
	ErrNoSlot    = errors.New("radio: no such key-cache slot")
)
