//go:build gowrt_hazard

package axge

// hazards, in -tags gowrt_hazard builds only (the hazard tests), holds
// the one pre-fix FreeBSD behaviour that cannot be injected through a
// wrapped ControlDevice or Framing: MII passes that do not exclude each
// other, so they interleave across their sleeping control transfers (the
// torn media word). The other pre-fix variants (the default aggregation
// timer, control reads used on error, no TX padding, one RX transfer)
// are made from outside the driver by the tests.
type hazards struct {
	unlocked bool
}

func (h hazards) noPassExclusion() bool { return h.unlocked }
