package axgesim

import (
	"encoding/binary"

	"github.com/gowrt/gowrt/usbnet/usb"
	"github.com/gowrt/gowrt/usbnet/usbsim"
)

var _ usbsim.Model = (*Chip)(nil)

// newDevice builds the usbsim.Device that answers chapter 9 for the chip
// and passes its vendor requests and endpoints to it: one configuration,
// one vendor-class interface (Linux ax88179_178a binds to class
// 0xff/0xff), interrupt-IN status, bulk-in and bulk-out.
func (c *Chip) newDevice() *usbsim.Device {
	mps := uint16(c.MaxPacket())
	bcdUSB, interval := uint16(0x0210), uint8(11) // HS: 2^(11-1) microframes
	switch c.cfg.Speed {
	case usb.SpeedSuper:
		bcdUSB = 0x0300
	case usb.SpeedFull:
		bcdUSB, interval = 0x0200, 128
	}
	return usbsim.NewDevice(usbsim.Config{
		Speed: c.cfg.Speed,
		Device: usbsim.DeviceDesc{
			USB: bcdUSB, Class: 0xFF, SubClass: 0xFF, MaxPacket0: 64,
			Vendor: VendorASIX, Product: c.cfg.Product, Release: c.cfg.BCDDevice,
			Manufacturer: 1, ProductName: 2, Serial: 3,
		},
		Configs: []usbsim.ConfigDesc{{
			Value: 1, MaxPower: 250,
			Interfaces: []usbsim.InterfaceDesc{{
				Class: 0xFF, SubClass: 0xFF,
				Endpoints: []usbsim.EndpointDesc{
					{Address: usb.EndpointIn | EPInterrupt, Type: usb.Interrupt, MaxPacket: 16, Interval: interval},
					{Address: usb.EndpointIn | EPBulkIn, Type: usb.Bulk, MaxPacket: mps},
					{Address: EPBulkOut, Type: usb.Bulk, MaxPacket: mps},
				},
			}},
		}},
		Strings: map[uint8]string{1: "ASIX Elec. Corp.", 2: "AX88179", 3: "000000000001"},
		Model:   c,
	})
}

// Function is the chip as a host controller model drives it (plug it into
// a usbsim.Host or a controller model's port).
func (c *Chip) Function() *usbsim.Device { return c.dev }

// ControlIn implements usbsim.Model: vendor register and PHY reads. The
// value is sampled now, at the first IN token of the data stage (after
// any SlowControl delay), as the chip does.
func (c *Chip) ControlIn(s usb.Setup, buf []byte) (int, usbsim.Handshake) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failLocked(s) {
		return 0, usbsim.STALL
	}
	resp, ok := c.read(s)
	if !ok {
		return 0, usbsim.STALL
	}
	return copy(buf, resp), usbsim.ACK
}

// ControlOut implements usbsim.Model: vendor register, PHY and firmware
// mode writes, carried out at the status stage.
func (c *Chip) ControlOut(s usb.Setup, data []byte) usbsim.Handshake {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failLocked(s) {
		return usbsim.STALL
	}
	if !c.applyWrite(s, data) {
		return usbsim.STALL
	}
	return usbsim.ACK
}

// failLocked decides whether this vendor request fails on demand.
func (c *Chip) failLocked(s usb.Setup) bool {
	if s.RequestType&usb.RequestTypeMask != usb.RequestVendor {
		return false
	}
	fail := c.failNext > 0 || (c.failRate > 0 && (s.In() || !c.failReadsOnly) && c.rng.Float64() < c.failRate)
	if c.failNext > 0 {
		c.failNext--
	}
	if fail {
		c.stats.ControlFails++
	}
	return fail
}

// EndpointIn implements usbsim.Model.
func (c *Chip) EndpointIn(ep uint8, buf []byte) (int, usbsim.Handshake) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch ep {
	case usb.EndpointIn | EPBulkIn:
		return c.bulkIn(buf)
	case usb.EndpointIn | EPInterrupt:
		if !c.intrPending || len(buf) < 8 {
			return 0, usbsim.NAK
		}
		c.intrPending = false
		var w uint32
		if c.phy.Up {
			w = 1 << 16 // AX_INT_PPLS_LINK (Linux ax88179_status)
		}
		binary.LittleEndian.PutUint32(buf, w)
		binary.LittleEndian.PutUint32(buf[4:], 0)
		return 8, usbsim.ACK
	}
	return 0, usbsim.STALL
}

// EndpointOut implements usbsim.Model.
func (c *Chip) EndpointOut(ep uint8, data []byte) usbsim.Handshake {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ep != EPBulkOut {
		return usbsim.STALL
	}
	return c.bulkOut(data)
}

// SetConfiguration implements usbsim.Model: selecting a configuration
// (and the bus reset that sets 0) restarts the bulk-out parser, which
// un-wedges it.
func (c *Chip) SetConfiguration(uint8) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.txBuf, c.txWedged, c.txPend = c.txBuf[:0], false, false
	c.sendOff, c.sendZLP = 0, false
}

// SetInterface implements usbsim.Model.
func (c *Chip) SetInterface(uint8, uint8) {}

// read answers a vendor IN request.
func (c *Chip) read(s usb.Setup) ([]byte, bool) {
	if s.RequestType&usb.RequestTypeMask != usb.RequestVendor {
		return nil, false
	}
	switch s.Request {
	case reqMAC:
		reg, n := int(s.Value), int(s.Index)
		if n == 0 || n > 8 || reg+n > 0x100 || int(s.Length) != n {
			return nil, false
		}
		b := make([]byte, n)
		for i := range b {
			b[i] = c.regByte(reg + i)
		}
		return b, true
	case reqPHY:
		if s.Length != 2 {
			return nil, false
		}
		v := uint16(0xFFFF) // no PHY answers at another address
		if s.Value == phyAddr {
			switch s.Index {
			case phyPHYSR:
				v = c.phy.physr()
				m := c.phy
				c.lastRead = &m
				c.stats.PHYSRReads++
			case phyBMCR:
				v = c.bmcr
			case phyANLPAR:
				v = 0x01E1 // 10/100 half and full, selector 802.3
				if c.phy.Pause {
					v |= 0x0400
				}
			default:
				v = 0
			}
		}
		return binary.LittleEndian.AppendUint16(nil, v), true
	}
	return nil, false
}

func (c *Chip) regByte(reg int) byte {
	switch {
	case reg == rPLSR:
		return c.plsr
	case reg == rRCR:
		return byte(c.rcr)
	case reg == rRCR+1:
		return byte(c.rcr >> 8)
	case reg >= rNIDR && reg < rNIDR+6:
		return c.nid[reg-rNIDR]
	case reg == rMSR:
		return byte(c.msr)
	case reg == rMSR+1:
		return byte(c.msr >> 8)
	case reg == rEPPRCR:
		return byte(c.epprcr)
	case reg == rEPPRCR+1:
		return byte(c.epprcr >> 8)
	case reg >= rQCTRL && reg < rQCTRL+5:
		return c.qctrl[reg-rQCTRL]
	case reg == rCLK:
		return c.clk
	}
	return 0
}

// applyWrite carries out a vendor OUT request.
func (c *Chip) applyWrite(s usb.Setup, data []byte) bool {
	if s.RequestType&usb.RequestTypeMask != usb.RequestVendor || len(data) != int(s.Length) {
		return false
	}
	switch s.Request {
	case reqMAC:
		reg, n := int(s.Value), int(s.Index)
		if n == 0 || n > 8 || n != len(data) || reg+n > 0x100 {
			return false
		}
		c.writeMAC(reg, data)
		return true
	case reqPHY:
		if len(data) != 2 {
			return false
		}
		if s.Value == phyAddr && s.Index == phyBMCR {
			c.bmcr = binary.LittleEndian.Uint16(data) &^ 0x0200 // restart self-clears
		}
		return true
	case reqFWMode:
		if c.cfg.BCDDevice < BCD179A {
			return false // only the 179A knows the request
		}
		c.stats.FirmwareModes++
		c.fwMode = int(s.Value)
		return true
	}
	return false
}

func (c *Chip) writeMAC(reg int, d []byte) {
	switch {
	case reg == rRCR && len(d) == 2:
		c.rcr = binary.LittleEndian.Uint16(d)
	case reg == rNIDR && len(d) == 6:
		copy(c.nid[:], d)
	case reg == rMSR && len(d) == 2:
		c.msrWrite(binary.LittleEndian.Uint16(d))
	case reg == rEPPRCR && len(d) == 2:
		v := binary.LittleEndian.Uint16(d)
		if v&eppIPRL == 0 {
			// PHY reset: what the host read before means nothing now.
			c.lastRead, c.lastQ, c.reprog = nil, nil, false
			if c.cfg.BCDDevice >= BCD179A {
				c.fwMode = 1 // a soft reset may boot the native firmware (FreeBSD PR 854)
			}
		}
		c.epprcr = v
	case reg == rQCTRL && len(d) == 5:
		c.qctrlWrite([5]byte(d))
	case reg == rCLK && len(d) == 1:
		c.clk = d[0]
	}
	// Other registers (pause levels, checksum, hash, monitor) are
	// accepted and have no effect in the model.
}

func (c *Chip) qctrlWrite(q [5]byte) {
	c.qctrl = q
	c.stats.Reprograms++
	if c.reprog && c.stats.PHYChanges == c.reprogAt {
		c.stats.Flaps++
	}
	c.reprog, c.reprogAt = true, c.stats.PHYChanges
	c.lastQ = &q
}

// tableFor is the bulk-in entry that belongs to a medium word at the
// chip's USB speed.
func (c *Chip) tableFor(msr uint16) [5]byte {
	switch {
	case msr&msrGM != 0 && c.plsr&0x04 != 0:
		return qSuper1000
	case msr&msrGM != 0 && c.plsr&0x02 != 0:
		return qHigh1000
	case msr&msrPS != 0 && c.plsr&0x06 != 0:
		return q100
	}
	return qSlow
}

// msrWrite checks a medium word against what the host last read from the
// PHY and the QCTRL entry it wrote just before: a pass that programs both
// from one PHYSR read matches both; interleaved passes leave one word
// built from a stale read.
func (c *Chip) msrWrite(v uint16) {
	c.msr = v
	c.stats.MSRWrites++
	if v&msrRE == 0 {
		return // receiver off (stop): not a media programming
	}
	torn := false
	if c.lastRead != nil {
		torn = !c.lastRead.Up || v != msrFor(*c.lastRead)
	}
	if c.lastQ != nil && *c.lastQ != c.tableFor(v) {
		torn = true
	}
	if torn {
		c.stats.TornMedia++
	}
	if c.lastRead != nil && c.phy.Up && v != msrFor(c.phy) {
		c.stats.MSRMismatch++
	}
}
