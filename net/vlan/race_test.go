//go:build race

package vlan_test

// raceEnabled: the race detector makes sync.Pool drop a share of what is
// put back, so pooled frames are allocated again and allocation counts
// are not meaningful.
const raceEnabled = true
