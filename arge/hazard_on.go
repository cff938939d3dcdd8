//go:build gowrt_hazard

package arge

// hazards, in builds with -tags gowrt_hazard only (the hazard tests),
// holds the wrong-code hook for the one mistake that cannot be injected
// from outside the driver through a wrapped barrier.Space or
// busdma.Platform: writing a multi-descriptor frame's first control word
// (clearing EMPTY) before the rest of the chain. A wrapper only sees the
// stores in the order the driver makes them, and dropping the barrier
// between them is a different mistake (the wrapped-contract variant of
// TestHazardTXFirstDescriptorEarly).
type hazards struct {
	early bool
}

func (h hazards) earlyFirst() bool { return h.early }
