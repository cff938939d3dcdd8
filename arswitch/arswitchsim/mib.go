package arswitchsim

// MIB counters kept by the model.
type counter int

const (
	cRxBroad counter = iota
	cRxMulti
	cRxUnicast
	cRxRunt
	cRxTooLong
	cRxGoodByte
	cFiltered
	cTxBroad
	cTxMulti
	cTxUnicast
	cTxByte
	numCounters
)

// mibLayout gives each counter's byte offset in a port's MIB block and its
// width in words; -1 where the chip lacks it. model: these offsets are not
// from the register headers; they follow OpenWrt's ar8216.c descriptor
// tables as recalled (UNVERIFIED), matching what package arswitch assumes.
type mibLayout [numCounters]struct{ off, words int }

var (
	mib8216 = &mibLayout{
		cRxBroad: {0x00, 1}, cRxMulti: {0x08, 1}, cRxUnicast: {-1, 0}, cRxRunt: {0x14, 1},
		cRxTooLong: {0x34, 1}, cRxGoodByte: {0x38, 2}, cFiltered: {0x4c, 1},
		cTxBroad: {0x50, 1}, cTxMulti: {0x58, 1}, cTxUnicast: {-1, 0}, cTxByte: {0x7c, 2},
	}
	mib8236 = &mibLayout{
		cRxBroad: {0x00, 1}, cRxMulti: {0x08, 1}, cRxUnicast: {-1, 0}, cRxRunt: {0x14, 1},
		cRxTooLong: {0x38, 1}, cRxGoodByte: {0x3c, 2}, cFiltered: {0x50, 1},
		cTxBroad: {0x54, 1}, cTxMulti: {0x5c, 1}, cTxUnicast: {-1, 0}, cTxByte: {0x84, 2},
	}
	mib8327 = &mibLayout{
		cRxBroad: {0x00, 1}, cRxMulti: {0x08, 1}, cRxUnicast: {0xa8, 1}, cRxRunt: {0x14, 1},
		cRxTooLong: {0x38, 1}, cRxGoodByte: {0x3c, 2}, cFiltered: {0x50, 1},
		cTxBroad: {0x54, 1}, cTxMulti: {0x5c, 1}, cTxUnicast: {0xac, 1}, cTxByte: {0x84, 2},
	}
)

func (s *Switch) mibEnabled() bool {
	switch {
	case s.v.mibAlways:
		return true
	case s.v.l27:
		return s.regs[a27ModuleEn]&1 != 0
	}
	return s.regs[a16MIBFunc]&a16MIBEn != 0
}

func (s *Switch) count(p int, c counter, n uint64) {
	s.mibLive[p][c] += n
}

// mibWindow decodes addr as (port, offset) in the MIB blocks.
func (s *Switch) mibWindow(addr uint32) (int, int, bool) {
	if addr < s.v.mibBase || addr >= s.v.mibBase+s.v.mibStride*uint32(s.v.nports) {
		return 0, 0, false
	}
	r := addr - s.v.mibBase
	return int(r / s.v.mibStride), int(r % s.v.mibStride), true
}

func (s *Switch) mibRead(p, off int) uint32 {
	for c, f := range s.v.mib {
		if f.off < 0 {
			continue
		}
		if off == f.off {
			return uint32(s.mibSnap[p][c])
		}
		if f.words == 2 && off == f.off+4 {
			return uint32(s.mibSnap[p][c] >> 32)
		}
	}
	return 0
}

// doMIB runs a MIB function: 1 flush, 3 capture (MIB_FUNC0; FreeBSD
// arswitchreg.h AR8X16_MIB_FUNC_FLUSH/CAPTURE).
func (s *Switch) doMIB(cmd uint32) {
	switch (cmd >> mibFuncShift) & 7 {
	case 1:
		s.mibLive, s.mibSnap = [8][numCounters]uint64{}, [8][numCounters]uint64{}
	case 3:
		s.mibSnap = s.mibLive
	}
}

// Counter names for tests: the model's live counters of port p.
type Counters struct {
	RxBroad, RxMulti, RxUnicast, RxRunt, RxTooLong, RxGoodBytes, Filtered uint64
	TxBroad, TxMulti, TxUnicast, TxBytes                                  uint64
}

// LiveCounters returns port p's live counters.
func (s *Switch) LiveCounters(p int) Counters {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.mibLive[p]
	return Counters{c[cRxBroad], c[cRxMulti], c[cRxUnicast], c[cRxRunt], c[cRxTooLong], c[cRxGoodByte], c[cFiltered],
		c[cTxBroad], c[cTxMulti], c[cTxUnicast], c[cTxByte]}
}
