package arge

import (
	"fmt"

	gnet "github.com/gowrt/gowrt/net"
)

// SetLink programs the MAC and the SoC clock for a link (FreeBSD
// arge_set_pll / Linux ag71xx_mac_config): MAC_CFG2 interface mode and
// duplex, IFCONTROL speed, FIFO_CFG5 byte mode. A down link changes
// nothing but the state Link reports. Whoever follows the PHY calls it
// (phy.Follow, through NIC.SetLink); a link set before Start is programmed
// by Start.
func (d *Driver) SetLink(l gnet.LinkState) error {
	d.ctlMu.Lock()
	defer d.ctlMu.Unlock()
	if !l.Up {
		d.link = gnet.LinkState{}
		return nil
	}
	if err := d.programLink(l); err != nil {
		return err
	}
	d.link = l
	d.Stats.LinkChanges.Add(1)
	return nil
}

// programLink is SetLink's register work for an up link, with ctlMu held.
func (d *Driver) programLink(l gnet.LinkState) error {
	cfg2 := d.r.Read32(RegMACCfg2) &^ (Cfg2IfModeMask | Cfg2FullDuplex)
	ifc := d.r.Read32(RegIFControl) &^ IFControlSpeed100
	f5 := d.r.Read32(RegFIFOCfg5) &^ FIFOCfg5ByteMode
	switch l.SpeedMbps {
	case 1000:
		cfg2 |= Cfg2IfMode1000
		f5 |= FIFOCfg5ByteMode
	case 100:
		cfg2 |= Cfg2IfMode10_100
		ifc |= IFControlSpeed100
	case 10:
		cfg2 |= Cfg2IfMode10_100
	default:
		return fmt.Errorf("%w: link speed %d", ErrConfig, l.SpeedMbps)
	}
	if l.FullDuplex {
		cfg2 |= Cfg2FullDuplex
	}
	d.wr(RegMACCfg2, cfg2)
	d.wr(RegIFControl, ifc)
	d.wr(RegFIFOCfg5, f5)
	d.r.Barrier()
	return d.cfg.SoC.SetClock(l.SpeedMbps)
}

// Link returns the link the MAC is programmed for.
func (d *Driver) Link() gnet.LinkState {
	d.ctlMu.Lock()
	defer d.ctlMu.Unlock()
	return d.link
}
