// Package argesim is a register-level model of the AR71xx-family gigabit
// Ethernet MAC (arge/ag71xx) for testing the arge driver, built on hwsim.
//
// The model's DMA engines walk the descriptor rings as the hardware does,
// as hwsim scheduler agents that run at seeded points between any two
// driver accesses:
//
//   - TX follows the next pointers from DMA_TX_DESC, stops (and clears
//     DMA_TX_CONTROL) at a descriptor with EMPTY set, fetches each
//     fragment's buffer from memory's device view, sets EMPTY on every
//     descriptor it finished, counts one packet per descriptor in
//     DMA_TX_STATUS, and puts the frame on the wire when it reaches a
//     descriptor without MORE. (TX write-backs go straight to memory: a
//     late EMPTY only delays reclaim, it cannot corrupt.) Meeting EMPTY in the middle of a frame is a
//     TX underrun: the truncated frame is lost, UNDERRUN is raised, the
//     engine stops and the model reports the misuse.
//   - RX takes frames from its FIFO (filled by the wire), needs a
//     descriptor with EMPTY set (a buffer owned by the hardware), writes
//     frame + FCS and then the descriptor's length through the SoC's DDR
//     write buffer (ar71xxsim), counts the packet, and raises OVERFLOW and
//     stops when it finds no buffer.
//   - Packet counters decrement by one per PKT_SENT/PKT_RECVD write; a
//     write while the count is 0 (over-acking) is reported.
//   - DMA_INTR_STATUS summarises both status registers and drives the
//     interrupt line (level) through an hwsim.Controller.
//   - MDIO: a command keeps MII_INDICATOR busy for a seeded number of reads;
//     MII_STATUS holds the previous result until the read completes.
//   - Frames pass only when the PHY's link is up and MAC_CFG2 interface
//     mode and duplex, IFCONTROL speed, FIFO_CFG5 byte mode and the SoC's
//     clock all match the negotiated link; otherwise they are dropped and
//     counted.
//   - A received frame longer, with its FCS, than MAX_FRAME_LEN (reset
//     value 1536) or than the model's FIFO slots (MaxFrame) is dropped at
//     once and counted in the rx_oversize MIB counter; one too short for
//     an Ethernet header in rx_undersize; one that finds the FIFO full in
//     rx_dropped. The model assumes MAX_FRAME_LEN counts the FCS, like the
//     length an RX descriptor reports.
//   - Injected faults: TX underrun, TX/RX bus errors.
//
// Frames enter through Receive, Deliver or Offer and leave through a Wire, so tests
// can loop a port back, join two ports, or (elsewhere) bridge to a TAP.
package argesim

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/gowrt/gowrt/hwsim"
	"github.com/gowrt/gowrt/mdio/phy"
	"github.com/gowrt/gowrt/mdio/phy/physim"
	"github.com/gowrt/gowrt/soc/ar71xx"
	"github.com/gowrt/gowrt/soc/ar71xx/ar71xxsim"
)

// Wire carries frames the MAC transmits. Send runs with the System lock
// held and must not retain frame (copy it).
type Wire interface {
	Send(frame []byte)
}

// Pacer is implemented by wires that model the receiving end's pace: the
// TX engine starts a new frame only when the wire can take it. On a real
// cable both ends move one frame per frame-time, so a port looped back to
// itself never outruns its own receiver; without pacing the model's
// randomly scheduled engines would.
type Pacer interface {
	CanSend() bool
}

// WireFunc adapts a function to Wire.
type WireFunc func(frame []byte)

func (f WireFunc) Send(frame []byte) { f(frame) }

// Loopback is a wire plugged back into the same (or another) MAC model.
type Loopback struct{ To *MAC }

func (l Loopback) Send(frame []byte) { _ = l.To.Receive(frame) }

// CanSend implements Pacer: the receiving MAC's FIFO has room.
func (l Loopback) CanSend() bool { return l.To.fifoN < len(l.To.fifo) }

// MaxFrame is the largest frame (with FCS) the model moves.
const MaxFrame = 2048

// maxFrameLenReset is MAX_FRAME_LEN's value after reset (1536).
const maxFrameLenReset = 0x600

// Why Receive, Deliver and Offer refuse a frame. Only ErrFIFOFull is
// transient: the MAC could take the frame once its RX engine has drained
// the FIFO. The others are final, and the frame is dropped and counted
// whatever the caller does.
var (
	// ErrFIFOFull: the receive FIFO has no room.
	ErrFIFOFull = errors.New("argesim: receive FIFO full")
	// ErrTooLong: the frame with its FCS is longer than MAX_FRAME_LEN or
	// than MaxFrame (counted in Stats.RXTooLong and MIB rx_oversize).
	ErrTooLong = errors.New("argesim: frame longer than the MAC accepts")
	// ErrRunt: the frame is shorter than an Ethernet header (counted in
	// Stats.RXRunts and MIB rx_undersize).
	ErrRunt = errors.New("argesim: frame shorter than an Ethernet header")
	// ErrNoLink: the PHY has no link, the receiver is disabled, or the
	// MAC is programmed for another speed or duplex than the link's
	// (counted in Stats.LinkDrops or Stats.ModeDrops).
	ErrNoLink = errors.New("argesim: no link between PHY and MAC")
)

// Config describes one modelled MAC.
type Config struct {
	Unit int
	Info *ar71xx.Info // the SoC variant (descriptor length mask)
	// IRQ and Line: where the MAC's interrupt goes (CPU IP4/IP5).
	IRQ  *hwsim.Controller
	Line int
	// DMA is the write path into memory (the SoC model's DDR channel);
	// nil writes straight into memory.
	DMA ar71xxsim.DMAWriter
	// Clock reports whether the SoC clocks the MAC for a speed (nil: yes).
	Clock func(mbps int) bool
	// PHYAddr is the address of the PHY whose link this port uses.
	PHYAddr int
	// RXFIFO is how many received frames wait for descriptors (default 8).
	RXFIFO int
	// MDIOBusyReads bounds the busy time of an MDIO command (default 4).
	MDIOBusyReads int
}

type fifoFrame struct {
	n    int
	data [MaxFrame + 4]byte
}

// Stats are the model's counters.
type Stats struct {
	TXFrames, TXBytes     uint64
	TXUnderruns           uint64 // frames lost to an underrun
	TXTruncated           uint64 // of which: chain ended at EMPTY mid-frame
	RXFrames, RXBytes     uint64
	RXOverflows           uint64 // frames lost for lack of a descriptor
	RXFIFODrops           uint64 // frames lost because the FIFO was full
	RXTooBig              uint64 // frames larger than the posted buffer
	RXTooLong             uint64 // frames longer than MAX_FRAME_LEN or MaxFrame
	RXRunts               uint64 // frames shorter than an Ethernet header
	LinkDrops, ModeDrops  uint64 // frames lost to link down / MAC misconfiguration
	OverAcks              uint64 // PKT_SENT/PKT_RECVD written with count 0
	BusErrors             uint64
	MDIOReads, MDIOWrites uint64
}

// MAC is the model of one arge MAC.
type MAC struct {
	sys   *hwsim.System
	cfg   Config
	order binary.ByteOrder // descriptor byte order (the CPU's)
	dma   ar71xxsim.DMAWriter

	regs [0x200 / 4]uint32
	word [4]byte // scratch for descriptor words (no allocation per access)
	mib  [len(mibBits)]uint32

	txEnabled, rxEnabled   bool
	txCur, rxCur           uint32
	txCount, rxCount       uint32
	txFlags, rxFlags       uint32 // UNDERRUN/BUS_ERROR, OVERFLOW/BUS_ERROR
	intEnable              uint32
	lineUp                 bool
	txFrame                [MaxFrame]byte
	txLen                  int
	txInFrame              bool
	txFrameHasUnderrun     bool
	injectUnderrun         bool
	injectTXBus, injectRXB bool

	fifo       []fifoFrame
	fifoHead   int
	fifoN      int
	wire       Wire
	phys       map[int]*physim.PHY
	mdioDev    MDIODevice      // answers addresses without a PHY (a switch model)
	linkSrc    func() phy.Link // the link when no PHY of this bus carries it
	mdioBusy   int
	mdioOp     int // 0 none, 1 read, 2 write
	mdioStatus uint32
	mdioCmd    uint32

	Stats Stats
}

// New builds a MAC model on sys. Map it on the bus with Region.
func New(sys *hwsim.System, cfg Config) (*MAC, error) {
	if cfg.Info == nil {
		return nil, fmt.Errorf("argesim: Config.Info is required")
	}
	if cfg.RXFIFO == 0 {
		cfg.RXFIFO = 8
	}
	if cfg.MDIOBusyReads == 0 {
		cfg.MDIOBusyReads = 4
	}
	m := &MAC{sys: sys, cfg: cfg, order: sys.ByteOrder(), dma: cfg.DMA,
		fifo: make([]fifoFrame, cfg.RXFIFO), phys: map[int]*physim.PHY{}}
	m.regs[regMaxFrameLen/4] = maxFrameLenReset
	if m.dma == nil {
		m.dma = ar71xxsim.Direct{Mem: sys.Mem}
	}
	sys.Sched.AddAgent(fmt.Sprintf("arge%d-tx", cfg.Unit), m.txStep)
	sys.Sched.AddAgent(fmt.Sprintf("arge%d-rx", cfg.Unit), m.rxStep)
	return m, nil
}

// Map puts the MAC's registers on sys's bus and returns the region.
func (m *MAC) Map(name string) *hwsim.Region { return m.sys.Bus.Map(name, 0x200, m) }

// AttachPHY puts a PHY model on this MAC's MDIO bus.
func (m *MAC) AttachPHY(addr int, p *physim.PHY) { m.sys.Do(func() { m.phys[addr] = p }) }

// MDIODevice is a device answering at many addresses of a MAC's MDIO bus:
// an Ethernet switch model (arswitchsim.Switch implements it).
type MDIODevice interface {
	Read(phy, reg int) (uint16, error)
	Write(phy, reg int, val uint16) error
}

// AttachMDIO puts dev on this MAC's MDIO bus, answering every address
// without an attached PHY. It is called with the System lock held, so it
// must not take that lock (a switch model's frame path must not deliver
// into a MAC while holding its own lock).
func (m *MAC) AttachMDIO(dev MDIODevice) { m.sys.Do(func() { m.mdioDev = dev }) }

// SetLinkSource makes the MAC take its link from f rather than from the
// PHY at Config.PHYAddr on its own bus: a MAC wired to a switch's CPU port
// (a fixed link), or to a PHY that another MAC's bus or a switch manages.
// f runs with the System lock held.
func (m *MAC) SetLinkSource(f func() phy.Link) { m.sys.Do(func() { m.linkSrc = f }) }

// SetWire connects the MAC's transmit side.
func (m *MAC) SetWire(w Wire) { m.sys.Do(func() { m.wire = w }) }

// InjectTXUnderrun makes the next frame's transmission underrun. Lock held.
func (m *MAC) InjectTXUnderrun() { m.injectUnderrun = true }

// InjectBusError makes the next descriptor fetch of the TX (tx=true) or RX
// engine fail with a bus error. Lock held.
func (m *MAC) InjectBusError(tx bool) {
	if tx {
		m.injectTXBus = true
	} else {
		m.injectRXB = true
	}
}

// Snapshot returns the counters (takes the lock).
func (m *MAC) Snapshot() Stats {
	var s Stats
	m.sys.Do(func() { s = m.Stats })
	return s
}

// Deliver hands a frame (without FCS) from the wire to the MAC, taking
// the System lock. It returns nil if the MAC took the frame into its FIFO,
// or why it dropped (and counted) it: see ErrFIFOFull and the errors
// after it.
func (m *MAC) Deliver(frame []byte) error {
	var err error
	m.sys.Do(func() { err = m.receive(frame, false) })
	return err
}

// Offer is Deliver for a wire that can hold a frame: a full FIFO is
// back-pressure, not a drop. Offer then returns ErrFIFOFull and counts
// nothing; the frame is still the caller's to offer again (or to Deliver,
// which drops and counts it when the FIFO is still full). Every other
// refusal is final and counted, as with Deliver.
func (m *MAC) Offer(frame []byte) error {
	var err error
	m.sys.Do(func() { err = m.receive(frame, true) })
	return err
}

// Receive is Deliver with the lock held (wires call it from Send).
func (m *MAC) Receive(frame []byte) error { return m.receive(frame, false) }

func (m *MAC) receive(frame []byte, hold bool) error {
	if !m.linkPasses() {
		return ErrNoLink
	}
	if m.regs[regMACCfg1/4]&cfg1RXEnable == 0 {
		m.Stats.LinkDrops++
		return ErrNoLink
	}
	if len(frame) < 14 {
		m.Stats.RXRunts++
		m.mibInc(19, 1) // rx_undersize
		return ErrRunt
	}
	if n := len(frame) + 4; n > MaxFrame || n > int(m.regs[regMaxFrameLen/4]&0xFFFF) {
		m.Stats.RXTooLong++
		m.mibInc(20, 1) // rx_oversize
		return ErrTooLong
	}
	if m.fifoN == len(m.fifo) {
		if hold {
			return ErrFIFOFull
		}
		m.Stats.RXFIFODrops++
		m.mibInc(23, 1) // rx_dropped
		return ErrFIFOFull
	}
	f := &m.fifo[(m.fifoHead+m.fifoN)%len(m.fifo)]
	f.n = copy(f.data[:], frame)
	binary.LittleEndian.PutUint32(f.data[f.n:], crc32.ChecksumIEEE(frame))
	m.fifoN++
	return nil
}

// linkPasses decides whether a frame can cross between MAC and PHY.
func (m *MAC) linkPasses() bool {
	var l phy.Link
	if m.linkSrc != nil {
		l = m.linkSrc()
	} else {
		p := m.phys[m.cfg.PHYAddr]
		if p == nil {
			m.Stats.LinkDrops++
			return false
		}
		l = p.Current()
	}
	if !l.Up {
		m.Stats.LinkDrops++
		return false
	}
	cfg2 := m.regs[regMACCfg2/4]
	byteMode := m.regs[regFIFOCfg5/4]&fifoCfg5ByteMode != 0
	speed100 := m.regs[regIFControl/4]&ifControlSpd100 != 0
	ok := (cfg2&cfg2FullDuplex != 0) == l.FullDuplex
	switch l.Speed {
	case 1000:
		ok = ok && cfg2&cfg2IfModeMask == cfg2IfMode1000 && byteMode
	case 100:
		ok = ok && cfg2&cfg2IfModeMask == cfg2IfMode10_100 && !byteMode && speed100
	default:
		ok = ok && cfg2&cfg2IfModeMask == cfg2IfMode10_100 && !byteMode && !speed100
	}
	if ok && m.cfg.Clock != nil {
		ok = m.cfg.Clock(l.Speed)
	}
	if !ok {
		m.Stats.ModeDrops++
	}
	return ok
}

func (m *MAC) mibInc(i int, v uint32) {
	m.mib[i] = (m.mib[i] + v) & (1<<mibBits[i] - 1)
}

func (m *MAC) mibSize(n int) {
	i := 0
	switch {
	case n <= 64:
	case n <= 127:
		i = 1
	case n <= 255:
		i = 2
	case n <= 511:
		i = 3
	case n <= 1023:
		i = 4
	case n <= 1518:
		i = 5
	default:
		i = 6
	}
	m.mibInc(i, 1)
}

func (m *MAC) intStatus() uint32 {
	var s uint32
	if m.txCount > 0 {
		s |= intTXPktSent
	}
	s |= m.txFlags & (txStatusUnderrun | txStatusBusError) // bits 1, 3
	if m.rxCount > 0 {
		s |= intRXPktRecvd
	}
	if m.rxFlags&rxStatusOverflow != 0 {
		s |= intRXOverflow
	}
	if m.rxFlags&rxStatusBusError != 0 {
		s |= intRXBusError
	}
	return s
}

func (m *MAC) updateIRQ() {
	if m.cfg.IRQ == nil {
		return
	}
	up := m.intStatus()&m.intEnable != 0
	if up && !m.lineUp {
		m.cfg.IRQ.Raise(m.cfg.Line)
	} else if !up && m.lineUp {
		m.cfg.IRQ.Lower(m.cfg.Line)
	}
	m.lineUp = up
}

func (m *MAC) desc32(addr uint32) (uint32, bool) {
	b := m.word[:]
	if err := m.sys.Mem.DevRead(uint64(addr), b); err != nil {
		return 0, false
	}
	return m.order.Uint32(b), true
}

// putDesc32 writes a descriptor word through w (or straight to memory).
func (m *MAC) putDesc32(w ar71xxsim.DMAWriter, addr, v uint32) error {
	b := m.word[:]
	m.order.PutUint32(b, v)
	if w == nil {
		return m.sys.Mem.DevWrite(uint64(addr), b)
	}
	return w.DMAWrite(uint64(addr), b)
}

func (m *MAC) lenMask() uint32 { return m.cfg.Info.DescLenMask }

// txStep is the TX DMA engine: one descriptor per step.
func (m *MAC) txStep() bool {
	if !m.txEnabled || m.txFlags != 0 {
		return false
	}
	if m.injectTXBus {
		m.injectTXBus = false
		m.txFlags |= txStatusBusError
		m.txEnabled = false
		m.Stats.BusErrors++
		m.updateIRQ()
		return true
	}
	ctrl, ok := m.desc32(m.txCur + descCtrl)
	if !ok {
		m.busError(true)
		return true
	}
	if !m.txInFrame && ctrl&descEmpty == 0 {
		if p, ok := m.wire.(Pacer); ok && !p.CanSend() {
			return false
		}
	}
	if ctrl&descEmpty != 0 {
		m.txEnabled = false
		if m.txInFrame {
			// The chain ended in the middle of a frame: the FIFO runs
			// dry, the frame goes out truncated with a bad CRC (the
			// partner drops it) and the engine stops.
			m.Stats.TXUnderruns++
			m.Stats.TXTruncated++
			m.txInFrame, m.txLen = false, 0
			m.txFlags |= txStatusUnderrun
			m.sys.Report(hwsim.Misuse{Kind: hwsim.ModelRule, Addr: uint64(m.txCur), Region: "arge-tx",
				Detail: "TX chain reached an EMPTY descriptor in the middle of a frame (first descriptor handed over before the chain was complete?)"})
			m.updateIRQ()
			return true
		}
		return false
	}
	buf, _ := m.desc32(m.txCur + descBuf)
	next, _ := m.desc32(m.txCur + descNext)
	n := int(ctrl & m.lenMask())
	if n == 0 || m.txLen+n > MaxFrame {
		m.busError(true)
		return true
	}
	if err := m.sys.Mem.DevRead(uint64(buf), m.txFrame[m.txLen:m.txLen+n]); err != nil {
		m.busError(true)
		return true
	}
	m.txLen += n
	m.txInFrame = true
	// Hand the descriptor back: EMPTY set, count one packet.
	_ = m.putDesc32(nil, m.txCur+descCtrl, ctrl|descEmpty)
	m.txCount++
	m.txCur = next
	if ctrl&descMore == 0 {
		m.finishTX()
	}
	m.updateIRQ()
	return true
}

func (m *MAC) finishTX() {
	frame := m.txFrame[:m.txLen]
	m.txInFrame, m.txLen = false, 0
	if m.injectUnderrun {
		m.injectUnderrun = false
		m.Stats.TXUnderruns++
		m.txFlags |= txStatusUnderrun
		m.txEnabled = false
		return
	}
	if m.regs[regMACCfg1/4]&cfg1TXEnable == 0 || !m.linkPasses() {
		return
	}
	m.Stats.TXFrames++
	m.Stats.TXBytes += uint64(len(frame))
	m.mibInc(25, 1)
	m.mibInc(24, uint32(len(frame)))
	m.mibSize(len(frame) + 4)
	if m.wire != nil {
		m.wire.Send(frame)
	}
}

func (m *MAC) busError(tx bool) {
	m.Stats.BusErrors++
	if tx {
		m.txFlags |= txStatusBusError
		m.txEnabled = false
	} else {
		m.rxFlags |= rxStatusBusError
		m.rxEnabled = false
	}
	m.updateIRQ()
}

// rxStep is the RX DMA engine: one frame per step.
func (m *MAC) rxStep() bool {
	if m.fifoN == 0 || !m.rxEnabled || m.rxFlags != 0 {
		return false
	}
	if m.injectRXB {
		m.injectRXB = false
		m.busError(false)
		return true
	}
	ctrl, ok := m.desc32(m.rxCur + descCtrl)
	if !ok {
		m.busError(false)
		return true
	}
	f := &m.fifo[m.fifoHead]
	if ctrl&descEmpty == 0 {
		// No buffer: the frame is lost and the receiver stops.
		m.popFIFO()
		m.Stats.RXOverflows++
		m.mibInc(23, 1)
		m.rxFlags |= rxStatusOverflow
		m.rxEnabled = false
		m.updateIRQ()
		return true
	}
	buf, _ := m.desc32(m.rxCur + descBuf)
	next, _ := m.desc32(m.rxCur + descNext)
	n := f.n + 4
	if n > int(ctrl&m.lenMask()) {
		m.popFIFO()
		m.Stats.RXTooBig++
		m.mibInc(20, 1) // rx_oversize
		return true
	}
	if err := m.dma.DMAWrite(uint64(buf), f.data[:n]); err != nil {
		m.busError(false)
		return true
	}
	_ = m.putDesc32(m.dma, m.rxCur+descCtrl, uint32(n))
	m.popFIFO()
	m.Stats.RXFrames++
	m.Stats.RXBytes += uint64(n - 4)
	m.mibInc(8, 1)
	m.mibInc(7, uint32(n))
	m.mibSize(n)
	m.rxCount++
	m.rxCur = next
	m.updateIRQ()
	return true
}

func (m *MAC) popFIFO() {
	m.fifoHead = (m.fifoHead + 1) % len(m.fifo)
	m.fifoN--
}

// status composes a DMA status register. The count field is 8 bits wide;
// the model keeps the full count internally and shows it saturated, an
// assumption (the sources say nothing about more than 255 outstanding
// packets, which a 256-entry RX ring allows).
func (m *MAC) status(count, flags, pkt uint32) uint32 {
	v := flags | min(count, 0xFF)<<statusCountShift
	if count > 0 {
		v |= pkt
	}
	return v
}

// ReadReg implements hwsim.Device.
func (m *MAC) ReadReg(off uint32, width int) uint32 {
	if width != 4 {
		return 0
	}
	switch {
	case off == regTXCtrl:
		if m.txEnabled {
			return txCtrlEnable
		}
		return 0
	case off == regRXCtrl:
		if m.rxEnabled {
			return rxCtrlEnable
		}
		return 0
	case off == regTXDesc:
		return m.txCur
	case off == regRXDesc:
		return m.rxCur
	case off == regTXStatus:
		return m.status(m.txCount, m.txFlags, txStatusPktSent)
	case off == regRXStatus:
		return m.status(m.rxCount, m.rxFlags, rxStatusPktRecvd)
	case off == regIntStatus:
		return m.intStatus()
	case off == regIntEnable:
		return m.intEnable
	case off == regMIIIndicator:
		return m.mdioIndicator()
	case off == regMIIStatus:
		return m.mdioStatus
	case off >= regMIBFirst && off <= regMIBLast:
		return m.mib[(off-regMIBFirst)/4]
	}
	if int(off/4) < len(m.regs) {
		return m.regs[off/4]
	}
	return 0
}

// WriteReg implements hwsim.Device.
func (m *MAC) WriteReg(off uint32, width int, val uint32) {
	if width != 4 {
		return
	}
	switch off {
	case regTXCtrl:
		m.txEnabled = val&txCtrlEnable != 0
	case regRXCtrl:
		m.rxEnabled = val&rxCtrlEnable != 0
	case regTXDesc:
		m.txCur = val
		m.txInFrame, m.txLen = false, 0
	case regRXDesc:
		m.rxCur = val
	case regTXStatus:
		if val&txStatusPktSent != 0 {
			if m.txCount == 0 {
				m.Stats.OverAcks++
			} else {
				m.txCount--
			}
		}
		m.txFlags &^= val & (txStatusUnderrun | txStatusBusError)
	case regRXStatus:
		if val&rxStatusPktRecvd != 0 {
			if m.rxCount == 0 {
				m.Stats.OverAcks++
			} else {
				m.rxCount--
			}
		}
		m.rxFlags &^= val & (rxStatusOverflow | rxStatusBusError)
	case regIntEnable:
		m.intEnable = val
	case regMIICmd:
		if val&miiCmdRead != 0 && m.mdioCmd&miiCmdRead == 0 {
			m.mdioStart(1)
		}
		m.mdioCmd = val
	case regMIIControl:
		m.regs[off/4] = val
		m.mdioStart(2)
	case regMACCfg1:
		if val&cfg1SoftReset != 0 {
			m.softReset()
		}
		m.regs[off/4] = val
	default:
		if int(off/4) < len(m.regs) {
			m.regs[off/4] = val
		}
	}
	m.updateIRQ()
}

func (m *MAC) softReset() {
	m.txEnabled, m.rxEnabled = false, false
	m.txCount, m.rxCount, m.txFlags, m.rxFlags = 0, 0, 0, 0
	m.txInFrame, m.txLen = false, 0
	m.intEnable = 0
}

func (m *MAC) mdioStart(op int) {
	m.mdioOp = op
	m.mdioBusy = 1 + m.sys.Sched.Intn(m.cfg.MDIOBusyReads)
	if op == 1 {
		m.Stats.MDIOReads++
	} else {
		m.Stats.MDIOWrites++
	}
}

func (m *MAC) mdioIndicator() uint32 {
	if m.mdioBusy == 0 {
		return 0
	}
	m.mdioBusy--
	if m.mdioBusy == 0 {
		addr := m.regs[regMIIAddr/4]
		phyAddr, reg := int(addr>>miiAddrPHYShift)&0x1F, int(addr&0x1F)
		p := m.phys[phyAddr]
		switch m.mdioOp {
		case 1:
			switch {
			case p != nil:
				m.mdioStatus = uint32(p.ReadReg(reg))
			case m.mdioDev != nil:
				v, err := m.mdioDev.Read(phyAddr, reg)
				if err != nil {
					v = 0xFFFF // nothing drives the bus
				}
				m.mdioStatus = uint32(v)
			default:
				m.mdioStatus = 0xFFFF
			}
		case 2:
			switch {
			case p != nil:
				p.WriteReg(reg, uint16(m.regs[regMIIControl/4]))
			case m.mdioDev != nil:
				_ = m.mdioDev.Write(phyAddr, reg, uint16(m.regs[regMIIControl/4]))
			}
		}
		m.mdioOp = 0
	}
	return miiIndBusy
}
