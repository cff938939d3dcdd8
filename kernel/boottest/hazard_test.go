//go:build !mips && !mipsle

package boottest

import (
	"regexp"
	"strconv"
	"testing"
)

var timerraceRE = regexp.MustCompile(`timerrace: guard (on|off): (\d+) sleeps of \S+ with a late Compare write \((\d+) tries\); (\d+) caught by the guard, (\d+) stalled until Count wrapped; (\d+) s by the RTC, longest (\S+) by the kernel clock`)

// TestHazardCompareRace: the timer interrupt is raised when Count becomes
// equal to Compare, so a Compare value that Count has already passed when
// the write lands is matched only after Count wraps, 25.8 s later at QEMU's
// 166.67 MHz Count (on hardware alike). The kernel re-reads Count after every
// write and handles a passed deadline at once.
//
// The image is built with -tags gowrt_hazard. During each of the selftest's
// timerrace sleeps that kernel holds back one Compare write, the one that
// lets the CPU idle, until Count has passed the value written: the deadline
// passes inside the write by construction, on any host. With the guard
// every such sleep ends on time; with kcompare=noguard (a boot switch only
// that build knows) every one of them stalls until Count wraps.
//
// Under -icount shift=0,sleep=off QEMU does not wait through a stall: the
// idle guest's clock jumps to the next timer event, here the wrap. So the
// unguarded run finishes at once, 25.8 s of guest time later per stall, and
// the program shows the stalls with the RTC (on the guest's clock, -rtc
// clock=vm); the kernel's own clock cannot see them, as it extends Count to
// 64 bits only when it reads it. (Without -icount the same run stalls for
// real, 25.8 s of host time per sleep.) Both outcomes are instruction
// counts, the same on every run and under any host load. The unguarded
// RTC total may exceed one wrap per sleep: without the guard the kernel
// also loses deadlines that pass inside an ordinary write.
func TestHazardCompareRace(t *testing.T) {
	for _, board := range arches {
		img := buildImage(t, board, selftest, "-tags", "gowrt_hazard")
		for _, guard := range []bool{true, false} {
			args := "timerrace"
			if !guard {
				args += " kcompare=noguard"
			}
			r := boot(t, board, img, 32, args, icount...)
			m := timerraceRE.FindStringSubmatch(r.out)
			if m == nil || r.code != 0 {
				t.Fatalf("%s %s: exit %d\n%s", board, args, r.code, r.out)
			}
			n := func(i int) int { v, _ := strconv.Atoi(m[i]); return v }
			sleeps, caught, stalled, rtc := n(2), n(4), n(5), n(6)
			if want := map[bool]string{true: "on", false: "off"}[guard]; m[1] != want || sleeps == 0 {
				t.Fatalf("%s %s: kernel reports guard %s, %d sleeps", board, args, m[1], sleeps)
			}
			if guard && (caught != sleeps || stalled != 0) {
				t.Errorf("%s: with the guard %d of %d late writes caught, %d sleeps stalled (%d s by the RTC)", board, caught, sleeps, stalled, rtc)
			}
			if !guard && (caught != 0 || stalled != sleeps || rtc < 25*sleeps) {
				t.Errorf("%s: without the guard %d of %d sleeps stalled (%d s by the RTC): the test cannot see the hazard", board, stalled, sleeps, rtc)
			}
			t.Logf("%s %s: %s", board, args, m[0])
		}
	}
}
