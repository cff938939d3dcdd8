// Package wlantest is glue for testing the 802.11 MAC layer end to end: a
// radio.Radio on a wlan/medium (beacons at TBTT with the TSF, and an
// optional software key cache that encrypts and decrypts like the
// hardware one of an Atheros chip), and a driver that runs a medium in
// real time so that real network stacks (Linux in namespaces, gVisor) can
// talk through it.
//
// It is test equipment, like the medium itself: nothing in the firmware
// imports it.
package wlantest

import (
	"encoding/binary"
	"errors"
	"sync"
	"time"

	"github.com/gowrt/gowrt/wlan/ccmp"
	"github.com/gowrt/gowrt/wlan/medium"
	"github.com/gowrt/gowrt/wlan/radio"
)

// Ticker is the MAC layer's timer hook (ap.AP, sta.Station).
type Ticker interface {
	Tick(now time.Time)
}

// RadioConfig configures a Radio.
type RadioConfig struct {
	Addr [6]byte
	// KeySlots, if not zero, gives the radio a key cache of that many
	// slots (the AR9300's has 128).
	KeySlots int
	// Tick, if set, is called at every step of the medium's clock after
	// the radio's own timers (beacons), so the MAC layer runs its timers.
	Tick Ticker
}

// Radio is a radio.Radio attached to a medium.
type Radio struct {
	m    *medium.Medium
	port *medium.Radio
	cfg  RadioConfig
	keys *KeyCache
	// tsfZero is the medium time at which the TSF was 0.
	tsfZero time.Time

	mu       sync.Mutex
	rx       radio.Receiver
	stopped  bool
	beacon   []byte
	interval uint16
	nextTBTT time.Time
	txBuf    []byte
	rxBuf    []byte
	st       radio.RxStatus
	// deliverSt and txSt are the statuses handed to the MAC layer:
	// fields, so that passing them allocates nothing. Receive calls are
	// serialised by the medium; txSt is guarded by txStMu.
	deliverSt radio.RxStatus
	txStMu    sync.Mutex
	txSt      radio.TxStatus

	// Stats.
	TxFrames, RxFrames, Decrypted, DecryptErrors, Beacons uint64
}

var _ radio.Radio = (*Radio)(nil)

// NewRadio attaches a radio to m.
func NewRadio(m *medium.Medium, cfg RadioConfig) *Radio {
	r := &Radio{m: m, cfg: cfg, tsfZero: m.Now(), txBuf: make([]byte, 0, medium.MaxFrame), rxBuf: make([]byte, 0, medium.MaxFrame)}
	if cfg.KeySlots > 0 {
		r.keys = newKeyCache(cfg.KeySlots)
	}
	r.port = m.Attach(r)
	return r
}

// Port returns the medium attachment (for SetLoss).
func (r *Radio) Port() *medium.Radio { return r.port }

// Address implements radio.Radio.
func (r *Radio) Address() [6]byte { return r.cfg.Addr }

// Start implements radio.Radio.
func (r *Radio) Start(rx radio.Receiver) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rx, r.stopped = rx, false
	return nil
}

// Stop implements radio.Radio.
func (r *Radio) Stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopped, r.beacon = true, nil
}

// SetChannel implements radio.Radio; the medium has one channel.
func (r *Radio) SetChannel(radio.Channel) error { return nil }

// KeyCache implements radio.Radio.
func (r *Radio) KeyCache() radio.KeyCache {
	if r.keys == nil {
		return nil
	}
	return r.keys
}

// TSF implements radio.Radio: µs since the radio was attached.
func (r *Radio) TSF() uint64 { return r.tsfAt(r.m.Now()) }

func (r *Radio) tsfAt(now time.Time) uint64 {
	d := now.Sub(r.tsfZero)
	if d < 0 {
		return 0
	}
	return uint64(d / time.Microsecond)
}

// tu is the 802.11 time unit (802.11-2016 3.2).
const tu = 1024 * time.Microsecond

// beaconTimestamp is where a beacon's Timestamp field sits: after the
// 24-octet management header (802.11-2016 9.3.3.3).
const beaconTimestamp = 24

// SetBeacon implements radio.Radio: the beacon goes out at every TBTT,
// the TSF times where TSF mod interval is 0 (802.11-2016 11.1.3.2), the
// first one at once if none was set.
func (r *Radio) SetBeacon(frame []byte, intervalTU uint16) error {
	if intervalTU != 0 && len(frame) < beaconTimestamp+8 {
		return errors.New("wlantest: beacon shorter than its timestamp")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if intervalTU == 0 {
		r.beacon = nil
		return nil
	}
	first := r.beacon == nil
	r.beacon = append(r.beacon[:0], frame...)
	if first || intervalTU != r.interval {
		r.interval = intervalTU
		r.nextTBTT = r.m.Now()
	}
	return nil
}

// Tick implements medium.Device.
func (r *Radio) Tick(now time.Time) {
	r.mu.Lock()
	var b []byte
	if r.beacon != nil && !r.stopped && !now.Before(r.nextTBTT) {
		b = append(r.txBuf[:0], r.beacon...)
		binary.LittleEndian.PutUint64(b[beaconTimestamp:], r.tsfAt(now))
		iv := time.Duration(r.interval) * tu
		for !r.nextTBTT.After(now) {
			r.nextTBTT = r.nextTBTT.Add(iv)
		}
		r.Beacons++
		r.txBuf = b
		_ = r.port.Transmit(b)
	}
	r.mu.Unlock()
	if r.cfg.Tick != nil {
		r.cfg.Tick.Tick(now)
	}
}

// Transmit implements radio.Radio. The medium has no ACKs: a request is
// reported acknowledged (unless NoAck) once it is on the air, at once,
// from inside Transmit.
func (r *Radio) Transmit(req *radio.TxRequest) error {
	r.mu.Lock()
	if r.stopped {
		r.mu.Unlock()
		return radio.ErrStopped
	}
	var err error
	for _, mpdu := range req.MPDUs {
		f := mpdu
		if req.Key != radio.NoKey {
			if r.keys == nil {
				err = radio.ErrNoSlot
				break
			}
			if f, err = r.keys.encrypt(req.Key, r.txBuf[:0], mpdu); err != nil {
				break
			}
			r.txBuf = f
		}
		if err = r.port.Transmit(f); err != nil {
			break
		}
		r.TxFrames++
	}
	r.mu.Unlock()
	if err != nil {
		return err
	}
	if req.Done != nil {
		r.txStMu.Lock()
		r.txSt = radio.TxStatus{Acked: !req.NoAck, LongTries: 1}
		if r.txSt.Acked {
			r.txSt.BlockAck = 1<<len(req.MPDUs) - 1
		}
		req.Done(req, &r.txSt)
		r.txStMu.Unlock()
	}
	return nil
}

// Receive implements medium.Device: with a key cache, a protected data
// frame for this radio (or a group frame) whose key is in a slot is
// decrypted and flagged, as the hardware does; then the MAC layer gets it.
func (r *Radio) Receive(frame []byte) {
	r.mu.Lock()
	if r.stopped || r.rx == nil {
		r.mu.Unlock()
		return
	}
	rx := r.rx
	r.st = radio.RxStatus{Time: r.m.Now()}
	f := frame
	if r.keys != nil {
		if out, tried, ok := r.keys.decrypt(r.cfg.Addr, r.rxBuf[:0], frame); tried {
			if ok {
				r.rxBuf, f = out, out
				r.st.Decrypted = true
				r.Decrypted++
			} else {
				r.st.DecryptErr = true
				r.DecryptErrors++
			}
		}
	}
	r.RxFrames++
	r.deliverSt = r.st
	r.mu.Unlock()
	// The medium serialises Receive calls per device, so f (rxBuf) and
	// deliverSt are not overwritten before the MAC layer is done.
	rx.Receive(f, &r.deliverSt)
}

// KeyCache is a software model of a key cache: CCMP-128 keys in slots,
// pairwise ones found by the peer's address, group ones by key ID.
type KeyCache struct {
	mu    sync.Mutex
	slots []keySlot
}

type keySlot struct {
	used  bool
	addr  [6]byte
	keyID uint8
	key   *ccmp.Key
	pn    uint64 // next PN to send
}

func newKeyCache(n int) *KeyCache { return &KeyCache{slots: make([]keySlot, n)} }

// Slots implements radio.KeyCache.
func (k *KeyCache) Slots() int { return len(k.slots) }

// Install implements radio.KeyCache.
func (k *KeyCache) Install(slot int, addr [6]byte, keyID uint8, tk [16]byte, pn uint64) error {
	if slot < 0 || slot >= len(k.slots) || keyID > 3 {
		return radio.ErrNoSlot
	}
	key, err := ccmp.NewKey(tk[:], int(keyID))
	if err != nil {
		return err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.slots[slot] = keySlot{used: true, addr: addr, keyID: keyID, key: key, pn: pn}
	return nil
}

// Clear implements radio.KeyCache.
func (k *KeyCache) Clear(slot int) error {
	if slot < 0 || slot >= len(k.slots) {
		return radio.ErrNoSlot
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.slots[slot] = keySlot{}
	return nil
}

// Used returns the number of slots holding a key.
func (k *KeyCache) Used() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	n := 0
	for _, s := range k.slots {
		if s.used {
			n++
		}
	}
	return n
}

// encrypt protects mpdu (Protected bit set, room for the CCMP header after
// the MAC header and for the MIC at the end) with slot's key and next PN,
// into dst.
func (k *KeyCache) encrypt(slot int, dst, mpdu []byte) ([]byte, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if slot < 0 || slot >= len(k.slots) || !k.slots[slot].used {
		return nil, radio.ErrNoSlot
	}
	s := &k.slots[slot]
	hl, err := ccmp.HeaderLenOf(mpdu)
	if err != nil || len(mpdu) < hl+ccmp.Overhead {
		return nil, errors.New("wlantest: MPDU has no room for CCMP")
	}
	dst = append(dst, mpdu[:hl]...)
	dst = append(dst, mpdu[hl+ccmp.HeaderLen:len(mpdu)-ccmp.MICLen]...)
	dst[1] &^= 0x40 // EncapPN sets the Protected bit itself
	out, err := s.key.EncapPN(dst, s.pn)
	if err != nil {
		return nil, err
	}
	s.pn++
	return out, nil
}

// decrypt finds the key for a protected data frame to self (pairwise: by
// transmitter address) or to a group (by key ID) and, if there is one,
// decrypts it into dst with the CCMP header kept and the MIC removed.
// tried is false when the frame is not one the hardware decrypts.
func (k *KeyCache) decrypt(self [6]byte, dst, frame []byte) (out []byte, tried, ok bool) {
	if len(frame) < 24 || frame[0]&0x0c != 0x08 || frame[1]&0x40 == 0 {
		return nil, false, false // not protected data
	}
	a1 := [6]byte(frame[4:10])
	a2 := [6]byte(frame[10:16])
	group := a1[0]&1 != 0
	if !group && a1 != self {
		return nil, false, false
	}
	id, err := ccmp.PeekKeyID(frame)
	if err != nil {
		return nil, false, false
	}
	hl, _ := ccmp.HeaderLenOf(frame)
	k.mu.Lock()
	defer k.mu.Unlock()
	var s *keySlot
	for i := range k.slots {
		x := &k.slots[i]
		if !x.used {
			continue
		}
		if (group && x.addr[0]&1 != 0 && int(x.keyID) == id) || (!group && x.addr == a2 && x.addr[0]&1 == 0) {
			s = x
			break
		}
	}
	if s == nil {
		return nil, false, false
	}
	ch := [ccmp.HeaderLen]byte(frame[hl : hl+ccmp.HeaderLen])
	dst = append(dst, frame...)
	// The hardware keeps no replay state: decrypt whatever PN.
	s.key.SetRxPN(0)
	plain, err := s.key.Decap(dst)
	if err != nil {
		return nil, true, false
	}
	// Put the CCMP header back and the Protected bit (radio.RxStatus).
	n := len(plain)
	plain = plain[:n+ccmp.HeaderLen]
	copy(plain[hl+ccmp.HeaderLen:], plain[hl:n])
	copy(plain[hl:], ch[:])
	plain[1] |= 0x40
	return plain, true, true
}
