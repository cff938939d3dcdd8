//go:build gowrt_hazard

package ar9300

// hazards, in builds with -tags gowrt_hazard only (the hazard tests),
// switches on the wrong driver code each TestHazard* must catch:
//
//   - NoHold: skip the force-awake on the Interrupt path (a wrapped Power
//     does the same for every path; this one is for the single path);
//   - StatusBeforeDone: read a status's fields before its done bit;
//   - ReclaimOnStatus: reuse a chain's descriptors as soon as its TX
//     status is seen;
//   - ResetOnOverrun: "recover" from RXORN by re-queueing every filled
//     buffer unread;
//   - KeepStaleBeacon: leave a late beacon queued at SWBA (ath9k's
//     behaviour), so it goes out a period late with an old TIM.
type hazards struct {
	NoHold, StatusBeforeDone, ReclaimOnStatus, ResetOnOverrun, KeepStaleBeacon bool
}

func (h hazards) noHold() bool           { return h.NoHold }
func (h hazards) statusBeforeDone() bool { return h.StatusBeforeDone }
func (h hazards) reclaimOnStatus() bool  { return h.ReclaimOnStatus }
func (h hazards) resetOnOverrun() bool   { return h.ResetOnOverrun }
func (h hazards) keepStaleBeacon() bool  { return h.KeepStaleBeacon }
