package netstack

import (
	"testing"
	"time"
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
