package sta

import (
	"io"
	"time"

	"github.com/gowrt/gowrt/ath/airtime"
	"github.com/gowrt/gowrt/ath/rate"
	"github.com/gowrt/gowrt/wlan"
	"github.com/gowrt/gowrt/wlan/ba"
	"github.com/gowrt/gowrt/wlan/ie"
	"github.com/gowrt/gowrt/wlan/internal/ht"
	"github.com/gowrt/gowrt/wlan/radio"
	"github.com/gowrt/gowrt/wlan/txq"
)

// HTConfig turns on 802.11n (HT) with WMM: the station sends HT
// Capabilities and the WMM Information element in its association
// request, and with an HT AP runs Block Ack agreements both ways (QoS
// data to the AP in A-MPDUs through wlan/txq, reordering of what it
// receives).
type HTConfig struct {
	// Width40: the station supports 20/40 MHz; SGI the short guard
	// interval; Streams its spatial streams (0 means 2).
	Width40 bool
	SGI     bool
	Streams int
	// AMSDU packs MSDUs into A-MSDUs (not with software crypto).
	AMSDU bool
	// FiveGHz: the band's timing for rate control (2.4 GHz otherwise).
	FiveGHz bool
}

func (c *HTConfig) internal() ht.Config {
	return ht.Config{Width40: c.Width40, Above: true, SGI: c.SGI, Streams: c.Streams}
}

// htElements appends HT Capabilities and the WMM Information element
// (QoS Info 0: no U-APSD) to an association request.
func (s *Station) htElements(dst []byte) []byte {
	if s.cfg.HT == nil {
		return dst
	}
	c := s.cfg.HT.internal()
	caps := c.Capabilities()
	dst = ie.AppendHTCapabilities(dst, &caps)
	w := ie.WMM{}
	return ie.AppendWMM(dst, &w)
}

// startHT makes the station's transmit scheduler on r.
func (s *Station) startHT(r radio.Radio, now time.Time) error {
	if s.cfg.HT == nil {
		return nil
	}
	c := s.cfg.HT.internal()
	phy := airtime.TwoGHz(true)
	if s.cfg.HT.FiveGHz {
		phy = airtime.FiveGHz()
	}
	s.clock.Start(now)
	sch, err := txq.New(txq.Config{Radio: r, Own: s.cfg.Addr, Station: true, PHY: phy, Caps: c.RateCaps(),
		AMSDU: s.amsduTx(), Buffers: 512,
		Now: s.clock.Elapsed})
	if err != nil {
		return err
	}
	s.sched = sch
	return nil
}

func (s *Station) amsduTx() bool {
	return s.cfg.HT != nil && s.cfg.HT.AMSDU && (s.cfg.Open || s.cfg.HardwareCrypto)
}

// associatedHT takes the AP's elements from the association response:
// with an HT AP with WMM, the receive side of Block Ack agreements is
// set up, and the transmit side once keys are in place (authorizedHT).
func (s *Station) associatedHT(ies []byte) {
	s.stopHT()
	if s.cfg.HT == nil {
		return
	}
	es, err := ie.Parse(ies)
	if err != nil {
		return
	}
	caps, ok := ht.PeerHT(&es)
	if !ok {
		return
	}
	c := s.cfg.HT.internal()
	if es.HTOperation != nil {
		if op, err := ie.ParseHTOperation(es.HTOperation); err == nil && op.SecondaryOffset == ie.SecondaryNone {
			c.Width40 = false // the BSS runs 20 MHz
		}
	}
	s.apCaps = c.PeerCaps(&caps)
	s.rx = ht.NewRx(ht.RxFrameLen, ht.RxEntries, s.dataInOrder)
	for tid := range s.rx.Peer.Orig {
		s.rx.Peer.Orig[tid], _ = ba.NewOriginator(uint8(tid), wlan.MaxBAWindow, 0, s.amsduTx())
	}
}

// authorizedHT puts the AP into the scheduler once the keys are in.
func (s *Station) authorizedHT() {
	if s.rx == nil || s.sched == nil || s.txs != nil || s.cfg.WDS {
		return
	}
	sc := txq.StationConfig{Addr: s.bssid, Caps: s.apCaps, Key: radio.NoKey}
	switch {
	case s.cfg.Open:
	case s.keys != nil:
		sc.Key = pairwiseSlot
	case s.ptk != nil:
		key := s.ptk
		sc.Seal = func(mpdu []byte) error { return ht.Seal(&s.txKeyMu, key, mpdu) }
	default:
		return
	}
	var err error
	s.txs, err = s.sched.AddStation(sc)
	s.win = [8]int{}
	if err != nil {
		s.txs = nil
	}
}

// stopHT ends the agreements and leaves the scheduler.
func (s *Station) stopHT() {
	if s.txs != nil {
		s.sched.RemoveStation(s.txs)
		s.txs = nil
	}
	if s.rx != nil {
		s.rx.Stop()
		s.rx = nil
	}
}

// sendQoS queues an MSDU to the AP in the scheduler as QoS data of its
// TID (single MPDUs until a Block Ack agreement is in place, then
// A-MPDUs), starting the ADDBA handshake when the TID has none. False:
// no HT, the frame goes the legacy way.
func (s *Station) sendQoS(da wlan.MAC, etherType uint16, payload []byte) (bool, error) {
	if s.txs == nil {
		return false, nil
	}
	tid := ht.TID(etherType, payload)
	if o := s.rx.Peer.Orig[tid]; o.State() == ba.Idle {
		if body, err := o.Start(s.actBuf[:0], s.sched.StartSeq(s.txs, tid), s.now); err == nil {
			s.sendAction(body)
		}
	}
	if err := s.sched.Enqueue(s.txs, tid, da, s.cfg.Addr, etherType, payload); err != nil {
		s.Stats.TxDropped.Add(1)
	}
	return true, nil
}

// syncWindows gives the scheduler the window of every TID's agreement.
func (s *Station) syncWindows() {
	ht.SyncWindows(s.sched, s.txs, s.rx, &s.win)
}

func (s *Station) sendAction(body []byte) {
	if len(body) == 0 {
		return
	}
	s.mgmt(wlan.KindAction, s.bssid, func(b []byte) []byte { return append(b, body...) })
}

// receiveAction handles a Block Ack action frame from the AP.
func (s *Station) receiveAction(body []byte) {
	if s.rx == nil {
		return
	}
	reply, _ := s.rx.HandleAction(s.actBuf[:0], body, s.now)
	s.sendAction(reply)
	s.syncWindows()
}

// receiveBAR moves the reorder window for a BlockAckReq from the AP.
func (s *Station) receiveBAR(body []byte) {
	if s.rx == nil {
		return
	}
	reply, err := s.rx.ReceiveBAR(s.actBuf[:0], body, s.now)
	if err != nil {
		s.Stats.Dropped.Add(1)
		return
	}
	s.sendAction(reply)
}

func (s *Station) tickHT() {
	if s.rx == nil {
		return
	}
	s.rx.TickAll(s.actBuf, s.now, s.sendAction)
	s.syncWindows()
}

// HT reports whether the station runs HT with its AP, and the link's
// rate capabilities.
func (s *Station) HT() (bool, rate.Caps) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rx != nil, s.apCaps
}

// BlockAck returns the state of the agreements for tid: as originator
// (to the AP) and as recipient.
func (s *Station) BlockAck(tid uint8) (tx, rx ba.State) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rx == nil || tid >= 8 {
		return ba.Idle, ba.Idle
	}
	return s.rx.Peer.Orig[tid].State(), s.rx.Peer.Recip[tid].State()
}

// WriteStats writes the transmit scheduler's athstats-style view.
func (s *Station) WriteStats(w io.Writer) error {
	s.mu.Lock()
	sch := s.sched
	s.mu.Unlock()
	if sch == nil {
		return nil
	}
	return sch.WriteStats(w)
}
