// Package sta is an 802.11 station (a client) for tests and simulation,
// over a radio.Radio (package wlan/radio): it scans with a probe request
// naming the SSID, authenticates (open system), associates (with an RSN
// element unless the network is open), runs the 4-way and group key
// handshakes as the supplicant of package wlan/wpa, and then exchanges
// Ethernet frames protected with CCMP (package wlan/ccmp) in software.
//
// In 4-address mode (Config.WDS, what Linux calls a 4addr station) it
// bridges a LAN: frames carry the real Ethernet source and destination
// in A3 and A4, so any address may send through it, and it announces the
// mode with a 4-address Null frame once authorized.
//
// Like package ap it does no I/O of its own: the radio delivers frames to
// Receive and the owner calls Tick. NIC makes it an Ethernet port.
package sta

import (
	"encoding/binary"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gowrt/gowrt/ath/airtime"
	"github.com/gowrt/gowrt/ath/rate"
	"github.com/gowrt/gowrt/wlan"
	"github.com/gowrt/gowrt/wlan/ccmp"
	"github.com/gowrt/gowrt/wlan/ie"
	"github.com/gowrt/gowrt/wlan/internal/ht"
	"github.com/gowrt/gowrt/wlan/internal/mpdupool"
	"github.com/gowrt/gowrt/wlan/radio"
	"github.com/gowrt/gowrt/wlan/reorder"
	"github.com/gowrt/gowrt/wlan/txq"
	"github.com/gowrt/gowrt/wlan/wpa"
)

// retryAfter is how long the station waits for an answer to a probe,
// authentication or association request before sending it again.
const retryAfter = 200 * time.Millisecond

const ethHeaderLen = 14

// rates the station supports (500 kb/s units).
var rates = []byte{0x82, 0x84, 0x8b, 0x96, 0x0c, 0x12, 0x18, 0x24, 0x30, 0x48, 0x60, 0x6c}

// txFrames bounds the frames the station has queued in its radio;
// maxMPDU is the largest it builds (4-address header, CCMP, a 2304-octet
// MSDU with its LLC/SNAP header).
const (
	txFrames = 64
	maxMPDU  = 30 + ccmp.HeaderLen + wlan.MSDUHeaderLen + 2304 + ccmp.MICLen
)

// series is the retry schedule until rate control is wired in: 6 Mb/s
// OFDM, mandatory in both bands, a few tries (what management frames use
// anyway).
var series = [radio.MaxSeries]radio.Series{{Rate: airtime.Legacy(6000), Tries: 4}}

// Config is a station's configuration.
type Config struct {
	Addr       wlan.MAC
	SSID       string
	Passphrase string
	// Open joins an open network (no RSN, no encryption).
	Open bool
	// WDS is 4-address mode: the station bridges a LAN behind it.
	WDS bool
	// HardwareCrypto puts the PTK and GTKs into the radio's key cache
	// (crypto placement like ath10k's cryptmode 0) instead of running
	// CCMP in software; the station still checks every PN.
	HardwareCrypto bool
	// Receive gets the Ethernet frames the station receives; borrowed.
	Receive func(eth []byte)
	Rand    io.Reader
	// HT, if set, runs 802.11n with WMM with an HT AP (HTConfig).
	HT *HTConfig
}

// State is where the station is in joining the BSS.
type State uint8

const (
	Idle State = iota
	Scanning
	Authenticating
	Associating
	Handshaking // associated, 4-way handshake under way
	Authorized
)

var stateNames = [...]string{"idle", "scanning", "authenticating", "associating", "handshaking", "authorized"}

func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "?"
}

// Stats counts the station's events.
type Stats struct {
	Beacons     atomic.Uint64
	Received    atomic.Uint64 // Ethernet frames delivered
	Sent        atomic.Uint64
	Dropped     atomic.Uint64
	Duplicates  atomic.Uint64 // retransmissions of frames already received
	Replays     atomic.Uint64 // CCMP frames dropped as replays
	TxDropped   atomic.Uint64 // frames the radio had no room for
	Deauths     atomic.Uint64 // deauthentications received
	EAPOLErrors atomic.Uint64
	RxAMSDU     atomic.Uint64 // A-MSDUs received
}

// Errors.
var (
	ErrNotAuthorized = errors.New("sta: not authorized")
	ErrShortEth      = errors.New("sta: Ethernet frame too short")
	ErrTooLong       = errors.New("sta: frame too long for an MSDU")
	ErrNoKeyCache    = errors.New("sta: hardware crypto needs a radio with a key cache")
)

// Station is a client. Its methods are safe for concurrent use.
type Station struct {
	Stats Stats

	rxMu sync.Mutex // serialises Receive; guards ethBufs
	mu   sync.Mutex // guards the rest
	cfg  Config
	recv func(eth []byte)
	// ethBufs[:ethN] are the frames for recv one received MPDU produced
	// (an A-MSDU, a reorder release), handed over after mu is released
	// so that recv may call Send (a bridge flooding, a stack answering).
	ethBufs [][]byte
	ethN    int
	onLink  func(up bool)
	linkUp  bool
	pmk     [wpa.PMKLen]byte
	rsne    []byte
	radio   radio.Radio
	keys    radio.KeyCache // with HardwareCrypto
	tx      *mpdupool.Pool
	state   State
	now     time.Time
	sentAt  time.Time
	bssid   wlan.MAC
	apRSNE  []byte
	aid     uint16
	supp    *wpa.Supplicant
	ptk     *ccmp.Key
	gtk     [4]*ccmp.Key // by key ID
	seq     wlan.Sequencer
	dup     reorder.DupFilter // frames from the AP
	rxBuf   []byte
	tsf     uint64 // last beacon timestamp seen
	// HT (htsta.go): the scheduler and its clock, the AP in it, the
	// Block Ack agreements, the link's rate capabilities.
	sched   *txq.Scheduler
	clock   ht.Clock
	txKeyMu sync.Mutex
	txs     *txq.Station
	rx      *ht.Rx
	apCaps  rate.Caps
	win     [8]int // the Block Ack window the scheduler has per TID
	actBuf  []byte
}

// New derives the PSK; the station stays idle until Start.
func New(cfg Config) (*Station, error) {
	s := &Station{cfg: cfg, recv: cfg.Receive, tx: mpdupool.New(txFrames, maxMPDU, nil), actBuf: make([]byte, 0, 64)}
	if cfg.Open {
		return s, nil
	}
	pmk, err := wpa.PSK(cfg.Passphrase, []byte(cfg.SSID))
	if err != nil {
		return nil, err
	}
	s.pmk, s.rsne = pmk, wpa.RSNElementPSKCCMP(0)
	return s, nil
}

var _ radio.Receiver = (*Station)(nil)

// Start begins scanning through r, which delivers to the station.
func (s *Station) Start(r radio.Radio, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.radio, s.now = r, now
	if s.cfg.HardwareCrypto && !s.cfg.Open {
		if s.keys = r.KeyCache(); s.keys == nil {
			return ErrNoKeyCache
		}
	}
	if err := s.startHT(r, now); err != nil {
		return err
	}
	if err := r.Start(s); err != nil {
		return err
	}
	s.setState(Scanning)
	s.probe()
	return nil
}

// State returns where the station is.
func (s *Station) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

// AID returns the association ID.
func (s *Station) AID() uint16 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.aid
}

// BSSID returns the AP joined (or being joined).
func (s *Station) BSSID() wlan.MAC {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bssid
}

// LastTSF returns the timestamp of the last beacon from the BSS.
func (s *Station) LastTSF() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tsf
}

func (s *Station) setState(st State) {
	s.state = st
	s.sentAt = s.now
}

// frame takes a transmit buffer, or nil (counted) when all are queued.
func (s *Station) frame() *mpdupool.Frame {
	f := s.tx.Get()
	if f == nil {
		s.Stats.TxDropped.Add(1)
	}
	return f
}

func (s *Station) transmit(f *mpdupool.Frame, mpdu []byte) {
	noAck := wlan.MAC(mpdu[4:10]).IsGroup()
	if s.tx.Submit(s.radio, f, mpdu, radio.NoKey, noAck, &series) != nil {
		s.Stats.TxDropped.Add(1)
	}
}

func (s *Station) mgmt(k wlan.Kind, da wlan.MAC, body func([]byte) []byte) {
	bssid := s.bssid
	if k == wlan.KindProbeReq {
		bssid = wlan.Broadcast
	}
	t := s.frame()
	if t == nil {
		return
	}
	f := wlan.AppendMgmtHeader(t.Buf[:0], k, 0, da, s.cfg.Addr, bssid, s.seq.Next(wlan.NonQoSTID))
	s.transmit(t, body(f))
}

func (s *Station) probe() {
	s.mgmt(wlan.KindProbeReq, wlan.Broadcast, func(b []byte) []byte {
		b = ie.AppendSSID(b, []byte(s.cfg.SSID))
		return ie.AppendRates(b, rates)
	})
}

func (s *Station) authenticate() {
	req := wlan.Auth{Algorithm: wlan.AuthOpenSystem, Seq: 1}
	s.mgmt(wlan.KindAuth, s.bssid, req.Append)
}

func (s *Station) associate() {
	req := wlan.AssocReq{Capability: wlan.CapESS, ListenInterval: 10}
	if !s.cfg.Open {
		req.Capability |= wlan.CapPrivacy
	}
	ies := ie.AppendSSID(nil, []byte(s.cfg.SSID))
	ies = ie.AppendRates(ies, rates)
	req.IEs = s.htElements(append(ies, s.rsne...))
	s.mgmt(wlan.KindAssocReq, s.bssid, func(b []byte) []byte { return req.Append(b, false) })
}

// Tick retries what got no answer.
func (s *Station) Tick(now time.Time) {
	s.mu.Lock()
	s.tick(now)
	link, up, changed := s.linkChange()
	s.mu.Unlock()
	if changed && link != nil {
		link(up)
	}
}

func (s *Station) tick(now time.Time) {
	s.now = now
	s.clock.Advance(now)
	s.tickHT()
	if now.Sub(s.sentAt) < retryAfter {
		return
	}
	s.sentAt = now
	switch s.state {
	case Scanning:
		s.probe()
	case Authenticating:
		s.authenticate()
	case Associating:
		s.associate()
	}
}

// Receive implements radio.Receiver: it handles a frame from the air with
// its receive status (nil: nothing decrypted); it only reads frame.
func (s *Station) Receive(frame []byte, st *radio.RxStatus) {
	s.rxMu.Lock()
	defer s.rxMu.Unlock()
	s.mu.Lock()
	s.ethN = 0
	s.receive(frame, st)
	recv, n := s.recv, s.ethN
	link, up, changed := s.linkChange()
	s.mu.Unlock()
	if changed && link != nil {
		link(up)
	}
	if recv == nil {
		return
	}
	for _, eth := range s.ethBufs[:n] {
		recv(eth)
	}
}

// linkChange reports a change of authorization since the last call.
func (s *Station) linkChange() (func(bool), bool, bool) {
	up := s.state == Authorized
	if up == s.linkUp {
		return nil, false, false
	}
	s.linkUp = up
	return s.onLink, up, true
}

func (s *Station) receive(frame []byte, st *radio.RxStatus) {
	h, err := wlan.ParseHeader(frame)
	if err != nil {
		return
	}
	body := frame[h.Len:]
	if h.FC.Kind().Type() != wlan.TypeControl && h.Addr1 == s.cfg.Addr && h.Addr2 == s.bssid {
		// 802.11-2016 10.3.2.14: a retransmission after a lost ACK.
		tid := uint8(wlan.NonQoSTID)
		if h.FC.IsQoSData() {
			tid = h.QoS.TID()
		}
		if s.dup.Check(tid, h.Seq, h.FC.Retry()) {
			s.Stats.Duplicates.Add(1)
			return
		}
	}
	switch h.FC.Kind() {
	case wlan.KindBlockAckReq:
		if h.Addr1 == s.cfg.Addr && h.Addr2 == s.bssid {
			s.receiveBAR(body)
		}
	case wlan.KindAction:
		if h.Addr1 == s.cfg.Addr && h.Addr2 == s.bssid && s.state >= Handshaking {
			s.receiveAction(body)
		}
	case wlan.KindBeacon, wlan.KindProbeResp:
		s.beacon(&h, body)
	case wlan.KindAuth:
		if h.Addr1 != s.cfg.Addr || h.Addr2 != s.bssid || s.state != Authenticating {
			return
		}
		if a, err := wlan.ParseAuth(body); err == nil && a.Seq == 2 && a.Status == wlan.StatusSuccess {
			s.setState(Associating)
			s.associate()
		}
	case wlan.KindAssocResp:
		if h.Addr1 != s.cfg.Addr || h.Addr2 != s.bssid || s.state != Associating {
			return
		}
		r, err := wlan.ParseAssocResp(body)
		if err != nil || r.Status != wlan.StatusSuccess {
			return // retried by Tick; the AP may have room later
		}
		s.aid = r.AID
		s.associatedHT(r.IEs)
		if s.cfg.Open {
			s.authorized()
			return
		}
		s.supp = wpa.NewSupplicant(&wpa.SupplicantConfig{PMK: s.pmk, SPA: s.cfg.Addr, AA: s.bssid, RSNE: s.rsne, APRSNE: s.apRSNE, Rand: s.cfg.Rand})
		s.setState(Handshaking)
	case wlan.KindDeauth, wlan.KindDisassoc:
		if h.Addr1 == s.cfg.Addr && h.Addr2 == s.bssid && s.state > Scanning {
			s.Stats.Deauths.Add(1)
			s.ptk, s.gtk, s.supp, s.aid = nil, [4]*ccmp.Key{}, nil, 0
			s.stopHT()
			s.clearKeys()
			s.setState(Scanning)
		}
	case wlan.KindData, wlan.KindQoSData:
		s.data(&h, frame, st)
	}
}

func (s *Station) beacon(h *wlan.Header, body []byte) {
	b, err := wlan.ParseBeacon(body)
	if err != nil {
		return
	}
	es, err := ie.Parse(b.IEs)
	if err != nil {
		return
	}
	if s.state >= Authenticating && h.Addr3 == s.bssid {
		s.tsf = b.Timestamp
		s.Stats.Beacons.Add(1)
	}
	if s.state != Scanning || string(es.SSID) != s.cfg.SSID || (es.RSN == nil) != s.cfg.Open {
		return
	}
	// Found the network (a hidden one answers our directed probe).
	s.bssid = h.Addr3
	s.dup.Reset()
	s.tsf = b.Timestamp
	if !s.cfg.Open {
		s.apRSNE = append([]byte{byte(ie.IDRSN), byte(len(es.RSN))}, es.RSN...)
	}
	s.setState(Authenticating)
	s.authenticate()
}

func (s *Station) data(h *wlan.Header, frame []byte, st *radio.RxStatus) {
	fourAddr := h.FC.ToDS() && h.FC.FromDS()
	switch {
	case h.Addr2 != s.bssid || !h.FC.FromDS():
		return
	case fourAddr:
		if !s.cfg.WDS || h.Addr1 != s.cfg.Addr {
			return
		}
	case h.FC.ToDS() || (h.Addr1 != s.cfg.Addr && !h.Addr1.IsGroup()):
		return
	case s.cfg.WDS && h.Addr1.IsGroup():
		// A 4-address station takes group frames only as 4-address
		// unicast copies; the 3-address broadcast may be its own LAN's
		// frame coming back (mac80211 drops these for a 4addr station).
		return
	}
	if !h.FC.HasBody() {
		return
	}
	if h.FC.IsQoSData() && !h.Addr1.IsGroup() && s.rx != nil && s.rx.Offer(h.QoS.TID(), h.Seq.Seq(), frame, st, s.now) {
		return // delivered in order by dataInOrder
	}
	s.dataMPDU(h, frame, st)
}

// dataInOrder is the reorder stage's delivery: an MPDU of a Block Ack
// agreement, in sequence order.
func (s *Station) dataInOrder(frame []byte, st *radio.RxStatus) {
	h, err := wlan.ParseHeader(frame)
	if err != nil {
		return
	}
	s.dataMPDU(&h, frame, st)
}

// dataMPDU decrypts (checking the PN) a data MPDU from the AP and
// delivers its MSDUs.
func (s *Station) dataMPDU(h *wlan.Header, frame []byte, st *radio.RxStatus) {
	fourAddr := h.FC.ToDS() && h.FC.FromDS()
	if h.FC.Protected() {
		key := s.ptk
		if h.Addr1.IsGroup() {
			if id, err := ccmp.PeekKeyID(frame); err == nil {
				key = s.gtk[id]
			} else {
				key = nil
			}
		}
		if key == nil {
			s.Stats.Dropped.Add(1)
			return
		}
		if st != nil && st.DecryptErr {
			s.Stats.Dropped.Add(1)
			return
		}
		s.rxBuf = append(s.rxBuf[:0], frame...)
		var plain []byte
		var err error
		if st != nil && st.Decrypted {
			plain, err = key.AcceptDecrypted(s.rxBuf) // the PN check is ours
		} else {
			plain, err = key.Decap(s.rxBuf)
		}
		if err != nil {
			if errors.Is(err, ccmp.ErrReplay) {
				s.Stats.Replays.Add(1)
			}
			s.Stats.Dropped.Add(1)
			return
		}
		frame = plain
	}
	body := frame[h.Len:]
	if h.FC.IsQoSData() && h.QoS.AMSDU() {
		s.dataAMSDU(h, body)
		return
	}
	etherType, payload, err := wlan.ParseMSDU(body)
	if err != nil {
		s.Stats.Dropped.Add(1)
		return
	}
	if etherType == wpa.EtherTypeEAPOL {
		s.eapol(payload)
		return
	}
	da, sa := h.Addr1, h.Addr3
	if fourAddr {
		da, sa = h.Addr3, h.Addr4
	}
	s.deliver(h, da, sa, etherType, payload)
}

// dataAMSDU delivers each subframe of an A-MSDU (802.11-2016 9.3.2.2),
// accepted only from an HT AP.
func (s *Station) dataAMSDU(h *wlan.Header, body []byte) {
	if s.rx == nil {
		s.Stats.Dropped.Add(1)
		return
	}
	s.Stats.RxAMSDU.Add(1)
	msdus, ok := ht.OpenAMSDU(body)
	if !ok {
		s.Stats.Dropped.Add(1) // a plain MSDU turned into an A-MSDU by a flipped bit
		return
	}
	for {
		sub, etherType, payload, ok := msdus.Next()
		if !ok {
			break
		}
		if sub.DA != s.cfg.Addr && !sub.DA.IsGroup() && !s.cfg.WDS {
			s.Stats.Dropped.Add(1) // not ours: a 3-address station has one address
			continue
		}
		s.deliver(h, sub.DA, sub.SA, etherType, payload)
	}
	if msdus.Bad != 0 {
		s.Stats.Dropped.Add(msdus.Bad)
	}
}

// deliver hands one MSDU up as an Ethernet frame, in a buffer kept for
// the next frames (the steady state allocates nothing).
func (s *Station) deliver(h *wlan.Header, da, sa wlan.MAC, etherType uint16, payload []byte) {
	if s.state != Authorized || (!h.FC.Protected() && !s.cfg.Open) {
		s.Stats.Dropped.Add(1)
		return
	}
	if sa == s.cfg.Addr {
		return // our own group frame relayed back by the AP
	}
	if s.ethN == len(s.ethBufs) {
		s.ethBufs = append(s.ethBufs, make([]byte, 0, 2048))
	}
	e := append(s.ethBufs[s.ethN][:0], da[:]...)
	e = append(e, sa[:]...)
	e = binary.BigEndian.AppendUint16(e, etherType)
	e = append(e, payload...)
	s.ethBufs[s.ethN] = e
	s.ethN++
	s.Stats.Received.Add(1)
}

func (s *Station) eapol(frame []byte) {
	if s.supp == nil {
		return
	}
	resp, ev, err := s.supp.Receive(frame)
	if err != nil {
		s.Stats.EAPOLErrors.Add(1)
	}
	if resp != nil {
		// Messages 2 and 4 of the 4-way handshake go unprotected, also
		// when message 3 is retransmitted after we installed the PTK:
		// the AP installs its side only on message 4, so a protected
		// message 4 could never reach it. The group handshake's answer
		// goes under the PTK.
		key := s.ptk
		if k, err := wpa.ParseKeyFrame(resp); err == nil && k.KeyInfo&wpa.KeyInfoPairwise != 0 {
			key = nil
		}
		_ = s.sendData(s.bssid, s.cfg.Addr, wpa.EtherTypeEAPOL, resp, key)
	}
	if ev&wpa.EventGTK != 0 {
		gtk, id, rsc := s.supp.GTK()
		if k, err := ccmp.NewKey(gtk, id); err == nil {
			k.SetRxPN(rsc)
			s.gtk[id] = k
			if s.keys != nil {
				_ = s.keys.Install(id, wlan.Broadcast, uint8(id), [16]byte(gtk), 0)
			}
		}
	}
	if ev&wpa.EventPTK != 0 {
		ptk, _ := s.supp.PTK()
		s.ptk, _ = ccmp.NewKey(ptk.TK[:], 0)
		if s.keys != nil {
			// The answer to message 3 went out above, unprotected by
			// the cache: the key goes in after it (802.11-2016 12.7.6.5).
			_ = s.keys.Install(pairwiseSlot, s.bssid, 0, ptk.TK, 1)
		}
		s.authorized()
	}
}

// authorized enters the Authorized state; a 4-address station then sends
// a 4-address Null frame so the AP knows its mode before any data
// (mac80211 does the same after associating in 4addr mode).
func (s *Station) authorized() {
	s.setState(Authorized)
	s.authorizedHT()
	if !s.cfg.WDS {
		return
	}
	t := s.frame()
	if t == nil {
		return
	}
	h := wlan.Header{FC: wlan.NewFrameControl(wlan.KindNull, wlan.FlagToDS|wlan.FlagFromDS), Addr1: s.bssid, Addr2: s.cfg.Addr,
		Addr3: s.bssid, Addr4: s.cfg.Addr, Seq: wlan.NewSeqControl(s.seq.Next(wlan.NonQoSTID), 0)}
	s.transmit(t, wlan.AppendHeader(t.Buf[:0], &h))
}

// sendData sends a ToDS data frame to da through the AP: three addresses
// (A2 is always the station's own: a 3-address station cannot send for
// another source, as mac80211 in managed mode), or four in WDS mode
// (A3 the destination, A4 the real source; 802.11-2016 Table 9-26).
func (s *Station) sendData(da, sa wlan.MAC, etherType uint16, payload []byte, key *ccmp.Key) error {
	t := s.frame()
	if t == nil {
		return nil
	}
	h := wlan.Header{FC: wlan.NewFrameControl(wlan.KindData, wlan.FlagToDS), Addr1: s.bssid, Addr2: s.cfg.Addr, Addr3: da,
		Seq: wlan.NewSeqControl(s.seq.Next(wlan.NonQoSTID), 0)}
	if s.cfg.WDS && etherType != wpa.EtherTypeEAPOL {
		h.FC = wlan.NewFrameControl(wlan.KindData, wlan.FlagToDS|wlan.FlagFromDS)
		h.Addr4 = sa
	}
	if len(payload) > cap(t.Buf)-32-wlan.MSDUHeaderLen-ccmp.Overhead {
		s.tx.Put(t)
		return ErrTooLong
	}
	if key != nil && s.keys != nil {
		// The radio encrypts: the Protected bit and room for the CCMP
		// header and MIC (radio.TxRequest).
		h.FC |= wlan.FlagProtected
		f := wlan.AppendHeader(t.Buf[:0], &h)
		f = append(f, ccmpRoom[:]...)
		f = wlan.AppendMSDU(f, etherType, payload)
		f = append(f, ccmpRoom[:]...)
		if s.tx.Submit(s.radio, t, f, pairwiseSlot, false, &series) != nil {
			s.Stats.TxDropped.Add(1)
		}
		return nil
	}
	f := wlan.AppendHeader(t.Buf[:0], &h)
	f = wlan.AppendMSDU(f, etherType, payload)
	if key != nil {
		var err error
		if f, err = key.Encap(f); err != nil {
			s.tx.Put(t)
			return err
		}
	}
	s.transmit(t, f)
	return nil
}

// Key-cache layout: group keys in the slots of their key IDs, the PTK
// after them (as the AP lays it out, after ath9k).
const pairwiseSlot = 4

var ccmpRoom [ccmp.HeaderLen]byte

func (s *Station) clearKeys() {
	if s.keys == nil {
		return
	}
	for slot := 0; slot <= pairwiseSlot; slot++ {
		_ = s.keys.Clear(slot)
	}
}

// Send transmits an Ethernet frame, protected with the PTK. In 3-address
// mode the frame goes out under the station's own address whatever its
// source.
func (s *Station) Send(eth []byte) error {
	if len(eth) < ethHeaderLen {
		return ErrShortEth
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != Authorized {
		return ErrNotAuthorized
	}
	s.Stats.Sent.Add(1)
	if !s.cfg.WDS {
		if queued, err := s.sendQoS(wlan.MAC(eth[0:6]), binary.BigEndian.Uint16(eth[12:14]), eth[ethHeaderLen:]); queued || err != nil {
			return err
		}
	}
	return s.sendData(wlan.MAC(eth[0:6]), wlan.MAC(eth[6:12]), binary.BigEndian.Uint16(eth[12:14]), eth[ethHeaderLen:], s.ptk)
}
