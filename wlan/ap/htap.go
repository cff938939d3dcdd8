package ap

import (
	"fmt"
	"io"
	"time"

	"github.com/gowrt/gowrt/ath/airtime"
	"github.com/gowrt/gowrt/wlan"
	"github.com/gowrt/gowrt/wlan/ba"
	"github.com/gowrt/gowrt/wlan/ie"
	"github.com/gowrt/gowrt/wlan/internal/ht"
	"github.com/gowrt/gowrt/wlan/radio"
	"github.com/gowrt/gowrt/wlan/txq"
)

// HTConfig turns on 802.11n (HT) with WMM: the AP advertises HT
// Capabilities, HT Operation and the WMM Parameter element, and sends
// QoS data to HT stations in A-MPDUs through the transmit scheduler
// (wlan/txq) once a Block Ack agreement for the TID is in place.
type HTConfig struct {
	// Width40 runs 20/40 MHz with the secondary channel above (Above)
	// or below the primary.
	Width40, Above bool
	// SGI: short guard interval.
	SGI bool
	// Streams: spatial streams (0 means 2).
	Streams int
	// AMSDU packs MSDUs into A-MSDUs under the TXOP (never with
	// software crypto on raw frames; see AP.AMSDU).
	AMSDU bool
}

func (c *HTConfig) internal() ht.Config {
	return ht.Config{Width40: c.Width40, Above: c.Above, SGI: c.SGI, Streams: c.Streams}
}

const (
	// addbaTimeoutTU is the Block Ack timeout the AP asks for: none
	// (mac80211 asks for 0 as an originator too); agreements end with
	// the association or a DELBA.
	addbaTimeoutTU = 0
)

// htElements appends HT Capabilities, HT Operation and the WMM Parameter
// element (802.11-2016 9.4.2.56, 9.4.2.57; WMM 2.2.2).
func (a *AP) htElements(dst []byte) []byte {
	if a.cfg.HT == nil {
		return dst
	}
	c := a.cfg.HT.internal()
	caps := c.Capabilities()
	op := c.Operation(a.cfg.Channel)
	dst = ie.AppendHTCapabilities(dst, &caps)
	dst = ie.AppendHTOperation(dst, &op)
	w := ie.DefaultWMMParams()
	return ie.AppendWMM(dst, &w)
}

// startHT makes the transmit scheduler on r.
func (a *AP) startHT(r radio.Radio, now time.Time) error {
	a.sched = nil
	if a.cfg.HT == nil {
		return nil
	}
	c := a.cfg.HT.internal()
	phy := airtime.TwoGHz(true) // the AP advertises the short slot time
	if a.cfg.Channel > 14 {
		phy = airtime.FiveGHz()
	}
	a.clock.Start(now)
	s, err := txq.New(txq.Config{Radio: r, Own: a.cfg.BSSID, PHY: phy, Caps: c.RateCaps(),
		AMSDU: a.amsduTx(),
		Now:   a.clock.Elapsed})
	if err != nil {
		return err
	}
	a.sched = s
	return nil
}

// associateHT takes the HT Capabilities and WMM elements of an
// association request: an HT station with WMM gets QoS data.
func (a *AP) associateHT(s *station, es *ie.Elements) {
	a.stopHT(s)
	s.ht = false
	if a.cfg.HT == nil {
		return
	}
	caps, ok := ht.PeerHT(es)
	if !ok {
		return
	}
	c := a.cfg.HT.internal()
	s.ht, s.caps = true, c.PeerCaps(&caps)
}

// authorizedHT puts an HT station into the transmit scheduler once its
// keys are in place, and sets up its Block Ack agreements.
func (a *AP) authorizedHT(s *station) {
	if !s.ht || a.sched == nil || s.txs != nil {
		return
	}
	sc := txq.StationConfig{Addr: s.addr, Caps: s.caps, Key: radio.NoKey}
	switch {
	case a.cfg.Open:
	case s.slot != radio.NoKey:
		sc.Key = s.slot
	case s.key != nil:
		key := s.key
		sc.Seal = func(mpdu []byte) error { return ht.Seal(&a.txKeyMu, key, mpdu) }
	default:
		return
	}
	var err error
	s.txs, err = a.sched.AddStation(sc)
	s.win = [8]int{}
	if err != nil {
		s.txs = nil
		return
	}
	s.rx = ht.NewRx(ht.RxFrameLen, ht.RxEntries, a.receiveInOrder)
	for tid := range s.rx.Peer.Orig {
		s.rx.Peer.Orig[tid], _ = ba.NewOriginator(uint8(tid), wlan.MaxBAWindow, addbaTimeoutTU, a.amsduTx())
	}
}

// stopHT removes a station from the scheduler and ends its agreements.
func (a *AP) stopHT(s *station) {
	if s.txs != nil {
		a.sched.RemoveStation(s.txs)
		s.txs = nil
	}
	if s.rx != nil {
		s.rx.Stop()
		s.rx = nil
	}
}

// sendQoS queues an MSDU for an HT station in the scheduler as QoS data
// of its TID (single MPDUs until a Block Ack agreement is in place, then
// A-MPDUs within its window), starting the ADDBA handshake when the TID
// has none. It reports false for frames that go the legacy way (a
// 4-address station, or another destination behind it).
func (a *AP) sendQoS(s *station, da, sa wlan.MAC, etherType uint16, payload []byte) bool {
	if s.txs == nil || s.wds || da != s.addr {
		return false
	}
	tid := ht.TID(etherType, payload)
	if o := s.rx.Peer.Orig[tid]; o.State() == ba.Idle {
		if body, err := o.Start(a.actBuf[:0], a.sched.StartSeq(s.txs, tid), a.now); err == nil {
			a.sendAction(s.addr, body)
		}
	}
	if err := a.sched.Enqueue(s.txs, tid, da, sa, etherType, payload); err != nil {
		a.Stats.TxDropped.Add(1)
	} else {
		a.Stats.TxScheduled.Add(1)
	}
	return true
}

// syncWindows gives the scheduler the window of every TID's agreement
// (0 when there is none) after an action frame or a timer changed one.
func (a *AP) syncWindows(s *station) {
	ht.SyncWindows(a.sched, s.txs, s.rx, &s.win)
}

// sendAction sends an action frame body to da.
func (a *AP) sendAction(da wlan.MAC, body []byte) {
	if len(body) == 0 {
		return
	}
	a.Stats.BAActions.Add(1)
	a.sendMgmt(wlan.KindAction, da, func(b []byte) []byte { return append(b, body...) })
}

// receiveAction handles an action frame from an associated station:
// Block Ack agreements both ways.
func (a *AP) receiveAction(s *station, body []byte) {
	if s.rx == nil {
		return
	}
	reply, err := s.rx.HandleAction(a.actBuf[:0], body, a.now)
	if err != nil {
		a.Stats.Malformed.Add(1)
	}
	a.sendAction(s.addr, reply)
	a.syncWindows(s)
}

// receiveBAR handles a BlockAckReq from a station (the radio answered
// it with a BlockAck): the reorder window moves.
func (a *AP) receiveBAR(h *wlan.Header, body []byte) {
	s := a.stations[h.Addr2]
	if s == nil || s.rx == nil || h.Addr1 != a.cfg.BSSID {
		return
	}
	reply, err := s.rx.ReceiveBAR(a.actBuf[:0], body, a.now)
	if err != nil {
		a.Stats.Malformed.Add(1)
		return
	}
	a.sendAction(s.addr, reply)
}

// tickHT runs the agreements' timers.
func (a *AP) tickHT(s *station) {
	if s.rx == nil {
		return
	}
	s.rx.TickAll(a.actBuf, a.now, func(body []byte) { a.sendAction(s.addr, body) })
	a.syncWindows(s)
}

// WriteStats writes an athstats-style view of the AP's HT stations: the
// transmit scheduler's per-station rate control, aggregate sizes and
// retries (txq.WriteStats), and each station's Block Ack agreements.
func (a *AP) WriteStats(w io.Writer) error {
	a.mu.Lock()
	sched := a.sched
	type agreement struct {
		addr      wlan.MAC
		tx, rx    [8]ba.State
		reordered uint64
		dropped   uint64
	}
	var list []agreement
	for _, s := range a.stations {
		if s.rx == nil {
			continue
		}
		g := agreement{addr: s.addr, reordered: s.rx.Stats.Reordered, dropped: s.rx.Stats.Dropped + s.rx.Stats.TooLarge}
		for tid := range g.tx {
			g.tx[tid] = s.rx.Peer.Orig[tid].State()
			g.rx[tid] = s.rx.Peer.Recip[tid].State()
		}
		list = append(list, g)
	}
	a.mu.Unlock()
	if sched == nil {
		_, err := fmt.Fprintln(w, "no HT: aggregation off")
		return err
	}
	for _, g := range list {
		fmt.Fprintf(w, "station %s  block ack", g.addr)
		for tid := range g.tx {
			if g.tx[tid] != ba.Idle || g.rx[tid] != ba.Idle {
				fmt.Fprintf(w, "  tid %d tx %s rx %s", tid, g.tx[tid], g.rx[tid])
			}
		}
		fmt.Fprintf(w, "  reordered %d  reorder-dropped %d\n", g.reordered, g.dropped)
	}
	return sched.WriteStats(w)
}

// amsduTx: A-MSDUs are sent (HTConfig.AMSDU) where allowed: not with
// software crypto on raw frames.
func (a *AP) amsduTx() bool {
	return a.cfg.HT != nil && a.cfg.HT.AMSDU && (a.cfg.Open || a.cfg.Crypto == CryptoHardware)
}
