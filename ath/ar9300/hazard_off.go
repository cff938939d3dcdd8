//go:build !gowrt_hazard

package ar9300

// hazards is the driver's wrong-code hook for the mistakes no wrapper of
// its contracts can produce (hazard_on.go). In the shipped build every
// method is the constant false and the compiler drops the wrong paths.
type hazards struct{}

func (hazards) noHold() bool           { return false }
func (hazards) statusBeforeDone() bool { return false }
func (hazards) reclaimOnStatus() bool  { return false }
func (hazards) resetOnOverrun() bool   { return false }
func (hazards) keepStaleBeacon() bool  { return false }
