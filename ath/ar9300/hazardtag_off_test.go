//go:build !gowrt_hazard

package ar9300_test

import "github.com/gowrt/gowrt/ath/ar9300"

// hazardTag reports whether the driver's in-driver wrong-code hooks are
// built in (-tags gowrt_hazard).
const hazardTag = false

func setWrong(_ *ar9300.Driver, w wrongs) {
	if w != (wrongs{}) {
		panic("the in-driver wrong-code hooks need -tags gowrt_hazard")
	}
}
