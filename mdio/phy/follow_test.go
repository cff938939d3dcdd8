package phy_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/gowrt/gowrt/mdio/phy"
	"github.com/gowrt/gowrt/mdio/phy/physim"
	gnet "github.com/gowrt/gowrt/net"
)

// setter is a MAC that fails its first SetLink.
type setter struct {
	mu    sync.Mutex
	calls []gnet.LinkState
	up    chan struct{}
}

func (s *setter) SetLink(l gnet.LinkState) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, l)
	if len(s.calls) == 1 {
		return errors.New("MAC busy")
	}
	if l.Up {
		select {
		case s.up <- struct{}{}:
		default:
		}
	}
	return nil
}

// TestFollow: the board's PHY poll tells the MAC the negotiated link as a
// net.LinkState, and offers a change whose SetLink failed again at the
// next poll although the PHY reports no new change.
func TestFollow(t *testing.T) {
	p, m, _ := setup(t, true)
	m.SetPartner(physim.GigabitPartner)
	s := &setter{up: make(chan struct{}, 1)}
	stop := make(chan struct{})
	done := make(chan struct{})
	var errs []error
	go func() {
		defer close(done)
		phy.Follow(p, s, time.Millisecond, stop, func(err error) { errs = append(errs, err) })
	}()
	select {
	case <-s.up:
	case <-time.After(10 * time.Second):
		t.Fatal("the MAC was never told the link is up")
	}
	close(stop)
	<-done
	want := gnet.LinkState{Up: true, SpeedMbps: 1000, FullDuplex: true}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.calls)
	if n < 2 || s.calls[n-1] != want || s.calls[n-2] != want {
		t.Fatalf("SetLink calls %v, want the failed %v offered again", s.calls, want)
	}
	if len(errs) != 1 {
		t.Fatalf("errors reported: %v", errs)
	}
}
