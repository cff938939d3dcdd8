package reorder

import (
	"slices"
	"testing"
	"time"

	"github.com/gowrt/gowrt/wlan"
)

var t0 = time.Unix(1000, 0)

func popAll[T any](b *Buffer[T]) []T {
	var out []T
	for {
		v, ok := b.Pop()
		if !ok {
			return out
		}
		out = append(out, v)
	}
}

func TestInOrderPassesThrough(t *testing.T) {
	b := New[int](100, 64, 64, 100*time.Millisecond)
	for sn := uint16(100); sn < 110; sn++ {
		if v := b.Add(sn, int(sn), t0); v != Queued {
			t.Fatalf("sn %d: %v", sn, v)
		}
		if got, ok := b.Pop(); !ok || got != int(sn) {
			t.Fatalf("sn %d: popped %d %v", sn, got, ok)
		}
	}
	if b.Head() != 110 || b.Buffered() != 0 {
		t.Fatalf("head %d buffered %d", b.Head(), b.Buffered())
	}
}

func TestReordersAHole(t *testing.T) {
	b := New[int](0, 64, 64, time.Second)
	b.Add(1, 1, t0)
	b.Add(2, 2, t0)
	if got := popAll(b); len(got) != 0 {
		t.Fatalf("delivered %v past the hole at 0", got)
	}
	b.Add(0, 0, t0)
	if got := popAll(b); !slices.Equal(got, []int{0, 1, 2}) {
		t.Fatalf("got %v", got)
	}
}

func TestDuplicateAndOldDropped(t *testing.T) {
	b := New[int](10, 64, 64, time.Second)
	b.Add(12, 12, t0)
	if v := b.Add(12, -1, t0); v != DropDup {
		t.Fatalf("duplicate in window: %v", v)
	}
	b.Add(10, 10, t0)
	b.Add(11, 11, t0)
	if v := b.Add(11, -1, t0); v != DropOld {
		t.Fatalf("delivered sn again: %v", v)
	}
	if v := b.Add((b.Head()+4096-2048)%4096, -1, t0); v != DropOld { // half the space behind
		t.Fatalf("far behind: %v", v)
	}
	if got := popAll(b); !slices.Equal(got, []int{10, 11, 12}) {
		t.Fatalf("got %v", got)
	}
	if b.Stats.Dup != 1 || b.Stats.Old != 2 {
		t.Fatalf("stats %+v", b.Stats)
	}
}

// TestAheadMovesWindow: a frame beyond WinEnd moves the window so that it
// is the last entry, releasing what falls out (10.24).
func TestAheadMovesWindow(t *testing.T) {
	b := New[int](0, 8, 64, time.Second)
	b.Add(2, 2, t0)
	b.Add(5, 5, t0)
	b.Add(12, 12, t0) // window becomes 5..12: 0,1,3,4 skipped, 2 released
	if b.Head() != 6 {
		t.Fatalf("head %d, want 6", b.Head())
	}
	if got := popAll(b); !slices.Equal(got, []int{2, 5}) {
		t.Fatalf("got %v", got)
	}
	if b.Stats.Skipped != 4 {
		t.Fatalf("skipped %d, want 4", b.Stats.Skipped)
	}
	b.Add(6, 6, t0)
	if got := popAll(b); !slices.Equal(got, []int{6}) {
		t.Fatalf("got %v", got)
	}
}

func TestWrapAround(t *testing.T) {
	b := New[int](4094, 64, 64, time.Second)
	b.Add(1, 1, t0)
	b.Add(4095, 4095, t0)
	b.Add(0, 0, t0)
	b.Add(4094, 4094, t0)
	if got := popAll(b); !slices.Equal(got, []int{4094, 4095, 0, 1}) {
		t.Fatalf("got %v", got)
	}
	if b.Head() != 2 {
		t.Fatalf("head %d", b.Head())
	}
}

func TestBARMovesWindow(t *testing.T) {
	b := New[int](0, 64, 64, time.Second)
	b.Add(3, 3, t0)
	b.Add(7, 7, t0)
	b.MoveWindow(5) // 0-2, 4 given up; 3 released
	if got := popAll(b); !slices.Equal(got, []int{3}) {
		t.Fatalf("got %v", got)
	}
	if b.Head() != 5 {
		t.Fatalf("head %d", b.Head())
	}
	b.MoveWindow(2) // behind: nothing
	if b.Head() != 5 {
		t.Fatalf("head moved back to %d", b.Head())
	}
	b.Add(5, 5, t0)
	b.Add(6, 6, t0)
	if got := popAll(b); !slices.Equal(got, []int{5, 6, 7}) {
		t.Fatalf("got %v", got)
	}
}

func TestTimeoutFlush(t *testing.T) {
	b := New[int](0, 64, 64, 100*time.Millisecond)
	b.Add(2, 2, t0)
	b.Add(4, 4, t0.Add(50*time.Millisecond))
	if d, ok := b.Deadline(); !ok || !d.Equal(t0.Add(100*time.Millisecond)) {
		t.Fatalf("deadline %v %v", d, ok)
	}
	b.Expire(t0.Add(99 * time.Millisecond))
	if got := popAll(b); len(got) != 0 {
		t.Fatalf("released %v before the timeout", got)
	}
	b.Expire(t0.Add(100 * time.Millisecond)) // 2 has waited long enough; 4 not
	if got := popAll(b); !slices.Equal(got, []int{2}) {
		t.Fatalf("got %v", got)
	}
	if b.Head() != 3 || b.Stats.TimedOut != 2 {
		t.Fatalf("head %d timed out %d", b.Head(), b.Stats.TimedOut)
	}
	b.Expire(t0.Add(150 * time.Millisecond))
	if got := popAll(b); !slices.Equal(got, []int{4}) {
		t.Fatalf("got %v", got)
	}
	if _, ok := b.Deadline(); ok {
		t.Fatal("deadline with nothing buffered")
	}
}

func TestFlush(t *testing.T) {
	b := New[int](0, 64, 64, time.Second)
	b.Add(3, 3, t0)
	b.Add(1, 1, t0)
	b.Flush()
	if got := popAll(b); !slices.Equal(got, []int{1, 3}) {
		t.Fatalf("got %v", got)
	}
	if b.Head() != 4 {
		t.Fatalf("head %d", b.Head())
	}
}

// TestAMSDUSubframesShareSN: the subframes of one A-MSDU arrive with one
// sequence number; all are delivered, in order, and a retransmitted copy
// of the whole A-MSDU is dropped whole.
func TestAMSDUSubframesShareSN(t *testing.T) {
	b := New[int](0, 64, 256, time.Second)
	// MPDU 1 (an A-MSDU of three) waits for MPDU 0.
	b.Add(1, 10, t0)
	b.AddSubframe(1, 11, t0)
	b.AddSubframe(1, 12, t0)
	b.Add(0, 0, t0)
	// MPDU 2 arrives in order: released at once, then its subframes.
	b.Add(2, 20, t0)
	b.Add(3, 30, t0) // in order too; 2's next subframes must still precede it
	b.Add(2, -1, t0) // retransmission of 2: dropped...
	for _, v := range []int{-2, -3} {
		if got := b.AddSubframe(2, v, t0); got != DropOld {
			t.Fatalf("retransmitted subframe: %v", got)
		}
	}
	if got := popAll(b); !slices.Equal(got, []int{0, 10, 11, 12, 20, 30}) {
		t.Fatalf("got %v", got)
	}
	// A-MSDU whose subframes arrive after MPDU 4 was released but not popped.
	b.Add(4, 40, t0)
	b.Add(5, 50, t0)
	b.AddSubframe(5, 51, t0)
	b.Add(6, 60, t0)
	if got := popAll(b); !slices.Equal(got, []int{40, 50, 51, 60}) {
		t.Fatalf("got %v", got)
	}
	// Subframe after the earlier ones were popped: delivered next.
	b.Add(7, 70, t0)
	if v, _ := b.Pop(); v != 70 {
		t.Fatal(v)
	}
	b.AddSubframe(7, 71, t0)
	if got := popAll(b); !slices.Equal(got, []int{71}) {
		t.Fatalf("got %v", got)
	}
	if b.Stats.Queued != 12 {
		t.Fatalf("queued %d", b.Stats.Queued)
	}
}

func TestFullIsCounted(t *testing.T) {
	b := New[int](0, 4, 4, time.Second)
	b.Add(1, 1, t0)
	b.AddSubframe(1, 2, t0)
	b.AddSubframe(1, 3, t0)
	b.AddSubframe(1, 4, t0)
	if v := b.AddSubframe(1, 5, t0); v != DropFull {
		t.Fatalf("got %v", v)
	}
	if v := b.Add(2, 6, t0); v != DropFull || b.Stats.Full != 2 {
		t.Fatalf("got %v, stats %+v", v, b.Stats)
	}
	b.Add(0, 0, t0)
	// 0 could not be stored either (no node): the window stays.
	b.MoveWindow(1)
	if got := popAll(b); !slices.Equal(got, []int{1, 2, 3, 4}) {
		t.Fatalf("got %v", got)
	}
}

func TestAllocs(t *testing.T) {
	b := New[int](0, 64, 128, time.Second)
	sn := uint16(0)
	n := testing.AllocsPerRun(1000, func() {
		b.Add((sn+1)%4096, 1, t0)
		b.AddSubframe((sn+1)%4096, 2, t0)
		b.Add(sn, 0, t0)
		for {
			if _, ok := b.Pop(); !ok {
				break
			}
		}
		b.Expire(t0)
		sn = (sn + 2) % 4096
	})
	if n != 0 {
		t.Fatalf("%v allocations per frame pair", n)
	}
}

func BenchmarkAddPop(b *testing.B) {
	r := New[int](0, 64, 128, time.Second)
	b.ReportAllocs()
	sn := uint16(0)
	for range b.N {
		r.Add(sn, 0, t0)
		r.Pop()
		sn = (sn + 1) % wlan.SeqModulo
	}
}

func TestDupFilter(t *testing.T) {
	var d DupFilter
	sc := wlan.NewSeqControl(100, 0)
	if d.Check(0, sc, false) {
		t.Fatal("first frame is a duplicate")
	}
	if !d.Check(0, sc, true) {
		t.Fatal("retry with the same sequence control is not a duplicate")
	}
	if d.Check(0, sc, false) {
		t.Fatal("without Retry it is a new frame (the sender wrapped)")
	}
	if d.Check(1, sc, true) {
		t.Fatal("another TID's cache matched")
	}
	if d.Check(wlan.NonQoSTID, sc, true) {
		t.Fatal("non-QoS cache matched a QoS frame")
	}
	if d.Check(0, wlan.NewSeqControl(100, 1), true) {
		t.Fatal("another fragment is not a duplicate")
	}
	if d.Duplicates != 1 {
		t.Fatalf("duplicates %d", d.Duplicates)
	}
}

// TestDupFilterAMSDUSubframes is the ath10k case: an A-MSDU retransmitted
// (Retry set, first transmission lost) arrives as three subframes with one
// sequence number; all three must pass. A second copy must not.
func TestDupFilterAMSDUSubframes(t *testing.T) {
	var d DupFilter
	d.Check(5, wlan.NewSeqControl(9, 0), false)
	sc := wlan.NewSeqControl(10, 0)
	for i := range 3 {
		if d.CheckSubframe(5, sc, true, i == 0) {
			t.Fatalf("subframe %d of a new A-MSDU dropped as duplicate", i)
		}
	}
	for i := range 3 {
		if !d.CheckSubframe(5, sc, true, i == 0) {
			t.Fatalf("subframe %d of a repeated A-MSDU passed", i)
		}
	}
	// A later subframe whose first was lost is checked on its own.
	if d.CheckSubframe(5, wlan.NewSeqControl(11, 0), true, false) {
		t.Fatal("subframe of a new MPDU dropped")
	}
	if d.Duplicates != 3 {
		t.Fatalf("duplicates %d", d.Duplicates)
	}
	// What a filter without the subframe rule does: the naive per-frame
	// check tosses subframes 2 and 3.
	var naive DupFilter
	sc = wlan.NewSeqControl(20, 0)
	drops := 0
	for range 3 {
		if naive.Check(5, sc, true) {
			drops++
		}
	}
	if drops != 2 {
		t.Fatalf("naive check dropped %d", drops)
	}
}
