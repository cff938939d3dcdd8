//go:build !mips && !mipsle

package boottest

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gowrt/gowrt/internal/image"
	"github.com/gowrt/gowrt/internal/qemu"
)

var timerraceRE = regexp.MustCompile(`timerrace: 3000 sleeps of 0-3 us, longest (\S+); (\d+) deadlines passed while writing Compare`)

// TestHazardCompareRace: QEMU 7.2 loses a Compare deadline that passes while
// Compare is being written (observed; its cpu_mips_store_compare in
// target/mips/sysemu/cp0_timer.c arms the timer before clearing TI): the
// timer then fires only after Count wraps, 25.8 s later. The kernel re-reads
// Count after every write and handles a passed deadline at once. Thousands
// of 0-3 µs futex timeouts hit the race; with the guard they all finish,
// with the guard switched off (kcompare=noguard) the first lost deadline
// stalls the machine. Not under -icount: the race needs QEMU's real-time
// timer thread.
func TestHazardCompareRace(t *testing.T) {
	board := "malta-be"
	img := buildImage(t, board, selftest)
	r := boot(t, board, img, 32, "timerrace")
	m := timerraceRE.FindStringSubmatch(r.out)
	if m == nil || r.code != 0 {
		t.Fatalf("guarded kernel: exit %d\n%s", r.code, r.out)
	}
	if n, _ := strconv.Atoi(m[2]); n == 0 {
		t.Fatalf("no deadline passed while writing Compare: the test did not reach the race\n%s", r.out)
	}
	t.Logf("guarded: longest sleep %s, %s deadlines passed during the write and were caught", m[1], m[2])

	b, _ := image.LookupBoard(board)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	cmd := qemu.Machine{Board: b, Kernel: img, MemMiB: 32, Append: "timerrace kcompare=noguard"}.Command(ctx)
	out, _ := cmd.CombinedOutput()
	if strings.Contains(string(out), "timerrace:") {
		t.Fatalf("without the guard the sweep still finished: the test cannot see the race\n%s", out)
	}
	t.Logf("unguarded: stalled (no result within 15 s), as expected")
}
