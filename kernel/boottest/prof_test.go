//go:build !mips && !mipsle

package boottest

import "testing"

// TestCPUProfile: runtime/pprof's CPU profiler works on the kernel
// (setitimer ITIMER_PROF delivering SIGPROF), on both byte orders.
func TestCPUProfile(t *testing.T) {
	for _, board := range arches {
		img := buildImage(t, board, "./kernel/boottest/progs/proftest")
		r := boot(t, board, img, 64, "")
		r.mustContain(t, "proftest: ok")
		if r.code != 0 {
			t.Errorf("%s: exit code %d\n%s", board, r.code, r.out)
		}
	}
}
