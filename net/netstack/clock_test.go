package netstack

import (
	"testing"
	"time"

	"gvisor.dev/gvisor/pkg/tcpip"
)

// Off the gowrt kernel (host, qemu-mips) StackClock is gVisor's standard
// clock and Nanotime the time package's; both move forward.
func TestClocksAdvance(t *testing.T) {
	c := StackClock()
	if _, ok := c.(kernelClock); ok {
		t.Fatal("kernel clock chosen off the gowrt kernel")
	}
	m0, n0 := c.NowMonotonic(), Nanotime()
	time.Sleep(2 * time.Millisecond)
	if d := c.NowMonotonic().Sub(m0); d < time.Millisecond {
		t.Fatalf("stack clock advanced %v over 2 ms", d)
	}
	if d := Nanotime() - n0; d < int64(time.Millisecond) {
		t.Fatalf("Nanotime advanced %d ns over 2 ms", d)
	}
}

// TestMonotonicMatchesAdd: the direct construction gives what gVisor's
// own MonotonicTime.Add does, and orders and subtracts the same.
func TestMonotonicMatchesAdd(t *testing.T) {
	vals := []int64{0, 1, 999_999_999, 1_000_000_000, 86_400 * 1e9, 1 << 40, 1<<62 + 12345}
	for _, ns := range vals {
		if got, want := monotonic(ns), (tcpip.MonotonicTime{}).Add(time.Duration(ns)); got != want {
			t.Errorf("monotonic(%d) = %v, Add gives %v", ns, got, want)
		}
	}
	a, b := monotonic(5_000_000_123), monotonic(7_000_000_456)
	if !a.Before(b) || b.Sub(a) != 2_000_000_333 {
		t.Errorf("order or difference wrong: %v %v %v", a, b, b.Sub(a))
	}
}
