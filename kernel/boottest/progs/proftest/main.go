// Command proftest takes a CPU profile with runtime/pprof on the gowrt
// kernel (setitimer ITIMER_PROF and SIGPROF) while spinning in a known
// function, and checks that the profile holds samples of it.
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

func main() {
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		fail("StartCPUProfile: %v", err)
	}
	spinForProfile(700 * time.Millisecond)
	time.Sleep(200 * time.Millisecond) // idle: must not be sampled
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
	if !bytes.Contains(raw, []byte("main.spinForProfile")) {
		fail("no samples of main.spinForProfile in a %d-byte profile", len(raw))
	}
	fmt.Printf("proftest: ok, %d-byte profile with samples of main.spinForProfile\n", len(raw))
}

func fail(format string, args ...any) {
	fmt.Printf("proftest: FAIL "+format+"\n", args...)
	os.Exit(1)
}
