//go:build !mips && !mipsle

package boottest

import (
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gowrt/gowrt/internal/qemu"
)

const selftest = "./kernel/boottest/progs/selftest"

var icount = qemu.Deterministic

var checkRE = regexp.MustCompile(`(?m)^(PASS|FAIL) (\S+)`)

// TestSelftest boots the self-test program on both byte orders at 32 and
// 128 MiB; every check must pass (goroutines and channels, mutex
// contention, GC pressure, sleep and ticker accuracy, select timeouts,
// crypto/rand, recover from nil dereference, preemption of a call-free
// loop, fmt, maps, WaitGroup over 100 goroutines, argv/env, wall clock,
// kseg0 write-back whatever the loader set).
func TestSelftest(t *testing.T) {
	for _, board := range arches {
		img := buildImage(t, board, selftest)
		for _, mem := range []int{32, 128} {
			// -icount: guest time advances 1 ns per instruction and
			// jumps over idle periods, so the timing checks measure the
			// kernel and runtime, not the host's load (CI shares 2 cores).
			r := boot(t, board, img, mem, "all SELFTEST=yes", icount...)
			got := map[string]string{}
			for _, m := range checkRE.FindAllStringSubmatch(r.out, -1) {
				got[m[2]] = m[1]
			}
			for _, c := range []string{"goroutines", "mutex", "gc", "sleep", "ticker", "select", "rand",
				"nilderef", "preempt", "fmt", "maps", "waitgroup", "args", "walltime", "mmap", "nilpage", "sigbus", "unknown", "divzero", "threads", "reboot", "cache",
				"scavenge", "memlimit"} {
				if got[c] != "PASS" {
					t.Errorf("%s -m %d: check %s: %q", board, mem, c, got[c])
				}
			}
			// QEMU resets Config.K0 to 2 (uncached) and its loader leaves
			// it: K0 3 here is the kernel's doing.
			if !strings.Contains(r.out, "cache: K0 3 (the loader's K0 2)") {
				t.Errorf("%s -m %d: kernel did not switch kseg0 from uncached to write-back", board, mem)
			}
			if !strings.Contains(r.out, " 0 colour misses") {
				t.Errorf("%s -m %d: demand-zero pages got frames of the wrong cache colour", board, mem)
			}
			if n := strings.Count(r.out, "gowrt: unimplemented system call 4499"); n != 1 {
				t.Errorf("%s -m %d: unknown system call logged %d times, want once", board, mem, n)
			}
			if r.code != 0 || !strings.Contains(r.out, "selftest: done 0 failed") {
				t.Errorf("%s -m %d: exit %d\n%s", board, mem, r.code, r.out)
			} else {
				for _, l := range strings.Split(r.out, "\n") {
					if strings.HasPrefix(l, "sleep:") || strings.HasPrefix(l, "ticker:") || strings.HasPrefix(l, "selftest: ram") || strings.HasPrefix(l, "cache:") ||
						strings.HasPrefix(l, "scavenge:") || strings.HasPrefix(l, "memlimit:") {
						t.Logf("%s -m %d: %s", board, mem, l)
					}
				}
			}
		}
	}
}

// TestExitCodes checks that os.Exit(n) reaches the runner as "gowrt: exit n".
func TestExitCodes(t *testing.T) {
	for _, board := range arches {
		img := buildImage(t, board, selftest)
		for _, n := range []int{0, 3, 255} {
			r := boot(t, board, img, 32, "exit:"+itoa(n))
			if r.code != n {
				t.Errorf("%s: os.Exit(%d) gave exit %d\n%s", board, n, r.code, r.out)
			}
		}
	}
}

// TestPanicTrace checks that an unrecovered panic prints the runtime's
// message and goroutine traces and exits 2, like on Linux.
func TestPanicTrace(t *testing.T) {
	for _, board := range arches {
		img := buildImage(t, board, selftest)
		r := boot(t, board, img, 32, "panic")
		r.mustContain(t, "panic: boom", "goroutine 1 [running]:", "main.panicNow", "main.main()")
		if r.code != 2 {
			t.Errorf("%s: panic exit code %d, want 2\n%s", board, r.code, r.out)
		}
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	s := ""
	for ; n > 0; n /= 10 {
		s = string(rune('0'+n%10)) + s
	}
	return s
}

// TestOOM checks that exhausting memory ends the program the way Linux's
// OOM killer does under its default heuristic overcommit (the kernel admits
// the runtime's 4 MiB heap steps and charges RAM on first touch, see
// kernel/overcommit.go): the kernel names the address it could not back
// and exits with SIGKILL's status, 137, not a hang or a kernel crash, and
// only after the program held most of the RAM.
func TestOOM(t *testing.T) {
	for _, board := range arches {
		img := buildImage(t, board, selftest)
		r := boot(t, board, img, 32, "oom", icount...)
		r.mustContain(t, "gowrt: out of memory paging in ")
		if r.code != 137 {
			t.Errorf("%s: exit %d, want 137", board, r.code)
		}
		// The 32 MiB board holds a small image: the program got at
		// least 16 MiB before it ran out.
		r.mustContain(t, "oom: holding 17 MiB")
	}
}

// TestConsoleRead checks blocking console input: the program blocks in
// read(0) until the UART receive interrupt delivers the line.
func TestConsoleRead(t *testing.T) {
	for _, board := range arches {
		img := buildImage(t, board, selftest)
		pr, pw := io.Pipe()
		go func() {
			time.Sleep(300 * time.Millisecond) // arrive after the read blocked
			io.WriteString(pw, "ping from the host\n")
			time.Sleep(500 * time.Millisecond)
			pw.Close()
		}()
		r := bootIn(t, board, img, 32, "echo", pr)
		r.mustContain(t, `echo: "ping from the host\n" <nil>`)
	}
}

// TestSIGILL: a reserved instruction in Go code reaches the runtime as
// SIGILL with the right PC and code; Go treats SIGILL as fatal (as on
// Linux), so the program ends with the runtime's own message and trace.
func TestSIGILL(t *testing.T) {
	for _, board := range arches {
		img := buildImage(t, board, selftest)
		r := boot(t, board, img, 32, "sigill", icount...)
		r.mustContain(t, "SIGILL: illegal instruction", "sigcode=1", "main.illegal()", "instruction bytes:")
		if r.code != 2 {
			t.Errorf("%s: exit %d, want 2", board, r.code)
		}
	}
}

// TestKernelFault: an exception inside the kernel's trap handler (here a
// deliberate load from an unmapped kseg2 address, allowed only with the
// ktest switch) prints both register sets and halts; it never continues.
func TestKernelFault(t *testing.T) {
	for _, board := range arches {
		img := buildImage(t, board, selftest)
		r := boot(t, board, img, 32, "ktest kcrash", icount...)
		r.mustContain(t, "gowrt: fatal: exception in kernel trap context", "badvaddr 0xdead0000", "interrupted context:")
		if strings.Contains(r.out, "still alive") || r.code != 139 {
			t.Errorf("%s: kernel fault did not halt (exit %d)\n%s", board, r.code, r.out)
		}
		// Without the switch the call is refused.
		r = boot(t, board, img, 32, "kcrash", icount...)
		r.mustContain(t, "still alive")
	}
}

// TestStackOverflow: unbounded recursion ends in the runtime's own message.
func TestStackOverflow(t *testing.T) {
	for _, board := range arches {
		img := buildImage(t, board, selftest)
		r := boot(t, board, img, 32, "stackoverflow", icount...)
		r.mustContain(t, "goroutine stack exceeds", "fatal error: stack overflow")
		if r.code != 2 {
			t.Errorf("%s: exit %d, want 2", board, r.code)
		}
	}
}

// TestClockWrap sleeps 70 s of guest time (under -icount the idle time is
// skipped, so it takes a few host seconds) across several CP0 Count wraps
// and compares CLOCK_MONOTONIC with the RTC, which follows guest time with
// -rtc clock=vm.
func TestClockWrap(t *testing.T) {
	for _, board := range arches {
		img := buildImage(t, board, selftest)
		r := boot(t, board, img, 32, "wrap", icount...)
		r.mustContain(t, "PASS wrap")
		for _, l := range strings.Split(r.out, "\n") {
			if strings.HasPrefix(l, "wrap:") {
				t.Logf("%s: %s", board, l)
			}
		}
	}
}

var randdumpRE = regexp.MustCompile(`(?m)^randdump: ([0-9a-f]{32})$`)

// TestRandomSeed: the kernel's random numbers are keyed at boot from what
// differs between boots (QEMU's rngseed, from QEMU's -seed here, and the
// CP0 Count readings, which the parse of a different rngseed also moves),
// through the platform's seed hook, and from nothing else: runs that
// differ only in -seed differ, two runs with the same -seed under -icount
// are the same. (That the loader's seed itself survives the hook is
// TestSeedRoundTrip in package kernel, under qemu-mips.)
func TestRandomSeed(t *testing.T) {
	noSeed := icount[:len(icount)-2]
	if icount[len(icount)-2] != "-seed" {
		t.Fatalf("qemu.Deterministic no longer ends with -seed: %q", icount)
	}
	for _, board := range arches {
		img := buildImage(t, board, selftest)
		dump := func(seed string) string {
			r := boot(t, board, img, 32, "randdump", append(append([]string(nil), noSeed...), "-seed", seed)...)
			m := randdumpRE.FindStringSubmatch(r.out)
			if m == nil || r.code != 0 {
				t.Fatalf("%s -seed %s: exit %d\n%s", board, seed, r.code, r.out)
			}
			return m[1]
		}
		a, b, a2 := dump("1"), dump("2"), dump("1")
		if a == b {
			t.Errorf("%s: QEMU seeds 1 and 2 give the same random bytes %s: the loader's seed does not key the kernel", board, a)
		}
		if a != a2 {
			t.Errorf("%s: the same seed gives %s and %s under -icount", board, a, a2)
		}
	}
}
