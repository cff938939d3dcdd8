//go:build gowrt_hazard

package axge

import "testing"

const hazardTag = true

func setUnlocked(_ *testing.T, c *Chip) { c.hz.unlocked = true }
