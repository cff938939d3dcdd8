//go:build !gowrt_hazard

package ehci

import "testing"

// hazardTag reports whether the driver's in-driver wrong-code hooks are
// built in (-tags gowrt_hazard).
const hazardTag = false

func setWrong(t testing.TB, _ *Controller, w wrong) {
	if w.inDriver() {
		t.Fatal("the in-driver wrong-code hooks need -tags gowrt_hazard")
	}
}
