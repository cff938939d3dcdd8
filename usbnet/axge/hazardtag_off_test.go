//go:build !gowrt_hazard

package axge

import "testing"

// hazardTag reports whether the driver's in-driver wrong-code hook is
// built in (-tags gowrt_hazard).
const hazardTag = false

func setUnlocked(t *testing.T, _ *Chip) { t.Fatal("the unlocked-MII hook needs -tags gowrt_hazard") }
