package axgesim

import (
	"encoding/binary"
	"time"

	"github.com/gowrt/gowrt/usbnet/usb"
	"github.com/gowrt/gowrt/usbnet/usbsim"
)

var _ usbsim.Function = (*Chip)(nil)

// Standard requests the model answers (USB 2.0 §9.4, Table 9-4).
const (
	reqGetStatus     = 0
	reqClearFeature  = 1
	reqSetAddress    = 5
	reqGetDescriptor = 6
	reqGetConfig     = 8
	reqSetConfig     = 9
	reqSetInterface  = 11

	descDevice = 1
	descConfig = 2
	descString = 3

	ep0MaxPacket = 64
)

// ctlState is the control transfer endpoint 0 is in.
type ctlState struct {
	active  bool
	setup   usb.Setup
	data    []byte // IN: the response once computed; OUT: what arrived
	off     int
	readyAt time.Time
	fail    bool
	vendor  bool
}

// Speed implements usbsim.Function.
func (c *Chip) Speed() usb.Speed { return c.cfg.Speed }

// Reset implements usbsim.Function: a bus reset returns the device to
// address 0, unconfigured, every toggle DATA0, and un-wedges bulk-out.
// The chip's registers keep their values (the driver re-inits them).
func (c *Chip) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.addr, c.configured, c.pendAddr = 0, 0, -1
	c.ctl = ctlState{}
	c.toggles, c.outTogs, c.halted = [16]uint8{}, [16]uint8{}, [16]bool{}
	c.txBuf, c.txWedged, c.txPend = c.txBuf[:0], false, false
	c.sendOff, c.sendZLP = 0, false
}

// Setup implements usbsim.Function.
func (c *Chip) Setup(addr uint8, pkt [8]byte) usbsim.Handshake {
	c.mu.Lock()
	defer c.mu.Unlock()
	if addr != c.addr {
		return usbsim.NoResponse
	}
	s := usb.ParseSetup(pkt)
	vendor := s.RequestType&usb.RequestTypeMask == usb.RequestVendor
	c.ctl = ctlState{active: true, setup: s, vendor: vendor}
	if vendor {
		fail := c.failNext > 0 || (c.failRate > 0 && c.rng.Float64() < c.failRate)
		if c.failNext > 0 {
			c.failNext--
		}
		c.ctl.fail = fail
		d := c.ctlDelay
		if c.ctlJitter > 0 {
			d += time.Duration(c.rng.Int64N(int64(c.ctlJitter)))
		}
		if d > 0 {
			c.ctl.readyAt = time.Now().Add(d)
		}
	}
	// The data stage (and a status stage without one) starts with DATA1.
	c.toggles[0], c.outTogs[0] = 1, 1
	return usbsim.ACK
}

// In implements usbsim.Function.
func (c *Chip) In(addr, ep uint8, buf []byte) (int, uint8, usbsim.Handshake) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if addr != c.addr {
		return 0, 0, usbsim.NoResponse
	}
	switch {
	case ep == 0:
		return c.ep0In(buf)
	case c.configured == 0 || c.halted[ep]:
		return 0, 0, usbsim.STALL
	case ep == EPBulkIn:
		return c.bulkIn(buf)
	case ep == EPInterrupt:
		if !c.intrPending || len(buf) < 8 {
			return 0, 0, usbsim.NAK
		}
		c.intrPending = false
		var w uint32
		if c.phy.Up {
			w = 1 << 16 // AX_INT_PPLS_LINK
		}
		binary.LittleEndian.PutUint32(buf, w)
		binary.LittleEndian.PutUint32(buf[4:], 0)
		return 8, c.nextIn(ep), usbsim.ACK
	}
	return 0, 0, usbsim.STALL
}

func (c *Chip) nextIn(ep uint8) uint8 {
	t := c.toggles[ep]
	c.toggles[ep] ^= 1
	return t
}

// Out implements usbsim.Function.
func (c *Chip) Out(addr, ep uint8, toggle uint8, data []byte) usbsim.Handshake {
	c.mu.Lock()
	defer c.mu.Unlock()
	if addr != c.addr {
		return usbsim.NoResponse
	}
	switch {
	case ep == 0:
		return c.ep0Out(toggle, data)
	case c.configured == 0 || c.halted[ep]:
		return usbsim.STALL
	case ep == EPBulkOut:
		return c.bulkOut(toggle, data)
	}
	return usbsim.STALL
}

func (c *Chip) ep0In(buf []byte) (int, uint8, usbsim.Handshake) {
	x := &c.ctl
	if !x.active {
		return 0, 0, usbsim.STALL
	}
	if !x.readyAt.IsZero() && time.Now().Before(x.readyAt) {
		return 0, 0, usbsim.NAK
	}
	if x.fail {
		c.stats.ControlFails++
		x.active = false
		return 0, 0, usbsim.STALL
	}
	if !x.setup.In() {
		// Status stage of an OUT (or no-data) request: apply it now.
		ok := c.applyWrite(x.setup, x.data)
		x.active = false
		if !ok {
			return 0, 0, usbsim.STALL
		}
		if c.pendAddr >= 0 {
			c.addr, c.pendAddr = uint8(c.pendAddr), -1
		}
		return 0, c.nextIn(0), usbsim.ACK
	}
	if x.data == nil {
		resp, ok := c.read(x.setup)
		if !ok {
			x.active = false
			return 0, 0, usbsim.STALL
		}
		if len(resp) > int(x.setup.Length) {
			resp = resp[:x.setup.Length]
		}
		x.data = append(make([]byte, 0, len(resp)), resp...)
	}
	n := copy(buf[:min(len(buf), ep0MaxPacket)], x.data[x.off:])
	x.off += n
	return n, c.nextIn(0), usbsim.ACK
}

func (c *Chip) ep0Out(toggle uint8, data []byte) usbsim.Handshake {
	x := &c.ctl
	if !x.active {
		return usbsim.STALL
	}
	if toggle != c.outTogs[0] {
		return usbsim.ACK // retransmission
	}
	if x.setup.In() {
		// Status stage of a read.
		if len(data) != 0 {
			x.active = false
			return usbsim.STALL
		}
		x.active = false
		c.outTogs[0] ^= 1
		return usbsim.ACK
	}
	if x.fail {
		c.stats.ControlFails++
		x.active = false
		return usbsim.STALL
	}
	if len(x.data)+len(data) > int(x.setup.Length) {
		x.active = false
		return usbsim.STALL
	}
	x.data = append(x.data, data...)
	c.outTogs[0] ^= 1
	return usbsim.ACK
}

// read answers an IN control request.
func (c *Chip) read(s usb.Setup) ([]byte, bool) {
	if s.RequestType&usb.RequestTypeMask == usb.RequestStandard {
		return c.standardRead(s)
	}
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

// applyWrite carries out an OUT control request at its status stage.
func (c *Chip) applyWrite(s usb.Setup, data []byte) bool {
	if len(data) != int(s.Length) {
		return false
	}
	if s.RequestType&usb.RequestTypeMask == usb.RequestStandard {
		return c.standardWrite(s)
	}
	if s.RequestType&usb.RequestTypeMask != usb.RequestVendor {
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

func (c *Chip) msrWrite(v uint16) {
	c.msr = v
	c.stats.MSRWrites++
	if v&msrRE == 0 {
		return // receiver off (stop): not a media programming
	}
	torn := false
	if c.lastRead != nil && c.lastRead.Up && v != msrFor(*c.lastRead) {
		torn = true
	}
	if c.lastQ != nil && *c.lastQ != c.tableFor(v) {
		torn = true
	}
	if c.lastRead != nil && !c.lastRead.Up && c.lastQ != nil {
		torn = true // a media programming after the PHY was read down
	}
	if torn {
		c.stats.TornMedia++
	}
	if c.phy.Up && v != msrFor(c.phy) {
		c.stats.MSRMismatch++
	}
}

func (c *Chip) standardRead(s usb.Setup) ([]byte, bool) {
	switch s.Request {
	case reqGetDescriptor:
		switch s.Value >> 8 {
		case descDevice:
			return c.deviceDescriptor(), true
		case descConfig:
			return c.configDescriptor(), true
		case descString:
			if s.Value&0xFF == 0 {
				return []byte{4, descString, 0x09, 0x04}, true
			}
			return stringDescriptor("AX88179"), true
		}
		return nil, false
	case reqGetConfig:
		return []byte{c.configured}, true
	case reqGetStatus:
		var st uint16
		if s.RequestType&usb.RecipientMask == usb.RecipientEndpt && c.halted[s.Index&0xF] {
			st = 1
		}
		return binary.LittleEndian.AppendUint16(nil, st), true
	}
	return nil, false
}

func (c *Chip) standardWrite(s usb.Setup) bool {
	switch s.Request {
	case reqSetAddress:
		if s.Value > 127 {
			return false
		}
		c.pendAddr = int(s.Value)
		return true
	case reqSetConfig:
		if s.Value > 1 {
			return false
		}
		c.configured = uint8(s.Value)
		c.toggles, c.outTogs = [16]uint8{}, [16]uint8{}
		return true
	case reqSetInterface:
		return s.Value == 0 && s.Index == 0
	case reqClearFeature:
		if s.RequestType&usb.RecipientMask == usb.RecipientEndpt && s.Value == 0 {
			ep := s.Index & 0xF
			c.halted[ep] = false
			c.toggles[ep], c.outTogs[ep] = 0, 0
			return true
		}
		return false
	}
	return false
}

func (c *Chip) deviceDescriptor() []byte {
	bcdUSB := uint16(0x0210)
	if c.cfg.Speed == usb.SpeedSuper {
		bcdUSB = 0x0300
	}
	d := []byte{18, descDevice, byte(bcdUSB), byte(bcdUSB >> 8), 0xFF, 0xFF, 0, ep0MaxPacket}
	d = binary.LittleEndian.AppendUint16(d, VendorASIX)
	d = binary.LittleEndian.AppendUint16(d, c.cfg.Product)
	d = binary.LittleEndian.AppendUint16(d, c.cfg.BCDDevice)
	return append(d, 1, 2, 3, 1)
}

func (c *Chip) configDescriptor() []byte {
	mps := uint16(c.MaxPacket())
	interval := byte(11) // HS: 2^(11-1) microframes = 128 ms
	if c.cfg.Speed == usb.SpeedFull {
		interval = 128
	}
	d := []byte{9, descConfig, 39, 0, 1, 1, 0, 0xA0, 250}
	d = append(d, 9, 4, 0, 0, 3, 0xFF, 0xFF, 0, 0)
	d = append(d, 7, 5, 0x80|EPInterrupt, 3, 8, 0, interval)
	d = append(d, 7, 5, 0x80|EPBulkIn, 2, byte(mps), byte(mps>>8), 0)
	d = append(d, 7, 5, EPBulkOut, 2, byte(mps), byte(mps>>8), 0)
	return d
}

func stringDescriptor(s string) []byte {
	d := []byte{byte(2 + 2*len(s)), descString}
	for _, r := range s {
		d = binary.LittleEndian.AppendUint16(d, uint16(r))
	}
	return d
}
