//go:build gowrt_hazard

package arge

// SetEarlyFirst makes d hand a frame's first descriptor over before the
// rest of its chain (builds with -tags gowrt_hazard).
func SetEarlyFirst(d *Driver) { d.hz.early = true }
