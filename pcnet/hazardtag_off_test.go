//go:build !gowrt_hazard

package pcnet

import "testing"

// hazardTag reports whether the driver's in-driver wrong-code hook is
// built in (-tags gowrt_hazard).
const hazardTag = false

func setOwnFirst(t *testing.T, _ *NIC) { t.Fatal("the OWN-first hook needs -tags gowrt_hazard") }

func setKeepInRing(t *testing.T, _ *NIC) {
	t.Fatal("the kept-buffer-in-ring hook needs -tags gowrt_hazard")
}
