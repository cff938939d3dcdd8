package phy_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/gowrt/gowrt/mdio"
	"github.com/gowrt/gowrt/mdio/phy"
	"github.com/gowrt/gowrt/mdio/phy/physim"
)

func setup(t *testing.T, gig bool) (*phy.PHY, *physim.PHY, *physim.Bus) {
	t.Helper()
	m := physim.New(0x004DD072, gig)
	bus := physim.NewBus(map[int]*physim.PHY{4: m})
	p, err := phy.New(bus, 4)
	if err != nil {
		t.Fatal(err)
	}
	if p.ID != 0x004DD072 {
		t.Fatalf("ID %#x", p.ID)
	}
	if err := p.Reset(); err != nil {
		t.Fatal(err)
	}
	if err := p.StartAutoneg(phy.All); err != nil {
		t.Fatal(err)
	}
	return p, m, bus
}

// pollUntil polls until the link equals want or n passes elapse.
func pollUntil(t *testing.T, p *phy.PHY, want phy.Link, n int) int {
	t.Helper()
	for i := 0; i < n; i++ {
		l, _, err := p.Poll()
		if err != nil {
			t.Fatal(err)
		}
		if l == want {
			return i
		}
	}
	t.Fatalf("link never became %v (now %v)", want, p.Link())
	return 0
}

func TestNoPHY(t *testing.T) {
	bus := physim.NewBus(nil)
	if _, err := phy.New(bus, 3); !errors.Is(err, phy.ErrNoPHY) {
		t.Fatalf("empty address: %v", err)
	}
	if _, err := phy.New(bus, 32); !errors.Is(err, mdio.ErrAddress) {
		t.Fatalf("address 32: %v", err)
	}
}

func TestAutonegGigabit(t *testing.T) {
	p, m, _ := setup(t, true)
	if l, _, _ := p.Poll(); l.Up {
		t.Fatal("link up with no partner")
	}
	m.SetPartner(physim.GigabitPartner)
	pollUntil(t, p, phy.Link{Up: true, Speed: 1000, FullDuplex: true, Pause: true}, 20)
}

func TestAutoneg100OnlyPartnerAndFastPHY(t *testing.T) {
	// A 10/100 PHY against a gigabit partner resolves 100/full, and never
	// touches the 1000BASE-T registers.
	p, m, _ := setup(t, false)
	m.SetPartner(physim.GigabitPartner)
	pollUntil(t, p, phy.Link{Up: true, Speed: 100, FullDuplex: true, Pause: true}, 20)

	// Partner limited to 10 half.
	m.SetPartner(physim.Partner{Connected: true, Ability: phy.ANSelector8023 | phy.AN10HD})
	pollUntil(t, p, phy.Link{Up: true, Speed: 10}, 20)
}

func TestFlapIsSeen(t *testing.T) {
	p, m, _ := setup(t, true)
	m.SetPartner(physim.GigabitPartner)
	up := phy.Link{Up: true, Speed: 1000, FullDuplex: true, Pause: true}
	pollUntil(t, p, up, 20)
	// A flap between two passes: the latched-low bit and renegotiation
	// must make the next pass report down.
	m.Flap()
	l, changed, err := p.Poll()
	if err != nil || l.Up || !changed {
		t.Fatalf("after flap: %v changed=%v err=%v", l, changed, err)
	}
	pollUntil(t, p, up, 20)
	m.SetPartner(physim.Partner{})
	pollUntil(t, p, phy.Link{}, 3)
}

func TestResolvePriority(t *testing.T) {
	all := uint16(phy.ANSelector8023 | phy.AN10HD | phy.AN10FD | phy.AN100HD | phy.AN100FD)
	cases := []struct {
		anar, lpa, gbcr, gbsr uint16
		want                  phy.Link
		ok                    bool
	}{
		{all, all, phy.GBCR1000FD, phy.GBSR1000FD, phy.Link{Up: true, Speed: 1000, FullDuplex: true}, true},
		{all, all, phy.GBCR1000HD | phy.GBCR1000FD, phy.GBSR1000HD, phy.Link{Up: true, Speed: 1000}, true},
		{all, all, phy.GBCR1000FD, phy.GBSR1000HD, phy.Link{Up: true, Speed: 100, FullDuplex: true}, true},
		{all &^ phy.AN100FD, all, 0, 0, phy.Link{Up: true, Speed: 100}, true},
		{phy.AN10FD, phy.AN10FD | phy.AN10HD, 0, 0, phy.Link{Up: true, Speed: 10, FullDuplex: true}, true},
		{phy.AN100FD, phy.AN10HD, 0, 0, phy.Link{}, false},
	}
	for i, c := range cases {
		l, ok := phy.Resolve(c.anar, c.lpa, c.gbcr, c.gbsr)
		if l != c.want || ok != c.ok {
			t.Errorf("case %d: %v %v, want %v %v", i, l, ok, c.want, c.ok)
		}
	}
}

func TestAnegTimeoutRestarts(t *testing.T) {
	p, m, _ := setup(t, true)
	m.AnegReads = 1 << 30 // never completes
	m.SetPartner(physim.GigabitPartner)
	m.Flap()
	for i := 0; i < 3*phy.AnegTimeoutPolls; i++ {
		if _, _, err := p.Poll(); err != nil {
			t.Fatal(err)
		}
	}
	if p.Restarts() == 0 {
		t.Fatal("negotiation that never completes was never restarted")
	}
}

func TestResetTimeout(t *testing.T) {
	m := physim.New(0x1234_5678, true)
	m.ResetReads = phy.ResetPolls + 5
	p, err := phy.New(physim.NewBus(map[int]*physim.PHY{1: m}), 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Reset(); !errors.Is(err, phy.ErrResetTimeout) {
		t.Fatalf("Reset = %v", err)
	}
}

// interleaves runs one Poll pass on this goroutine and, from inside its
// third bus transaction, starts a second pass on another goroutine, then
// waits (bounded) for that second pass to reach the bus. While the first
// pass is parked in the hook, any transaction must be the second pass's:
// seeing one means the passes interleaved.
func interleaves(poll func() (phy.Link, bool, error), bus *physim.Bus) bool {
	var (
		mu      sync.Mutex
		n       int
		parked  bool
		sawB    bool // the second pass touched the bus while the first was parked
		touched = make(chan struct{}, 1)
		wg      sync.WaitGroup
	)
	bus.Hook = func() {
		mu.Lock()
		n++
		k, isB := n, parked
		mu.Unlock()
		if isB {
			mu.Lock()
			sawB = true
			mu.Unlock()
			select {
			case touched <- struct{}{}:
			default:
			}
			return
		}
		// Park at the pass's first transaction: a pass may do as few as
		// one or two (steady link, nothing latched), so a later one may
		// never come. A locked pass already holds the lock here.
		if k != 1 {
			return
		}
		mu.Lock()
		parked = true
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, _ = poll()
		}()
		select {
		case <-touched:
		case <-time.After(300 * time.Millisecond):
		}
		mu.Lock()
		parked = false
		mu.Unlock()
	}
	_, _, _ = poll()
	wg.Wait()
	bus.Hook = nil
	// The parked pass's wait may have consumed the signal: report the
	// flag, not the channel.
	mu.Lock()
	defer mu.Unlock()
	return sawB
}

// TestHazardPHYPassesInterleave: two link-state passes that interleave on
// the bus mix one pass's BMSR with the other's partner registers (and one
// of them eats the latched-low link bit). Ours are mutually exclusive; the
// lock-free variant interleaves.
func TestHazardPHYPassesInterleave(t *testing.T) {
	p, m, bus := setup(t, true)
	m.SetPartner(physim.GigabitPartner)
	pollUntil(t, p, phy.Link{Up: true, Speed: 1000, FullDuplex: true, Pause: true}, 20)
	if interleaves(p.Poll, bus) {
		t.Fatal("locked Poll passes interleaved on the bus")
	}
	if !interleaves(func() (phy.Link, bool, error) { return phy.UnlockedPoll(p) }, bus) {
		t.Fatal("hazard not reproduced: unlocked passes did not interleave")
	}
}
