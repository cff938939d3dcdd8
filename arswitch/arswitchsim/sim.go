package arswitchsim

import (
	"fmt"
	"sync"
	"time"

	"github.com/gowrt/gowrt/mdio"
)

// Chip selects the modelled switch.
type Chip int

const (
	AR8216 Chip = iota
	AR8316
	AR8327
	AR8337
	AR7240
	AR934x
)

// Chips lists every modelled chip.
var Chips = []Chip{AR8216, AR8316, AR8327, AR8337, AR7240, AR934x}

func (c Chip) String() string {
	return [...]string{"AR8216", "AR8316", "AR8327", "AR8337", "AR7240", "AR934x"}[c]
}

// Timing of the model (virtual time).
const (
	// MDIOTransaction is the cost of one clause-22 frame (64 bits at
	// 2.5 MHz).
	MDIOTransaction = 25600 * time.Nanosecond
	// PageSettle is how long a page write takes to reach the register
	// windows. model: the reference drivers wait 1-2 ms; the model needs 1 ms.
	PageSettle = time.Millisecond
	vtuTime    = 40 * time.Microsecond
	atuTime    = 60 * time.Microsecond
	flushTime  = 300 * time.Microsecond
	mibTime    = 100 * time.Microsecond
	mdioTime   = 30 * time.Microsecond
	resetTime  = time.Millisecond
	// AgeUnit is one step of the ATU age-time field: 0x2b ≈ 5 minutes.
	AgeUnit = 7 * time.Second
)

type variant struct {
	chip      Chip
	id        uint32
	builtIn   bool
	l27       bool // AR8327 register layout
	nports    int
	vtuCap    int
	atuSets   int
	phyID     uint32
	mib       *mibLayout
	mibBase   uint32
	mibStride uint32
	mibAlways bool // counters run without an enable bit
	vlan2     bool // AR934x: member mask and 802.1Q mode in PORT_VLAN2
}

func variantOf(c Chip, rev int) variant {
	v := variant{chip: c, nports: 6, vtuCap: 16, atuSets: 256, phyID: 0x004dd041,
		mib: mib8236, mibBase: 0x20000, mibStride: 0x100}
	switch c {
	case AR8216:
		v.id, v.mib, v.mibAlways = 0x0100, mib8216, true
	case AR8316:
		v.id = 0x1000
	case AR8327, AR8337:
		v.id, v.l27, v.nports, v.atuSets, v.phyID = 0x1200, true, 7, 512, 0x004dd034
		v.mib, v.mibBase = mib8327, 0x1000
		if c == AR8337 {
			v.id, v.phyID = 0x1300, 0x004dd036
		}
	case AR7240:
		v.id, v.builtIn, v.mibAlways = 0x0100, true, true
	case AR934x:
		v.id, v.builtIn, v.phyID, v.vlan2 = 0x0200, true, 0x004dd042, true
	}
	v.id |= uint32(rev) & 0xff
	return v
}

// Options configure a model.
type Options struct {
	Clock    *Clock // nil: a private clock
	Revision int    // chip revision in MASK_CTRL bits 7:0; 0 means 1 (AR8327: 4)
}

// Switch is the model. It implements mdio.Bus and mdio.Locker.
type Switch struct {
	v   variant
	clk *Clock

	busMu sync.Mutex // mdio.Locker: held by a driver across a paged access
	mu    sync.Mutex // model state

	// MDIO paging.
	pageOld, pageNew uint32
	pageAt           time.Duration
	latchVal         uint16
	latchAddr        uint32
	latchFull        bool
	rdLatch          uint32
	rdLatchAddr      uint32
	rdLatchFull      bool

	regs map[uint32]uint32
	// Busy units: a pending operation completes when the clock passes until.
	vtu, atu, mib, mdioM, rst pending

	vtu16       []vtu16Entry
	vtu27       [4096]uint32 // VTU_FUNC0 image per VID; 0 = invalid
	vtuFullFlag bool
	atuT        atuTable

	phys  [5]phyModel
	cable [8]bool

	mibLive, mibSnap [8][numCounters]uint64

	egress  [8]func([]byte)
	scratch []byte

	violations []string
}

type pending struct {
	until time.Duration
	cmd   uint32
	on    bool
}

type vtu16Entry struct {
	vid     int
	members uint32
}

// New returns a model of chip in its power-on state.
func New(chip Chip, opt Options) *Switch {
	rev := opt.Revision
	if rev == 0 {
		rev = 1
		if chip == AR8327 || chip == AR8337 {
			rev = 4
		}
	}
	s := &Switch{v: variantOf(chip, rev), clk: opt.Clock, scratch: make([]byte, 0, 16384)}
	if s.clk == nil {
		s.clk = &Clock{}
	}
	s.atuT.init(s.v.atuSets)
	for i := range s.phys {
		s.phys[i].init(s.v.phyID)
	}
	s.resetState()
	return s
}

// Chip returns the modelled chip.
func (s *Switch) Chip() Chip { return s.v.chip }

// NumPorts returns the number of switch ports.
func (s *Switch) NumPorts() int { return s.v.nports }

// Clock returns the model's virtual clock.
func (s *Switch) Clock() *Clock { return s.clk }

// resetState puts registers and tables in their power-on state.
func (s *Switch) resetState() {
	s.regs = make(map[uint32]uint32)
	s.vtu16 = s.vtu16[:0]
	s.vtu27 = [4096]uint32{}
	s.vtuFullFlag = false
	s.atuT.clear(func(*atuEntry) bool { return true })
	s.mibLive, s.mibSnap = [8][numCounters]uint64{}, [8][numCounters]uint64{}
	// model: reset values the upstream drivers do not give are chosen so
	// that an unconfigured switch forwards (ports in forward state, learning,
	// flooding everywhere); a driver must still set what it relies on.
	all := uint32(1)<<s.v.nports - 1
	if s.v.l27 {
		s.regs[a27FwdCtrl1] = all | all<<8 | all<<16
		s.regs[a27MaxFrame] = 1518 + 8 + 2
		for p := 0; p < s.v.nports; p++ {
			s.regs[a27PortLookup+0xc*uint32(p)] = all&^(1<<p) | stateForward<<16 | a27LookupLearn
			s.regs[a27PortVLAN0+8*uint32(p)] = 1 | 1<<16
			s.regs[a27PortVLAN1+8*uint32(p)] = 3 << 12
			s.regs[a27PortStatus+4*uint32(p)] = stLinkAuto
		}
		s.regs[a27ATUCtrl] = 0x2b
	} else {
		s.regs[a16FloodMask] = 0x003f003f
		s.regs[a16GlobalCtrl] = 1518 + 8 + 2
		s.regs[a16ATUCtrl] = 0x2b | a16AgeEn
		for p := 0; p < s.v.nports; p++ {
			s.regs[a16PortCtrl+a16Stride*uint32(p)] = stateForward | 1<<14
			if s.v.vlan2 {
				s.regs[a16PortVLAN+a16Stride*uint32(p)] = 1 | 1<<16
				s.regs[a16PortVLAN2+a16Stride*uint32(p)] = (all &^ (1 << p)) << 16
			} else {
				s.regs[a16PortVLAN+a16Stride*uint32(p)] = 1 | (all&^(1<<p))<<16
			}
			s.regs[a16PortStatus+a16Stride*uint32(p)] = stLinkAuto
		}
	}
}

func (s *Switch) violate(format string, args ...any) {
	s.violations = append(s.violations, fmt.Sprintf("%v t=%v: ", s.v.chip, s.clk.Now())+fmt.Sprintf(format, args...))
}

// Violations returns the register-level rule violations seen so far.
func (s *Switch) Violations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.violations...)
}

// ClearViolations forgets recorded violations.
func (s *Switch) ClearViolations() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.violations = nil
}

// Lock implements mdio.Locker.
func (s *Switch) Lock() { s.busMu.Lock() }

// Unlock implements mdio.Locker.
func (s *Switch) Unlock() { s.busMu.Unlock() }

func (s *Switch) pageLoc() (phy, reg int) {
	if s.v.builtIn {
		return 0x1f, 0x10
	}
	return 0x18, 0
}

// page returns the page the register windows currently decode.
func (s *Switch) page(now time.Duration) uint32 {
	if now-s.pageAt >= PageSettle {
		return s.pageNew
	}
	return s.pageOld
}

func (s *Switch) window(phy, reg int, now time.Duration) uint32 {
	if now-s.pageAt < PageSettle && s.pageOld != s.pageNew {
		s.violate("register access %v after a page write (settle time %v): old page %#x used", now-s.pageAt, PageSettle, s.pageOld)
	}
	return s.page(now)<<9 | uint32(phy&7)<<6 | uint32(reg&0x1e)<<1
}

// Read implements mdio.Bus.
func (s *Switch) Read(phy, reg int) (uint16, error) {
	if err := mdio.CheckAddr(phy, reg); err != nil {
		return 0, err
	}
	s.clk.Sleep(MDIOTransaction)
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clk.Now()
	s.complete(now)
	pphy, preg := s.pageLoc()
	switch {
	case phy == pphy && reg == preg:
		return uint16(s.pageNew), nil
	case phy >= 0x10 && phy <= 0x17:
		addr := s.window(phy, reg, now)
		// model: reading the low half latches the whole register so
		// the high half read next belongs to the same value (assumed;
		// the drivers' busy polling relies on coherent halves).
		if reg&1 != 0 {
			if s.rdLatchFull && s.rdLatchAddr == addr {
				s.rdLatchFull = false
				return uint16(s.rdLatch >> 16), nil
			}
			return uint16(s.readReg(addr, now) >> 16), nil
		}
		v := s.readReg(addr, now)
		s.rdLatch, s.rdLatchAddr, s.rdLatchFull = v, addr, true
		return uint16(v), nil
	case phy < 5 && !s.v.builtIn:
		if s.v.l27 && s.regs[a27MDIOCtrl]&mdioMasterEn != 0 {
			return 0xffff, nil // MASTER_EN cuts the direct path (qca8k)
		}
		return s.phys[phy].read(reg, s.cable[phy+1]), nil
	}
	return 0xffff, nil
}

// Write implements mdio.Bus.
func (s *Switch) Write(phy, reg int, val uint16) error {
	if err := mdio.CheckAddr(phy, reg); err != nil {
		return err
	}
	s.clk.Sleep(MDIOTransaction)
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clk.Now()
	s.complete(now)
	pphy, preg := s.pageLoc()
	switch {
	case phy == pphy && reg == preg:
		s.pageOld = s.page(now)
		s.pageNew = uint32(val) & 0x1ff
		s.pageAt = now
	case phy >= 0x10 && phy <= 0x17:
		addr := s.window(phy, reg, now)
		hi := reg&1 != 0
		// AR8327 commits on the high half, the others on the low half.
		commit := hi == s.v.l27
		if !commit {
			s.latchVal, s.latchAddr, s.latchFull = val, addr, true
			return nil
		}
		if !s.latchFull || s.latchAddr != addr {
			s.violate("register %#x committed without its first half (latched half belongs to %#x)", addr, s.latchAddr)
		}
		var v uint32
		if hi {
			v = uint32(val)<<16 | uint32(s.latchVal)
		} else {
			v = uint32(s.latchVal)<<16 | uint32(val)
		}
		s.latchFull = false
		s.writeReg(addr, v, now)
	case phy < 5 && !s.v.builtIn:
		if s.v.l27 && s.regs[a27MDIOCtrl]&mdioMasterEn != 0 {
			return nil
		}
		s.phys[phy].write(reg, val)
	}
	return nil
}

// Peek returns a register's value without side effects (for tests).
func (s *Switch) Peek(addr uint32) uint32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.complete(s.clk.Now())
	return s.regs[addr]
}

// Poke writes a register directly, bypassing MDIO (for tests).
func (s *Switch) Poke(addr, val uint32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clk.Now()
	s.complete(now)
	s.writeReg(addr, val, now)
}

// complete finishes the operations whose busy time has passed.
func (s *Switch) complete(now time.Duration) {
	if s.rst.on && now >= s.rst.until {
		s.rst.on = false
	}
	if s.vtu.on && now >= s.vtu.until {
		s.vtu.on = false
		s.doVTU(s.vtu.cmd)
	}
	if s.atu.on && now >= s.atu.until {
		s.atu.on = false
		s.doATU(s.atu.cmd, now)
	}
	if s.mib.on && now >= s.mib.until {
		s.mib.on = false
		s.doMIB(s.mib.cmd)
	}
	if s.mdioM.on && now >= s.mdioM.until {
		s.mdioM.on = false
		s.doMDIO(s.mdioM.cmd)
	}
}

func (s *Switch) addr(a16, a27 uint32) uint32 {
	if s.v.l27 {
		return a27
	}
	return a16
}

func (s *Switch) portStatusAddr(p int) uint32 {
	if s.v.l27 {
		return a27PortStatus + 4*uint32(p)
	}
	return a16PortStatus + a16Stride*uint32(p)
}

// portOf returns (port, true) when addr is a PORT_STATUS register.
func (s *Switch) statusPort(addr uint32) (int, bool) {
	for p := 0; p < s.v.nports; p++ {
		if s.portStatusAddr(p) == addr {
			return p, true
		}
	}
	return 0, false
}

// status returns the live PORT_STATUS of port p: autonegotiating ports
// report the cable's link (1000 full duplex), forced ports report the forced
// setup and link when both MACs are enabled.
func (s *Switch) status(p int) uint32 {
	v := s.regs[s.portStatusAddr(p)]
	if v&stLinkAuto != 0 {
		v &^= stLive
		if s.cable[p] {
			v |= 2 | stTXMAC | stRXMAC | stDuplex | stLinkUp
		}
		return v
	}
	if v&(stTXMAC|stRXMAC) == stTXMAC|stRXMAC {
		v |= stLinkUp
	}
	return v
}

func (s *Switch) readReg(addr uint32, now time.Duration) uint32 {
	if s.rst.on {
		if addr == regMaskCtrl {
			return s.v.id | softReset
		}
		s.violate("read of %#x during soft reset", addr)
		return 0
	}
	if addr == regMaskCtrl {
		return s.v.id
	}
	if p, ok := s.statusPort(addr); ok {
		return s.status(p)
	}
	if p, off, ok := s.mibWindow(addr); ok {
		return s.mibRead(p, off)
	}
	v := s.regs[addr]
	switch addr {
	case s.addr(a16VTU, a27VTUFunc1):
		if s.vtu.on {
			v |= s.addr(a16VTUActive, a27Busy)
		}
		if s.vtuFullFlag {
			v |= s.addr(a16VTUFull, a27VTUFull)
		}
	case s.addr(a16ATU, a27ATUFunc):
		if s.atu.on {
			v |= s.addr(a16ATUActive, a27Busy)
		}
	case s.addr(a16MIBFunc, a27MIBFunc):
		if s.mib.on {
			v |= mibBusy
		}
	case s.addr(a16MDIOCtrl, a27MDIOCtrl):
		if s.mdioM.on {
			v |= mdioBusy
		}
	}
	return v
}

func (s *Switch) start(u *pending, d time.Duration, now time.Duration, cmd uint32, name string) bool {
	if u.on {
		s.violate("%s operation %#08x started while busy: ignored", name, cmd)
		return false
	}
	*u = pending{until: now + d, cmd: cmd, on: true}
	return true
}

func (s *Switch) writeReg(addr, val uint32, now time.Duration) {
	if s.rst.on {
		s.violate("write %#x = %#08x during soft reset: ignored", addr, val)
		return
	}
	s.check(addr, val)
	if addr == regMaskCtrl {
		if val&softReset != 0 {
			s.resetState()
			s.rst = pending{until: now + resetTime, on: true}
			s.vtu.on, s.atu.on, s.mib.on, s.mdioM.on = false, false, false, false
		}
		return
	}
	if _, _, ok := s.mibWindow(addr); ok {
		s.violate("write to read-only MIB counter %#x", addr)
		return
	}
	switch addr {
	case s.addr(a16VTU, a27VTUFunc1):
		start := s.addr(a16VTUActive, a27Busy)
		if val&start != 0 {
			if !s.start(&s.vtu, vtuTime, now, val, "VTU") {
				return
			}
			s.vtuFullFlag = false
		}
		s.regs[addr] = val &^ start
		return
	case s.addr(a16ATU, a27ATUFunc):
		start := s.addr(a16ATUActive, a27Busy)
		if val&start != 0 {
			d := atuTime
			if op := val & 0x7; op == opFlush || op == opFlushLocked || op == opFlushUnicast {
				d = flushTime
			}
			if !s.start(&s.atu, d, now, val, "ATU") {
				return
			}
		}
		s.regs[addr] = val &^ start
		return
	case s.addr(a16MIBFunc, a27MIBFunc):
		if val&mibBusy != 0 {
			if !s.start(&s.mib, mibTime, now, val, "MIB") {
				return
			}
		}
		s.regs[addr] = val &^ mibBusy
		return
	case s.addr(a16MDIOCtrl, a27MDIOCtrl):
		if s.mdioM.on {
			s.violate("MDIO master command %#08x written while busy: ignored", val)
			return
		}
		if val&mdioBusy != 0 {
			if val&mdioMasterEn == 0 {
				s.violate("MDIO master command %#08x without MASTER_EN", val)
			}
			s.mdioM = pending{until: now + mdioTime, cmd: val, on: true}
		}
		s.regs[addr] = val &^ mdioBusy
		return
	}
	if p, ok := s.statusPort(addr); ok {
		s.regs[addr] = val &^ stLinkUp
		_ = p
		return
	}
	s.regs[addr] = val
}

// check applies the register-level rules. model: bits the upstream
// register headers do not define for a register are treated as reserved; a
// driver in this project has no business setting them.
func (s *Switch) check(addr, val uint32) {
	type rule struct {
		name  string
		valid uint32
	}
	var r rule
	var state = -1
	if s.v.l27 {
		switch {
		case addr >= a27PortLookup && addr < a27PortLookup+0xc*uint32(s.v.nports) && (addr-a27PortLookup)%0xc == 0:
			r = rule{"PORT_LOOKUP", 0x7f | 3<<8 | 7<<16 | 1<<20 | 1<<25}
			state = int(val>>16) & 7
		case addr >= a27PortVLAN1 && addr < a27PortVLAN1+8*uint32(s.v.nports) && (addr-a27PortVLAN1)%8 == 0:
			r = rule{"PORT_VLAN1", 1<<6 | 3<<12}
		case addr >= a27PortVLAN0 && addr < a27PortVLAN0+8*uint32(s.v.nports) && (addr-a27PortVLAN0)%8 == 0:
			r = rule{"PORT_VLAN0", 0xfff | 0xfff<<16}
		case addr == a27FwdCtrl0:
			r = rule{"FWD_CTRL0", 0xf<<4 | 1<<10}
		case addr == a27VTUFunc1:
			r = rule{"VTU_FUNC1", 7 | 1<<4 | 0xf<<8 | 0xfff<<16 | 1<<31}
		case addr == a27VTUFunc0:
			r = rule{"VTU_FUNC0", 0x3fff<<4 | 1<<19 | 1<<20}
		case addr == a27ATUFunc:
			r = rule{"ATU_FUNC", 0xf | 1<<4 | 0xf<<8 | 1<<12 | 1<<31}
		case addr == a27MIBFunc:
			r = rule{"MIB_FUNC", 7<<24 | 1<<20 | 1<<17}
		case addr == a27MDIOCtrl:
			r = rule{"MDIO_MASTER_CTRL", 0x0fffffff | 3<<30}
		default:
			if _, ok := s.statusPort(addr); ok {
				r = rule{"PORT_STATUS", 0x7f | 7<<8 | 1<<12}
			}
		}
	} else {
		off := addr % a16Stride
		inPorts := addr >= a16Stride && addr < a16Stride*uint32(s.v.nports+1)
		switch {
		case inPorts && off == 0x04:
			r = rule{"PORT_CTRL", 7 | 0x7ff<<7}
			state = int(val & 7)
		case inPorts && off == 0x08 && s.v.vlan2:
			r = rule{"PORT_VLAN1", 0xfff | 0xfff<<16}
		case inPorts && off == 0x0c && s.v.vlan2:
			r = rule{"PORT_VLAN2", 0x3f<<16 | 3<<30}
		case inPorts && off == 0x08:
			r = rule{"PORT_VLAN", 0xfff | 0x3f<<16 | 3<<30}
		case inPorts && off == 0x00:
			r = rule{"PORT_STATUS", 0x7f | 7<<8}
		case addr == a16CPUPort:
			r = rule{"CPU_PORT", 0xf<<4 | 1<<8}
		case addr == a16ATUCtrl:
			r = rule{"ATU_CTRL", 0xffff | 0xf<<17}
		case addr == a16VTU:
			r = rule{"VTU", 0x1f | 0xf<<8 | 0xffff<<16}
		case addr == a16ATU:
			r = rule{"ATU", 0xf | 0x1f<<8 | 0xffff<<16}
		case addr == a16MIBFunc:
			r = rule{"MIB_FUNC0", 0xffff | 1<<17 | 7<<24 | 1<<30}
		case addr == a16MDIOCtrl:
			r = rule{"MDIO_CTRL", 0x07ffffff | 1<<27 | 3<<30}
		}
	}
	if r.name == "" {
		return
	}
	if bad := val &^ r.valid; bad != 0 {
		s.violate("%s (%#x) = %#08x sets undefined bits %#08x", r.name, addr, val, bad)
	}
	if state > stateForward {
		s.violate("%s (%#x) = %#08x: invalid port state %d", r.name, addr, val, state)
	}
}
