//go:build !gowrt_hazard

package arge_test

import "github.com/gowrt/gowrt/arge"

// hazardTag reports whether the driver's in-driver wrong-code hook is
// built in (-tags gowrt_hazard).
const hazardTag = false

func setEarlyFirst(*arge.Driver) { panic("the early-first hook needs -tags gowrt_hazard") }
