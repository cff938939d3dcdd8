package arswitch

import (
	"fmt"
	"sync"
	"time"

	"github.com/gowrt/gowrt/mdio"
)

// pageSettle is how long a page-select write needs before register accesses
// see the new page: FreeBSD waits 2 ms ([FB-RIO] arswitch_split_setpage),
// OpenWrt and qca8k 1–2 ms ([OW-8216], [LX-QCA8K] qca8k_set_page). We use
// the conservative 2 ms.
const pageSettle = 2 * time.Millisecond

// regIO is the 32-bit register interface the chip code programs through.
// The paged MDIO implementation is the only production one; tests wrap it
// to run deliberately wrong driver code against the model.
type regIO interface {
	read(addr uint32) (uint32, error)
	write(addr uint32, val uint32) error
	// rmw clears the bits in clear and sets the bits in set, atomically
	// with respect to other users of the bus.
	rmw(addr uint32, clear, set uint32) error
}

// pageLoc says where the page register lives and in which order the two
// 16-bit halves of a write must be issued.
type pageLoc struct {
	phy, reg int
	// loFirst: AR8327/AR8337 commit a register on the high-half write,
	// so the low half goes first; the AR8216 family and the built-in
	// switches commit on the low half and want the high half first.
	loFirst bool
}

// paged reaches 32-bit switch registers through 16-bit MDIO transactions:
// page select, settle, then two halves ([FB-RIO] arswitch_reg_read32 and
// arswitch_reg_write32, [OW-8216], [LX-QCA8K] qca8k_mii_write32).
type paged struct {
	bus    mdio.Bus
	locker sync.Locker // the bus's own lock when it has one, else ours
	loc    pageLoc
	sleep  func(time.Duration)

	// page caches the last page written, -1 when unknown. Guarded by locker.
	page int
	own  sync.Mutex
}

func newPaged(bus mdio.Bus, loc pageLoc, sleep func(time.Duration)) *paged {
	p := &paged{bus: bus, loc: loc, sleep: sleep, page: -1}
	if l, ok := bus.(mdio.Locker); ok {
		p.locker = l
	} else {
		p.locker = &p.own
	}
	return p
}

// split maps a register byte address to (page, PHY, MDIO register of the
// low half). The same split serves the external and the built-in switches
// ([FB-RIO] arswitch_split_setpage, [OW-8216] split_addr; the word-index
// formulas of [OW-7240], mk_phy_addr and friends, reduce to these).
func split(addr uint32) (page, phy, reg int) {
	page = int(addr>>9) & 0x1ff
	phy = regPHYBase | int(addr>>6)&0x7
	reg = int(addr>>1) & 0x1e
	return
}

func checkRegAddr(addr uint32) error {
	if addr&3 != 0 || addr>>9 > 0x1ff {
		return fmt.Errorf("arswitch: register address %#x not a 4-aligned address below 0x40000", addr)
	}
	return nil
}

// setPage selects page, skipping the write when it is already current.
// Caller holds locker.
func (p *paged) setPage(page int) error {
	if p.page == page {
		return nil
	}
	if err := p.bus.Write(p.loc.phy, p.loc.reg, uint16(page)); err != nil {
		p.page = -1
		return fmt.Errorf("arswitch: page select: %w", err)
	}
	p.page = page
	p.sleep(pageSettle)
	return nil
}

func (p *paged) readLocked(addr uint32) (uint32, error) {
	if err := checkRegAddr(addr); err != nil {
		return 0, err
	}
	page, phy, reg := split(addr)
	if err := p.setPage(page); err != nil {
		return 0, err
	}
	lo, err := p.bus.Read(phy, reg)
	if err != nil {
		p.page = -1
		return 0, fmt.Errorf("arswitch: read %#x: %w", addr, err)
	}
	hi, err := p.bus.Read(phy, reg+1)
	if err != nil {
		p.page = -1
		return 0, fmt.Errorf("arswitch: read %#x: %w", addr, err)
	}
	return uint32(hi)<<16 | uint32(lo), nil
}

func (p *paged) writeLocked(addr, val uint32) error {
	if err := checkRegAddr(addr); err != nil {
		return err
	}
	page, phy, reg := split(addr)
	if err := p.setPage(page); err != nil {
		return err
	}
	// Both halves are always written: qca8k's attempt to skip unchanged
	// halves was reverted as a regression (Linux commit 'Revert "net: dsa:
	// qca8k: cache lo and hi for mdio write"', December 2022, sent to
	// stable).
	first, second := reg+1, reg
	firstVal, secondVal := uint16(val>>16), uint16(val)
	if p.loc.loFirst {
		first, second = reg, reg+1
		firstVal, secondVal = uint16(val), uint16(val>>16)
	}
	if err := p.bus.Write(phy, first, firstVal); err != nil {
		p.page = -1
		return fmt.Errorf("arswitch: write %#x: %w", addr, err)
	}
	if err := p.bus.Write(phy, second, secondVal); err != nil {
		p.page = -1
		return fmt.Errorf("arswitch: write %#x: %w", addr, err)
	}
	return nil
}

func (p *paged) read(addr uint32) (uint32, error) {
	p.locker.Lock()
	defer p.locker.Unlock()
	return p.readLocked(addr)
}

func (p *paged) write(addr, val uint32) error {
	p.locker.Lock()
	defer p.locker.Unlock()
	return p.writeLocked(addr, val)
}

// rmw holds the bus lock across the read and the write so no other bus user
// can slip a page change or a half-write in between, as OpenWrt and qca8k
// do with mdio_lock ([OW-8216], [LX-QCA8K]).
func (p *paged) rmw(addr, clear, set uint32) error {
	p.locker.Lock()
	defer p.locker.Unlock()
	v, err := p.readLocked(addr)
	if err != nil {
		return err
	}
	return p.writeLocked(addr, v&^clear|set)
}

// phyIO is direct ("external") PHY access on the same MDIO bus, used for
// the internal PHYs of the AR8216/8316/8327, which answer at addresses 0-4.
type phyIO interface {
	readPHY(phy, reg int) (uint16, error)
	writePHY(phy, reg int, val uint16) error
}

type directPHY struct{ p *paged }

func (d directPHY) readPHY(phy, reg int) (uint16, error) {
	if err := mdio.CheckAddr(phy, reg); err != nil {
		return 0, err
	}
	d.p.locker.Lock()
	defer d.p.locker.Unlock()
	return d.p.bus.Read(phy, reg)
}

func (d directPHY) writePHY(phy, reg int, val uint16) error {
	if err := mdio.CheckAddr(phy, reg); err != nil {
		return err
	}
	d.p.locker.Lock()
	defer d.p.locker.Unlock()
	return d.p.bus.Write(phy, reg, val)
}

// masterPHY reaches the internal PHYs through the switch's MDIO master
// register ([FB-PHY], [OW-7240] ar7240sw_phy_read/write, [LX-QCA8K]): write
// the command with BUSY, poll BUSY, read the data half. The register is
// written to 0 afterwards, even on failure, to drop MASTER_EN: on AR8327 it
// disconnects the direct path ([LX-QCA8K]).
type masterPHY struct {
	io    regIO
	reg   uint32
	sleep func(time.Duration)
}

const mdioMasterPolls = 100 // FreeBSD polls ≤100 reads

func (m masterPHY) op(cmd uint32) (uint16, error) {
	if err := m.io.write(m.reg, cmd); err != nil {
		return 0, err
	}
	var v uint32
	var err error
	for i := 0; i < mdioMasterPolls; i++ {
		v, err = m.io.read(m.reg)
		if err != nil || v&mdioBusy == 0 {
			break
		}
		m.sleep(10 * time.Microsecond)
	}
	if cerr := m.io.write(m.reg, 0); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, err
	}
	if v&mdioBusy != 0 {
		return 0, fmt.Errorf("arswitch: MDIO master: %w", mdio.ErrTimeout)
	}
	return uint16(v & mdioDataMask), nil
}

func (m masterPHY) readPHY(phy, reg int) (uint16, error) {
	if err := mdio.CheckAddr(phy, reg); err != nil {
		return 0, err
	}
	return m.op(mdioBusy | mdioMasterEn | mdioRead | uint32(phy)<<mdioPHYShift | uint32(reg)<<mdioRegShift)
}

func (m masterPHY) writePHY(phy, reg int, val uint16) error {
	if err := mdio.CheckAddr(phy, reg); err != nil {
		return err
	}
	_, err := m.op(mdioBusy | mdioMasterEn | uint32(phy)<<mdioPHYShift | uint32(reg)<<mdioRegShift | uint32(val))
	return err
}

// writeDebug writes an Atheros PHY debug register (address 0x1d, data 0x1e).
func writeDebug(p phyIO, phy int, reg, val uint16) error {
	if err := p.writePHY(phy, phyDebugAddr, reg); err != nil {
		return err
	}
	return p.writePHY(phy, phyDebugData, val)
}

// writeMMD writes a clause-45 register through the clause-22 MMD window
// (0x0d control, 0x0e address/data).
func writeMMD(p phyIO, phy int, devad, reg, val uint16) error {
	for _, w := range [...][2]uint16{
		{phyMMDCtrl, devad}, {phyMMDData, reg},
		{phyMMDCtrl, phyMMDDataNoInc | devad}, {phyMMDData, val},
	} {
		if err := p.writePHY(phy, int(w[0]), w[1]); err != nil {
			return err
		}
	}
	return nil
}
