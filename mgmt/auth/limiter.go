package auth

import (
	"net/netip"
	"sync"
	"time"
)

// MaxSources bounds the memory the limiter uses: at most this many
// addresses are tracked; a new one evicts the least recently seen,
// preferring an address that is not locked out.
const MaxSources = 256

// Limiter counts failed logins per source address. After maxFailures
// failures within window the source is refused for lockout.
type Limiter struct {
	mu          sync.Mutex
	maxFailures int
	window      time.Duration
	lockout     time.Duration
	now         func() time.Time
	sources     map[netip.Addr]*source
	failures    uint64
	refused     uint64
}

type source struct {
	failures    int
	first, last time.Time // first failure in the current window; last event
	lockedUntil time.Time
}

// LimiterStats are the limiter's counters.
type LimiterStats struct {
	Failures, Refused uint64
	Sources           int
}

// NewLimiter returns a limiter; maxFailures < 1 is taken as 1.
func NewLimiter(maxFailures int, window, lockout time.Duration) *Limiter {
	return &Limiter{
		maxFailures: max(maxFailures, 1),
		window:      window,
		lockout:     lockout,
		now:         time.Now,
		sources:     make(map[netip.Addr]*source),
	}
}

// Allow reports whether src may try to log in now; a refusal is counted.
func (l *Limiter) Allow(src netip.Addr) bool {
	src = src.Unmap()
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.sources[src]
	if s == nil {
		return true
	}
	now := l.now()
	if now.Before(s.lockedUntil) {
		l.refused++
		s.last = now
		return false
	}
	if !s.lockedUntil.IsZero() { // lockout over: a clean slate
		delete(l.sources, src)
	}
	return true
}

// Failed records a failed login from src.
func (l *Limiter) Failed(src netip.Addr) {
	src = src.Unmap()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.failures++
	now := l.now()
	s := l.sources[src]
	if s == nil {
		if len(l.sources) >= MaxSources {
			l.evict()
		}
		s = &source{}
		l.sources[src] = s
	}
	if s.failures == 0 || now.Sub(s.first) > l.window {
		s.failures, s.first = 0, now
	}
	s.failures++
	s.last = now
	if s.failures >= l.maxFailures {
		s.lockedUntil = now.Add(l.lockout)
	}
}

// Succeeded forgets src's failures.
func (l *Limiter) Succeeded(src netip.Addr) {
	src = src.Unmap()
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.sources, src)
}

// Stats returns the counters.
func (l *Limiter) Stats() LimiterStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return LimiterStats{Failures: l.failures, Refused: l.refused, Sources: len(l.sources)}
}

// evict drops the least recently seen source, an unlocked one if any, so
// that a flood of new addresses cannot easily free a locked-out one.
func (l *Limiter) evict() {
	now := l.now()
	var victim netip.Addr
	var victimLocked bool
	var victimLast time.Time
	first := true
	for a, s := range l.sources {
		locked := now.Before(s.lockedUntil)
		if first || (victimLocked && !locked) || (locked == victimLocked && s.last.Before(victimLast)) {
			victim, victimLocked, victimLast, first = a, locked, s.last, false
		}
	}
	delete(l.sources, victim)
}
