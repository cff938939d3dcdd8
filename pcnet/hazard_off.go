//go:build !gowrt_hazard

package pcnet

// hazards holds the driver's wrong-code hooks, for mistakes no wrapper of
// its contracts can produce (see hazard_on.go). In the shipped build it
// is empty and its methods are the constant false, so the compiler drops
// the wrong paths: the hooks cost no code, no field and no branch.
type hazards struct{}

func (hazards) ownFirst() bool { return false }

func (hazards) keepInRing() bool { return false }
