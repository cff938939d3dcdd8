//go:build !race

package vlan_test

const raceEnabled = false
