package reorder

import (
	"time"

	"github.com/gowrt/gowrt/wlan"
)

// Verdict is what Add did with a frame.
type Verdict uint8

const (
	// Queued: accepted; Pop returns it once everything before it is
	// delivered or skipped.
	Queued Verdict = iota
	// DropOld: the sequence number is behind the window (delivered or
	// skipped already, 802.11-2016 10.24 discards it).
	DropOld
	// DropDup: a frame with that sequence number is already buffered.
	DropDup
	// DropFull: no free entry (more A-MSDU subframes than the buffer was
	// sized for).
	DropFull
)

func (v Verdict) String() string {
	switch v {
	case Queued:
		return "queued"
	case DropOld:
		return "old"
	case DropDup:
		return "duplicate"
	case DropFull:
		return "full"
	}
	return "unknown"
}

// Stats counts what a Buffer did.
type Stats struct {
	Queued   uint64 // frames accepted
	Old      uint64 // dropped: behind the window
	Dup      uint64 // dropped: sequence number already buffered
	Full     uint64 // dropped: no free entry
	Released uint64 // frames released out of order by a window move (a later frame, a BAR, flush)
	TimedOut uint64 // holes given up on after the reorder timeout
	Skipped  uint64 // holes skipped by a window move (frames never received)
}

// MaxWindow is the largest reorder window (802.11-2016 10.24 with the
// compressed bitmap HT uses: 64).
const MaxWindow = wlan.MaxBAWindow

const (
	none      = -1
	halfSpace = wlan.SeqModulo / 2
)

type slot struct {
	first, last int32 // node chain, none when empty
	at          time.Time
}

type node[T any] struct {
	v     T
	next  int32
	gen   uint32 // bumped on every allocation, so a stale index is detected
	where uint8
}

// Where a node is.
const (
	inFree = iota
	inSlot
	inReady
)

// Buffer is the receive reordering buffer of one Block Ack agreement
// (one TA and TID). Frames enter with Add in any order and leave with Pop
// in sequence number order; a frame ahead of the window moves the window,
// a BAR moves it (MoveWindow), and holes older than the timeout are given
// up on (Expire). It allocates nothing after New. Not safe for concurrent
// use.
type Buffer[T any] struct {
	head      uint16 // WinStart: the next sequence number to deliver
	size      uint16 // WinSize
	timeout   time.Duration
	slots     [MaxWindow]slot
	nodes     []node[T]
	free      int32
	readyHead int32
	readyTail int32
	buffered  int // MPDUs in slots
	last      struct {
		sn      uint16
		valid   bool
		verdict Verdict
		node    int32
		gen     uint32
	}
	Stats Stats
}

// New returns a buffer for an agreement with starting sequence number ssn
// and buffer size winSize (clamped to 1..64), holding at most maxFrames
// frames (MPDUs and A-MSDU subframes) at once, that gives up on a missing
// frame after timeout.
func New[T any](ssn uint16, winSize, maxFrames int, timeout time.Duration) *Buffer[T] {
	winSize = min(max(winSize, 1), MaxWindow)
	maxFrames = max(maxFrames, winSize)
	b := &Buffer[T]{
		head:      ssn % wlan.SeqModulo,
		size:      uint16(winSize),
		timeout:   timeout,
		nodes:     make([]node[T], maxFrames),
		readyHead: none,
		readyTail: none,
	}
	for i := range b.slots {
		b.slots[i] = slot{first: none, last: none}
	}
	for i := range b.nodes {
		b.nodes[i].next = int32(i + 1)
	}
	b.nodes[maxFrames-1].next = none
	return b
}

// Head returns the window start: the next sequence number Pop will deliver.
func (b *Buffer[T]) Head() uint16 { return b.head }

// Buffered returns the number of MPDUs waiting in the window.
func (b *Buffer[T]) Buffered() int { return b.buffered }

func (b *Buffer[T]) slot(sn uint16) *slot { return &b.slots[sn%MaxWindow] }

func (b *Buffer[T]) alloc(v T) int32 {
	i := b.free
	if i == none {
		return none
	}
	n := &b.nodes[i]
	b.free = n.next
	n.v, n.next, n.where = v, none, inSlot
	n.gen++
	return i
}

// release moves the frames of slot s to the ready list.
func (b *Buffer[T]) release(s *slot) {
	if s.first == none {
		return
	}
	for i := s.first; i != none; i = b.nodes[i].next {
		b.nodes[i].where = inReady
	}
	if b.readyTail == none {
		b.readyHead = s.first
	} else {
		b.nodes[b.readyTail].next = s.first
	}
	b.readyTail = s.last
	s.first, s.last = none, none
	b.buffered--
}

// advance moves the window start to sn, releasing buffered frames in
// order and counting the holes passed.
func (b *Buffer[T]) advance(sn uint16, holes *uint64) {
	for b.head != sn {
		s := b.slot(b.head)
		if s.first == none {
			*holes++
		} else {
			b.release(s)
			b.Stats.Released++
		}
		b.head = (b.head + 1) % wlan.SeqModulo
	}
}

// drain releases the frames at the window start while there are any.
func (b *Buffer[T]) drain() {
	for {
		s := b.slot(b.head)
		if s.first == none {
			return
		}
		b.release(s)
		b.head = (b.head + 1) % wlan.SeqModulo
	}
}

// Add offers an MPDU (or the first subframe of an A-MSDU) with sequence
// number sn received at now.
func (b *Buffer[T]) Add(sn uint16, v T, now time.Time) Verdict {
	sn %= wlan.SeqModulo
	verdict, n := b.add(sn, v, now)
	b.last.sn, b.last.valid, b.last.verdict, b.last.node = sn, true, verdict, n
	if n != none {
		b.last.gen = b.nodes[n].gen
	}
	return verdict
}

func (b *Buffer[T]) add(sn uint16, v T, now time.Time) (Verdict, int32) {
	d := wlan.SeqSub(sn, b.head)
	if d >= halfSpace {
		b.Stats.Old++
		return DropOld, none
	}
	if d >= b.size {
		// Beyond the window: move it so that sn is its last entry
		// (10.24: WinEnd = SN, WinStart = WinEnd − WinSize + 1).
		b.advance((sn-b.size+1)%wlan.SeqModulo, &b.Stats.Skipped)
	}
	s := b.slot(sn)
	if s.first != none {
		b.Stats.Dup++
		return DropDup, none
	}
	n := b.alloc(v)
	if n == none {
		b.Stats.Full++
		return DropFull, none
	}
	s.first, s.last, s.at = n, n, now
	b.buffered++
	b.Stats.Queued++
	b.drain()
	return Queued, n
}

// AddSubframe offers a further subframe of the A-MSDU whose first
// subframe was the last Add with the same sn: it gets the first
// subframe's verdict and, when queued, is delivered right after the
// subframes before it. Without that first subframe (lost, or another sn
// in between) it is treated as Add. Offer all subframes of an A-MSDU
// before the next Pop: a subframe offered after frames that followed its
// MPDU were popped is still delivered, but after them.
func (b *Buffer[T]) AddSubframe(sn uint16, v T, now time.Time) Verdict {
	sn %= wlan.SeqModulo
	if !b.last.valid || b.last.sn != sn {
		return b.Add(sn, v, now)
	}
	switch b.last.verdict {
	case DropOld:
		b.Stats.Old++
		return DropOld
	case DropDup:
		b.Stats.Dup++
		return DropDup
	case DropFull:
		b.Stats.Full++
		return DropFull
	}
	n := b.alloc(v)
	if n == none {
		b.Stats.Full++
		return DropFull
	}
	b.Stats.Queued++
	prev, prevGen := b.last.node, b.last.gen
	b.last.node, b.last.gen = n, b.nodes[n].gen
	p := &b.nodes[prev]
	switch {
	case p.gen == prevGen && p.where == inSlot:
		// Still waiting in the window: extend the slot's chain.
		p.next = n
		b.slot(sn).last = n
		b.nodes[n].where = inSlot
	case p.gen == prevGen && p.where == inReady:
		// Released but not yet popped: insert after it.
		b.nodes[n].next = p.next
		p.next = n
		if b.readyTail == prev {
			b.readyTail = n
		}
		b.nodes[n].where = inReady
	default:
		// The earlier subframes were popped already: deliver next.
		b.nodes[n].next = b.readyHead
		b.readyHead = n
		if b.readyTail == none {
			b.readyTail = n
		}
		b.nodes[n].where = inReady
	}
	return Queued
}

// Pop returns the next frame in order, false when none is ready.
func (b *Buffer[T]) Pop() (T, bool) {
	i := b.readyHead
	if i == none {
		var zero T
		return zero, false
	}
	n := &b.nodes[i]
	b.readyHead = n.next
	if b.readyHead == none {
		b.readyTail = none
	}
	v := n.v
	var zero T
	n.v, n.next, n.where = zero, b.free, inFree
	b.free = i
	return v, true
}

// MoveWindow handles a BlockAckReq with starting sequence number ssn
// (10.24): frames before ssn are released in order, the holes among
// them given up, and the window starts at ssn. An ssn at or behind the
// window start changes nothing.
func (b *Buffer[T]) MoveWindow(ssn uint16) {
	ssn %= wlan.SeqModulo
	if d := wlan.SeqSub(ssn, b.head); d == 0 || d >= halfSpace {
		return
	}
	b.advance(ssn, &b.Stats.Skipped)
	b.drain()
}

// Expire gives up on holes that kept a received frame waiting for the
// timeout or longer: the window moves past the last such frame, releasing
// everything before it in order.
func (b *Buffer[T]) Expire(now time.Time) {
	if b.buffered == 0 || b.timeout <= 0 {
		return
	}
	end := -1
	for i := range int(b.size) {
		s := b.slot((b.head + uint16(i)) % wlan.SeqModulo)
		if s.first != none && now.Sub(s.at) >= b.timeout {
			end = i
		}
	}
	if end < 0 {
		return
	}
	b.advance((b.head+uint16(end))%wlan.SeqModulo, &b.Stats.TimedOut)
	b.drain()
}

// Deadline returns when Expire next has work: the earliest arrival of a
// buffered frame plus the timeout; false when nothing waits.
func (b *Buffer[T]) Deadline() (time.Time, bool) {
	if b.buffered == 0 || b.timeout <= 0 {
		return time.Time{}, false
	}
	var first time.Time
	found := false
	for i := range int(b.size) {
		s := b.slot((b.head + uint16(i)) % wlan.SeqModulo)
		if s.first != none && (!found || s.at.Before(first)) {
			first, found = s.at, true
		}
	}
	return first.Add(b.timeout), found
}

// Flush releases every buffered frame in order, as when the agreement is
// torn down (DELBA); the window start moves past the last of them.
func (b *Buffer[T]) Flush() {
	for b.buffered > 0 {
		s := b.slot(b.head)
		if s.first == none {
			b.Stats.Skipped++
		} else {
			b.release(s)
			b.Stats.Released++
		}
		b.head = (b.head + 1) % wlan.SeqModulo
	}
}
