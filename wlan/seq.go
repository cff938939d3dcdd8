package wlan

// NumTIDs is the number of traffic identifiers of QoS data (802.11-2016
// 9.2.4.5.2: TIDs 0-7 are user priorities, 8-15 traffic streams).
const NumTIDs = 16

// NonQoSTID indexes the counter shared by management and non-QoS data
// frames in per-TID tables.
const NonQoSTID = NumTIDs

// Sequencer allocates transmit sequence numbers for one receiver: one
// counter per TID for QoS data and one shared by every other frame, as
// 802.11-2016 10.3.2.14 requires (the per-<RA, TID> counters of QoS data,
// the single modulo-4096 counter for management and non-QoS data). The
// zero value starts every counter at 0. Group-addressed QoS data shares the
// non-QoS counter there too; give that traffic its own Sequencer with tid
// NonQoSTID.
type Sequencer struct {
	next [NumTIDs + 1]uint16
}

// Next returns the sequence number for the next MSDU or MMPDU of tid
// (NonQoSTID for non-QoS frames) and advances the counter.
func (s *Sequencer) Next(tid uint8) uint16 {
	i := int(tid)
	if i > NonQoSTID {
		i = NonQoSTID
	}
	n := s.next[i]
	s.next[i] = (n + 1) % SeqModulo
	return n
}

// Peek returns the number Next would return for tid without advancing.
func (s *Sequencer) Peek(tid uint8) uint16 {
	i := int(tid)
	if i > NonQoSTID {
		i = NonQoSTID
	}
	return s.next[i]
}

// SeqSub returns a-b in the modulo-4096 sequence number space.
func SeqSub(a, b uint16) uint16 { return (a - b) % SeqModulo }

// SeqLess reports whether a precedes b: b is less than half the sequence
// space ahead of a (the 2^11 comparison of 802.11-2016 10.3.2.14).
func SeqLess(a, b uint16) bool {
	d := SeqSub(b, a)
	return d != 0 && d < SeqModulo/2
}
