//go:build gowrt_hazard

package ehci

// hazards, in builds with -tags gowrt_hazard only (the hazard tests),
// hold the wrong-code hooks for mistakes that cannot be injected from
// outside the driver through a wrapped barrier.Space or busdma.Platform:
//
//   - tokenFirst: the first qTD's token (Active) is written before its
//     other words, so the controller may run a half-written qTD;
//   - overlayDone: a transfer is judged complete from the qH overlay
//     (its current qTD moved on), trusting the qTDs' tokens to have been
//     written back already;
//   - skipAdvance: an unlinked qH (and its qTDs) is edited, freed or
//     reused without waiting for the async-advance doorbell;
//   - noAltNext: IN qTDs without an alternate next pointer, so a short
//     packet moves on to the transfer's own next qTD;
//   - noRestart: a qH halted by an error (STALL) is left halted;
//   - cerrZero: qTDs with an error counter of 0 (retry forever);
//   - noBabble: the Babble status bit is not decoded, so a babbling
//     device looks like a stalled endpoint.
type hazards struct {
	first, overlay, noAdvance, noAlt, halted, cerr0, babble bool
}

func (h hazards) tokenFirst() bool  { return h.first }
func (h hazards) overlayDone() bool { return h.overlay }
func (h hazards) skipAdvance() bool { return h.noAdvance }
func (h hazards) noAltNext() bool   { return h.noAlt }
func (h hazards) noRestart() bool   { return h.halted }
func (h hazards) cerrZero() bool    { return h.cerr0 }
func (h hazards) noBabble() bool    { return h.babble }
