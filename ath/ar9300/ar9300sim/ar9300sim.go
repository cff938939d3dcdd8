// Package ar9300sim is a hostile register-level model of the AR9300-family
// 802.11n MAC (the WMAC of AR934x/QCA955x, and AR9380 on PCIe) for testing
// the ath/ar9300 driver, built on hwsim. It keeps its own register facts
// (regs.go) and does not import the driver.
//
// What it models:
//
//   - Power: the RTC and force-wake side is an ath/athsim chip; every other
//     register read while the chip is not awake returns 0xdeadbeef and
//     every write is dropped, both counted (Stats.AsleepAccesses).
//   - TX: each QCU has a FIFO of TxFIFODepth descriptor chains, filled by
//     writes to AR_QTXDP(q) (EDMA). An engine agent reads a chain's
//     ar9003_txc descriptors from the device view of memory (a driver that
//     skipped the PREWRITE sync is reported), checks descriptor ID,
//     direction, queue and pointer checksum, gathers the MPDUs, encrypts
//     them with the key cache when the descriptor names a CCMP slot, puts
//     them on the Air, decides ACK/BlockAck per MPDU (Outcome, default:
//     acknowledged) through the four-series retry schedule, and writes an
//     ar9003_txs entry into the TX status ring.
//   - RX: frames from the air (Receive) wait in a small PCU FIFO
//     (Config.PCUFrames); the engine takes buffers from the high- or
//     low-priority RXDP FIFO (management frames high, others low), writes
//     the ar9003_rxs status (48 bytes) and the frame with its FCS, decrypts
//     CCMP with the key cache (leaving the CCMP header and MIC in place,
//     as the hardware does) and flags key miss or MIC failure.
//   - Interrupts: AR_ISR and AR_ISR_S0..S5 are write-1-to-clear; reading
//     AR_ISR_RAC returns AR_ISR and clears it and the secondaries after
//     latching them into the AR_ISR_Sx_S shadows (read-only).
//   - Beacons: the TSF runs on the model's clock (Tick); SWBA, DBA and
//     TBTT timers fire at their programmed times and periods; at DBA the
//     beacon QCU's head chain is fetched and at TBTT it goes out with the
//     TSF of TBTT in its timestamp; an empty beacon queue at DBA is a
//     missed beacon (Stats.MissedBeacons).
//
// Hazards (each has a TestHazard* in ath/ar9300):
//
//   - asleep register access: 0xdeadbeef, writes dropped;
//   - reordered write-back: a TX status entry's and an RX status's
//     words are written in one engine step and the done word in a later
//     one, so a driver that reads the fields before it has seen the done
//     bit reads stale values;
//   - TX status before the QCU lets go: the status entry is written when
//     the PPDU is done, but the QCU pops the chain from its FIFO (and
//     re-reads the chain's last descriptor, as the hardware may re-read a
//     link) up to PopDelay engine steps later; a descriptor rewritten in
//     between is reported (Stats.DescReused and a ModelRule misuse);
//   - RX FIFO overflow: no buffer raises RXEOL and frames wait; a full PCU
//     FIFO drops the frame (Stats.RxOverruns) and raises RXORN;
//   - missed SWBA: a beacon queued after its DBA is sent at the next DBA.
//
// Frames on the air carry no FCS and A-MPDU subframes go out as separate
// frames (wlan/medium carries MPDUs); the model attaches to wlan/medium
// as a medium.Device (Receive, Tick).
package ar9300sim

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"time"

	"github.com/gowrt/gowrt/ath/athsim"
	"github.com/gowrt/gowrt/barrier"
	"github.com/gowrt/gowrt/hwsim"
	"github.com/gowrt/gowrt/wlan"
	"github.com/gowrt/gowrt/wlan/ccmp"
)

// Air is where transmitted frames go (a *medium.Radio). Transmit must not
// retain frame.
type Air interface {
	Transmit(frame []byte) error
}

// Config configures the model.
type Config struct {
	IRQ  *hwsim.Controller
	Line int
	// Air receives every transmitted MPDU (nil: counted only).
	Air Air
	// Outcome decides whether the receiver acknowledged MPDU frame on
	// try number try of series (nil: always). Called with the System
	// lock held.
	Outcome func(frame []byte, series, try int) bool
	// PCUFrames is how many received frames wait for a buffer before the
	// FIFO overruns (default 8).
	PCUFrames int
	// PopDelay bounds the engine steps between a TX status entry and the
	// QCU popping the chain (default 3; the seed picks 0..PopDelay).
	PopDelay int
	// RxRate is the rate code reported for received frames (default
	// 0x87, HT MCS 7) and RxRSSI the combined RSSI (default 40).
	RxRate uint8
	RxRSSI uint8
	// Epoch is the model time at which the TSF reads 0.
	Epoch time.Time
}

// Stats are the model's counters.
type Stats struct {
	AsleepAccesses             uint64
	TxPPDUs, TxMPDUs, TxOnAir  uint64
	TxDescErrors, TxFIFOFull   uint64
	TxStatusOverwritten        uint64
	DescReused                 uint64
	Beacons, MissedBeacons     uint64
	RxFrames, RxOverruns       uint64
	RxNoBuffer, RxTooLong      uint64
	RxFiltered                 uint64
	RxDecrypted, RxMICFailures uint64
	RxKeyMiss                  uint64
	RXDPOverflow               uint64
}

type chain struct {
	addr     uint64
	done     bool   // status written, not yet popped
	popIn    int    // engine steps until the pop
	lastDesc uint64 // bus address of the chain's last descriptor
	lastID   uint32 // its ctl10 as read
}

type qcu struct {
	fifo []chain
}

type rxWrite struct {
	active bool
	addr   uint64 // buffer bus address
	status [RxStatusSize / 4]uint32
	hp     bool
}

// MAC is the model.
type MAC struct {
	sys *hwsim.System
	cfg Config
	pw  *athsim.Chip

	regs   [RegionSize / 4]uint32
	isr    uint32
	isrS   [6]uint32
	shadow [6]uint32

	q    [NumQCU]qcu
	txe  uint32
	tsWr uint64 // next status entry bus address

	lpFIFO, hpFIFO []uint64
	pcu            [][]byte
	rxw            rxWrite
	txStatusHalf   struct {
		active bool
		addr   uint64
		words  [TxStatusSize / 4]uint32
	}

	now        time.Time
	tsfOffset  int64
	beaconAddr uint64 // chain fetched at DBA, sent at TBTT
	beaconTSF  uint64 // TSF = µs since Epoch + tsfOffset

	stats  Stats
	paused bool
	// OnBeacon, if set, sees every beacon sent (lock held).
	OnBeacon func(frame []byte, tsf uint64)
	scratch  []byte
}

// New builds the model and registers its engines on sys.
func New(sys *hwsim.System, cfg Config) *MAC {
	if cfg.PCUFrames == 0 {
		cfg.PCUFrames = 8
	}
	if cfg.PopDelay == 0 {
		cfg.PopDelay = 3
	}
	if cfg.RxRate == 0 {
		cfg.RxRate = 0x87
	}
	if cfg.RxRSSI == 0 {
		cfg.RxRSSI = 40
	}
	m := &MAC{sys: sys, cfg: cfg, pw: athsim.New(), now: cfg.Epoch}
	sys.Sched.AddAgent("ar9300-tx", m.txStep)
	sys.Sched.AddAgent("ar9300-rx", m.rxStep)
	return m
}

// Map puts the registers on the bus.
func (m *MAC) Map(name string) *hwsim.Region { return m.sys.Bus.Map(name, RegionSize, m) }

// Power returns the power-side model.
func (m *MAC) Power() *athsim.Chip { return m.pw }

// Stats returns a snapshot of the counters.
func (m *MAC) Stats() (s Stats) {
	m.sys.Do(func() { s = m.stats })
	return s
}

// SetOutcome replaces the ACK decision.
func (m *MAC) SetOutcome(f func(frame []byte, series, try int) bool) {
	m.sys.Do(func() { m.cfg.Outcome = f })
}

// SetAir sets where transmitted frames go.
func (m *MAC) SetAir(a Air) { m.sys.Do(func() { m.cfg.Air = a }) }

// Peek returns a register's stored value without side effects.
func (m *MAC) Peek(off uint32) (v uint32) {
	m.sys.Do(func() { v = m.regs[off/4] })
	return v
}

func (m *MAC) awake() bool { return m.pw.State() == athsim.Awake }

// ReadReg implements hwsim.Device.
func (m *MAC) ReadReg(off uint32, width int) uint32 {
	if width != 4 {
		return 0
	}
	if athsim.AlwaysOn(off) {
		return m.pw.Read32(off)
	}
	if !m.awake() {
		m.stats.AsleepAccesses++
		return athsim.Dead
	}
	switch {
	case off == RegISR:
		return m.isr
	case off >= RegISRS0 && off <= RegISRS5:
		return m.isrS[(off-RegISRS0)/4]
	case off == RegISRRAC:
		v := m.isr
		m.shadow = m.isrS
		m.isr, m.isrS = 0, [6]uint32{}
		m.updateIRQ()
		return v
	case off == RegISRS0S || off == RegISRS1S:
		return m.shadow[(off-RegISRS0S)/4]
	case off >= RegISRS2S && off <= RegISRS5S:
		return m.shadow[2+(off-RegISRS2S)/4]
	case off == RegQTXE:
		var v uint32
		for i := range m.q {
			if m.pendingChains(i) > 0 {
				v |= 1 << i
			}
		}
		return v
	case off >= RegQSTS0 && off < RegQSTS0+4*NumQCU:
		return uint32(min(len(m.q[(off-RegQSTS0)/4].fifo), QSTSPendMask))
	case off == RegTSFL32:
		return uint32(m.tsf())
	case off == RegTSFU32:
		return uint32(m.tsf() >> 32)
	}
	return m.regs[off/4]
}

// WriteReg implements hwsim.Device.
func (m *MAC) WriteReg(off uint32, width int, v uint32) {
	if width != 4 {
		return
	}
	if athsim.AlwaysOn(off) {
		m.pw.Write32(off, v)
		return
	}
	if !m.awake() {
		m.stats.AsleepAccesses++
		return
	}
	switch {
	case off == RegISR:
		m.isr &^= v
	case off >= RegISRS0 && off <= RegISRS5:
		m.isrS[(off-RegISRS0)/4] &^= v
	case off == RegHPRXDP:
		m.pushRX(&m.hpFIFO, RxHPFIFODepth, v)
	case off == RegLPRXDP:
		m.pushRX(&m.lpFIFO, RxLPFIFODepth, v)
	case off >= RegQTXDP0 && off < RegQTXDP0+4*NumQCU:
		q := &m.q[(off-RegQTXDP0)/4]
		if len(q.fifo) >= TxFIFODepth {
			m.stats.TxFIFOFull++
			m.sys.Report(hwsim.Misuse{Kind: hwsim.ModelRule, Addr: uint64(v), Region: "ar9300",
				Detail: fmt.Sprintf("TXDP push into the full TX FIFO of QCU %d", (off-RegQTXDP0)/4)})
			return
		}
		q.fifo = append(q.fifo, chain{addr: uint64(v)})
	case off == RegQStatusStart:
		m.tsWr = uint64(v)
	case off == RegQTXE:
		m.txe |= v & (1<<NumQCU - 1)
	case off == RegQTXD:
		for i := range m.q {
			if v&(1<<i) != 0 {
				m.q[i].fifo = m.q[i].fifo[:0]
				m.txe &^= 1 << i
			}
		}
	case off == RegTSFL32:
		m.setTSF(m.tsf()&^0xffffffff | uint64(v))
	case off == RegTSFU32:
		m.setTSF(m.tsf()&0xffffffff | uint64(v)<<32)
	}
	m.regs[off/4] = v
	m.updateIRQ()
}

func (m *MAC) pushRX(f *[]uint64, depth int, v uint32) {
	if len(*f) >= depth {
		m.stats.RXDPOverflow++
		m.sys.Report(hwsim.Misuse{Kind: hwsim.ModelRule, Addr: uint64(v), Region: "ar9300",
			Detail: "RXDP push into a full RX FIFO"})
		return
	}
	*f = append(*f, uint64(v))
}

func (m *MAC) pendingChains(i int) int {
	n := 0
	for _, c := range m.q[i].fifo {
		if !c.done {
			n++
		}
	}
	return n
}

// raise sets primary status bits (and secondary ones) and updates the line.
func (m *MAC) raise(bits uint32) { m.isr |= bits; m.updateIRQ() }

func (m *MAC) updateIRQ() {
	if m.cfg.IRQ == nil {
		return
	}
	if m.regs[RegIER/4]&IEREnable != 0 && m.isr&m.regs[RegIMR/4] != 0 {
		m.cfg.IRQ.Raise(m.cfg.Line)
	} else {
		m.cfg.IRQ.Lower(m.cfg.Line)
	}
}

// descOrder is the byte order of descriptors and status (AR_CFG swap
// bits; little-endian without them).
func (m *MAC) txOrder() barrier.Order {
	if m.regs[RegCFG/4]&CFGSwapTxD != 0 {
		return barrier.BigEndian
	}
	return barrier.LittleEndian
}

func (m *MAC) rxOrder() binary.ByteOrder {
	if m.regs[RegCFG/4]&CFGSwapRxD != 0 {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

func (m *MAC) txByteOrder() binary.ByteOrder {
	if m.txOrder() == barrier.BigEndian {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

// ---- time and beacons ----

func (m *MAC) tsf() uint64 {
	return uint64(m.now.Sub(m.cfg.Epoch).Microseconds() + m.tsfOffset)
}

func (m *MAC) setTSF(v uint64) {
	m.tsfOffset = int64(v) - m.now.Sub(m.cfg.Epoch).Microseconds()
}

// Tick advances the model's clock to now (medium.Device): beacon timers
// fire in time order, then the engines run until they are idle.
func (m *MAC) Tick(now time.Time) {
	m.sys.Do(func() {
		if now.Before(m.now) {
			return
		}
		m.now = now
		m.timers()
		m.updateIRQ()
	})
	m.sys.Sched.Settle(256)
	m.sys.Do(m.updateIRQ)
}

func (m *MAC) timers() {
	mode := m.regs[RegTimerMode/4]
	t := uint32(m.tsf())
	// Comparisons in the 32-bit timer space, as the hardware's.
	due := func(next uint32) bool { return int32(t-next) >= 0 }
	for i := 0; i < 64; i++ {
		swba, dba, tbtt := m.regs[RegNextSWBA/4], m.regs[RegNextDBA/4], m.regs[RegNextTBTT/4]
		type ev struct {
			at  uint32
			bit uint32
		}
		var best ev
		found := false
		for _, e := range []ev{{swba, TimerSWBA}, {dba, TimerDBA}, {tbtt, TimerTBTT}} {
			if mode&e.bit == 0 || !due(e.at) {
				continue
			}
			if !found || int32(e.at-best.at) < 0 {
				best, found = e, true
			}
		}
		if !found {
			return
		}
		switch best.bit {
		case TimerSWBA:
			m.regs[RegNextSWBA/4] += m.period(RegSWBAPeriod)
			m.raise(ISRSWBA)
		case TimerDBA:
			m.regs[RegNextDBA/4] += m.period(RegDBAPeriod)
			m.fetchBeacon()
		case TimerTBTT:
			// The beacon goes out at TBTT, stamped with the TSF of that
			// instant (not of the model's coarser clock step).
			at := m.tsf() - uint64(t-best.at)
			m.regs[RegNextTBTT/4] += m.period(RegBeaconPeriod)
			m.sendBeacon(at)
		}
	}
}

func (m *MAC) period(reg uint32) uint32 {
	p := m.regs[reg/4]
	if p == 0 {
		p = 1 << 20 // a zero period would spin; the driver always sets one
	}
	return p
}

// fetchBeacon is the DMA beacon alert: the beacon QCU's head chain is
// fetched for the coming TBTT. An empty queue is a missed beacon.
func (m *MAC) fetchBeacon() {
	q := &m.q[BeaconQCU]
	if len(q.fifo) == 0 || m.txe&(1<<BeaconQCU) == 0 {
		m.stats.MissedBeacons++
		return
	}
	m.beaconAddr = q.fifo[0].addr
	q.fifo = popFront(q.fifo)
	if len(q.fifo) == 0 {
		m.txe &^= 1 << BeaconQCU
	}
}

func (m *MAC) sendBeacon(at uint64) {
	if m.beaconAddr == 0 {
		return
	}
	addr := m.beaconAddr
	m.beaconAddr = 0
	m.stats.Beacons++
	m.beaconTSF = at
	m.runChain(BeaconQCU, addr, true)
}

// ---- TX engine ----

// SetPaused holds both engines (tests: queue work, then let the engines
// run while the driver services it).
func (m *MAC) SetPaused(p bool) { m.sys.Do(func() { m.paused = p }) }

func (m *MAC) txStep() bool {
	if m.paused {
		return false
	}
	if m.txStatusHalf.active {
		m.finishStatus()
		return true
	}
	for i := range m.q {
		q := &m.q[i]
		if len(q.fifo) > 0 && q.fifo[0].done {
			if q.fifo[0].popIn > 0 {
				q.fifo[0].popIn--
				return true
			}
			m.pop(i)
			return true
		}
	}
	for i := BeaconQCU - 1; i >= 0; i-- { // higher QCU, higher priority
		q := &m.q[i]
		if m.txe&(1<<i) == 0 {
			continue
		}
		for j := range q.fifo {
			if q.fifo[j].done {
				continue
			}
			last, id := m.runChain(i, q.fifo[j].addr, false)
			q.fifo[j].done = true
			q.fifo[j].lastDesc, q.fifo[j].lastID = last, id
			q.fifo[j].popIn = m.sys.Sched.Intn(m.cfg.PopDelay + 1)
			return true
		}
		m.txe &^= 1 << i
	}
	return false
}

// pop retires the head chain of QCU i: the last read of its last
// descriptor must see what the engine read when it sent it.
func (m *MAC) pop(i int) {
	c := m.q[i].fifo[0]
	m.q[i].fifo = popFront(m.q[i].fifo)
	if c.lastDesc == 0 {
		return
	}
	var w [4]byte
	if m.sys.Mem.DevRead(c.lastDesc+40, w[:]) == nil {
		if v := m.txByteOrder().Uint32(w[:]); v != c.lastID {
			m.stats.DescReused++
			m.sys.Report(hwsim.Misuse{Kind: hwsim.ModelRule, Addr: c.lastDesc, Region: "ar9300",
				Detail: fmt.Sprintf("descriptor rewritten (ctl10 %#x, was %#x) while QCU %d still held it", v, c.lastID, i)})
		}
	}
}

type mpdu struct {
	buf   []byte
	key   int
	encr  uint32
	flen  int
	noAck bool
}

// runChain sends one PPDU and writes its status. It returns the last
// descriptor's address and its ctl10.
func (m *MAC) runChain(qn int, addr uint64, beacon bool) (uint64, uint32) {
	bo := m.txByteOrder()
	var d [TxDescWords]uint32
	var raw [TxDescSize]byte
	var mpdus []mpdu
	var cur []byte
	var first [TxDescWords]uint32
	cfgErr := false
	var lastAddr uint64
	var lastID uint32
	for n := 0; addr != 0; n++ {
		if n >= 256 {
			cfgErr = true
			break
		}
		if m.sys.Mem.DevRead(addr, raw[:]) != nil {
			cfgErr = true
			break
		}
		for i := range d {
			d[i] = bo.Uint32(raw[4*i:])
		}
		lastAddr, lastID = addr, d[10]
		want := uint32(VendorID)<<16 | infoTxRxDesc | infoCtrlStat | uint32(qn)<<infoQCUShift | TxDescWords
		if d[0] != want || d[10]&ptrChkSumMask != ptrChecksum(&d) {
			cfgErr = true
			break
		}
		if n == 0 {
			first = d
		}
		for b := 0; b < 4; b++ {
			ptr, l := d[2+2*b], int(d[3+2*b]&bufLenMask>>bufLenShift)
			if l == 0 {
				continue
			}
			seg := make([]byte, l)
			if m.sys.Mem.DevRead(uint64(ptr), seg) != nil {
				cfgErr = true
			}
			cur = append(cur, seg...)
		}
		if len(cur) == 0 || cfgErr {
			cfgErr = true
			break
		}
		if d[12]&ctl12TxMore == 0 {
			mp := mpdu{buf: cur, key: -1, noAck: d[12]&ctl12NoAck != 0, flen: int(d[11] & frameLenMask),
				encr: d[17] & ctl17EncrMask >> ctl17EncrShift}
			if d[11]&ctl11DestIdxOK != 0 {
				mp.key = int(d[12] & ctl12DestIdxMask >> ctl12DestIdxSh)
			}
			mpdus = append(mpdus, mp)
			cur = nil
			if d[12]&ctl12MoreAggr == 0 {
				addr = 0
				continue
			}
		}
		addr = uint64(d[1])
	}
	if cur != nil {
		cfgErr = true // chain ended inside an MPDU
	}
	var st [TxStatusSize / 4]uint32
	st[0] = uint32(VendorID)<<16 | infoTxRxDesc | uint32(qn)<<infoQCUShift | TxStatusSize/4
	st[1] = lastID & 0xffff0000
	m.stats.TxPPDUs++
	for _, mp := range mpdus {
		if mp.flen != len(mp.buf)+4 {
			cfgErr = true
		}
	}
	if cfgErr || len(mpdus) == 0 {
		m.stats.TxDescErrors++
		st[3] = txsDescCfgErr
		m.writeStatus(&st)
		return lastAddr, lastID
	}
	// Encrypt with the key cache, as the hardware does on the way out.
	for i := range mpdus {
		mp := &mpdus[i]
		if mp.key >= 0 && mp.encr == EncrAES {
			if out, ok := m.encrypt(mp.buf, mp.key); ok {
				mp.buf = out
			} else {
				cfgErr = true
			}
		}
		if beacon && len(mp.buf) >= 32 {
			binary.LittleEndian.PutUint64(mp.buf[24:], m.beaconTSF)
			if m.OnBeacon != nil {
				m.OnBeacon(mp.buf, m.beaconTSF)
			}
		}
	}
	if cfgErr {
		m.stats.TxDescErrors++
		st[3] = txsDescCfgErr
		m.writeStatus(&st)
		return lastAddr, lastID
	}
	agg := len(mpdus) > 1
	noAck := mpdus[0].noAck
	var acked uint64
	fails, final := 0, 0
	done := false
	for s := 0; s < 4 && !done; s++ {
		tries := int(first[13] >> (16 + 4*s) & 0xf)
		for t := 0; t < tries && !done; t++ {
			final = s
			for i, mp := range mpdus {
				if acked&(1<<i) != 0 {
					continue
				}
				m.stats.TxMPDUs++
				if m.cfg.Air != nil {
					m.stats.TxOnAir++
					_ = m.cfg.Air.Transmit(mp.buf)
				}
				if noAck || m.cfg.Outcome == nil || m.cfg.Outcome(mp.buf, s, t) {
					acked |= 1 << i
				}
			}
			if noAck || acked != 0 && (agg || acked&1 != 0) {
				done = true
			} else {
				fails++
			}
		}
	}
	if done {
		st[3] |= txsFrmXmitOK
	} else {
		st[3] |= txsExcessive
	}
	st[3] |= uint32(min(fails, 15)) << txsDataFailSh
	seq := uint32(0)
	if len(mpdus[0].buf) >= 24 {
		seq = uint32(binary.LittleEndian.Uint16(mpdus[0].buf[22:]) >> 4)
	}
	st[8] = seq<<txsSeqShift | uint32(final)<<txsFinalIdxSh
	if agg && done {
		st[2] |= txsBaStatus
		st[5], st[6] = uint32(acked), uint32(acked>>32)
	}
	m.writeStatus(&st)
	return lastAddr, lastID
}

func ptrChecksum(d *[TxDescWords]uint32) uint32 {
	var s uint32
	for i := 0; i < 10; i++ {
		s += d[i]
	}
	return (s&0xffff + s>>16) & 0xffff
}

// writeStatus writes the entry's words now and its done word in a later
// engine step (the reordered write-back hazard).
func (m *MAC) writeStatus(st *[TxStatusSize / 4]uint32) {
	start, end := uint64(m.regs[RegQStatusStart/4]), uint64(m.regs[RegQStatusEnd/4])
	if start == 0 || end <= start {
		return
	}
	if m.tsWr < start || m.tsWr+TxStatusSize > end {
		m.tsWr = start
	}
	a := m.tsWr
	m.tsWr += TxStatusSize
	if m.tsWr+TxStatusSize > end {
		m.tsWr = start
	}
	o := m.txOrder()
	if v, err := m.sys.Mem.DevLoad32(a+32, o); err == nil && v&txsDone != 0 {
		m.stats.TxStatusOverwritten++
	}
	for i := 0; i < 8; i++ {
		_ = m.sys.Mem.DevStore32(a+uint64(4*i), st[i], o)
	}
	m.txStatusHalf.active, m.txStatusHalf.addr, m.txStatusHalf.words = true, a, *st
}

func (m *MAC) finishStatus() {
	h := &m.txStatusHalf
	h.active = false
	_ = m.sys.Mem.DevStore32(h.addr+32, h.words[8]|txsDone, m.txOrder())
	if h.words[3]&txsDescCfgErr != 0 || h.words[3]&txsFrmXmitOK == 0 {
		m.raise(ISRTXERR)
	} else {
		m.raise(ISRTXOK)
	}
	q := h.words[0] & infoQCUMask >> infoQCUShift
	m.isrS[0] |= 1 << q
}

// ---- key cache ----

type keyEntry struct {
	valid bool
	typ   uint32
	mac   [6]byte
	tk    [16]byte
}

func (m *MAC) key(slot int) (k keyEntry) {
	if slot < 0 || slot >= KeySlots {
		return k
	}
	base := (RegKeyTable + KeyEntrySize*uint32(slot)) / 4
	r := m.regs[base : base+8]
	binary.LittleEndian.PutUint32(k.tk[0:], r[0])
	binary.LittleEndian.PutUint16(k.tk[4:], uint16(r[1]))
	binary.LittleEndian.PutUint32(k.tk[6:], r[2])
	binary.LittleEndian.PutUint16(k.tk[10:], uint16(r[3]))
	binary.LittleEndian.PutUint32(k.tk[12:], r[4])
	k.typ = r[5] & 7
	// The MAC words hold the address shifted right by one (ath key.c).
	lo, hi := r[6], r[7]
	k.valid = hi&KeyValid != 0
	hi &= 0x7fff
	full := uint64(hi)<<33 | uint64(lo)<<1
	for i := 0; i < 6; i++ {
		k.mac[i] = byte(full >> (8 * i))
	}
	return k
}

// encrypt seals an MPDU laid out by the driver (MAC header, CCMP header
// with the PN, plaintext, 8 bytes of MIC room) with slot's key.
func (m *MAC) encrypt(f []byte, slot int) ([]byte, bool) {
	k := m.key(slot)
	if !k.valid || k.typ != KeyTypeCCM || len(f) < 2 {
		return nil, false
	}
	hl := wlan.HeaderLen(wlan.FrameControl(binary.LittleEndian.Uint16(f)))
	if hl == 0 || len(f) < hl+ccmp.Overhead || f[1]&0x40 == 0 || f[hl+3]&0x20 == 0 {
		return nil, false
	}
	ch := f[hl : hl+ccmp.HeaderLen]
	pn := uint64(ch[0]) | uint64(ch[1])<<8 | uint64(binary.LittleEndian.Uint32(ch[4:8]))<<16
	key, err := ccmp.NewKey(k.tk[:], int(ch[3]>>6))
	if err != nil {
		return nil, false
	}
	plain := make([]byte, 0, len(f))
	plain = append(plain, f[:hl]...)
	plain = append(plain, f[hl+ccmp.HeaderLen:len(f)-ccmp.MICLen]...)
	plain[1] &^= 0x40
	out, err := key.EncapPN(plain, pn)
	return out, err == nil
}

// ---- RX engine ----

// Receive takes a frame from the air (medium.Device).
func (m *MAC) Receive(frame []byte) {
	m.sys.Do(func() { m.receive(frame) })
}

func (m *MAC) receive(frame []byte) {
	if m.regs[RegCR/4]&CRRXD != 0 || len(frame) < 10 {
		m.stats.RxFiltered++
		return
	}
	var me [6]byte
	binary.LittleEndian.PutUint32(me[0:], m.regs[StaID0/4])
	binary.LittleEndian.PutUint16(me[4:], uint16(m.regs[StaID1/4]))
	a1 := frame[4:10]
	if a1[0]&1 == 0 && string(a1) != string(me[:]) {
		m.stats.RxFiltered++
		return
	}
	if len(m.pcu) >= m.cfg.PCUFrames {
		m.stats.RxOverruns++
		m.raise(ISRRXORN)
		return
	}
	m.pcu = append(m.pcu, append([]byte(nil), frame...))
}

func (m *MAC) rxStep() bool {
	if m.paused {
		return false
	}
	if m.rxw.active {
		// The done word, last.
		w := &m.rxw
		w.active = false
		var b [4]byte
		m.rxOrder().PutUint32(b[:], w.status[11])
		_ = m.sys.Mem.DevWrite(w.addr+44, b[:])
		if w.hp {
			m.raise(ISRHPRXOK)
		} else {
			m.raise(ISRLPRXOK)
		}
		return true
	}
	if len(m.pcu) == 0 {
		return false
	}
	f := m.pcu[0]
	hp := len(f) > 0 && f[0]&0x0c == 0 // management frames: high priority
	fifo := &m.lpFIFO
	if hp && len(m.hpFIFO) > 0 {
		fifo = &m.hpFIFO
	} else {
		hp = false
	}
	if len(*fifo) == 0 {
		if m.isr&ISRRXEOL == 0 {
			m.stats.RxNoBuffer++
			m.raise(ISRRXEOL)
		}
		return false
	}
	bufSize := int(m.regs[RegDataBuf/4] & DataBufMask)
	m.pcu[0] = nil
	m.pcu = popFront(m.pcu)
	if len(f)+4 > bufSize-RxStatusSize {
		m.stats.RxTooLong++
		return true
	}
	addr := (*fifo)[0]
	*fifo = popFront(*fifo)
	m.stats.RxFrames++
	st := &m.rxw.status
	*st = [RxStatusSize / 4]uint32{}
	st[0] = uint32(VendorID)<<16 | RxStatusSize/4
	if hp {
		st[0] |= infoRxPriority
	}
	st[1] = uint32(m.cfg.RxRate) << rxsRateShift
	st[3] = uint32(m.tsf())
	st[5] = uint32(m.cfg.RxRSSI) << rxsRSSIShift
	st[11] = rxsDone | rxsFrameOK
	f = m.decrypt(f, st)
	body := make([]byte, len(f)+4)
	copy(body, f)
	binary.LittleEndian.PutUint32(body[len(f):], crc32.ChecksumIEEE(f))
	st[2] = uint32(len(body)) & rxsDataLenMask
	_ = m.sys.Mem.DevWrite(addr+RxStatusSize, body)
	var sb [RxStatusSize]byte
	o := m.rxOrder()
	for i := 0; i < 11; i++ {
		o.PutUint32(sb[4*i:], st[i])
	}
	_ = m.sys.Mem.DevWrite(addr, sb[:44]) // everything but the done word
	m.rxw.active, m.rxw.addr, m.rxw.hp = true, addr, hp
	return true
}

// decrypt applies the key cache to a received frame and sets st's flags.
func (m *MAC) decrypt(f []byte, st *[RxStatusSize / 4]uint32) []byte {
	if len(f) < 24 || f[1]&0x40 == 0 || f[0]&0x0c != 0x08 {
		return f
	}
	hl := wlan.HeaderLen(wlan.FrameControl(binary.LittleEndian.Uint16(f)))
	if hl == 0 || len(f) < hl+ccmp.Overhead || f[hl+3]&0x20 == 0 {
		return f
	}
	keyID := int(f[hl+3] >> 6)
	slot := -1
	if f[4]&1 != 0 { // group: slots 0..3 by key ID (ath9k key.c)
		if k := m.key(keyID); k.valid && k.typ == KeyTypeCCM {
			slot = keyID
		}
	} else {
		for s := 4; s < KeySlots; s++ {
			k := m.key(s)
			if k.valid && k.typ == KeyTypeCCM && string(k.mac[:]) == string(f[10:16]) {
				slot = s
				break
			}
		}
	}
	if slot < 0 {
		m.stats.RxKeyMiss++
		st[11] |= rxsKeyMiss
		return f
	}
	k := m.key(slot)
	key, err := ccmp.NewKey(k.tk[:], keyID)
	if err != nil {
		return f
	}
	work := append([]byte(nil), f...)
	plain, err := key.Decap(work)
	if err != nil {
		m.stats.RxMICFailures++
		st[11] &^= rxsFrameOK
		st[11] |= rxsDecryptCRC
		return f
	}
	m.stats.RxDecrypted++
	// The hardware leaves the CCMP header and the MIC field in place.
	out := make([]byte, 0, len(f))
	out = append(out, f[:hl+ccmp.HeaderLen]...)
	out = append(out, plain[hl:]...)
	out = append(out, f[len(f)-ccmp.MICLen:]...)
	st[11] |= rxsKeyIdxValid | uint32(slot)<<rxsKeyIdxShift
	return out
}

// InjectTxStatus writes a forged TX status entry (words in ring order,
// done bit as given) at the ring's write position, as a misbehaving chip
// or a stray DMA would, and raises TXOK.
func (m *MAC) InjectTxStatus(w [TxStatusSize / 4]uint32) {
	m.sys.Do(func() {
		start, end := uint64(m.regs[RegQStatusStart/4]), uint64(m.regs[RegQStatusEnd/4])
		if start == 0 || end <= start {
			return
		}
		if m.tsWr < start || m.tsWr+TxStatusSize > end {
			m.tsWr = start
		}
		a := m.tsWr
		m.tsWr += TxStatusSize
		if m.tsWr+TxStatusSize > end {
			m.tsWr = start
		}
		for i, v := range w {
			_ = m.sys.Mem.DevStore32(a+uint64(4*i), v, m.txOrder())
		}
		m.raise(ISRTXOK)
	})
}

// popFront removes the first element in place, so the queues' backing
// arrays are reused rather than regrown (the model stays cheap enough
// for the driver's allocation tests to measure only the driver).
func popFront[T any](s []T) []T {
	copy(s, s[1:])
	var zero T
	s[len(s)-1] = zero
	return s[:len(s)-1]
}
