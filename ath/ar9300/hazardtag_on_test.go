//go:build gowrt_hazard

package ar9300_test

import "github.com/gowrt/gowrt/ath/ar9300"

// hazardTag reports whether the driver's in-driver wrong-code hooks are
// built in (-tags gowrt_hazard).
const hazardTag = true

func setWrong(d *ar9300.Driver, w wrongs) {
	ar9300.SetWrong(d, ar9300.Wrong{StatusBeforeDone: w.statusBeforeDone, ReclaimOnStatus: w.reclaimOnStatus,
		ResetOnOverrun: w.resetOnOverrun, KeepStaleBeacon: w.keepStaleBeacon})
}
