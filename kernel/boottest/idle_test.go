//go:build !mips && !mipsle

package boottest

import (
	"regexp"
	"strconv"
	"testing"
)

var idleRE = regexp.MustCompile(`idletest: (\d+) sleeps, (\d+) interrupts inside the window \((\d+) skipped over, (\d+) naive\), (\d+) lost wake-ups`)

// TestHazardIdleWaitRace makes timer interrupts land between the idle loop's check
// and its WAIT thousands of times (progs/idletest): with the kernel's
// skip-over window no wake-up is lost; with the deliberately naive idle
// (kidle=naive: the window is not registered) every one of them is.
func TestHazardIdleWaitRace(t *testing.T) {
	for _, board := range arches {
		img := buildImage(t, board, "./kernel/boottest/progs/idletest")
		for _, naive := range []bool{false, true} {
			args := ""
			if naive {
				args = "kidle=naive"
			}
			r := boot(t, board, img, 32, args, icount...)
			m := idleRE.FindStringSubmatch(r.out)
			if m == nil || r.code != 0 {
				t.Fatalf("%s %s: exit %d\n%s", board, args, r.code, r.out)
			}
			n := func(i int) int { v, _ := strconv.Atoi(m[i]); return v }
			hits, skipped, naiveHits, lost := n(2), n(3), n(4), n(5)
			if hits < 1000 {
				t.Errorf("%s %s: only %d interrupts landed in the window", board, args, hits)
			}
			if !naive && (lost != 0 || skipped != hits) {
				t.Errorf("%s: skip-over idle: %d of %d window interrupts skipped, %d lost wake-ups", board, skipped, hits, lost)
			}
			// A sleep can see more than one naive-window interrupt (the
			// kernel counts them all, the program counts sleeps that saw
			// any), so only "at least" is exact here.
			if naive && (naiveHits < hits || lost < hits) {
				t.Errorf("%s: naive idle: %d window hits but only %d lost wake-ups; the test cannot see the race", board, hits, lost)
			}
			t.Logf("%s %s: %s", board, args, r.out)
		}
	}
}
