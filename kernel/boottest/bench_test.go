//go:build !mips && !mipsle

package boottest

import (
	"strings"
	"testing"
)

// TestInstructionCounts boots progs/bench under -icount shift=0,sleep=off,
// where guest time is one nanosecond per instruction, and reports the
// kernel's costs as instruction counts: boot-to-main, clock_gettime, a null
// system call, futex wake-to-run and RAM at idle. TestInterrupts and
// TestHazardIdleWaitRace report interrupt-to-handler-goroutine and idle wake-up
// latency the same way. They are reported, not asserted: run with -v.
func TestInstructionCounts(t *testing.T) {
	for _, board := range arches {
		r := boot(t, board, buildImage(t, board, "./kernel/boottest/progs/bench"), 32, "", icount...)
		if r.code != 0 || !strings.Contains(r.out, "bench: done") {
			t.Fatalf("%s: bench failed (exit %d)\n%s", board, r.code, r.out)
		}
		for _, l := range strings.Split(r.out, "\n") {
			if strings.HasPrefix(l, "bench: ") && l != "bench: done" {
				t.Logf("%s: %s", board, l)
			}
		}
	}
}
