//go:build gowrt_hazard

package pcnet

import "testing"

const hazardTag = true

func setOwnFirst(_ *testing.T, n *NIC) { n.hz.own = true }

func setKeepInRing(_ *testing.T, n *NIC) { n.hz.inRing = true }
