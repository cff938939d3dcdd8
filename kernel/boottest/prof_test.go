//go:build !mips && !mipsle

package boottest

import (
	"strings"
	"testing"
)

// bootOK boots the test program ./kernel/boottest/progs/NAME with memMiB
// on both byte orders and requires its "NAME: ok" line and exit code 0;
// it returns the console of each.
func bootOK(t *testing.T, name string, memMiB int) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, board := range arches {
		img := buildImage(t, board, "./kernel/boottest/progs/"+name)
		r := boot(t, board, img, memMiB, "")
		r.mustContain(t, name+": ok")
		if r.code != 0 {
			t.Errorf("%s: exit code %d\n%s", board, r.code, r.out)
		}
		out[board] = r.out
	}
	return out
}

// TestCPUProfile: runtime/pprof's CPU profiler works on the kernel
// (setitimer ITIMER_PROF delivering SIGPROF), on both byte orders.
func TestCPUProfile(t *testing.T) { bootOK(t, "proftest", 64) }

// TestNanotime: kernel.Nanotime (CP0 Count read without a system call)
// agrees with clock_gettime and never goes backwards, BE and LE.
func TestNanotime(t *testing.T) {
	for board, out := range bootOK(t, "clocktest", 32) {
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "clocktest:") {
				t.Logf("%s: %s", board, l)
			}
		}
	}
}

// TestClockSettime: clock_settime and clock_settime64 set CLOCK_REALTIME
// (time.Now follows, CLOCK_MONOTONIC does not) and refuse other clocks,
// out-of-range timespecs (EINVAL) and bad pointers (EFAULT), BE and LE.
func TestClockSettime(t *testing.T) { bootOK(t, "settimetest", 32) }

// TestConsoleLog: kernel.ConsoleLog returns what the program printed
// (stdout and stderr), continues where the last read ended and reports
// output older than its ring as lost, BE and LE.
func TestConsoleLog(t *testing.T) { bootOK(t, "conlogtest", 32) }
