package netstack

import (
	"fmt"
	"sync"
	"sync/atomic"
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

// TestCoarseClock: the coarse clock starts at its source's time on the
// first read, follows the source within a few periods, never goes back
// while readers race the refreshing goroutine, and reads allocate
// nothing. Off the gowrt kernel CoarseNanotime is Nanotime.
func TestCoarseClock(t *testing.T) {
	var src atomic.Int64
	src.Store(1<<32 - 5) // the halves' carry comes up soon
	c := &coarseClock{src: src.Load, period: time.Millisecond, stop: make(chan struct{})}
	defer close(c.stop)
	if got := c.now(); got != 1<<32-5 {
		t.Fatalf("first read %d, want the source's %d", got, int64(1<<32-5))
	}
	var wg sync.WaitGroup
	fail := make(chan string, 4)
	for r := 0; r < 3; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := int64(0)
			for i := 0; i < 20000; i++ {
				n := c.now()
				if n < last {
					fail <- fmt.Sprintf("went back from %d to %d", last, n)
					return
				}
				last = n
			}
		}()
	}
	for i := 0; i < 200; i++ {
		src.Add(1 << 20)
		time.Sleep(50 * time.Microsecond)
	}
	wg.Wait()
	close(fail)
	for m := range fail {
		t.Fatal(m)
	}
	want := src.Load()
	deadline := time.Now().Add(5 * time.Second)
	for c.now() != want {
		if time.Now().After(deadline) {
			t.Fatalf("coarse clock at %d, source at %d, after 5 s", c.now(), want)
		}
		time.Sleep(time.Millisecond)
	}
	if a := testing.AllocsPerRun(100, func() { c.now() }); a != 0 {
		t.Fatalf("%v allocations per read", a)
	}
	n0 := CoarseNanotime()
	time.Sleep(2 * time.Millisecond)
	if d := CoarseNanotime() - n0; d < int64(time.Millisecond) {
		t.Fatalf("CoarseNanotime advanced %d ns over 2 ms off the kernel", d)
	}
}
