package arswitch

import (
	"errors"
	"fmt"
	"time"
)

// ErrBusy is returned when a VTU/ATU/MIB/MDIO operation does not finish.
var ErrBusy = errors.New("arswitch: switch operation stayed busy")

// ErrVTUFull is returned when the chip reports its VLAN table full.
var ErrVTUFull = errors.New("arswitch: VLAN table full")

// base is shared by the chip implementations: register access and polling.
type base struct {
	io    regIO
	sleep func(time.Duration)
}

// busyPolls bounds every wait on a busy bit. FreeBSD waits 5 × 1 µs for the
// VTU, OpenWrt 20 × 10 µs; each poll here is also an MDIO read (~25 µs), so
// 200 polls with a 10 µs pause is several milliseconds: generous.
const busyPolls = 200

// wait polls addr until the bits in busy are clear.
func (b *base) wait(addr, busy uint32, what string) (uint32, error) {
	for i := 0; i < busyPolls; i++ {
		v, err := b.io.read(addr)
		if err != nil {
			return 0, err
		}
		if v&busy == 0 {
			return v, nil
		}
		b.sleep(10 * time.Microsecond)
	}
	return 0, fmt.Errorf("%w: %s (register %#x)", ErrBusy, what, addr)
}

// command runs one VTU/ATU-style operation: wait for the unit to be idle,
// write cmd with the busy bit set, and wait for the busy bit to clear. It
// returns the register's final value (status bits such as "table full").
func (b *base) command(addr, busy, cmd uint32, what string) (uint32, error) {
	if _, err := b.wait(addr, busy, what); err != nil {
		return 0, err
	}
	if err := b.io.write(addr, cmd|busy); err != nil {
		return 0, err
	}
	return b.wait(addr, busy, what)
}

// ar8216 drives the AR8216, AR8316 and the AR7240/AR934x built-in switches:
// one register layout ([FB-REG] AR8X16_*, [OW-7240]), variants differing in
// data.
type ar8216 struct {
	base
	v     *variant16
	rev   int
	phyIO phyIO
}

func (c *ar8216) id() ChipID            { return c.v.chip }
func (c *ar8216) nports() int           { return maxPortsAR8216Family }
func (c *ar8216) maxVLANs() int         { return r16MaxVTUEntries }
func (c *ar8216) perVLANTagging() bool  { return false }
func (c *ar8216) atuSize() int          { return r16ATUEntries }
func (c *ar8216) phy() phyIO            { return c.phyIO }
func (c *ar8216) mibLayout() *mibLayout { return c.v.layout }
func (c *ar8216) mibBase(p int) uint32  { return r16MIBBase + uint32(p)*r16MIBStride }

func (c *ar8216) portStatusReg(p int) uint32 {
	return r16PortStatusBase + uint32(p)*r16PortStride
}

func (c *ar8216) reset() error {
	if err := c.io.write(regMaskCtrl, maskCtrlSoftReset); err != nil {
		return err
	}
	c.sleep(time.Millisecond)
	for i := 0; i < 100; i++ {
		v, err := c.io.read(regMaskCtrl)
		if err != nil {
			return err
		}
		if v&maskCtrlSoftReset == 0 {
			return nil
		}
		c.sleep(time.Millisecond)
	}
	return fmt.Errorf("%w: soft reset", ErrBusy)
}

// regStep is one read-modify-write of chip initialisation.
type regStep struct{ addr, clear, set uint32 }

// variant16 is the data that distinguishes the members of the AR8216
// family: the operations table is one type, parameterised by this.
type variant16 struct {
	chip   ChipID
	layout *mibLayout
	// steps returns the chip-specific global init for a board.
	steps func(b *Board) []regStep
	// cpuStatus is the forced PORT_STATUS of a CPU port.
	cpuStatus uint32
	// splitPortVLAN: member mask and 802.1Q mode live in PORT_VLAN2
	// (AR934x) rather than in PORT_VLAN.
	splitPortVLAN bool
	// post runs after the register steps (PHY fixups).
	post func(c *ar8216, b *Board) error
}

const (
	// Forced CPU link: 1000 full with flow control; 100 full without on
	// the AR8216 ([FB-SW] ar8xxx_port_init, [OW-8216] also sets LINK_UP).
	cpuStatus1000 = portStatusSpeed1000 | portStatusTXMAC | portStatusRXMAC |
		portStatusDuplex | portStatusTXFlow | portStatusRXFlow | portStatusLinkUp
	cpuStatus100 = portStatusSpeed100 | portStatusTXMAC | portStatusRXMAC |
		portStatusDuplex | portStatusLinkUp
)

var variants16 = map[ChipID]*variant16{
	ChipAR8216: {chip: ChipAR8216, layout: mibLayout8216, cpuStatus: cpuStatus100,
		steps: func(*Board) []regStep {
			return []regStep{
				{r16Magic, 0xffffffff, magic8316Init}, // [OW-8216] writes the same magic on AR8216
				{r16GlobalCtrl, globalCtrlMTU8216, mtu8216},
				{r16FloodMask, 0, flood8216BcastToCPU},
			}
		}},
	ChipAR8316: {chip: ChipAR8316, layout: mibLayout8236, cpuStatus: cpuStatus1000,
		steps: func(b *Board) []regStep {
			mode := uint32(mode8316RGMII)
			switch {
			case b.cpuMode(0) == ModeGMII:
				mode = mode8316GMII
			case b.PHY4ToCPU:
				mode = mode8316RGMIIPort4
			}
			return []regStep{
				{r16Mode, 0xffffffff, mode},
				{r16Magic, 0xffffffff, magic8316Init},
				{r16FloodMask, 0xffffffff, flood8316Init},
				{r16GlobalCtrl, globalCtrlMTU8316, mtuJumbo},
				{r16MIBFunc, 0, mibFuncEn934x},
			}
		},
		post: func(c *ar8216, b *Board) error {
			if !b.PHY4ToCPU || b.cpuMode(0) != ModeRGMII {
				return nil
			}
			// Port-4 RGMII delays through PHY4's debug registers ([FB-8316]).
			for _, w := range [...][2]uint16{{0x12, 0x480c}, {0x0, 0x824e}, {0x5, 0x3d47}} {
				if err := writeDebug(c.phyIO, 4, w[0], w[1]); err != nil {
					return fmt.Errorf("arswitch: AR8316 port 4 RGMII fixup: %w", err)
				}
			}
			c.sleep(time.Millisecond)
			return nil
		}},
	ChipAR7240: {chip: ChipAR7240, layout: mibLayout8236, cpuStatus: cpuStatus1000,
		steps: func(*Board) []regStep {
			return []regStep{
				{r16TagPrio, 0xffffffff, tagPrio7240Init},
				{r16ATUCtrl, 0, atuCtrlRsvd19 | atuCtrlARPEn},
				{r16FloodMask, 0, flood8216BcastToCPU},
				// "MTU max" [OW-7240]; field width 11 bits (uncertain).
				{r16GlobalCtrl, globalCtrlMTU8216, globalCtrlMTU7240},
			}
		}},
	ChipAR934x: {chip: ChipAR934x, layout: mibLayout8236, cpuStatus: cpuStatus1000, splitPortVLAN: true,
		steps: func(b *Board) []regStep {
			opm := uint32(operMode0MACGMIIEn)
			if b.cpuMode(0) == ModeMII {
				opm = operMode0PHYMIIEn
			}
			st := []regStep{
				{r16TagPrio, 0xffffffff, tagPrio7240Init},
				{r16QMCtrl, 0, qmCtrlARPEn},
				// Flood multicast and broadcast to the CPU port (port 0).
				{r16FloodMask, 0, 1<<floodMulticastShift | 1<<flood934xBcastShift},
				{r16MIBFunc, 0, mibFuncEn934x},
				{r16OperMode0, operMode0MACGMIIEn | operMode0PHYMIIEn, opm},
				{r16GlobalCtrl, globalCtrlMTU934x, mtu934x},
			}
			if b.PHY4ToCPU {
				st = append(st, regStep{r16Mode, 0, operMode1PHY4MIIEn})
			}
			return st
		}},
}

func (c *ar8216) checkBoard(b *Board) error {
	if b.LEDs != nil {
		return fmt.Errorf("%w: %s: LED registers are only known for the AR8327/AR8337", ErrBoard, b.Name)
	}
	for _, cp := range b.CPU {
		if cp.TXDelay != nil || cp.RXDelay != nil || cp.Mode == ModeSGMII {
			return fmt.Errorf("%w: %s: pad delays and SGMII are AR8327/AR8337 settings", ErrBoard, b.Name)
		}
	}
	return nil
}

func (c *ar8216) init(b *Board) error {
	steps := append(c.v.steps(b),
		// Common to the family: CPU port enabled with mirroring off, ATU
		// aging ≈ 5 min with learn-change ([FB-SW] ar8xxx_atu_learn_default).
		regStep{r16CPUPort, cpuPortMirrorMask | cpuPortEn, cpuPortEn | cpuPortMirrorOff},
		regStep{r16ATUCtrl, atuCtrlAgeTimeMask, atuCtrlAge5Min | atuCtrlAgeEn | atuCtrlLearnChange},
	)
	for _, s := range steps {
		if err := c.io.rmw(s.addr, s.clear, s.set); err != nil {
			return err
		}
	}
	if c.v.post != nil {
		return c.v.post(c, b)
	}
	return nil
}

func (c *ar8216) initPort(p int, b *Board) error {
	st := uint32(portStatusLinkAuto)
	if b.isCPUPort(p) {
		st = c.v.cpuStatus
	}
	if err := c.io.write(c.portStatusReg(p), st); err != nil {
		return err
	}
	// No Atheros header, learn lock off; VLAN code sets the rest.
	return c.io.rmw(r16PortCtrlBase+uint32(p)*r16PortStride, portCtrlHeader|portCtrlLearnLock, 0)
}

func (c *ar8216) writePort(p int, h portHW) error {
	if h.egress == egressPerVLAN {
		return fmt.Errorf("%w: %v tags per port, not per VLAN", ErrUnsupported, c.v.chip)
	}
	off := uint32(p) * r16PortStride
	ctrl := uint32(h.state) & portCtrlStateMask
	if h.learn {
		ctrl |= portCtrlLearn
	}
	// Uncertain: OpenWrt runs the AR8216 (not the AR8236/8316) in VLAN
	// mode with the 2-byte Atheros header on the CPU port instead of
	// 802.1Q tags ([OW-8216] ar8216_mangle_tx/rx); this driver uses the
	// PORT_CTRL egress "add" mode on every chip of the family, as FreeBSD
	// does.
	switch h.egress {
	case egressUntag:
		ctrl |= egressStrip << portCtrlEgressShift
	case egressTag:
		ctrl |= egressAdd << portCtrlEgressShift
	}
	if c.v.splitPortVLAN {
		// AR934x: PORT_VLAN (now "PORT_VLAN1") keeps only the default VID;
		// member mask and 802.1Q mode moved to PORT_VLAN2 at +0xc
		// ([OW-7240] AR934X_REG_PORT_VLAN2). The PVID also goes to bits
		// 27:16, the default CVID field in [OW-7240]
		// (AR934X_PORT_VLAN1_DEFAULT_CVID_S).
		pv := uint32(h.pvid) & portVLANPVIDMask
		if err := c.io.write(r16PortVLANBase+off, pv|pv<<pv0CVIDShift); err != nil {
			return err
		}
		v2 := uint32(h.dest)&r16PortsMask6<<portVLANDestShift | uint32(h.dot1q)<<portVLANModeShift
		if err := c.io.write(r16PortVLAN2Base+off, v2); err != nil {
			return err
		}
	} else {
		vlan := uint32(h.pvid)&portVLANPVIDMask |
			uint32(h.dest)&r16PortsMask6<<portVLANDestShift |
			uint32(h.dot1q)<<portVLANModeShift
		if err := c.io.write(r16PortVLANBase+off, vlan); err != nil {
			return err
		}
	}
	// Keep bits this driver does not own (mirroring, IGMP snooping…).
	const owned = portCtrlStateMask | portCtrlEgressMask | portCtrlLearn | portCtrlHeader | portCtrlLearnLock
	return c.io.rmw(r16PortCtrlBase+off, owned, ctrl)
}

func (c *ar8216) vtuOp(op uint32, vid int) error {
	v, err := c.command(r16VTU, vtuActive, op|uint32(vid)<<vtuVIDShift, "VTU")
	if err != nil {
		return err
	}
	if op == vtuOpLoad && v&vtuFull != 0 {
		return fmt.Errorf("%w: loading VLAN %d", ErrVTUFull, vid)
	}
	return nil
}

func (c *ar8216) vtuFlush() error { return c.vtuOp(vtuOpFlush, 0) }

func (c *ar8216) vtuLoad(e vtuEntry) error {
	if err := c.io.write(r16VTUData, uint32(e.members)&r16PortsMask6|vtuDataValid); err != nil {
		return err
	}
	return c.vtuOp(vtuOpLoad, e.vid)
}

func (c *ar8216) vtuPurge(vid int) error { return c.vtuOp(vtuOpPurge, vid) }

func (c *ar8216) vtuNext(vid int) (vtuEntry, bool, error) {
	if err := c.vtuOp(vtuOpGetNext, vid); err != nil {
		return vtuEntry{}, false, err
	}
	v, err := c.io.read(r16VTU)
	if err != nil {
		return vtuEntry{}, false, err
	}
	d, err := c.io.read(r16VTUData)
	if err != nil {
		return vtuEntry{}, false, err
	}
	return decodeVTU16(v, d, c.nports())
}

func (c *ar8216) atuOp(op uint32) error {
	_, err := c.command(r16ATU, atuActive, op, "ATU")
	return err
}

func (c *ar8216) atuFlush() error { return c.atuOp(atuOpFlush) }

func (c *ar8216) atuFlushPort(p int) error {
	return c.atuOp(atuOpFlushUnicast | uint32(p)<<atuPortShift)
}

func (c *ar8216) atuNext(prev ATUEntry) (ATUEntry, bool, error) {
	if _, err := c.wait(r16ATU, atuActive, "ATU"); err != nil {
		return ATUEntry{}, false, err
	}
	m := prev.MAC
	if err := c.io.write(r16ATUData, uint32(m[0])<<24|uint32(m[1])<<16|uint32(m[2])<<8|uint32(m[3])); err != nil {
		return ATUEntry{}, false, err
	}
	if err := c.io.write(r16ATU, uint32(m[4])<<atuAddr4Shift|uint32(m[5])<<atuAddr5Shift|atuOpGetNext|atuActive); err != nil {
		return ATUEntry{}, false, err
	}
	a, err := c.wait(r16ATU, atuActive, "ATU")
	if err != nil {
		return ATUEntry{}, false, err
	}
	d, err := c.io.read(r16ATUData)
	if err != nil {
		return ATUEntry{}, false, err
	}
	c2, err := c.io.read(r16ATUCtrl2)
	if err != nil {
		return ATUEntry{}, false, err
	}
	return decodeATU16(a, d, c2, c.nports())
}

func (c *ar8216) mibCapture() error {
	if _, err := c.wait(r16MIBFunc, mibFuncBusy, "MIB"); err != nil {
		return err
	}
	if err := c.io.rmw(r16MIBFunc, mibFuncMask, mibFuncCapture<<mibFuncShift|mibFuncBusy); err != nil {
		return err
	}
	_, err := c.wait(r16MIBFunc, mibFuncBusy, "MIB")
	return err
}
