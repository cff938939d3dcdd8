//go:build !gowrt_hazard

package axge

// hazards holds the driver's wrong-code hook for mistakes no wrapper of
// its contracts can make (see hazard_on.go). In the shipped build it is
// empty and its method the constant false, so the wrong path compiles away.
type hazards struct{}

func (hazards) noPassExclusion() bool { return false }
