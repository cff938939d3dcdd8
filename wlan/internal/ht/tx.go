package ht

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/gowrt/gowrt/wlan"
	"github.com/gowrt/gowrt/wlan/ba"
	"github.com/gowrt/gowrt/wlan/ccmp"
	"github.com/gowrt/gowrt/wlan/txq"
)

const (
	// RxEntries is the receive buffers of a peer's reorder stage: one
	// window of 64 with room for frames released but not yet handled.
	RxEntries = 2 * wlan.MaxBAWindow
	// RxFrameLen holds the largest MPDU we accept: a 3839-octet A-MSDU
	// (what our HT Capabilities advertise) with a 4-address QoS header
	// and CCMP.
	RxFrameLen = 3839 + 36 + ccmp.Overhead
)

// Clock is the transmit scheduler's time: nanoseconds since Start, kept
// by the owner under its lock (Advance) and read without it (Elapsed,
// from the radio's completions), so it is atomic.
type Clock struct {
	zero time.Time
	ns   atomic.Int64
}

// Start sets the time the clock counts from.
func (c *Clock) Start(now time.Time) { c.zero = now }

// Advance moves the clock to now; it never goes back.
func (c *Clock) Advance(now time.Time) {
	if d := now.Sub(c.zero); d > time.Duration(c.ns.Load()) {
		c.ns.Store(int64(d))
	}
}

// Elapsed is the clock's time, for txq.Config.Now.
func (c *Clock) Elapsed() time.Duration { return time.Duration(c.ns.Load()) }

// Seal protects an MPDU the scheduler built with room for CCMP (header
// after the MAC header, MIC at the end): the body moves back over the
// room and Encap protects it with the key's next PN, in place. mu
// serialises the key's PN between the scheduler and the legacy path.
func Seal(mu *sync.Mutex, key *ccmp.Key, mpdu []byte) error {
	n := len(mpdu)
	if n < 2 {
		return ccmp.ErrTooLong
	}
	hl := wlan.HeaderLen(wlan.FrameControl(uint16(mpdu[0]) | uint16(mpdu[1])<<8))
	if n < hl+ccmp.Overhead {
		return ccmp.ErrTooLong
	}
	copy(mpdu[hl:], mpdu[hl+ccmp.HeaderLen:n-ccmp.MICLen])
	mpdu[1] &^= byte(wlan.FlagProtected >> 8)
	mu.Lock()
	_, err := key.Encap(mpdu[:n-ccmp.Overhead])
	mu.Unlock()
	return err
}

// SyncWindows gives the scheduler the window of every TID's originator
// agreement in r (0 when there is none) after an action frame or a timer
// changed one; win is what the scheduler has now.
func SyncWindows(sched *txq.Scheduler, st *txq.Station, r *Rx, win *[numTIDs]int) {
	if st == nil {
		return
	}
	for tid := range win {
		if w := int(r.Peer.Orig[tid].BufSize()); w != win[tid] {
			if sched.SetBAWindow(st, uint8(tid), w) == nil {
				win[tid] = w
			}
		}
	}
}

// TickAll runs the timers of every TID's agreements both ways, handing
// each action frame body they produce (built in dst) to send.
func (r *Rx) TickAll(dst []byte, now time.Time, send func(body []byte)) {
	for tid := uint8(0); tid < numTIDs; tid++ {
		send(r.Peer.Orig[tid].Tick(dst[:0], now))
		send(r.Tick(dst[:0], tid, now))
	}
}

// ReceiveBAR handles a BlockAckReq body: the reorder window moves. With
// no agreement for its TID the reply (appended to dst) is a DELBA,
// reason ba.ReasonUnknownBA; otherwise it is empty.
func (r *Rx) ReceiveBAR(dst, body []byte, now time.Time) ([]byte, error) {
	bar, err := wlan.ParseBlockAckReq(body)
	if err != nil {
		return dst, err
	}
	if !r.BAR(bar.TID, bar.StartSeq, now) {
		d := wlan.DELBA{TID: bar.TID, Reason: ba.ReasonUnknownBA}
		return d.Append(dst), nil
	}
	return dst, nil
}
