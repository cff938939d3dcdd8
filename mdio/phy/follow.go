package phy

import (
	"time"

	gnet "github.com/gowrt/gowrt/net"
)

// State is l as the NIC contract's link state (pause is the MAC's
// business, not the contract's).
func (l Link) State() gnet.LinkState {
	if !l.Up {
		return gnet.LinkState{}
	}
	return gnet.LinkState{Up: true, SpeedMbps: l.Speed, FullDuplex: l.FullDuplex}
}

// LinkSetter is told the link its PHY negotiated: a MAC driver that
// reprograms itself for the speed and duplex and reports the change to
// its handler (arge.NIC implements it).
type LinkSetter interface {
	SetLink(gnet.LinkState) error
}

// Follow is the PHY poll a board runs for a MAC whose PHY raises no
// interrupt it wires: it polls p every interval until stop is closed and
// tells mac each link change. A failed poll or SetLink goes to onErr (if
// not nil) and the next poll tries again; a change whose SetLink failed
// is offered again at the next poll.
func Follow(p *PHY, mac LinkSetter, interval time.Duration, stop <-chan struct{}, onErr func(error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	retry := false
	for {
		l, changed, err := p.Poll()
		if err == nil && (changed || retry) {
			err = mac.SetLink(l.State())
			retry = err != nil
		}
		if err != nil && onErr != nil {
			onErr(err)
		}
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}
