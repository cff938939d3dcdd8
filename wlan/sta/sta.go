// Package sta is an 802.11 station (a client) for tests and simulation:
// it scans with a probe request naming the SSID, authenticates (open
// system), associates with an RSN element, runs the 4-way handshake as
// the supplicant of package wlan/wpa, and then exchanges Ethernet frames
// protected with CCMP (package wlan/ccmp).
//
// Like package ap it does no I/O of its own: its owner delivers frames to
// Receive and calls Tick.
package sta

import (
	"encoding/binary"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gowrt/gowrt/wlan"
	"github.com/gowrt/gowrt/wlan/ccmp"
	"github.com/gowrt/gowrt/wlan/ie"
	"github.com/gowrt/gowrt/wlan/wpa"
)

// retryAfter is how long the station waits for an answer to a probe,
// authentication or association request before sending it again.
const retryAfter = 200 * time.Millisecond

const ethHeaderLen = 14

// rates the station supports (500 kb/s units).
var rates = []byte{0x82, 0x84, 0x8b, 0x96, 0x0c, 0x12, 0x18, 0x24, 0x30, 0x48, 0x60, 0x6c}

// Transmitter puts a raw MPDU on the air.
type Transmitter interface {
	Transmit(frame []byte) error
}

// Config is a station's configuration.
type Config struct {
	Addr       wlan.MAC
	SSID       string
	Passphrase string
	// Receive gets the Ethernet frames the station receives; borrowed.
	Receive func(eth []byte)
	Rand    io.Reader
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
	Deauths     atomic.Uint64 // deauthentications received
	EAPOLErrors atomic.Uint64
}

// Errors.
var (
	ErrNotAuthorized = errors.New("sta: not authorized")
	ErrShortEth      = errors.New("sta: Ethernet frame too short")
)

// Station is a client. Its methods are safe for concurrent use.
type Station struct {
	Stats Stats

	mu     sync.Mutex
	cfg    Config
	pmk    [wpa.PMKLen]byte
	rsne   []byte
	tx     Transmitter
	state  State
	now    time.Time
	sentAt time.Time
	bssid  wlan.MAC
	apRSNE []byte
	aid    uint16
	supp   *wpa.Supplicant
	ptk    *ccmp.Key
	gtk    *ccmp.Key
	seq    wlan.Sequencer
	buf    []byte
	rxBuf  []byte
	ethBuf []byte
	tsf    uint64 // last beacon timestamp seen
}

// New derives the PSK; the station stays idle until Start.
func New(cfg Config) (*Station, error) {
	pmk, err := wpa.PSK(cfg.Passphrase, []byte(cfg.SSID))
	if err != nil {
		return nil, err
	}
	return &Station{cfg: cfg, pmk: pmk, rsne: wpa.RSNElementPSKCCMP(0), buf: make([]byte, 0, 4096)}, nil
}

// Start begins scanning through tx.
func (s *Station) Start(tx Transmitter, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tx, s.now = tx, now
	s.setState(Scanning)
	s.probe()
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

func (s *Station) transmit(f []byte) {
	s.buf = f
	if s.tx != nil {
		_ = s.tx.Transmit(f)
	}
}

func (s *Station) mgmt(k wlan.Kind, da wlan.MAC, body func([]byte) []byte) {
	bssid := s.bssid
	if k == wlan.KindProbeReq {
		bssid = wlan.Broadcast
	}
	f := wlan.AppendMgmtHeader(s.buf[:0], k, 0, da, s.cfg.Addr, bssid, s.seq.Next(wlan.NonQoSTID))
	s.transmit(body(f))
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
	req := wlan.AssocReq{Capability: wlan.CapESS | wlan.CapPrivacy, ListenInterval: 10}
	ies := ie.AppendSSID(nil, []byte(s.cfg.SSID))
	ies = ie.AppendRates(ies, rates)
	req.IEs = append(ies, s.rsne...)
	s.mgmt(wlan.KindAssocReq, s.bssid, func(b []byte) []byte { return req.Append(b, false) })
}

// Tick retries what got no answer.
func (s *Station) Tick(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = now
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

// Receive handles a frame from the air; it only reads frame.
func (s *Station) Receive(frame []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, err := wlan.ParseHeader(frame)
	if err != nil {
		return
	}
	body := frame[h.Len:]
	switch h.FC.Kind() {
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
		s.supp = wpa.NewSupplicant(&wpa.SupplicantConfig{PMK: s.pmk, SPA: s.cfg.Addr, AA: s.bssid, RSNE: s.rsne, APRSNE: s.apRSNE, Rand: s.cfg.Rand})
		s.setState(Handshaking)
	case wlan.KindDeauth, wlan.KindDisassoc:
		if h.Addr1 == s.cfg.Addr && h.Addr2 == s.bssid && s.state > Scanning {
			s.Stats.Deauths.Add(1)
			s.ptk, s.gtk, s.supp, s.aid = nil, nil, nil, 0
			s.setState(Scanning)
		}
	case wlan.KindData, wlan.KindQoSData:
		s.data(&h, frame)
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
	if s.state != Scanning || string(es.SSID) != s.cfg.SSID || es.RSN == nil {
		return
	}
	// Found the network (a hidden one answers our directed probe).
	s.bssid = h.Addr3
	s.tsf = b.Timestamp
	s.apRSNE = append([]byte{byte(ie.IDRSN), byte(len(es.RSN))}, es.RSN...)
	s.setState(Authenticating)
	s.authenticate()
}

func (s *Station) data(h *wlan.Header, frame []byte) {
	if !h.FC.FromDS() || h.FC.ToDS() || h.Addr2 != s.bssid || (h.Addr1 != s.cfg.Addr && !h.Addr1.IsGroup()) {
		return
	}
	if h.FC.Protected() {
		key := s.ptk
		if h.Addr1.IsGroup() {
			key = s.gtk
		}
		if key == nil {
			s.Stats.Dropped.Add(1)
			return
		}
		s.rxBuf = append(s.rxBuf[:0], frame...)
		plain, err := key.Decap(s.rxBuf)
		if err != nil {
			s.Stats.Dropped.Add(1)
			return
		}
		frame = plain
	}
	body := frame[h.Len:]
	etherType, payload, err := wlan.ParseMSDU(body)
	if err != nil {
		s.Stats.Dropped.Add(1)
		return
	}
	if etherType == wpa.EtherTypeEAPOL {
		s.eapol(payload)
		return
	}
	if s.state != Authorized || !h.FC.Protected() {
		s.Stats.Dropped.Add(1)
		return
	}
	if h.Addr3 == s.cfg.Addr {
		return // our own group frame relayed back by the AP
	}
	e := append(s.ethBuf[:0], h.Addr1[:]...)
	e = append(e, h.Addr3[:]...)
	e = binary.BigEndian.AppendUint16(e, etherType)
	e = append(e, payload...)
	s.ethBuf = e
	s.Stats.Received.Add(1)
	if s.cfg.Receive != nil {
		s.cfg.Receive(e)
	}
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
		s.sendData(s.bssid, s.cfg.Addr, wpa.EtherTypeEAPOL, resp, s.ptk)
	}
	if ev&wpa.EventPTK != 0 {
		ptk, _ := s.supp.PTK()
		s.ptk, _ = ccmp.NewKey(ptk.TK[:], 0)
		s.setState(Authorized)
	}
	if ev&wpa.EventGTK != 0 {
		gtk, id, rsc := s.supp.GTK()
		if k, err := ccmp.NewKey(gtk, id); err == nil {
			k.SetRxPN(rsc)
			s.gtk = k
		}
	}
}

// sendData sends a ToDS data frame to da through the AP.
func (s *Station) sendData(da, sa wlan.MAC, etherType uint16, payload []byte, key *ccmp.Key) error {
	h := wlan.Header{FC: wlan.NewFrameControl(wlan.KindData, wlan.FlagToDS), Addr1: s.bssid, Addr2: sa, Addr3: da,
		Seq: wlan.NewSeqControl(s.seq.Next(wlan.NonQoSTID), 0)}
	f := wlan.AppendHeader(s.buf[:0], &h)
	f = wlan.AppendMSDU(f, etherType, payload)
	if key != nil {
		if cap(f)-len(f) < ccmp.Overhead {
			f = append(f, make([]byte, ccmp.Overhead)...)[:len(f)]
		}
		var err error
		if f, err = key.Encap(f); err != nil {
			return err
		}
	}
	s.transmit(f)
	return nil
}

// Send transmits an Ethernet frame (its source must be the station's
// address) protected with the PTK.
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
	return s.sendData(wlan.MAC(eth[0:6]), wlan.MAC(eth[6:12]), binary.BigEndian.Uint16(eth[12:14]), eth[ethHeaderLen:], s.ptk)
}
