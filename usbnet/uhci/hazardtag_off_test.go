//go:build !gowrt_hazard

package uhci

import "testing"

// hazardTag reports whether the driver's in-driver wrong-code hooks are
// built in (-tags gowrt_hazard).
const hazardTag = false

func setHooks(t testing.TB, _ *HC, w wrong) {
	if w.hooked() {
		t.Fatal("the in-driver wrong-code hooks need -tags gowrt_hazard")
	}
}
