// Package ap is an 802.11 access point (infrastructure BSS, open or
// WPA2-PSK with CCMP) over a radio.Radio (package wlan/radio): a beacon
// template the radio sends at TBTT, probe responses, open-system
// authentication, association with a bounded station table, the 4-way
// handshake of package wlan/wpa carried in EAPOL data frames, periodic GTK
// rekeying with the group key handshake, and data bridged to a
// distribution system as Ethernet frames (NIC makes the AP a port of
// br-lan, optionally tagged into a VLAN).
//
// Crypto placement is per interface, like ath10k's cryptmode module
// parameter: CryptoSoftware protects raw MPDUs with package wlan/ccmp
// before they reach the radio (and, as ath10k's raw mode requires, never
// sends A-MSDUs); CryptoHardware installs the PTK and GTK into the radio's
// key cache after the handshakes and lets the radio encrypt and decrypt,
// while the AP keeps checking the PN of every decrypted frame against its
// own replay counters (the key cache has none).
//
// 4-address (WDS) stations: with Config.WDS a station that sends
// four-address data frames (hostapd's wds_sta) bridges a LAN behind it;
// the AP learns the Ethernet addresses behind it from A4 and sends their
// frames to it with four addresses.
//
// The AP does no I/O and starts no goroutines: the radio delivers received
// frames to Receive, the owner calls Tick with the current time and
// passes frames from the distribution system to SendFromDS (or uses NIC).
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
	// DefaultMaxBehind bounds the Ethernet addresses learned behind
	// 4-address stations (a bridge's FDB is bounded the same way).
	DefaultMaxBehind = 256
	// DefaultTxFrames is the number of frames the AP can have queued in
	// the radio at once; a frame beyond it is dropped and counted, as a
	// full radio queue drops it.
	DefaultTxFrames = 128
	// authTimeout removes a station that authenticated but did not
	// associate (hostapd frees such an entry after a short time too), so
	// a flood of authentications cannot hold the table.
	authTimeout = 5 * time.Second
	// behindAge forgets an address behind a 4-address station not heard
	// from for this long: the 802.1D default ageing time of a bridge's
	// filtering database (300 s), which the LAN behind it is part of.
	behindAge = 300 * time.Second
)

// rates are the basic 802.11b/g rates (500 kb/s units), 1, 2, 5.5, 11
// Mb/s basic, then 6..54 Mb/s.
var rates = []byte{0x82, 0x84, 0x8b, 0x96, 0x0c, 0x12, 0x18, 0x24, 0x30, 0x48, 0x60, 0x6c}

// CryptoPlacement says where CCMP runs (ath10k's cryptmode: 0 hardware,
// 1 software on raw frames).
type CryptoPlacement uint8

const (
	// CryptoSoftware: the AP protects and checks raw MPDUs itself.
	CryptoSoftware CryptoPlacement = iota
	// CryptoHardware: keys go into the radio's key cache; the radio
	// encrypts on transmit and decrypts on receive, the AP checks PNs.
	CryptoHardware
)

func (c CryptoPlacement) String() string {
	if c == CryptoHardware {
		return "hardware"
	}
	return "software"
}

// Config is an AP's configuration.
type Config struct {
	BSSID wlan.MAC
	SSID  string
	// Passphrase is the WPA2-PSK passphrase; ignored when Open.
	Passphrase string
	// Open runs an open network: no RSN element, no handshake, no
	// encryption; stations are authorized on association.
	Open    bool
	Channel uint8
	// Crypto places CCMP in software or in the radio's key cache.
	Crypto CryptoPlacement
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
	// GroupRekey replaces the GTK this often (hostapd's wpa_group_rekey)
	// and runs the group key handshake with every authorized station;
	// one that does not answer is deauthenticated. Zero: never.
	GroupRekey time.Duration
	// WDS accepts 4-address data frames from stations, which then bridge
	// the LAN behind them (hostapd's wds_sta).
	WDS bool
	// MaxBehind bounds the addresses learned behind 4-address stations;
	// zero means DefaultMaxBehind.
	MaxBehind int
	// VLAN, if not zero, is the IEEE 802.1Q VLAN ID the AP's traffic
	// carries on the distribution system: frames to the DS are tagged
	// with it, and only frames tagged with it are taken from the DS
	// (hostapd's vlan_tagged_interface for a whole BSS).
	VLAN uint16
	// ToDS receives Ethernet frames from stations for the distribution
	// system; the frame is borrowed until ToDS returns.
	ToDS func(eth []byte)
	// Rand is the randomness for nonces and the GTK; nil means
	// crypto/rand.
	Rand io.Reader
	// HT, if set, runs 802.11n with WMM (HTConfig); nil: legacy only.
	HT *HTConfig
}

// Stats counts what the AP did and dropped.
type Stats struct {
	Beacons        atomic.Uint64 // beacon templates installed in the radio
	ProbeResponses atomic.Uint64
	Authenticated  atomic.Uint64
	Associated     atomic.Uint64
	Authorized     atomic.Uint64
	Deauths        atomic.Uint64 // sent
	InactiveKicked atomic.Uint64
	TableFull      atomic.Uint64 // requests refused: station table full
	RateLimited    atomic.Uint64 // auth/assoc requests dropped by the rate limit
	EAPOLMICFails  atomic.Uint64 // EAPOL-Key frames with a wrong MIC
	HandshakeFails atomic.Uint64 // 4-way or group handshakes that failed
	GroupRekeys    atomic.Uint64 // GTKs replaced
	Unauthorized   atomic.Uint64 // data frames dropped: station not authorized
	Unprotected    atomic.Uint64 // data frames dropped: not protected after authorization
	Replays        atomic.Uint64 // CCMP frames dropped as replays
	CCMPErrors     atomic.Uint64 // CCMP frames dropped: MIC or format
	Malformed      atomic.Uint64 // frames that did not parse
	NotForUs       atomic.Uint64
	Duplicates     atomic.Uint64 // retransmissions of frames already received
	RxData         atomic.Uint64 // frames passed to the DS
	Relayed        atomic.Uint64 // frames relayed station to station
	TxData         atomic.Uint64 // data frames sent to stations
	TxDropped      atomic.Uint64 // frames from the DS with no authorized receiver, or no room
	TxFailed       atomic.Uint64 // frames the radio reported not acknowledged
	WrongVLAN      atomic.Uint64 // frames from the DS not tagged with Config.VLAN
	WDSLearned     atomic.Uint64 // addresses learned behind 4-address stations
	WDSFull        atomic.Uint64 // addresses not learned: table full
	WDSRefused     atomic.Uint64 // 4-address frames dropped: WDS off
	PSBuffered     atomic.Uint64
	PSDropped      atomic.Uint64
	TxScheduled    atomic.Uint64 // MSDUs queued in the A-MPDU scheduler (wlan/txq)
	BAActions      atomic.Uint64 // Block Ack action frames sent
	RxAMSDU        atomic.Uint64 // A-MSDUs received (each subframe bridged)
}

// Errors of SendFromDS, New and Start.
var (
	ErrNotStarted = errors.New("ap: not started")
	ErrShortEth   = errors.New("ap: Ethernet frame too short")
	ErrNoStation  = errors.New("ap: no authorized station with that address")
	ErrSSID       = errors.New("ap: SSID must be 1..32 octets")
	ErrNoKeyCache = errors.New("ap: hardware crypto needs a radio with a key cache")
	ErrVLAN       = errors.New("ap: VLAN ID must be 1..4094")
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
	authRSNE []byte // the RSN element auth was made for
	// dup drops retransmissions the AP already took (a lost ACK makes
	// the station's radio send a frame again, Retry bit set).
	dup reorder.DupFilter
	// key is the pairwise key: with software crypto it protects and
	// checks frames; with hardware crypto it only keeps the receive
	// replay counters (the radio has the key in slot).
	key  *ccmp.Key
	slot int // key-cache slot of the PTK, radio.NoKey without one
	seq  wlan.Sequencer
	// wds: the station sends 4-address frames and gets them.
	wds bool
	// groupPending: a group key handshake with it is under way.
	groupPending bool
	dozing       bool
	psQueue      [][]byte // Ethernet frames buffered while dozing
	// HT: the station sent HT Capabilities and WMM; caps is the link's
	// rate capabilities, txs its queues in the scheduler, rx its Block
	// Ack agreements (originator and recipient per TID).
	ht   bool
	caps rate.Caps
	txs  *txq.Station
	rx   *ht.Rx
	win  [8]int // the Block Ack window the scheduler has per TID
}

// AP is an access point. Its methods are safe for concurrent use.
type AP struct {
	Stats Stats

	rxMu       sync.Mutex // serialises Receive; guards dsBufs
	port       *NIC       // the Ethernet port (NIC), made once
	portOnce   sync.Once
	mu         sync.Mutex // guards the rest
	toDS       func(eth []byte)
	cfg        Config
	rsne       []byte
	authCfg    *wpa.AuthenticatorConfig
	ring       *wpa.GroupKeyRing
	gtk        *ccmp.Key // group key used to transmit
	gtkSlot    int
	gtkNext    *ccmp.Key // new GTK during a rekey, sent once every station has it
	radio      radio.Radio
	delivering radio.Radio    // the radio Start started, delivering to the AP
	keys       radio.KeyCache // nil with software crypto
	started    bool
	now        time.Time
	stations   map[wlan.MAC]*station
	aids       []*station // index AID-1
	behind     map[wlan.MAC]behindEntry
	seq        wlan.Sequencer
	rxBuf      []byte
	tim        ie.VirtualBitmap
	bucket     float64 // management request tokens
	bucketAt   time.Time
	tx         *mpdupool.Pool
	// HT: the A-MPDU scheduler, its clock (read by radio completions
	// without mu), the lock of software CCMP transmit
	// state shared with the scheduler's completions, a buffer for
	// action frame bodies, and the Ethernet frames for the DS one
	// received MPDU produced (an A-MSDU, a reorder release).
	sched   *txq.Scheduler
	clock   ht.Clock
	txKeyMu sync.Mutex
	actBuf  []byte
	dsBufs  [][]byte
	dsN     int
}

// New checks cfg and derives the PSK (the slow part: 4096 PBKDF2
// iterations).
func New(cfg Config) (*AP, error) {
	if len(cfg.SSID) == 0 || len(cfg.SSID) > ie.MaxSSIDLen {
		return nil, ErrSSID
	}
	if cfg.VLAN > 4094 {
		return nil, ErrVLAN
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
	if cfg.MaxBehind <= 0 {
		cfg.MaxBehind = DefaultMaxBehind
	}
	a := &AP{
		cfg:      cfg,
		stations: make(map[wlan.MAC]*station),
		aids:     make([]*station, cfg.MaxStations),
		behind:   make(map[wlan.MAC]behindEntry),
		rxBuf:    make([]byte, 0, 8192),
		actBuf:   make([]byte, 0, 64),
		toDS:     cfg.ToDS,
		gtkSlot:  radio.NoKey,
	}
	a.tx = mpdupool.New(DefaultTxFrames, maxMPDU, a.txDone)
	if cfg.Open {
		return a, nil
	}
	pmk, err := wpa.PSK(cfg.Passphrase, []byte(cfg.SSID))
	if err != nil {
		return nil, err
	}
	a.rsne = wpa.RSNElementPSKCCMP(0)
	a.authCfg = &wpa.AuthenticatorConfig{
		PMK:   pmk,
		AA:    cfg.BSSID,
		RSNE:  a.rsne,
		Rand:  cfg.Rand,
		Guard: &wpa.MICFailureGuard{},
	}
	return a, nil
}

// Start begins operation on r at time now: it installs the group key (in
// the key cache with hardware crypto), starts the radio's delivery of
// received frames to the AP and installs the beacon.
//
// The AP's Ethernet port (NIC) reports its link up to its handler.
func (a *AP) Start(r radio.Radio, now time.Time) error {
	err := a.start(r, now)
	a.linkChanged()
	return err
}

func (a *AP) start(r radio.Radio, now time.Time) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.radio, a.keys = r, nil
	if !a.cfg.Open && a.cfg.Crypto == CryptoHardware {
		if a.keys = r.KeyCache(); a.keys == nil {
			return ErrNoKeyCache
		}
	}
	if !a.cfg.Open {
		ring, err := wpa.NewGroupKeyRing(a.cfg.GroupRekey, a.cfg.Rand, now)
		if err != nil {
			return err
		}
		a.ring = ring
		a.authCfg.Group = ring.Current
		gk, err := a.installGroup(ring.Current())
		if err != nil {
			return err
		}
		a.gtk, a.gtkNext = gk, nil
	}
	a.now = now
	a.bucket, a.bucketAt = float64(a.cfg.MgmtRate), now
	if err := a.startHT(r, now); err != nil {
		return err
	}
	if a.delivering != r {
		// Once per radio: Reconfigure restarts the AP, not the radio.
		if err := r.Start(a); err != nil {
			return err
		}
		a.delivering = r
	}
	a.started = true
	a.updateBeacon()
	return nil
}

// Stop deauthenticates every station (reason 3, leaving) and stops
// beaconing; the AP's Ethernet port reports its link down. The radio
// keeps running; its owner stops it.
func (a *AP) Stop() {
	a.mu.Lock()
	a.kickAll(wlan.ReasonDeauthLeaving)
	if a.started && a.radio != nil {
		_ = a.radio.SetBeacon(nil, 0)
	}
	a.started = false
	a.mu.Unlock()
	a.linkChanged()
}

// Reconfigure applies a new configuration: every station is
// deauthenticated (their keys derive from the old SSID and passphrase)
// and the AP restarts with the new settings at time now.
func (a *AP) Reconfigure(cfg Config, now time.Time) error {
	n, err := New(cfg)
	if err != nil {
		return err
	}
	a.mu.Lock()
	r := a.radio
	a.kickAll(wlan.ReasonDeauthLeaving)
	a.clearGroupSlots()
	n.cfg.ToDS = a.toDS // keep a hook set with SetToDS
	a.cfg, a.authCfg, a.aids, a.rsne = n.cfg, n.authCfg, n.aids, n.rsne
	a.behind = n.behind
	a.started = false
	a.mu.Unlock()
	if r == nil {
		a.linkChanged()
		return nil
	}
	return a.Start(r, now)
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
	// WDS: the station sends 4-address frames; Behind counts the
	// addresses learned behind it.
	WDS    bool
	Behind int
	// HardwareKey: its pairwise key is in the radio's key cache.
	HardwareKey bool
	// HT: an HT station with WMM; Aggregating: its QoS data goes
	// through the A-MPDU scheduler. Caps are the link's rate
	// capabilities from its HT Capabilities (ath/rate tables).
	HT, Aggregating bool
	Caps            rate.Caps
}

// Stations lists the station table.
func (a *AP) Stations() []StationInfo {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]StationInfo, 0, len(a.stations))
	for _, s := range a.stations {
		n := 0
		for _, b := range a.behind {
			if b.sta == s {
				n++
			}
		}
		out = append(out, StationInfo{Addr: s.addr, AID: s.aid, Associated: s.state >= stateAssociated,
			Authorized: s.state == stateAuthorized, WDS: s.wds, Behind: n, HardwareKey: s.slot != radio.NoKey,
			HT: s.ht, Aggregating: s.txs != nil, Caps: s.caps})
	}
	return out
}

// MICFailures returns the EAPOL-Key MIC failures counted for sta.
func (a *AP) MICFailures(sta wlan.MAC) uint64 {
	a.mu.Lock()
	cfg := a.authCfg
	a.mu.Unlock()
	if cfg == nil {
		return 0
	}
	return cfg.Guard.Failures(sta)
}

// GroupKeyID returns the key ID of the GTK the AP transmits with (0 on an
// open network).
func (a *AP) GroupKeyID() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.gtk == nil {
		return 0
	}
	return a.gtk.KeyID()
}

// AMSDU reports whether the AP may aggregate MSDUs into A-MSDUs on
// transmit: not with software crypto on raw frames, as ath10k's raw mode
// forbids (its cryptmode documentation), since the radio then sees only
// finished MPDUs.
func (a *AP) AMSDU() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.cfg.Open || a.cfg.Crypto == CryptoHardware
}

// TSF returns the radio's timing synchronization function, in µs
// (802.11-2016 11.1.3.1).
func (a *AP) TSF() uint64 {
	a.mu.Lock()
	r := a.radio
	a.mu.Unlock()
	if r == nil {
		return 0
	}
	return r.TSF()
}

// Tick runs the AP's timers: handshake retransmissions, GTK rekeying,
// inactivity, address ageing.
func (a *AP) Tick(now time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.started {
		return
	}
	a.now = now
	a.clock.Advance(now)
	if a.ring != nil && a.gtkNext == nil {
		if due, err := a.ring.Tick(now); due && err == nil {
			a.startGroupRekey()
		}
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
		if s.auth != nil && (s.state == stateAssociated || s.groupPending) {
			msg, ev := s.auth.Tick(now)
			if msg != nil {
				a.sendEAPOL(s, msg)
			}
			if ev&wpa.EventFailed != 0 {
				a.handshakeFailed(s)
			}
		}
		a.tickHT(s)
	}
	a.finishGroupRekey()
	a.ageBehind()
}

func (a *AP) handshakeFailed(s *station) {
	a.Stats.HandshakeFails.Add(1)
	reason := wlan.Reason4WayTimeout
	if s.groupPending {
		reason = wlan.ReasonGroupKeyTimeout
	}
	a.sendDeauth(s.addr, reason)
	a.remove(s)
	a.finishGroupRekey()
}

func (a *AP) remove(s *station) {
	if s.aid != 0 {
		a.aids[s.aid-1] = nil
		a.clearTIM(s.aid)
	}
	a.stopHT(s)
	a.dropKey(s)
	a.forgetBehind(s)
	delete(a.stations, s.addr)
}

// beaconBody appends the fixed fields and elements of a beacon or probe
// response; hideSSID leaves the SSID empty.
func (a *AP) beaconBody(dst []byte, hideSSID bool, tim bool) []byte {
	capab := wlan.CapESS | wlan.CapShortSlotTime
	if !a.cfg.Open {
		capab |= wlan.CapPrivacy
	}
	b := wlan.Beacon{
		Timestamp:  0, // the radio writes the TSF at transmission
		Interval:   a.cfg.BeaconInterval,
		Capability: capab,
	}
	if !tim && a.radio != nil {
		b.Timestamp = a.radio.TSF()
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
	dst = append(dst, a.rsne...)
	return a.htElements(dst)
}

// updateBeacon builds the beacon template and gives it to the radio,
// which sends it every beacon interval with its TSF; called at start and
// whenever the TIM changes.
func (a *AP) updateBeacon() {
	if !a.started || a.radio == nil {
		return
	}
	f := wlan.AppendMgmtHeader(make([]byte, 0, 256), wlan.KindBeacon, 0, wlan.Broadcast, a.cfg.BSSID, a.cfg.BSSID, 0)
	f = a.beaconBody(f, a.cfg.Hidden, true)
	if a.radio.SetBeacon(f, a.cfg.BeaconInterval) == nil {
		a.Stats.Beacons.Add(1)
	}
}

func (a *AP) setTIM(aid uint16) {
	if !a.tim.Has(aid) {
		a.tim.Set(aid)
		a.updateBeacon()
	}
}

func (a *AP) clearTIM(aid uint16) {
	if a.tim.Has(aid) {
		a.tim.Clear(aid)
		a.updateBeacon()
	}
}

func (a *AP) sendMgmt(k wlan.Kind, da wlan.MAC, body func([]byte) []byte) {
	t := a.tx.Get()
	if t == nil {
		a.Stats.TxDropped.Add(1)
		return
	}
	f := wlan.AppendMgmtHeader(t.Buf[:0], k, 0, da, a.cfg.BSSID, a.cfg.BSSID, a.seq.Next(wlan.NonQoSTID))
	a.submit(t, body(f), radio.NoKey, da.IsGroup(), &mgmtSeries)
}

func (a *AP) sendDeauth(da wlan.MAC, reason uint16) {
	a.Stats.Deauths.Add(1)
	a.sendMgmt(wlan.KindDeauth, da, func(b []byte) []byte { return wlan.AppendReason(b, reason) })
}

// String names the AP for logs.
func (a *AP) String() string { return fmt.Sprintf("ap %s %q", a.cfg.BSSID, a.cfg.SSID) }
