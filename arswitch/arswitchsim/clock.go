package arswitchsim

import (
	"sync"
	"time"
)

// Clock is virtual time shared by a model and the driver under test: the
// driver's Sleep advances it, as does every MDIO transaction, so
// millisecond settle times and busy periods cost no real time.
type Clock struct {
	mu  sync.Mutex
	now time.Duration
}

// Now returns the virtual time since the clock's creation.
func (c *Clock) Now() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Sleep advances the clock by d (for use as the driver's Sleep function).
func (c *Clock) Sleep(d time.Duration) {
	if d <= 0 {
		return
	}
	c.mu.Lock()
	c.now += d
	c.mu.Unlock()
}
