//go:build !mips && !mipsle

package boottest

import (
	"bytes"
	"context"
	"debug/elf"
	"flag"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gowrt/gowrt/internal/image"
	"github.com/gowrt/gowrt/internal/qemu"
)

// fwdLoopFrames is how many forwarded frames TestForwardingLoopNoStall
// watches (issue 18: 200 k).
const fwdLoopFrames = 200_000

// fwdLoopMaxLap is the longest a lap of progs/fwdloop's marker frame
// (progs/fwdloop's inFlight forwarded frames, some 100 k instructions)
// may take, in instructions: far above a lap's cost, far below the
// 10 M of one time slice lost to a spinning thread.
const fwdLoopMaxLap = 1_000_000

// fwdLoopAppend adds kernel switches to the run, e.g.
// -fwdloop.append=kslice=plain (the kernel without its handling of the
// runtime's atomic lock: the test then fails).
var fwdLoopAppend = flag.String("fwdloop.append", "", "extra kernel command line for TestForwardingLoopNoStall")

var (
	fwdLoopResult = regexp.MustCompile(`fwdloop: frames=(\d+) laps=(\d+) in-flight=\d+ max-lap=(\d+) instructions=(\d+)`)
	fwdLoopLock   = regexp.MustCompile(`fwdloop: lock=(0x[0-9a-f]+|0) extends=(\d+) overruns=(\d+) spin-traps=(\d+)`)
)

// TestForwardingLoopNoStall runs progs/fwdloop on QEMU malta (little-
// endian) under -icount shift=0,sleep=off (qemu.Deterministic: one guest
// nanosecond per instruction, the same run every time): both pcnets on
// one QEMU hub, frames circling through gowrt's bridge for fwdLoopFrames
// forwarded frames, and asserts that no lap of the marker frame took
// more than fwdLoopMaxLap instructions. A thread descheduled inside the
// Go runtime's 64-bit atomic spinlock used to leave another (sysmon)
// spinning for its whole 10 ms slice: laps of 10, 20 and 30 M
// (kernel/atomiclock_mipsx.go). The image is built with the hazard hooks
// so that -fwdloop.append=kslice=plain can show that.
func TestForwardingLoopNoStall(t *testing.T) {
	for _, board := range boards {
		t.Run(board, func(t *testing.T) { fwdLoop(t, board) })
	}
}

func fwdLoop(t *testing.T, board string) {
	img, err := images.Build(board, "./board/malta/boottest/progs/fwdloop", "-tags", "gowrt_hazard")
	if err != nil {
		t.Fatal(err)
	}
	lockSym := elfSymbol(t, img, "internal/runtime/atomic.lock")
	b, _ := image.LookupBoard(board)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	args := strconv.Itoa(fwdLoopFrames)
	if *fwdLoopAppend != "" {
		args += " " + *fwdLoopAppend
	}
	// Both pcnets on QEMU hub 0: what one sends, the other receives.
	cmd := qemu.Machine{Board: b, Kernel: img, MemMiB: 32, Deterministic: true, Append: args,
		NIC: "hubport,hubid=0", WAN: "hubport,hubid=0"}.Command(ctx)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err = cmd.Run()
	took := time.Since(start)
	s := strings.ReplaceAll(out.String(), "\r\n", "\n")
	if ctx.Err() != nil {
		t.Fatalf("timed out after %v:\n%s", took, s)
	}
	if err != nil || !strings.Contains(s, "fwdloop: done") {
		t.Fatalf("fwdloop failed (%v):\n%s", err, s)
	}
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "fwdloop: ") {
			t.Log(l)
		}
	}
	t.Logf("QEMU ran %v", took.Round(time.Second))
	m := fwdLoopResult.FindStringSubmatch(s)
	lk := fwdLoopLock.FindStringSubmatch(s)
	if m == nil || lk == nil {
		t.Fatalf("no result lines:\n%s", s)
	}
	frames, _ := strconv.ParseUint(m[1], 10, 64)
	laps, _ := strconv.ParseUint(m[2], 10, 64)
	maxLap, _ := strconv.ParseInt(m[3], 10, 64)
	if frames != fwdLoopFrames || laps == 0 {
		t.Fatalf("forwarded %d frames in %d laps, want %d", frames, laps, fwdLoopFrames)
	}
	// The kernel decodes the lock's address from the runtime's code at
	// boot; the linker's symbol table says where it is.
	if got, _ := strconv.ParseUint(lk[1], 0, 32); got != lockSym {
		t.Errorf("the kernel found the runtime's 64-bit atomic lock at %#x, the image has it at %#x", got, lockSym)
	}
	if maxLap > fwdLoopMaxLap {
		t.Errorf("longest lap %d instructions, want at most %d (the kernel saw %s traps in a thread spinning on the lock)",
			maxLap, fwdLoopMaxLap, lk[4])
	}
}

// elfSymbol returns the address of the named symbol in the ELF file.
func elfSymbol(t *testing.T, path, name string) uint64 {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		if s.Name == name {
			return s.Value
		}
	}
	t.Fatalf("%s: no symbol %s", path, name)
	return 0
}
