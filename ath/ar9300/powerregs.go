package ar9300

import "github.com/gowrt/gowrt/barrier"

// PowerRegs adapts the MAC's register space for ath/power (power.New):
// every write is followed by a barrier. The wake and sleep sequences are
// ordered steps (set FORCE_WAKE, then poll RTC_STATUS; set PWR_SAV, then
// drop FORCE_WAKE), and on a bus with posted writes a status read may
// otherwise overtake the write it is meant to observe: a chip seen "ON"
// by a wake that raced a still-posted sleep write goes to sleep right
// after, and the driver's next accesses hit a sleeping MAC. FreeBSD's
// ar5416SetPowerModeAwake orders the same steps with OS_REG_WRITE and
// OS_DELAY.
func PowerRegs(s barrier.Space) interface {
	Read32(off uint32) uint32
	Write32(off, v uint32)
} {
	return orderedRegs{s}
}

type orderedRegs struct{ s barrier.Space }

func (o orderedRegs) Read32(off uint32) uint32 { return o.s.Read32(off) }
func (o orderedRegs) Write32(off, v uint32) {
	o.s.Write32(off, v)
	o.s.Barrier()
}
