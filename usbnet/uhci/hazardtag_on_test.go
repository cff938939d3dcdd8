//go:build gowrt_hazard

package uhci

import "testing"

const hazardTag = true

func setHooks(_ testing.TB, hc *HC, w wrong) {
	hc.hz = hazards{publish: w.publishFirst, length: w.lengthFirst, frame: w.noFrameWait, order: w.globalOrder,
		toggle: w.noRetoggle, errLimit: w.noErrLimit}
}
