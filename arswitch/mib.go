package arswitch

import (
	"errors"
	"fmt"
)

// Counter names one per-port MIB counter.
type Counter int

// The counters this driver reads. Not every chip has every counter;
// Counters.Has says which ones a read filled in.
const (
	RxBroad Counter = iota
	RxPause
	RxMulti
	RxFCSErr
	RxAlignErr
	RxRunt
	RxFragment
	RxTooLong
	RxGoodBytes
	RxBadBytes
	RxOverflow
	Filtered
	TxBroad
	TxPause
	TxMulti
	TxUnderrun
	TxOversize
	TxBytes
	TxCollision
	TxLateCol
	RxUnicast
	TxUnicast
	NumCounters
)

var counterNames = [NumCounters]string{
	"RxBroad", "RxPause", "RxMulti", "RxFcsErr", "RxAlignErr", "RxRunt", "RxFragment",
	"RxTooLong", "RxGoodByte", "RxBadByte", "RxOverFlow", "Filtered",
	"TxBroad", "TxPause", "TxMulti", "TxUnderRun", "TxOverSize", "TxByte",
	"TxCollision", "TxLateCol", "RxUniCast", "TxUniCast",
}

func (c Counter) String() string {
	if c >= 0 && c < NumCounters {
		return counterNames[c]
	}
	return fmt.Sprintf("Counter(%d)", int(c))
}

// Counters is one port's MIB snapshot.
type Counters struct {
	Val [NumCounters]uint64
	has uint32
}

// Has reports whether the chip provides counter c.
func (c *Counters) Has(n Counter) bool { return n >= 0 && n < NumCounters && c.has&(1<<n) != 0 }

// mibField places one counter in a port's MIB block: byte offset and width
// in 32-bit words (64-bit counters are low word first).
type mibField struct {
	c     Counter
	off   int
	words int
}

type mibLayout struct {
	fields []mibField
	size   int // bytes to read per port
}

// The MIB block layouts below are NOT taken from the register headers cited
// in the package documentation (only the block bases are). They are
// recalled from OpenWrt's ar8216.c MIB descriptor tables (ar8216_mibs for
// the AR8216, ar8236_mibs for the AR8236/AR8316 and, with
// RxUniCast/TxUniCast appended, the AR8327) and are UNVERIFIED: check them
// against the datasheet or OpenWrt before trusting individual counters on
// hardware. The built-in AR7240/AR934x
// switch is given the AR8236 layout (uncertain).
var (
	mibLayout8216 = &mibLayout{size: 0xa0, fields: []mibField{
		{RxBroad, 0x00, 1}, {RxPause, 0x04, 1}, {RxMulti, 0x08, 1}, {RxFCSErr, 0x0c, 1},
		{RxAlignErr, 0x10, 1}, {RxRunt, 0x14, 1}, {RxFragment, 0x18, 1},
		{RxTooLong, 0x34, 1}, {RxGoodBytes, 0x38, 2}, {RxBadBytes, 0x40, 2},
		{RxOverflow, 0x48, 1}, {Filtered, 0x4c, 1},
		{TxBroad, 0x50, 1}, {TxPause, 0x54, 1}, {TxMulti, 0x58, 1}, {TxUnderrun, 0x5c, 1},
		{TxOversize, 0x78, 1}, {TxBytes, 0x7c, 2}, {TxCollision, 0x84, 1}, {TxLateCol, 0x9c, 1},
	}}
	mibLayout8236 = &mibLayout{size: 0xa8, fields: []mibField{
		{RxBroad, 0x00, 1}, {RxPause, 0x04, 1}, {RxMulti, 0x08, 1}, {RxFCSErr, 0x0c, 1},
		{RxAlignErr, 0x10, 1}, {RxRunt, 0x14, 1}, {RxFragment, 0x18, 1},
		{RxTooLong, 0x38, 1}, {RxGoodBytes, 0x3c, 2}, {RxBadBytes, 0x44, 2},
		{RxOverflow, 0x4c, 1}, {Filtered, 0x50, 1},
		{TxBroad, 0x54, 1}, {TxPause, 0x58, 1}, {TxMulti, 0x5c, 1}, {TxUnderrun, 0x60, 1},
		{TxOversize, 0x80, 1}, {TxBytes, 0x84, 2}, {TxCollision, 0x8c, 1}, {TxLateCol, 0xa4, 1},
	}}
	mibLayout8327 = &mibLayout{size: 0xb0, fields: append(append([]mibField(nil), mibLayout8236.fields...),
		mibField{RxUnicast, 0xa8, 1}, mibField{TxUnicast, 0xac, 1})}
)

// ErrShortMIB is returned when fewer MIB words were read than the layout needs.
var ErrShortMIB = errors.New("arswitch: MIB block shorter than the chip's layout")

// parseMIB decodes a port's MIB block, words[i] being the register at byte
// offset 4·i. It never panics on short or odd input.
func parseMIB(l *mibLayout, words []uint32) (Counters, error) {
	var c Counters
	if len(words)*4 < l.size {
		return c, fmt.Errorf("%w: %d bytes, need %d", ErrShortMIB, len(words)*4, l.size)
	}
	for _, f := range l.fields {
		i := f.off / 4
		if f.off%4 != 0 || i+f.words > len(words) {
			return Counters{}, fmt.Errorf("%w: field %v at %#x", ErrShortMIB, f.c, f.off)
		}
		v := uint64(words[i])
		if f.words == 2 {
			v |= uint64(words[i+1]) << 32
		}
		c.Val[f.c] = v
		c.has |= 1 << f.c
	}
	return c, nil
}
