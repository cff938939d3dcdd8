//go:build !race

package netstack

// raceOn is raceEnabled for this package's internal tests.
const raceOn = false
