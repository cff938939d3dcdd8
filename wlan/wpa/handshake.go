package wpa

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"
)

// Event says what a handshake step achieved; the caller acts on it
// (install keys, deauthenticate). Several bits may be set at once.
type Event uint8

const (
	// EventPTK: the pairwise key is agreed; install PTK().TK.
	EventPTK Event = 1 << iota
	// EventGTK: the group key handshake (or message 3's GTK) completed.
	// On the supplicant install GTK(); on the authenticator the station
	// now has the current GTK.
	EventGTK
	// EventFailed: the handshake failed (retries exhausted, RSN element
	// mismatch, station refused after MIC failures); deauthenticate.
	EventFailed
)

// Handshake defaults. hostapd uses the same retry count
// (dot11RSNAConfigPairwiseUpdateCount = 4, hostapd.conf
// wpa_pairwise_update_count); the timeout is 1 s per message.
const (
	DefaultEAPOLTimeout = time.Second
	DefaultEAPOLTries   = 4
	gtkLen              = 16 // CCMP-128 GTK
)

// Handshake errors. A frame that produces one is dropped.
var (
	ErrUnexpected   = errors.New("wpa: EAPOL-Key frame unexpected in this state")
	ErrReplay       = errors.New("wpa: EAPOL-Key replay counter not acceptable")
	ErrRSNEMismatch = errors.New("wpa: RSN element differs from the one advertised or associated with")
	ErrRefused      = errors.New("wpa: station refused after repeated MIC failures")
	ErrNoGTK        = errors.New("wpa: key data carries no GTK")
)

// GroupKey is the AP's current group key. RSC is the last PN sent with it
// (ccmp.Key.TxPN), what stations initialise their replay counter to.
type GroupKey struct {
	GTK   [gtkLen]byte
	KeyID int // 1..3
	RSC   uint64
}

// AuthenticatorConfig is what an AP's authenticators share.
type AuthenticatorConfig struct {
	PMK  [PMKLen]byte
	AA   [6]byte // the AP's address
	RSNE []byte  // the AP's RSN element, as in its beacons
	// Group returns the current group key for message 3 and group key
	// message 1.
	Group func() GroupKey
	// Rand is the source of ANonces; nil means crypto/rand.
	Rand io.Reader
	// Timeout is the wait for an answer before a retransmission;
	// Tries the number of times a message is sent before the handshake
	// fails. Zero means the defaults.
	Timeout time.Duration
	Tries   int
	// Guard, if set, counts MIC failures per station and refuses a
	// station that has too many.
	Guard *MICFailureGuard
}

type authState uint8

const (
	authIdle           authState = iota
	authPTKStart                 // message 1 sent, waiting for message 2
	authPTKNegotiating           // message 3 sent, waiting for message 4
	authDone                     // keys installed
	authGroupRekey               // group message 1 sent, waiting for group message 2
	authFailed
)

var authStateNames = [...]string{"idle", "ptk-start", "ptk-negotiating", "done", "group-rekey", "failed"}

func (s authState) String() string { return authStateNames[s] }

// AuthenticatorStats counts one station's handshake events.
type AuthenticatorStats struct {
	MICFailures atomic.Uint64 // EAPOL-Key frames with a wrong MIC, dropped
	Retransmits atomic.Uint64
	Dropped     atomic.Uint64 // unexpected, replayed or malformed frames
}

// Authenticator is the AP side of the 4-way and group key handshakes for
// one station (IEEE 802.11-2016 12.7.6, 12.7.7). It does no I/O and keeps
// no timers: the caller sends what it returns as EAPOL frames to the
// station, feeds it received EAPOL frames and calls Tick periodically.
type Authenticator struct {
	cfg     *AuthenticatorConfig
	spa     [6]byte
	staRSNE []byte

	state     authState
	replay    uint64 // last replay counter sent
	stepStart uint64 // first replay counter of the current step
	anonce    [NonceLen]byte
	ptk       PTK
	group     GroupKey // what message 3 / group message 1 carries
	tries     int
	deadline  time.Time

	Stats AuthenticatorStats
}

// NewAuthenticator prepares the handshake with station spa, whose
// association request carried staRSNE.
func NewAuthenticator(cfg *AuthenticatorConfig, spa [6]byte, staRSNE []byte) *Authenticator {
	return &Authenticator{cfg: cfg, spa: spa, staRSNE: bytes.Clone(staRSNE)}
}

// State names the handshake state, for status pages.
func (a *Authenticator) State() string { return a.state.String() }

// PTK returns the agreed pairwise key once the 4-way handshake is done.
func (a *Authenticator) PTK() (PTK, bool) {
	return a.ptk, a.state == authDone || a.state == authGroupRekey
}

func (a *Authenticator) timeout() time.Duration {
	if a.cfg.Timeout > 0 {
		return a.cfg.Timeout
	}
	return DefaultEAPOLTimeout
}

func (a *Authenticator) maxTries() int {
	if a.cfg.Tries > 0 {
		return a.cfg.Tries
	}
	return DefaultEAPOLTries
}

func randRead(r io.Reader, b []byte) error {
	if r == nil {
		r = rand.Reader
	}
	_, err := io.ReadFull(r, b)
	return err
}

// Start begins (or restarts) the 4-way handshake and returns message 1.
func (a *Authenticator) Start(now time.Time) ([]byte, error) {
	if a.cfg.Guard != nil && a.cfg.Guard.Refused(a.spa, now) {
		a.state = authFailed
		return nil, ErrRefused
	}
	if err := randRead(a.cfg.Rand, a.anonce[:]); err != nil {
		return nil, err
	}
	a.state = authPTKStart
	a.tries = 0
	return a.send(now), nil
}

// RekeyGroup starts the group key handshake with the current group key and
// returns group message 1. The station must have completed the 4-way
// handshake.
func (a *Authenticator) RekeyGroup(now time.Time) ([]byte, error) {
	if a.state != authDone && a.state != authGroupRekey {
		return nil, fmt.Errorf("%w: group rekey in state %s", ErrUnexpected, a.state)
	}
	a.state = authGroupRekey
	a.tries = 0
	return a.send(now), nil
}

// send builds the current step's message with the next replay counter
// (every transmission, retransmissions included, uses a new one:
// 12.7.2, Key Replay Counter) and arms the retransmission timer.
func (a *Authenticator) send(now time.Time) []byte {
	a.replay++
	if a.tries == 0 {
		a.stepStart = a.replay
	}
	a.tries++
	a.deadline = now.Add(a.timeout())
	switch a.state {
	case authPTKStart:
		k := KeyFrame{
			KeyInfo:   KeyInfoVersionAES | KeyInfoPairwise | KeyInfoAck,
			KeyLength: TKLen,
			Replay:    a.replay,
			Nonce:     a.anonce,
		}
		return k.Marshal()
	case authPTKNegotiating:
		a.group = a.cfg.Group()
		kd := append(bytes.Clone(a.cfg.RSNE), nil...)
		kd = AppendGTKKDE(kd, a.group.KeyID, true, a.group.GTK[:])
		k := KeyFrame{
			KeyInfo: KeyInfoVersionAES | KeyInfoPairwise | KeyInfoInstall | KeyInfoAck |
				KeyInfoMIC | KeyInfoSecure | KeyInfoEncrypted,
			KeyLength: TKLen,
			Replay:    a.replay,
			Nonce:     a.anonce,
			RSC:       a.group.RSC,
			KeyData:   mustWrap(a.ptk.KEK[:], kd),
		}
		f := k.Marshal()
		SignKeyFrame(a.ptk.KCK[:], f)
		return f
	case authGroupRekey:
		a.group = a.cfg.Group()
		kd := AppendGTKKDE(nil, a.group.KeyID, true, a.group.GTK[:])
		k := KeyFrame{
			KeyInfo: KeyInfoVersionAES | KeyInfoAck | KeyInfoMIC | KeyInfoSecure |
				KeyInfoEncrypted,
			Replay:  a.replay,
			RSC:     a.group.RSC,
			KeyData: mustWrap(a.ptk.KEK[:], kd),
		}
		f := k.Marshal()
		SignKeyFrame(a.ptk.KCK[:], f)
		return f
	}
	return nil
}

// mustWrap pads and wraps key data; the padded length is always valid.
func mustWrap(kek, kd []byte) []byte {
	w, err := WrapKey(kek, PadKeyData(kd))
	if err != nil {
		panic("wpa: key wrap of padded key data: " + err.Error())
	}
	return w
}

// Tick retransmits the pending message when its timer ran out, or fails
// the handshake once it was sent Tries times. It returns the frame to
// send, if any.
func (a *Authenticator) Tick(now time.Time) ([]byte, Event) {
	switch a.state {
	case authPTKStart, authPTKNegotiating, authGroupRekey:
	default:
		return nil, 0
	}
	if now.Before(a.deadline) {
		return nil, 0
	}
	if a.tries >= a.maxTries() {
		a.state = authFailed
		return nil, EventFailed
	}
	a.Stats.Retransmits.Add(1)
	return a.send(now), 0
}

// Receive handles an EAPOL frame from the station and returns the answer
// to send (nil if none) and what happened. A frame returning an error is
// dropped; a wrong MIC is counted and reported to the Guard.
func (a *Authenticator) Receive(frame []byte, now time.Time) ([]byte, Event, error) {
	var k KeyFrame
	if err := k.parse(frame); err != nil {
		a.Stats.Dropped.Add(1)
		return nil, 0, err
	}
	// Every station message carries a MIC and none sets Ack; a replay
	// counter must be one we sent in the current step.
	if k.KeyInfo&KeyInfoMIC == 0 || k.KeyInfo&(KeyInfoAck|KeyInfoRequest) != 0 {
		a.Stats.Dropped.Add(1)
		return nil, 0, ErrUnexpected
	}
	if k.Replay < a.stepStart || k.Replay > a.replay {
		a.Stats.Dropped.Add(1)
		return nil, 0, ErrReplay
	}
	pairwise := k.KeyInfo&KeyInfoPairwise != 0
	secure := k.KeyInfo&KeyInfoSecure != 0
	switch {
	case a.state == authPTKStart && pairwise && !secure: // message 2
		ptk := DerivePTK(&a.cfg.PMK, a.cfg.AA, a.spa, &a.anonce, &k.Nonce)
		if err := VerifyKeyFrameMIC(ptk.KCK[:], frame); err != nil {
			return nil, a.micFailure(now), err
		}
		kd, err := ParseKeyData(k.KeyData)
		if err != nil || !bytes.Equal(kd.RSNE, a.staRSNE) {
			// 12.7.6.3: an RSNE in message 2 that differs from the
			// (re)association request's ends the association.
			a.state = authFailed
			return nil, EventFailed, ErrRSNEMismatch
		}
		a.ptk = ptk
		a.state = authPTKNegotiating
		a.tries = 0
		return a.send(now), 0, nil
	case a.state == authPTKNegotiating && pairwise && secure: // message 4
		if err := VerifyKeyFrameMIC(a.ptk.KCK[:], frame); err != nil {
			return nil, a.micFailure(now), err
		}
		a.state = authDone
		return nil, EventPTK | EventGTK, nil
	case a.state == authGroupRekey && !pairwise && secure: // group message 2
		if err := VerifyKeyFrameMIC(a.ptk.KCK[:], frame); err != nil {
			return nil, a.micFailure(now), err
		}
		a.state = authDone
		return nil, EventGTK, nil
	}
	a.Stats.Dropped.Add(1)
	return nil, 0, ErrUnexpected
}

// micFailure counts a wrong MIC; when the Guard refuses the station from
// now on, the handshake fails.
func (a *Authenticator) micFailure(now time.Time) Event {
	a.Stats.MICFailures.Add(1)
	if a.cfg.Guard != nil && a.cfg.Guard.Record(a.spa, now) {
		a.state = authFailed
		return EventFailed
	}
	return 0
}

// SupplicantConfig is a station's side of the handshake.
type SupplicantConfig struct {
	PMK  [PMKLen]byte
	SPA  [6]byte // the station's address
	AA   [6]byte // the AP's address
	RSNE []byte  // the station's RSN element, as in its association request
	// APRSNE is the AP's RSN element from its beacon or probe response;
	// message 3 must carry the same.
	APRSNE []byte
	Rand   io.Reader
}

// Supplicant is the station side of the 4-way and group key handshakes,
// sharing the frame, MIC, PRF and key wrap code with Authenticator.
type Supplicant struct {
	cfg *SupplicantConfig

	anonce, snonce [NonceLen]byte
	haveSNonce     bool
	tptk           PTK // derived from message 1, confirmed by message 3
	ptk            PTK
	havePTK        bool
	replay         uint64 // last replay counter of a MIC-verified frame
	replaySeen     bool
	gtk            []byte
	gtkID          int
	gtkRSC         uint64
}

// NewSupplicant prepares a station's handshake.
func NewSupplicant(cfg *SupplicantConfig) *Supplicant { return &Supplicant{cfg: cfg} }

// PTK returns the installed pairwise key.
func (s *Supplicant) PTK() (PTK, bool) { return s.ptk, s.havePTK }

// GTK returns the installed group key, its key ID and its RSC.
func (s *Supplicant) GTK() ([]byte, int, uint64) { return s.gtk, s.gtkID, s.gtkRSC }

func (s *Supplicant) replayOK(r uint64) bool { return !s.replaySeen || r > s.replay }

// Receive handles an EAPOL frame from the authenticator and returns the
// answer to send and what happened.
func (s *Supplicant) Receive(frame []byte) ([]byte, Event, error) {
	var k KeyFrame
	if err := k.parse(frame); err != nil {
		return nil, 0, err
	}
	if k.KeyInfo&KeyInfoAck == 0 {
		return nil, 0, ErrUnexpected
	}
	if !s.replayOK(k.Replay) {
		return nil, 0, ErrReplay
	}
	pairwise := k.KeyInfo&KeyInfoPairwise != 0
	switch {
	case pairwise && k.KeyInfo&KeyInfoMIC == 0: // message 1
		if !s.haveSNonce || k.Nonce != s.anonce {
			if err := randRead(s.cfg.Rand, s.snonce[:]); err != nil {
				return nil, 0, err
			}
			s.haveSNonce = true
		}
		s.anonce = k.Nonce
		s.tptk = DerivePTK(&s.cfg.PMK, s.cfg.AA, s.cfg.SPA, &s.anonce, &s.snonce)
		m2 := KeyFrame{
			KeyInfo: KeyInfoVersionAES | KeyInfoPairwise | KeyInfoMIC,
			Replay:  k.Replay,
			Nonce:   s.snonce,
			KeyData: bytes.Clone(s.cfg.RSNE),
		}
		f := m2.Marshal()
		SignKeyFrame(s.tptk.KCK[:], f)
		return f, 0, nil
	case pairwise && k.KeyInfo&KeyInfoInstall != 0: // message 3
		if !s.haveSNonce || k.Nonce != s.anonce {
			return nil, 0, ErrUnexpected
		}
		if err := VerifyKeyFrameMIC(s.tptk.KCK[:], frame); err != nil {
			return nil, 0, err
		}
		kd, err := s.keyData(&k, s.tptk.KEK[:])
		if err != nil {
			return nil, 0, err
		}
		if !bytes.Equal(kd.RSNE, s.cfg.APRSNE) {
			return nil, EventFailed, ErrRSNEMismatch
		}
		s.replay, s.replaySeen = k.Replay, true
		s.ptk, s.havePTK = s.tptk, true
		ev := EventPTK
		if kd.GTK != nil {
			s.setGTK(&kd, k.RSC)
			ev |= EventGTK
		}
		m4 := KeyFrame{
			KeyInfo: KeyInfoVersionAES | KeyInfoPairwise | KeyInfoMIC | KeyInfoSecure,
			Replay:  k.Replay,
		}
		f := m4.Marshal()
		SignKeyFrame(s.ptk.KCK[:], f)
		return f, ev, nil
	case !pairwise && s.havePTK: // group message 1
		if err := VerifyKeyFrameMIC(s.ptk.KCK[:], frame); err != nil {
			return nil, 0, err
		}
		kd, err := s.keyData(&k, s.ptk.KEK[:])
		if err != nil {
			return nil, 0, err
		}
		if kd.GTK == nil {
			return nil, 0, ErrNoGTK
		}
		s.replay = k.Replay
		s.setGTK(&kd, k.RSC)
		g2 := KeyFrame{
			KeyInfo: KeyInfoVersionAES | KeyInfoMIC | KeyInfoSecure,
			Replay:  k.Replay,
		}
		f := g2.Marshal()
		SignKeyFrame(s.ptk.KCK[:], f)
		return f, EventGTK, nil
	}
	return nil, 0, ErrUnexpected
}

func (s *Supplicant) keyData(k *KeyFrame, kek []byte) (KeyData, error) {
	if k.KeyInfo&KeyInfoEncrypted == 0 {
		return KeyData{}, fmt.Errorf("%w: key data not encrypted", ErrUnexpected)
	}
	plain, err := UnwrapKey(kek, k.KeyData)
	if err != nil {
		return KeyData{}, err
	}
	return ParseKeyData(plain)
}

func (s *Supplicant) setGTK(kd *KeyData, rsc uint64) {
	s.gtk = bytes.Clone(kd.GTK)
	s.gtkID = kd.GTKID
	s.gtkRSC = rsc
}
