package phy

// SetUnlockedPasses selects the deliberately wrong lock-free Poll for the
// hazard test.
func SetUnlockedPasses(p *PHY, on bool) { p.unlockedPasses = on }
