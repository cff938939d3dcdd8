package phy

// UnlockedPoll is Poll written the wrong way, for the hazard test: the
// state is copied under the lock but the pass's bus transactions run
// unlocked, so two passes can interleave on the bus.
func UnlockedPoll(p *PHY) (Link, bool, error) {
	p.mu.Lock()
	sm, gig := p.sm, p.gigabit
	p.mu.Unlock()
	l, err := p.pass(&sm, gig)
	p.mu.Lock()
	defer p.mu.Unlock()
	old := p.link
	p.sm = sm
	if err != nil {
		return old, false, err
	}
	p.link = l
	return l, l != old, nil
}
