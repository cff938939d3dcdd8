package arswitch

import (
	"fmt"
	"time"
)

// ar8327 drives the AR8327 and AR8337 (QCA8327/8337): a different register
// layout with per-port-per-VLAN egress tagging ([FB-REG] AR8327_REG_*,
// [FB-8327] ar8327_set_dot1q_vlan, [OW-8216] ar8327_vtu_load_vlan,
// [LX-QCA8K]).
type ar8327 struct {
	base
	chip   ChipID
	rev    int
	phyIO  phyIO
	layout *mibLayout
}

func (c *ar8327) id() ChipID            { return c.chip }
func (c *ar8327) nports() int           { return r27Ports }
func (c *ar8327) maxVLANs() int         { return 4094 } // VID-indexed VTU
func (c *ar8327) perVLANTagging() bool  { return true }
func (c *ar8327) atuSize() int          { return r27ATUEntries }
func (c *ar8327) phy() phyIO            { return c.phyIO }
func (c *ar8327) mibLayout() *mibLayout { return c.layout }
func (c *ar8327) mibBase(p int) uint32  { return r27MIBBase + uint32(p)*r27MIBStride }
func (c *ar8327) portStatusReg(p int) uint32 {
	return r27PortStatusBase + 4*uint32(p)
}

func (c *ar8327) reset() error {
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

// padValue encodes a CPU port's pad mode ([FB-REG] AR8327_PAD_*,
// [LX-QCA8K]).
func padValue(cp CPUPort) (uint32, error) {
	switch cp.Mode {
	case ModeRGMII:
		v := uint32(padRGMIIEn)
		if cp.TXDelay != nil {
			if *cp.TXDelay > 3 {
				return 0, fmt.Errorf("%w: TX delay select %d > 3", ErrBoard, *cp.TXDelay)
			}
			v |= padTXDelayEn | uint32(*cp.TXDelay)<<padTXDelayShift
		}
		if cp.RXDelay != nil {
			if *cp.RXDelay > 3 {
				return 0, fmt.Errorf("%w: RX delay select %d > 3", ErrBoard, *cp.RXDelay)
			}
			v |= padRXDelayEn | uint32(*cp.RXDelay)<<padRXDelayShift
		}
		return v, nil
	case ModeSGMII:
		return padSGMIIEn, nil
	}
	// GMII/MII pad modes (the enables in bits 0-18, [FB-REG] AR8327_PAD_*)
	// are not implemented; refuse rather than guess.
	return 0, fmt.Errorf("%w: AR8327 pad mode %v not supported", ErrBoard, cp.Mode)
}

func (c *ar8327) checkBoard(b *Board) error {
	for _, cp := range b.CPU {
		if _, err := padValue(cp); err != nil {
			return fmt.Errorf("%s: port %d: %w", b.Name, cp.Port, err)
		}
	}
	return nil
}

func (c *ar8327) init(b *Board) error {
	io := c.io
	sgmii := false
	for _, cp := range b.CPU {
		pad := uint32(r27Pad0Mode)
		if cp.Port == 6 {
			pad = r27Pad6Mode
		}
		v, err := padValue(cp)
		if err != nil {
			return err
		}
		if cp.Mode == ModeSGMII {
			sgmii = true
		}
		if err := io.write(pad, v); err != nil {
			return err
		}
	}
	if sgmii {
		// SGMII PLL/RX/TX enables: set for revision 1, cleared otherwise [FB-8327].
		const bits = sgmiiEnPLL | sgmiiEnRX | sgmiiEnTX
		set := uint32(0)
		if c.rev == 1 {
			set = bits
		}
		if err := io.rmw(r27SGMIICtrl, bits, set); err != nil {
			return err
		}
	}
	if b.LEDs != nil {
		for i, v := range b.LEDs.Ctrl {
			if err := io.write(r27LEDCtrl0+4*uint32(i), v); err != nil {
				return err
			}
		}
		set := uint32(0)
		if b.LEDs.OpenDrain {
			set = pwsLEDOpenEn
		}
		if err := io.rmw(r27PowerOnStrip, pwsLEDOpenEn, set); err != nil {
			return err
		}
	}
	const all = 0x7f
	eeeOff := uint32(0)
	for i := 0; i < 5; i++ {
		eeeOff |= 1 << (4 + 2*i)
	}
	steps := []struct{ addr, clear, set uint32 }{
		{r27FwdCtrl0, 0xf<<4 | fwd0CPUPortEn, fwd0CPUPortEn | fwd0MirrorOff},
		{r27FwdCtrl1, all<<fwd1UCShift | all<<fwd1MCShift | all<<fwd1BCShift,
			all<<fwd1UCShift | all<<fwd1MCShift | all<<fwd1BCShift},
		{r27MaxFrame, maxFrameMask, mtuJumbo},
		{r27ModuleEn, 0, moduleEnMIB},
		// EEE off on all PHYs, "due to stability issues" [FB-8327].
		{r27EEECtrl, 0, eeeOff},
		// Age time ≈ 5 min; the 0x618 unit is assumed to equal the
		// AR8216 family's (uncertain; FreeBSD leaves this as TODO).
		{r27ATUCtrl, atuCtrlAgeTimeMask, atuCtrlAge5Min},
	}
	for _, s := range steps {
		if err := io.rmw(s.addr, s.clear, s.set); err != nil {
			return err
		}
	}
	return c.phyFixups()
}

// phyFixups applies the per-revision PHY errata writes (ar8327_phy_fixup
// in [FB-8327] and [OW-8216]).
func (c *ar8327) phyFixups() error {
	for phy := 0; phy < 5; phy++ {
		var err error
		switch c.rev {
		case 1:
			if err = writeDebug(c.phyIO, phy, 0x0, 0x02ea); err == nil {
				err = writeDebug(c.phyIO, phy, 0x3d, 0x68a0)
			}
		case 2, 4:
			if c.rev == 2 {
				err = writeMMD(c.phyIO, phy, 7, 0x3c, 0)
			}
			if err == nil {
				err = writeMMD(c.phyIO, phy, 3, 0x0d, 0x803f)
			}
			for _, w := range [...][2]uint16{{0x3d, 0x6860}, {0x5, 0x2c46}, {0x3c, 0x6000}} {
				if err == nil {
					err = writeDebug(c.phyIO, phy, w[0], w[1])
				}
			}
		}
		if err != nil {
			return fmt.Errorf("arswitch: AR8327 PHY %d errata fixup: %w", phy, err)
		}
	}
	return nil
}

func (c *ar8327) initPort(p int, b *Board) error {
	st := uint32(portStatusLinkAuto)
	if b.isCPUPort(p) {
		st = portStatusSpeed1000 | portStatusTXMAC | portStatusRXMAC |
			portStatusDuplex | portStatusTXFlow | portStatusRXFlow
	}
	if err := c.io.write(c.portStatusReg(p), st); err != nil {
		return err
	}
	return c.io.write(r27PortHeaderBase+4*uint32(p), 0)
}

func (c *ar8327) writePort(p int, h portHW) error {
	off := 8 * uint32(p)
	// SVID and CVID both carry the PVID ([FB-8327] ar8327_set_pvid,
	// [OW-8216]). FreeBSD masks the PVID with 0x7f here; that is a FreeBSD
	// bug, the field is 12 bits.
	if err := c.io.write(r27PortVLAN0Base+off, uint32(h.pvid)&0xfff|uint32(h.pvid)&0xfff<<pv0CVIDShift); err != nil {
		return err
	}
	var out uint32
	switch h.egress {
	case egressAsReceived:
		out = pv1OutUntouched
	case egressUntag:
		out = vtu27Untag // port-level modes share the VTU encoding
	case egressTag:
		out = vtu27Tag
	case egressPerVLAN:
		out = pv1OutUnmodified
	}
	if err := c.io.rmw(r27PortVLAN1Base+off, pv1OutMask, out<<pv1OutShift); err != nil {
		return err
	}
	lookup := uint32(h.dest)&lookupMemberMask |
		uint32(h.dot1q)<<lookupDot1qShift |
		uint32(h.state)<<lookupStateShift
	if h.learn {
		lookup |= lookupLearn
	}
	const owned = lookupMemberMask | lookupDot1qMask | lookupStateMask | lookupLearn
	return c.io.rmw(r27PortLookupBase+0xc*uint32(p), owned, lookup)
}

func (c *ar8327) vtuOp(op uint32, vid int) error {
	v, err := c.command(r27VTUFunc1, vtu27Busy, op|uint32(vid)<<vtuVIDShift, "VTU")
	if err != nil {
		return err
	}
	if op == vtuOpLoad && v&vtu27Full != 0 {
		return fmt.Errorf("%w: loading VLAN %d", ErrVTUFull, vid)
	}
	return nil
}

func (c *ar8327) vtuFlush() error { return c.vtuOp(vtuOpFlush, 0) }

func (c *ar8327) vtuLoad(e vtuEntry) error {
	if _, err := c.wait(r27VTUFunc1, vtu27Busy, "VTU"); err != nil {
		return err
	}
	v := uint32(vtu27Valid | vtu27IVL)
	for p := 0; p < r27Ports; p++ {
		mode := uint32(vtu27NotMember)
		switch {
		case !e.members.Has(p):
		case e.untagged.Has(p):
			mode = vtu27Untag
		default:
			mode = vtu27Tag
		}
		v |= mode << (vtu27ModeShift + 2*p)
	}
	if err := c.io.write(r27VTUFunc0, v); err != nil {
		return err
	}
	return c.vtuOp(vtuOpLoad, e.vid)
}

func (c *ar8327) vtuPurge(vid int) error { return c.vtuOp(vtuOpPurge, vid) }

func (c *ar8327) vtuNext(vid int) (vtuEntry, bool, error) {
	if err := c.vtuOp(vtu27OpGetNext, vid); err != nil {
		return vtuEntry{}, false, err
	}
	f1, err := c.io.read(r27VTUFunc1)
	if err != nil {
		return vtuEntry{}, false, err
	}
	f0, err := c.io.read(r27VTUFunc0)
	if err != nil {
		return vtuEntry{}, false, err
	}
	return decodeVTU27(f1, f0)
}

func (c *ar8327) atuOp(op uint32) error {
	_, err := c.command(r27ATUFunc, atu27Busy, op, "ATU")
	return err
}

func (c *ar8327) atuFlush() error { return c.atuOp(atuOpFlush) }

func (c *ar8327) atuFlushPort(p int) error {
	return c.atuOp(atuOpFlushUnicast | uint32(p)<<atu27PortShift)
}

func (c *ar8327) atuNext(prev ATUEntry) (ATUEntry, bool, error) {
	if _, err := c.wait(r27ATUFunc, atu27Busy, "ATU"); err != nil {
		return ATUEntry{}, false, err
	}
	m := prev.MAC
	d0 := uint32(m[2])<<24 | uint32(m[3])<<16 | uint32(m[4])<<8 | uint32(m[5])
	d1 := uint32(m[0])<<8 | uint32(m[1])
	d2 := uint32(prev.VID&0xfff) << atu27VIDShift
	for _, w := range [...][2]uint32{{r27ATUData0, d0}, {r27ATUData1, d1}, {r27ATUData2, d2}} {
		if err := c.io.write(w[0], w[1]); err != nil {
			return ATUEntry{}, false, err
		}
	}
	if err := c.atuOp(atuOpGetNext); err != nil {
		return ATUEntry{}, false, err
	}
	var r [3]uint32
	for i, a := range [...]uint32{r27ATUData0, r27ATUData1, r27ATUData2} {
		v, err := c.io.read(a)
		if err != nil {
			return ATUEntry{}, false, err
		}
		r[i] = v
	}
	return decodeATU27(r[0], r[1], r[2])
}

func (c *ar8327) mibCapture() error {
	if _, err := c.wait(r27MIBFunc, mibFuncBusy, "MIB"); err != nil {
		return err
	}
	if err := c.io.rmw(r27MIBFunc, mibFuncMask, mibFuncCapture<<mibFuncShift|mibFuncBusy); err != nil {
		return err
	}
	_, err := c.wait(r27MIBFunc, mibFuncBusy, "MIB")
	return err
}
