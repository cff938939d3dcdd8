package net

import (
	"sync"
	"testing"
)

// TestCounterCarries: Add crosses 2^31 and 2^32 boundaries (set up by
// poking the words) and Load follows, including between an adder's two
// steps (lo added, the crossing not yet counted in hi).
func TestCounterCarries(t *testing.T) {
	var c Counter
	c.lo.Store(1<<31 - 3)
	c.Add(2)
	if got := c.Load(); got != 1<<31-1 {
		t.Fatalf("got %d", got)
	}
	c.Add(5) // crosses 2^31
	if got, want := c.Load(), uint64(1<<31+4); got != want {
		t.Fatalf("got %d, want %d", got, want)
	}
	c.lo.Store(1<<32 - 1)
	c.hi.Store(1) // one crossing (2^31) counted
	c.Add(3)      // crosses 2^32: 2^32 + 2
	if got, want := c.Load(), uint64(1<<32+2); got != want {
		t.Fatalf("got %#x, want %#x", got, want)
	}
	// An adder between its two steps: lo crossed 2^32 again, hi not yet.
	c.lo.Store(1<<32 - 2)
	c.hi.Store(3)
	c.lo.Add(4)
	if got, want := c.Load(), uint64(2<<32+2); got != want {
		t.Fatalf("pending carry: got %#x, want %#x", got, want)
	}
	c.hi.Add(1)
	if got, want := c.Load(), uint64(2<<32+2); got != want {
		t.Fatalf("after the carry: got %#x, want %#x", got, want)
	}
}

// TestCounterConcurrent: adders and readers at once (run with -race),
// across a 2^32 boundary: readers never see the count go backwards and
// the total is exact.
func TestCounterConcurrent(t *testing.T) {
	var c Counter
	c.lo.Store(1<<32 - 50000)
	c.hi.Store(1)
	start := c.Load()
	const adders, adds = 4, 20000
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for range 2 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			last := c.Load()
			for {
				select {
				case <-stop:
					return
				default:
				}
				v := c.Load()
				if v < last {
					t.Errorf("went back from %#x to %#x", last, v)
					return
				}
				last = v
			}
		}()
	}
	for range adders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range adds {
				c.Add(3)
			}
		}()
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	if got, want := c.Load(), start+adders*adds*3; got != want {
		t.Fatalf("got %#x, want %#x", got, want)
	}
}
