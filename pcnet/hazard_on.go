//go:build gowrt_hazard

package pcnet

// hazards, in builds with -tags gowrt_hazard only (the hazard tests),
// holds the wrong-code hooks for the mistakes that cannot be injected
// from outside the driver through a wrapped barrier.Space or
// busdma.Platform: writing a TX descriptor's OWN word before its buffer
// address (a wrapper sees the stores only in the order the driver makes
// them; dropping the barrier between them is a different mistake,
// TestHazardMissingBarrier, through a wrapped platform), and leaving a
// kept receive buffer in its ring slot instead of refilling the slot
// from the pool, so the chip receives into a buffer that is queued for
// transmission (TestHazardKeptBufferInRing).
type hazards struct {
	own    bool
	inRing bool
}

func (h hazards) ownFirst() bool { return h.own }

func (h hazards) keepInRing() bool { return h.inRing }
