//go:build !mips && !mipsle

package clock

import (
	"sync"
	"sync/atomic"
	"time"
)

// System is the firmware's wall clock. In sim mode (a host process) it is
// the host's clock plus an offset it keeps; the host's clock is never set.
type System struct {
	mu        sync.Mutex
	offset    time.Duration // applied in full
	slew      time.Duration // being applied since slewStart
	slewStart time.Time     // with a monotonic reading
	synced    atomic.Bool
}

// NewSystem returns the firmware's clock, initially the host's time.
func NewSystem() *System { return &System{} }

// Now returns the host's time moved by the offset (and the slew so far).
func (c *System) Now() time.Time {
	now := time.Now()
	return now.Add(c.offsetAt(now))
}

// offsetAt is how far the clock is from the host's at host time now.
func (c *System) offsetAt(now time.Time) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.offset + slewed(c.slew, c.slewStart, now)
}

func (c *System) step(to time.Time, synced bool) error {
	now := time.Now()
	c.mu.Lock()
	c.offset, c.slew = to.Sub(now), 0
	c.mu.Unlock()
	if synced {
		c.synced.Store(true)
	}
	return nil
}

// Step sets the clock to to.
func (c *System) Step(to time.Time) error { return c.step(to, true) }

// Slew starts moving the clock by offset at MaxSlewPPM; the part of an
// earlier slew already applied stays, the rest is replaced.
func (c *System) Slew(offset time.Duration) error {
	now := time.Now()
	c.mu.Lock()
	c.offset += slewed(c.slew, c.slewStart, now)
	c.slew, c.slewStart = offset, now
	c.mu.Unlock()
	c.synced.Store(true)
	return nil
}

// Synced reports whether Step or Slew was called.
func (c *System) Synced() bool { return c.synced.Load() }
