//go:build !mips && !mipsle

package boottest

import (
	"strings"
	"testing"
)

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

// TestNanotime: kernel.Nanotime (CP0 Count read without a system call)
// agrees with clock_gettime and never goes backwards, BE and LE.
func TestNanotime(t *testing.T) {
	for _, board := range arches {
		img := buildImage(t, board, "./kernel/boottest/progs/clocktest")
		r := boot(t, board, img, 32, "")
		r.mustContain(t, "clocktest: ok")
		if r.code != 0 {
			t.Errorf("%s: exit code %d\n%s", board, r.code, r.out)
		}
		for _, l := range strings.Split(r.out, "\n") {
			if strings.HasPrefix(l, "clocktest:") {
				t.Logf("%s: %s", board, l)
			}
		}
	}
}

// TestClockSettime: clock_settime and clock_settime64 set CLOCK_REALTIME
// (time.Now follows, CLOCK_MONOTONIC does not) and refuse other clocks,
// out-of-range timespecs (EINVAL) and bad pointers (EFAULT), BE and LE.
func TestClockSettime(t *testing.T) {
	for _, board := range arches {
		img := buildImage(t, board, "./kernel/boottest/progs/settimetest")
		r := boot(t, board, img, 32, "")
		r.mustContain(t, "settimetest: ok")
		if r.code != 0 {
			t.Errorf("%s: exit code %d\n%s", board, r.code, r.out)
		}
	}
}

// TestConsoleLog: kernel.ConsoleLog returns what the program printed
// (stdout and stderr), continues where the last read ended and reports
// output older than its ring as lost, BE and LE.
func TestConsoleLog(t *testing.T) {
	for _, board := range arches {
		img := buildImage(t, board, "./kernel/boottest/progs/conlogtest")
		r := boot(t, board, img, 32, "")
		r.mustContain(t, "conlogtest: ok")
		if r.code != 0 {
			t.Errorf("%s: exit code %d\n%s", board, r.code, r.out)
		}
	}
}
