package wpa

import (
	"errors"
	"io"
	"sync"
	"time"
)

// GroupKeyRing holds an AP's GTK and replaces it every Interval (hostapd's
// wpa_group_rekey; 0 disables). Key IDs alternate between 1 and 2 so that
// stations keep the old key until the group key handshake has moved them
// to the new one (12.7.7). Safe for concurrent use.
type GroupKeyRing struct {
	interval time.Duration
	rand     io.Reader

	mu   sync.Mutex
	cur  GroupKey
	next time.Time
}

// NewGroupKeyRing makes the first GTK (key ID 1).
func NewGroupKeyRing(interval time.Duration, rand io.Reader, now time.Time) (*GroupKeyRing, error) {
	r := &GroupKeyRing{interval: interval, rand: rand}
	if err := r.newKey(1, now); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *GroupKeyRing) newKey(id int, now time.Time) error {
	var g GroupKey
	if err := randRead(r.rand, g.GTK[:]); err != nil {
		return errors.New("wpa: no randomness for a GTK: " + err.Error())
	}
	g.KeyID = id
	r.cur = g
	if r.interval > 0 {
		r.next = now.Add(r.interval)
	}
	return nil
}

// Current returns the GTK in use (AuthenticatorConfig.Group).
func (r *GroupKeyRing) Current() GroupKey {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cur
}

// SetRSC records the last PN sent with the current GTK.
func (r *GroupKeyRing) SetRSC(pn uint64) {
	r.mu.Lock()
	r.cur.RSC = pn
	r.mu.Unlock()
}

// Tick is the periodic rekey hook: when the interval has passed it makes a
// new GTK under the other key ID and returns true; the AP then installs it
// for transmission and runs RekeyGroup on every authorized station.
func (r *GroupKeyRing) Tick(now time.Time) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.interval <= 0 || now.Before(r.next) {
		return false, nil
	}
	return true, r.newKey(3-r.cur.KeyID, now)
}

// Rekey replaces the GTK now (a station left, or a config change).
func (r *GroupKeyRing) Rekey(now time.Time) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.newKey(3-r.cur.KeyID, now)
}
