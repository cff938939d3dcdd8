// Package ap is an 802.11 access point (infrastructure BSS, WPA2-PSK with
// CCMP) over any radio that can transmit raw MPDUs: beacons with a TSF,
// probe responses, open-system authentication, association with a bounded
// station table, the 4-way handshake of package wlan/wpa carried in EAPOL
// data frames, and CCMP-protected data (package wlan/ccmp) bridged to a
// distribution system as Ethernet frames.
//
// The AP does no I/O and starts no goroutines: its owner delivers received
// frames to Receive, calls Tick with the current time, and passes frames
// from the distribution system to SendFromDS. Package wlan/medium drives it
// in simulation.
//
// Facts from IEEE 802.11-2016: 11.1.3 (beacon generation, TSF), 11.1.4.3
// (probe responses, hidden SSID answered only to directed probes), 11.3
// (authentication and association states, classes of frames), 12.7.6
// (4-way handshake), 12.5.3 (CCMP), 11.2.3 (power save, TIM).
package ap

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gowrt/gowrt/wlan"
	"github.com/gowrt/gowrt/wlan/ccmp"
	"github.com/gowrt/gowrt/wlan/ie"
	"github.com/gowrt/gowrt/wlan/wpa"
)

// TU is the 802.11 time unit, 1024 µs (802.11-2016 3.2).
const TU = 1024 * time.Microsecond

// Defaults.
const (
	// DefaultBeaconInterval is 100 TU, what every AP uses.
	DefaultBeaconInterval = 100
	// DefaultMaxStations bounds the station table.
	DefaultMaxStations = 64
	// DefaultInactivity is hostapd's ap_max_inactivity (300 s,
	// hostapd.conf): a station silent that long is deauthenticated.
	DefaultInactivity = 300 * time.Second
	// DefaultMgmtRate bounds the authentication and association
	// requests handled per second; the rest are dropped and counted.
	DefaultMgmtRate = 50
	// DefaultPSQueue bounds the frames buffered for a dozing station.
	DefaultPSQueue = 64
	// authTimeout removes a station that authenticated but did not
	// associate (hostapd frees such an entry after a short time too), so
	// a flood of authentications cannot hold the table.
	authTimeout = 5 * time.Second
)

// rates are the basic 802.11b/g rates (500 kb/s units), 1, 2, 5.5, 11
// Mb/s basic, then 6..54 Mb/s.
var rates = []byte{0x82, 0x84, 0x8b, 0x96, 0x0c, 0x12, 0x18, 0x24, 0x30, 0x48, 0x60, 0x6c}

// Transmitter puts a raw MPDU (no FCS) on the air; it must not keep frame.
type Transmitter interface {
	Transmit(frame []byte) error
}

// Config is an AP's configuration.
type Config struct {
	BSSID      wlan.MAC
	SSID       string
	Passphrase string
	Channel    uint8
	// Hidden sends an empty SSID in beacons and answers only probe
	// requests that name the SSID.
	Hidden bool
	// BeaconInterval in TU; zero means 100.
	BeaconInterval uint16
	// MaxStations bounds the station table; zero means 64.
	MaxStations int
	// Inactivity deauthenticates silent stations; zero means 300 s.
	Inactivity time.Duration
	// MgmtRate is the number of authentication and association requests
	// handled per second; zero means DefaultMgmtRate.
	MgmtRate int
	// ToDS receives Ethernet frames from stations for the distribution
	// system; the frame is borrowed until ToDS returns.
	ToDS func(eth []byte)
	// Rand is the randomness for nonces and the GTK; nil means
	// crypto/rand.
	Rand io.Reader
}

// Stats counts what the AP did and dropped.
type Stats struct {
	Beacons        atomic.Uint64
	ProbeResponses atomic.Uint64
	Authenticated  atomic.Uint64
	Associated     atomic.Uint64
	Authorized     atomic.Uint64
	Deauths        atomic.Uint64 // sent
	InactiveKicked atomic.Uint64
	TableFull      atomic.Uint64 // requests refused: station table full
	RateLimited    atomic.Uint64 // auth/assoc requests dropped by the rate limit
	EAPOLMICFails  atomic.Uint64 // EAPOL-Key frames with a wrong MIC
	HandshakeFails atomic.Uint64 // 4-way handshakes that failed
	Unauthorized   atomic.Uint64 // data frames dropped: station not authorized
	Unprotected    atomic.Uint64 // data frames dropped: not protected after authorization
	Replays        atomic.Uint64 // CCMP frames dropped as replays
	CCMPErrors     atomic.Uint64 // CCMP frames dropped: MIC or format
	Malformed      atomic.Uint64 // frames that did not parse
	NotForUs       atomic.Uint64
	RxData         atomic.Uint64 // frames passed to the DS
	Relayed        atomic.Uint64 // frames relayed station to station
	TxData         atomic.Uint64 // data frames sent to stations
	TxDropped      atomic.Uint64 // frames from the DS with no authorized receiver
	PSBuffered     atomic.Uint64
	PSDropped      atomic.Uint64
}

// Errors of SendFromDS and New.
var (
	ErrNotStarted = errors.New("ap: not started")
	ErrShortEth   = errors.New("ap: Ethernet frame too short")
	ErrNoStation  = errors.New("ap: no authorized station with that address")
	ErrSSID       = errors.New("ap: SSID must be 1..32 octets")
)

type staState uint8

const (
	stateAuthenticated staState = iota + 1
	stateAssociated
	stateAuthorized
)

type station struct {
	addr     wlan.MAC
	state    staState
	aid      uint16
	lastSeen time.Time
	auth     *wpa.Authenticator
	key      *ccmp.Key
	seq      wlan.Sequencer
	dozing   bool
	psQueue  [][]byte // Ethernet frames buffered while dozing
}

// AP is an access point. Its methods are safe for concurrent use.
type AP struct {
	Stats Stats

	rxMu       sync.Mutex // serialises Receive; guards ethBuf
	mu         sync.Mutex // guards the rest
	toDS       func(eth []byte)
	pendingDS  []byte // a frame for toDS, handed over after mu is released
	cfg        Config
	rsne       []byte
	authCfg    *wpa.AuthenticatorConfig
	ring       *wpa.GroupKeyRing
	gtk        *ccmp.Key
	tx         Transmitter
	started    bool
	start      time.Time // TSF zero
	now        time.Time
	nextBeacon time.Time
	stations   map[wlan.MAC]*station
	aids       []*station // index AID-1
	seq        wlan.Sequencer
	buf        []byte
	rxBuf      []byte
	ethBuf     []byte
	tim        ie.VirtualBitmap
	dtimCount  uint8
	bucket     float64 // management request tokens
	bucketAt   time.Time
}

// New checks cfg and derives the PSK (the slow part: 4096 PBKDF2
// iterations).
func New(cfg Config) (*AP, error) {
	if len(cfg.SSID) == 0 || len(cfg.SSID) > ie.MaxSSIDLen {
		return nil, ErrSSID
	}
	if cfg.BeaconInterval == 0 {
		cfg.BeaconInterval = DefaultBeaconInterval
	}
	if cfg.MaxStations <= 0 {
		cfg.MaxStations = DefaultMaxStations
	}
	if cfg.MaxStations > wlan.MaxAID {
		cfg.MaxStations = wlan.MaxAID
	}
	if cfg.Inactivity <= 0 {
		cfg.Inactivity = DefaultInactivity
	}
	if cfg.MgmtRate <= 0 {
		cfg.MgmtRate = DefaultMgmtRate
	}
	pmk, err := wpa.PSK(cfg.Passphrase, []byte(cfg.SSID))
	if err != nil {
		return nil, err
	}
	a := &AP{
		cfg:      cfg,
		rsne:     wpa.RSNElementPSKCCMP(0),
		stations: make(map[wlan.MAC]*station),
		aids:     make([]*station, cfg.MaxStations),
		buf:      make([]byte, 0, 4096),
		rxBuf:    make([]byte, 0, 4096),
		ethBuf:   make([]byte, 0, 4096),
		toDS:     cfg.ToDS,
	}
	a.authCfg = &wpa.AuthenticatorConfig{
		PMK:   pmk,
		AA:    cfg.BSSID,
		RSNE:  a.rsne,
		Rand:  cfg.Rand,
		Guard: &wpa.MICFailureGuard{},
	}
	return a, nil
}

// Start begins beaconing through tx at time now, which is the TSF's zero.
func (a *AP) Start(tx Transmitter, now time.Time) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	ring, err := wpa.NewGroupKeyRing(0, a.cfg.Rand, now)
	if err != nil {
		return err
	}
	g := ring.Current()
	gk, err := ccmp.NewKey(g.GTK[:], g.KeyID)
	if err != nil {
		return err
	}
	a.ring, a.gtk = ring, gk
	a.authCfg.Group = ring.Current
	a.tx = tx
	a.start, a.now = now, now
	a.nextBeacon = now
	a.bucket, a.bucketAt = float64(a.cfg.MgmtRate), now
	a.started = true
	a.sendBeacon()
	return nil
}

// Stop deauthenticates every station (reason 3, leaving) and stops
// beaconing.
func (a *AP) Stop() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.kickAll(wlan.ReasonDeauthLeaving)
	a.started = false
}

// Reconfigure applies a new configuration: every station is
// deauthenticated (their keys derive from the old SSID and passphrase)
// and beaconing restarts with the new settings at time now.
func (a *AP) Reconfigure(cfg Config, now time.Time) error {
	n, err := New(cfg)
	if err != nil {
		return err
	}
	a.mu.Lock()
	tx := a.tx
	a.kickAll(wlan.ReasonDeauthLeaving)
	n.cfg.ToDS = a.toDS // keep a hook set with SetToDS
	a.cfg, a.authCfg, a.aids = n.cfg, n.authCfg, n.aids
	a.started = false
	a.mu.Unlock()
	if tx == nil {
		return nil
	}
	return a.Start(tx, now)
}

func (a *AP) kickAll(reason uint16) {
	if !a.started {
		return
	}
	for _, s := range a.stations {
		a.sendDeauth(s.addr, reason)
		a.remove(s)
	}
}

// StationInfo describes one station, for status pages and tests.
type StationInfo struct {
	Addr       wlan.MAC
	AID        uint16
	Associated bool
	Authorized bool
}

// Stations lists the station table.
func (a *AP) Stations() []StationInfo {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]StationInfo, 0, len(a.stations))
	for _, s := range a.stations {
		out = append(out, StationInfo{Addr: s.addr, AID: s.aid, Associated: s.state >= stateAssociated, Authorized: s.state == stateAuthorized})
	}
	return out
}

// MICFailures returns the EAPOL-Key MIC failures counted for sta.
func (a *AP) MICFailures(sta wlan.MAC) uint64 {
	a.mu.Lock()
	g := a.authCfg.Guard
	a.mu.Unlock()
	return g.Failures(sta)
}

// TSF returns the AP's timing synchronization function value at now:
// microseconds since Start (802.11-2016 11.1.3.1).
func (a *AP) TSF(now time.Time) uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.tsf(now)
}

func (a *AP) tsf(now time.Time) uint64 {
	d := now.Sub(a.start)
	if d < 0 {
		return 0
	}
	return uint64(d / time.Microsecond)
}

// Tick runs the AP's timers: beacons, handshake retransmissions,
// inactivity.
func (a *AP) Tick(now time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.started {
		return
	}
	a.now = now
	if !now.Before(a.nextBeacon) {
		a.sendBeacon()
	}
	for _, s := range a.stations {
		limit := a.cfg.Inactivity
		if s.state == stateAuthenticated {
			limit = authTimeout
		}
		if now.Sub(s.lastSeen) > limit {
			a.Stats.InactiveKicked.Add(1)
			a.sendDeauth(s.addr, wlan.ReasonInactivity)
			a.remove(s)
			continue
		}
		if s.auth != nil && s.state == stateAssociated {
			msg, ev := s.auth.Tick(now)
			if msg != nil {
				a.sendEAPOL(s, msg)
			}
			if ev&wpa.EventFailed != 0 {
				a.handshakeFailed(s)
			}
		}
	}
}

func (a *AP) handshakeFailed(s *station) {
	a.Stats.HandshakeFails.Add(1)
	a.sendDeauth(s.addr, wlan.Reason4WayTimeout)
	a.remove(s)
}

func (a *AP) remove(s *station) {
	if s.aid != 0 {
		a.aids[s.aid-1] = nil
		a.tim.Clear(s.aid)
	}
	delete(a.stations, s.addr)
}

// transmit sends a.buf's frame.
func (a *AP) transmit(f []byte) {
	if a.tx != nil {
		_ = a.tx.Transmit(f) // a full radio loses the frame, like the air
	}
}

// beaconBody appends the fixed fields and elements of a beacon or probe
// response; hideSSID leaves the SSID empty.
func (a *AP) beaconBody(dst []byte, hideSSID bool, tim bool) []byte {
	b := wlan.Beacon{
		Timestamp:  a.tsf(a.now),
		Interval:   a.cfg.BeaconInterval,
		Capability: wlan.CapESS | wlan.CapPrivacy | wlan.CapShortSlotTime,
	}
	dst = b.Append(dst)
	if hideSSID {
		dst = ie.AppendSSID(dst, nil)
	} else {
		dst = ie.AppendSSID(dst, []byte(a.cfg.SSID))
	}
	dst = ie.AppendRates(dst, rates)
	dst = ie.AppendDSParams(dst, a.cfg.Channel)
	if tim {
		// DTIM period 1: every beacon is a DTIM, group traffic is
		// never held back (it is sent at once).
		dst = ie.AppendTIM(dst, 0, 1, false, &a.tim)
	}
	return append(dst, a.rsne...)
}

func (a *AP) sendBeacon() {
	f := wlan.AppendMgmtHeader(a.buf[:0], wlan.KindBeacon, 0, wlan.Broadcast, a.cfg.BSSID, a.cfg.BSSID, a.seq.Next(wlan.NonQoSTID))
	f = a.beaconBody(f, a.cfg.Hidden, true)
	a.buf = f
	a.transmit(f)
	a.Stats.Beacons.Add(1)
	interval := time.Duration(a.cfg.BeaconInterval) * TU
	for !a.nextBeacon.After(a.now) {
		a.nextBeacon = a.nextBeacon.Add(interval)
	}
}

func (a *AP) sendMgmt(k wlan.Kind, da wlan.MAC, body func([]byte) []byte) {
	f := wlan.AppendMgmtHeader(a.buf[:0], k, 0, da, a.cfg.BSSID, a.cfg.BSSID, a.seq.Next(wlan.NonQoSTID))
	f = body(f)
	a.buf = f
	a.transmit(f)
}

func (a *AP) sendDeauth(da wlan.MAC, reason uint16) {
	a.Stats.Deauths.Add(1)
	a.sendMgmt(wlan.KindDeauth, da, func(b []byte) []byte { return wlan.AppendReason(b, reason) })
}

// String names the AP for logs.
func (a *AP) String() string { return fmt.Sprintf("ap %s %q", a.cfg.BSSID, a.cfg.SSID) }
