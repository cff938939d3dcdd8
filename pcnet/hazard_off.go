//go:build !gowrt_hazard

package pcnet

// hazards is the driver's one wrong-code hook, for an ordering no wrapper
// of its contracts can produce (see hazard_on.go). In the shipped build it
// is empty and ownFirst is the constant false, so the compiler drops the
// wrong path: the hook costs no code, no field and no branch.
type hazards struct{}

func (hazards) ownFirst() bool { return false }
