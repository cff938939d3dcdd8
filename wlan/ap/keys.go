package ap

import (
	"github.com/gowrt/gowrt/wlan/ccmp"
	"github.com/gowrt/gowrt/wlan/radio"
	"github.com/gowrt/gowrt/wlan/wpa"
)

// Key-cache layout, as ath9k and FreeBSD's ath lay out the Atheros key
// cache: the first four slots are the group keys by key ID (the hardware
// finds a group key by the key ID in the frame), pairwise keys follow,
// one per station, found by the transmitter address.
const firstPairwiseSlot = 4

// installGroup makes the ccmp key for g and, with hardware crypto,
// loads it into the slot of its key ID.
func (a *AP) installGroup(g wpa.GroupKey) (*ccmp.Key, error) {
	k, err := ccmp.NewKey(g.GTK[:], g.KeyID)
	if err != nil {
		return nil, err
	}
	if a.keys != nil {
		// pn is the next PN to send: the slot starts where the key does.
		if err := a.keys.Install(g.KeyID, broadcast, uint8(g.KeyID), g.GTK, 1); err != nil {
			return nil, err
		}
		a.gtkSlot = g.KeyID
	}
	return k, nil
}

var broadcast = [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

func (a *AP) clearGroupSlots() {
	if a.keys == nil {
		return
	}
	for id := 1; id <= 2; id++ {
		_ = a.keys.Clear(id)
	}
	a.gtkSlot = radio.NoKey
}

// installPairwise makes s's key from its TK: with hardware crypto the TK
// goes into the station's slot (by AID, so no search), and the ccmp key
// keeps only the replay counters. A station with no slot left gets
// software crypto: the radio then sends and hands up its frames as they
// are.
func (a *AP) installPairwise(s *station, tk [16]byte) error {
	k, err := ccmp.NewKey(tk[:], 0)
	if err != nil {
		return err
	}
	s.key, s.slot = k, radio.NoKey
	if a.keys == nil {
		return nil
	}
	slot := firstPairwiseSlot + int(s.aid) - 1
	if slot >= a.keys.Slots() {
		return nil
	}
	if err := a.keys.Install(slot, s.addr, 0, tk, 1); err != nil {
		return nil // software for this one
	}
	s.slot = slot
	return nil
}

func (a *AP) dropKey(s *station) {
	if s.slot != radio.NoKey && a.keys != nil {
		_ = a.keys.Clear(s.slot)
	}
	s.key, s.slot = nil, radio.NoKey
}

// startGroupRekey begins a GTK change (802.11-2016 12.7.7): the ring made
// a new GTK under the other key ID; it goes into its key-cache slot at
// once (the old one keeps working), every authorized station gets group
// message 1, and the AP transmits with the new key only once all of them
// answered or were removed (finishGroupRekey).
func (a *AP) startGroupRekey() {
	next, err := a.installGroup(a.ring.Current())
	if err != nil {
		return
	}
	a.gtkNext = next
	a.Stats.GroupRekeys.Add(1)
	for _, s := range a.stations {
		if s.state != stateAuthorized || s.auth == nil {
			continue
		}
		msg, err := s.auth.RekeyGroup(a.now)
		if err != nil {
			continue
		}
		s.groupPending = true
		a.sendEAPOL(s, msg)
	}
	a.finishGroupRekey()
}

// finishGroupRekey switches transmission to the new GTK once no station
// is left with the old one.
func (a *AP) finishGroupRekey() {
	if a.gtkNext == nil {
		return
	}
	for _, s := range a.stations {
		if s.groupPending {
			return
		}
	}
	old := a.gtk
	a.gtk, a.gtkNext = a.gtkNext, nil
	if a.keys != nil && old != nil {
		_ = a.keys.Clear(old.KeyID())
		a.gtkSlot = a.gtk.KeyID()
	}
	a.ring.SetRSC(a.gtk.TxPN())
}

// RekeyGroup replaces the GTK now, as the periodic timer does
// (Config.GroupRekey), e.g. after a station left.
func (a *AP) RekeyGroup() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.started || a.ring == nil {
		return ErrNotStarted
	}
	if a.gtkNext != nil {
		return nil // one is under way
	}
	if err := a.ring.Rekey(a.now); err != nil {
		return err
	}
	a.startGroupRekey()
	return nil
}
