//go:build !mips && !mipsle

package boottest

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gowrt/gowrt/internal/image"
	"github.com/gowrt/gowrt/internal/qemu"
)

// ccmpFrames is how many 1500-octet frames progs/ccmpbench protects and
// checks per run.
const ccmpFrames = 500

var ccmpResult = regexp.MustCompile(`ccmpbench: frames=(\d+) encap=(\d+) decap=(\d+) aes=(\d+)`)

// ccmpCost is one run's instructions per 1500-octet frame.
type ccmpCost struct{ encap, decap, aes int64 }

// runCCMPBench runs progs/ccmpbench on QEMU malta under -icount
// shift=0,sleep=off (qemu.Deterministic: guest nanoseconds are
// instructions) and returns its figures.
func runCCMPBench(tb testing.TB, board string) ccmpCost {
	tb.Helper()
	img, err := images.Build(board, "./board/malta/boottest/progs/ccmpbench")
	if err != nil {
		tb.Fatal(err)
	}
	b, _ := image.LookupBoard(board)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := qemu.Machine{Board: b, Kernel: img, MemMiB: 32, Deterministic: true, Append: strconv.Itoa(ccmpFrames)}.Command(ctx)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	s := strings.ReplaceAll(out.String(), "\r\n", "\n")
	if ctx.Err() != nil {
		tb.Fatalf("timed out:\n%s", s)
	}
	if err != nil || !strings.Contains(s, "ccmpbench: done") {
		tb.Fatalf("ccmpbench failed (%v):\n%s", err, s)
	}
	m := ccmpResult.FindStringSubmatch(s)
	if m == nil {
		tb.Fatalf("no result line:\n%s", s)
	}
	if n, _ := strconv.Atoi(m[1]); n != ccmpFrames {
		tb.Fatalf("ran %d frames, want %d", n, ccmpFrames)
	}
	var c ccmpCost
	c.encap, _ = strconv.ParseInt(m[2], 10, 64)
	c.decap, _ = strconv.ParseInt(m[3], 10, 64)
	c.aes, _ = strconv.ParseInt(m[4], 10, 64)
	return c
}

// TestCCMPInstructions runs wlan/ccmp on both malta boards and checks
// the figures hang together: CCM runs AES over every block twice (CBC-MAC
// and CTR), so protecting or checking a frame costs at least about twice
// the raw AES of its body, and a figure below that means the program
// measured something else (a frame not encrypted, a clock not counting
// instructions).
func TestCCMPInstructions(t *testing.T) {
	for _, board := range boards {
		t.Run(board, func(t *testing.T) {
			c := runCCMPBench(t, board)
			t.Logf("%s: instructions per 1500-octet MPDU: encap %d, decap %d (raw AES of the body %d)", board, c.encap, c.decap, c.aes)
			if c.aes <= 0 {
				t.Fatalf("raw AES took %d instructions per frame", c.aes)
			}
			for name, v := range map[string]int64{"encap": c.encap, "decap": c.decap} {
				if r := float64(v) / float64(c.aes); r < 1.8 || r > 20 {
					t.Errorf("%s costs %.2f × the raw AES of the body, want about 2 to a few", name, r)
				}
			}
		})
	}
}

// BenchmarkCCMPInstructions reports the same figures as metrics
// (instructions per frame; b.N is not used: the guest's count is exact).
func BenchmarkCCMPInstructions(b *testing.B) {
	for _, board := range boards {
		b.Run(board, func(b *testing.B) {
			var c ccmpCost
			for range b.N {
				c = runCCMPBench(b, board)
			}
			b.ReportMetric(float64(c.encap), "encap-instr/frame")
			b.ReportMetric(float64(c.decap), "decap-instr/frame")
			b.ReportMetric(float64(c.aes), "aes-instr/frame")
		})
	}
}
