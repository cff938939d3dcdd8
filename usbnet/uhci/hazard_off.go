//go:build !gowrt_hazard

package uhci

// hazards are the driver's wrong-code hooks, for mistakes no wrapper of
// its contracts can produce (see hazard_on.go). In the shipped build the
// struct is empty and every hook is the constant false, so the compiler
// drops the wrong paths.
type hazards struct{}

func (hazards) publishFirst() bool { return false }
func (hazards) lengthFirst() bool  { return false }
func (hazards) noFrameWait() bool  { return false }
func (hazards) globalOrder() bool  { return false }
func (hazards) noRetoggle() bool   { return false }
func (hazards) noErrLimit() bool   { return false }
