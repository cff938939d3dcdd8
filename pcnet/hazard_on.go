//go:build gowrt_hazard

package pcnet

// hazards, in builds with -tags gowrt_hazard only (the hazard tests),
// holds the wrong-code hook for the one mistake that cannot be injected
// from outside the driver through a wrapped barrier.Space or
// busdma.Platform: writing a TX descriptor's OWN word before its buffer
// address. A wrapper sees the stores only in the order the driver makes
// them; dropping the barrier between them is a different mistake
// (TestHazardMissingBarrier, through a wrapped platform).
type hazards struct {
	own bool
}

func (h hazards) ownFirst() bool { return h.own }
