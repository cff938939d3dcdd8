// Command proftest takes a CPU profile with runtime/pprof on the gowrt
// kernel (setitimer ITIMER_PROF and SIGPROF) while spinning in a known
// function, then while working in short bursts between sleeps, and checks
// that the profile holds samples of both; then one while an interrupt
// handler works (malta's RTC through intr.Dispatcher), which must hold the
// handler's samples.
package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"time"
)

var sink uint64

//go:noinline
func spinForProfile(d time.Duration) {
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		for i := 0; i < 10000; i++ {
			sink = sink*6364136223846793005 + 1442695040888963407
		}
	}
}

// burstForProfile works for d, as a frame's receive path does between
// idle spells.
//
//go:noinline
func burstForProfile(d time.Duration) {
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		for i := 0; i < 1000; i++ {
			sink = sink*6364136223846793005 + 1442695040888963407
		}
	}
}

func main() {
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		fail("StartCPUProfile: %v", err)
	}
	spinForProfile(700 * time.Millisecond)
	time.Sleep(200 * time.Millisecond) // idle: must not be sampled
	// 40 bursts of 2 ms, each after 25 ms of idle: 80 ms of CPU time,
	// some 8 samples at the profiler's 100 Hz. A timer counting wall
	// time instead of CPU time expires in each idle spell and, finding
	// the next period's end past too, starts it afresh at the wake-up:
	// no 2-ms burst outlasts it, and none is sampled.
	for range 40 {
		time.Sleep(25 * time.Millisecond)
		burstForProfile(2 * time.Millisecond)
	}
	pprof.StopCPUProfile()
	zr, err := gzip.NewReader(&buf)
	if err != nil {
		fail("profile is not gzip: %v", err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		fail("profile: %v", err)
	}
	// The profile's string table names only functions that appear in
	// samples: no SIGPROF, no name.
	for _, f := range []string{"main.spinForProfile", "main.burstForProfile"} {
		if !bytes.Contains(raw, []byte(f)) {
			fail("no samples of %s in a %d-byte profile", f, len(raw))
		}
	}
	// An interrupt handler's goroutine (intr.Dispatcher) is sampled too.
	hp, err := handlerProfile()
	if err != nil {
		fail("interrupt handler profile: %v", err)
	}
	if hp != nil {
		zr, err := gzip.NewReader(bytes.NewReader(hp))
		if err != nil {
			fail("handler profile is not gzip: %v", err)
		}
		hraw, err := io.ReadAll(zr)
		if err != nil {
			fail("handler profile: %v", err)
		}
		if !bytes.Contains(hraw, []byte("main.handlerForProfile")) {
			fail("no samples of the interrupt handler's main.handlerForProfile in a %d-byte profile", len(hraw))
		}
	}
	fmt.Printf("proftest: ok, %d-byte profile with samples of main.spinForProfile and main.burstForProfile, and of an interrupt handler\n", len(raw))
}

func fail(format string, args ...any) {
	fmt.Printf("proftest: FAIL "+format+"\n", args...)
	os.Exit(1)
}
