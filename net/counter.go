package net

import "sync/atomic"

// Counter is a 64-bit event counter for per-frame paths, made of 32-bit
// atomics: on 32-bit MIPS every 64-bit atomic operation of the Go runtime
// takes one global spinlock (runtime/internal/atomic's lock-based
// Xadd64 on mips and mipsle), a few hundred instructions per frame and a
// stall of a whole time slice when its holder is preempted. Add is one
// 32-bit atomic add and a compare; Load reads two words. Any number of
// goroutines may Add and Load at once; the zero value is zero.
//
// How: lo holds the low 32 bits; hi counts how often lo crossed a
// multiple of 2^31, so hi's lowest bit equals lo's top bit whenever every
// crossing has been counted. The adder that crosses one counts it just
// after its add; a reader that finds the bits differ sees a crossing not
// yet counted and counts it itself. hi is read before lo, so a crossing
// is never counted twice.
type Counter struct {
	lo atomic.Uint32
	hi atomic.Uint32
}

// Add adds n, which must be below 2^31 (frames, bytes of a frame).
func (c *Counter) Add(n uint32) {
	v := c.lo.Add(n)
	if (v^(v-n))>>31 != 0 {
		c.hi.Add(1)
	}
}

// Load returns the count.
func (c *Counter) Load() uint64 {
	h := c.hi.Load()
	l := c.lo.Load()
	if h&1 != l>>31 {
		h++
	}
	return uint64(h>>1)<<32 | uint64(l)
}
