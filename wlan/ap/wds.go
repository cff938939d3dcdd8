package ap

import (
	"time"

	"github.com/gowrt/gowrt/wlan"
)

// behindEntry is an Ethernet address learned behind a 4-address station.
type behindEntry struct {
	sta  *station
	seen time.Time
}

// learnBehind records that sa is behind 4-address station s, as a bridge
// learns a source address on a port. The table is bounded: when full,
// entries not heard from for behindAge are removed first; if none is, the
// address is not learned (counted) and its frames go to the DS instead.
func (a *AP) learnBehind(s *station, sa wlan.MAC) {
	if sa == s.addr || sa.IsGroup() {
		return
	}
	if e, ok := a.behind[sa]; ok {
		if e.sta == s {
			if a.now.Sub(e.seen) > time.Second {
				a.behind[sa] = behindEntry{sta: s, seen: a.now}
			}
			return
		}
		a.behind[sa] = behindEntry{sta: s, seen: a.now} // moved
		return
	}
	if len(a.behind) >= a.cfg.MaxBehind {
		a.ageBehind()
		if len(a.behind) >= a.cfg.MaxBehind {
			a.Stats.WDSFull.Add(1)
			return
		}
	}
	a.behind[sa] = behindEntry{sta: s, seen: a.now}
	a.Stats.WDSLearned.Add(1)
}

// behindStation returns the authorized 4-address station da is behind.
func (a *AP) behindStation(da wlan.MAC) *station {
	e, ok := a.behind[da]
	if !ok || e.sta.state != stateAuthorized {
		return nil
	}
	return e.sta
}

func (a *AP) ageBehind() {
	for m, e := range a.behind {
		if a.now.Sub(e.seen) > behindAge {
			delete(a.behind, m)
		}
	}
}

func (a *AP) forgetBehind(s *station) {
	for m, e := range a.behind {
		if e.sta == s {
			delete(a.behind, m)
		}
	}
}
