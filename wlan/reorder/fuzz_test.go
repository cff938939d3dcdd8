package reorder

import (
	"testing"
	"time"

	"github.com/gowrt/gowrt/wlan"
)

// FuzzBuffer drives a buffer with arbitrary operations and checks its
// invariants: no panic, every frame popped at most once, frames of
// distinct MPDUs come out in sequence number order, nothing is lost (every queued
// frame is popped after a Flush), and the counters add up.
func FuzzBuffer(f *testing.F) {
	f.Add([]byte{0, 1, 0, 0, 0, 2, 1, 1, 3, 4, 0})
	f.Add([]byte{0, 200, 0, 1, 0, 100, 2, 0, 50, 3, 9})
	f.Add([]byte{1, 0, 5, 1, 0, 5, 0, 0, 5, 4, 4, 4})
	f.Fuzz(func(t *testing.T, ops []byte) {
		b := New[int](0, 16, 40, 10*time.Millisecond)
		now := t0
		next := 0
		queued := map[int]bool{}
		popped := map[int]bool{}
		// Sequence numbers unwrapped: the window start only moves
		// forward, by less than half the space per operation.
		absHead := 0
		head := b.Head()
		track := func() {
			absHead += int(wlan.SeqSub(b.Head(), head))
			head = b.Head()
		}
		absOf := map[int]int{}
		follow := map[int]bool{} // later A-MSDU subframes: ordered by their MPDU, not checked here
		lastAbs := -1
		pop := func() {
			for {
				v, ok := b.Pop()
				if !ok {
					return
				}
				if !queued[v] || popped[v] {
					t.Fatalf("popped %d: queued %v popped %v", v, queued[v], popped[v])
				}
				popped[v] = true
				if follow[v] {
					continue
				}
				if absOf[v] < lastAbs {
					t.Fatalf("popped sn %d after sn %d", absOf[v], lastAbs)
				}
				lastAbs = absOf[v]
			}
		}
		for i := 0; i+2 < len(ops); i += 3 {
			sn := (uint16(ops[i+1])<<4 | uint16(ops[i+2])) % wlan.SeqModulo
			switch ops[i] % 6 {
			case 0:
				absOf[next] = absHead + int(wlan.SeqSub(sn, head))
				if b.Add(sn, next, now) == Queued {
					queued[next] = true
				}
				next++
			case 1:
				absOf[next] = absHead + int(wlan.SeqSub(sn, head))
				follow[next] = b.last.valid && b.last.sn == sn
				if b.AddSubframe(sn, next, now) == Queued {
					queued[next] = true
				}
				next++
			case 2:
				b.MoveWindow(sn)
			case 3:
				now = now.Add(time.Duration(ops[i+2]) * time.Millisecond)
				b.Expire(now)
			case 4:
				pop()
			case 5:
				b.Flush()
			}
			track()
			if b.Buffered() < 0 || b.Buffered() > int(b.size) {
				t.Fatalf("buffered %d", b.Buffered())
			}
		}
		b.Flush()
		pop()
		if len(popped) != len(queued) {
			t.Fatalf("queued %d frames, popped %d", len(queued), len(popped))
		}
		if int(b.Stats.Queued) != len(queued) {
			t.Fatalf("Stats.Queued %d, queued %d", b.Stats.Queued, len(queued))
		}
	})
}
