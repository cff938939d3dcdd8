//go:build gowrt_hazard

package ar9300

// Wrong is the set of wrong-code switches (hazard builds only).
type Wrong = hazards

// SetWrong switches wrong code on in d (hazard builds only).
func SetWrong(d *Driver, w Wrong) { d.hz = w }
