//go:build !gowrt_hazard

package ehci

// hazards are the driver's wrong-code hooks, for mistakes no wrapper of
// its contracts can produce (see hazard_on.go). In the shipped build each
// is the constant false and the compiler drops the wrong path: the hooks
// cost no code, no field and no branch.
type hazards struct{}

func (hazards) tokenFirst() bool  { return false }
func (hazards) overlayDone() bool { return false }
func (hazards) skipAdvance() bool { return false }
func (hazards) noAltNext() bool   { return false }
func (hazards) noRestart() bool   { return false }
func (hazards) cerrZero() bool    { return false }
func (hazards) noBabble() bool    { return false }
