//go:build mips || mipsle

package kernel

// The clock is CP0 Count extended to 64 bits and converted to (sec, nsec)
// incrementally from a base that moves forward at least once a second, so
// the hot path (every clock_gettime) needs only 32x32-bit multiplies and no
// 64-bit division (a runtime call on mips32).

// ticks returns Count extended to 64 bits. It must run at least once per
// Count wrap (25.8 s at QEMU's 166.67 MHz); the timer horizon guarantees it.
//
//go:nosplit
func (k *kstate) ticks() uint64 {
	c := readCount()
	if c < k.lastCount {
		k.countHi++
	}
	k.lastCount = c
	return uint64(k.countHi)<<32 | uint64(c)
}

// mono returns CLOCK_MONOTONIC (time since entry).
//
//go:nosplit
func (k *kstate) mono() (sec int64, nsec uint32) {
	t := k.ticks()
	d := t - k.baseTicks
	sec, nsec = k.baseSec, k.baseNsec
	for d > uint64(k.countHz) { // only if the clock was not read for > 1 s
		sec++
		d -= uint64(k.countHz)
		k.baseTicks += uint64(k.countHz)
		k.baseSec++
	}
	nsec += uint32(uint64(uint32(d)) * uint64(k.mult24) >> 24)
	for nsec >= 1_000_000_000 {
		nsec -= 1_000_000_000
		sec++
	}
	if d > uint64(k.countHz>>2) {
		k.baseTicks, k.baseSec, k.baseNsec = t, sec, nsec
	}
	return sec, nsec
}

// nanotime is CLOCK_MONOTONIC in ns.
//
//go:nosplit
func (k *kstate) nanotime() int64 {
	s, ns := k.mono()
	return s*1_000_000_000 + int64(ns)
}

// wall returns CLOCK_REALTIME.
//
//go:nosplit
func (k *kstate) wall() (sec int64, nsec uint32) {
	sec, nsec = k.mono()
	sec += k.wallSec
	nsec += k.wallNsec
	if nsec >= 1_000_000_000 {
		nsec -= 1_000_000_000
		sec++
	}
	return sec, nsec
}

// setClockRate derives the fixed-point conversions from the calibrated
// Count frequency. Boot only (it divides).
func (k *kstate) setClockRate(hz uint32) {
	k.countHz = hz
	k.mult24 = uint32((uint64(1e9) << 24) / uint64(hz))
	k.ticksPerNs32 = uint32((uint64(hz) << 32) / 1e9)
}
