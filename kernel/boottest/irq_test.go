//go:build !mips && !mipsle

package boottest

import (
	"strings"
	"testing"
)

// TestInterrupts boots progs/irqtest: the RTC's periodic interrupt (ISA IRQ
// 8 on the slave i8259) is delivered to a handler goroutine through
// intr.Dispatcher with the kernel's i8259 Controller and Source, keeps
// flowing for 200 ms (nothing lost while the line is masked), and the
// interrupt-to-goroutine latency is reported.
func TestInterrupts(t *testing.T) {
	for _, board := range arches {
		img := buildImage(t, board, "./kernel/boottest/progs/irqtest")
		r := boot(t, board, img, 32, "", icount...)
		r.mustContain(t, "PASS intr", "PASS intr under load", "irqtest: ok")
		if r.code != 0 {
			t.Fatalf("%s: exit %d\n%s", board, r.code, r.out)
		}
		for _, l := range strings.Split(r.out, "\n") {
			if strings.HasPrefix(l, "intr") || strings.HasPrefix(l, "irq source") || strings.HasPrefix(l, "irq latency") {
				t.Logf("%s: %s", board, l)
			}
		}
	}
}
