//go:build gowrt_hazard

package arge_test

import "github.com/gowrt/gowrt/arge"

const hazardTag = true

func setEarlyFirst(d *arge.Driver) { arge.SetEarlyFirst(d) }
