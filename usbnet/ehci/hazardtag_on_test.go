//go:build gowrt_hazard

package ehci

import "testing"

const hazardTag = true

func setWrong(_ testing.TB, c *Controller, w wrong) {
	c.hz = hazards{first: w.tokenFirst, overlay: w.overlayDone, noAdvance: w.skipAdvance,
		noAlt: w.noAltNext, halted: w.noRestart, cerr0: w.cerrZero, babble: w.noBabble}
}
