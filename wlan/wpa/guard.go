package wpa

import (
	"sync"
	"time"
)

// MIC failure countermeasures. CCMP needs no TKIP-style countermeasures
// (IEEE 802.11-2016 12.5.2.4 are TKIP's: 2 Michael failures in 60 s stop
// the BSS for 60 s). What remains worth doing against a wrong EAPOL-Key
// MIC is per station: a station whose handshake messages fail the MIC
// Threshold times within Window is trying passphrases (or has the wrong
// one), and is refused for Backoff. The default window follows TKIP's
// 60 s; the threshold of 3 leaves room for one typo and its retry.
const (
	DefaultMICFailureThreshold = 3
	DefaultMICFailureWindow    = 60 * time.Second
	DefaultMICFailureBackoff   = 60 * time.Second
	// DefaultMICGuardStations bounds the table so that a flood of
	// spoofed addresses cannot grow it without limit.
	DefaultMICGuardStations = 1024
)

// MICFailureGuard counts EAPOL-Key MIC failures per station address and
// refuses stations that have too many. Safe for concurrent use. The zero
// value uses the defaults.
type MICFailureGuard struct {
	Threshold int
	Window    time.Duration
	Backoff   time.Duration
	Stations  int

	mu sync.Mutex
	m  map[[6]byte]*micRecord
}

type micRecord struct {
	windowStart  time.Time
	failures     int
	total        uint64
	refusedUntil time.Time
}

func (g *MICFailureGuard) params() (int, time.Duration, time.Duration, int) {
	th, w, b, n := g.Threshold, g.Window, g.Backoff, g.Stations
	if th <= 0 {
		th = DefaultMICFailureThreshold
	}
	if w <= 0 {
		w = DefaultMICFailureWindow
	}
	if b <= 0 {
		b = DefaultMICFailureBackoff
	}
	if n <= 0 {
		n = DefaultMICGuardStations
	}
	return th, w, b, n
}

// Record counts a MIC failure of station sta and reports whether the
// station is now refused.
func (g *MICFailureGuard) Record(sta [6]byte, now time.Time) bool {
	th, window, backoff, limit := g.params()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.m == nil {
		g.m = make(map[[6]byte]*micRecord)
	}
	r := g.m[sta]
	if r == nil {
		if len(g.m) >= limit {
			g.evict(now, window)
		}
		r = &micRecord{windowStart: now}
		g.m[sta] = r
	}
	if now.Sub(r.windowStart) > window {
		r.windowStart, r.failures = now, 0
	}
	r.failures++
	r.total++
	if r.failures >= th {
		r.refusedUntil = now.Add(backoff)
		r.windowStart, r.failures = now, 0
	}
	return now.Before(r.refusedUntil)
}

// evict drops records that no longer matter, or one arbitrary record when
// all do.
func (g *MICFailureGuard) evict(now time.Time, window time.Duration) {
	for k, r := range g.m {
		if !now.Before(r.refusedUntil) && now.Sub(r.windowStart) > window {
			delete(g.m, k)
		}
	}
	_, _, _, limit := g.params()
	for k := range g.m {
		if len(g.m) < limit {
			break
		}
		delete(g.m, k)
	}
}

// Refused reports whether station sta is in its back-off period.
func (g *MICFailureGuard) Refused(sta [6]byte, now time.Time) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	r := g.m[sta]
	return r != nil && now.Before(r.refusedUntil)
}

// Failures returns the MIC failures counted for sta since it was first
// seen, for the AP's status report.
func (g *MICFailureGuard) Failures(sta [6]byte) uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	if r := g.m[sta]; r != nil {
		return r.total
	}
	return 0
}
