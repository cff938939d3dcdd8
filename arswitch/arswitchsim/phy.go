package arswitchsim

// phyModel is a minimal Atheros internal PHY: the clause-22 basic
// registers, the debug window (0x1d address / 0x1e data) and the MMD window
// (0x0d control / 0x0e address-data), enough to check PHY access paths and
// the errata writes.
type phyModel struct {
	regs    [32]uint16
	dbgAddr uint16
	dbg     [64]uint16
	mmdDev  uint16
	mmdData bool // 0x0d selected "data" function
	mmdReg  [8]uint16
	mmd     map[uint32]uint16
}

func (p *phyModel) init(id uint32) {
	p.regs[0] = 0x1140 // autoneg enabled, full duplex, 1000
	p.regs[2] = uint16(id >> 16)
	p.regs[3] = uint16(id)
	p.regs[4] = 0x01e1
	p.regs[9] = 0x0300  // 1000BASE-T FD/HD advertised
	p.regs[15] = 0x3000 // extended status: 1000BASE-T FD/HD capable
	p.mmd = make(map[uint32]uint16)
}

func (p *phyModel) read(reg int, link bool) uint16 {
	switch reg {
	case 1:
		v := uint16(0x7949) // 10/100 capable, autoneg capable, ext status
		if link {
			v |= 1<<2 | 1<<5 // link up, autoneg complete
		}
		return v
	case 5: // partner ability: a gigabit partner offering everything
		if link {
			return 0xc5e1
		}
		return 0
	case 10: // 1000BASE-T status: partner 1000 FD/HD
		if link {
			return 0x0c00
		}
		return 0
	case 0x1e:
		return p.dbg[p.dbgAddr&63]
	case 0x0e:
		if p.mmdData {
			return p.mmd[uint32(p.mmdDev)<<16|uint32(p.mmdReg[p.mmdDev&7])]
		}
		return p.mmdReg[p.mmdDev&7]
	}
	return p.regs[reg&31]
}

func (p *phyModel) write(reg int, val uint16) {
	switch reg {
	case 1, 2, 3, 5, 10, 15:
		return // read-only
	case 0x1d:
		p.dbgAddr = val
	case 0x1e:
		p.dbg[p.dbgAddr&63] = val
	case 0x0d:
		p.mmdDev = val & 0x1f
		p.mmdData = val&0xc000 != 0
	case 0x0e:
		if p.mmdData {
			p.mmd[uint32(p.mmdDev)<<16|uint32(p.mmdReg[p.mmdDev&7])] = val
		} else {
			p.mmdReg[p.mmdDev&7] = val
		}
	default:
		if reg == 0 {
			val &^= 0x8000 | 0x0200 // reset and autoneg restart self-clear
		}
		p.regs[reg&31] = val
	}
}

// PHYDebug returns a PHY's debug register (for tests).
func (s *Switch) PHYDebug(phy int, reg uint16) uint16 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.phys[phy].dbg[reg&63]
}

// PHYMMD returns a PHY's MMD register (for tests).
func (s *Switch) PHYMMD(phy int, devad, reg uint16) uint16 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.phys[phy].mmd[uint32(devad)<<16|uint32(reg)]
}

// PHYReg returns a PHY's clause-22 register (for tests).
func (s *Switch) PHYReg(phy, reg int) uint16 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.phys[phy].read(reg, s.cable[phy+1])
}

func (s *Switch) doMDIO(cmd uint32) {
	phy := int(cmd>>21) & 0x1f
	reg := int(cmd>>16) & 0x1f
	v := cmd &^ mdioBusy
	if phy < 5 {
		if cmd&mdioRead != 0 {
			v = v&^0xffff | uint32(s.phys[phy].read(reg, s.cable[phy+1]))
		} else {
			s.phys[phy].write(reg, uint16(cmd))
		}
	} else if cmd&mdioRead != 0 {
		v |= 0xffff
	}
	s.regs[s.addr(a16MDIOCtrl, a27MDIOCtrl)] = v
}
