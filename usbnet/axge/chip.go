package axge

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/usbnet/usb"
)

// USB IDs the driver matches (FreeBSD if_axge.c axge_devs, Linux
// ax88179_178a.c products).
const (
	VendorASIX      = 0x0b95
	ProductAX88179  = 0x1790 // AX88179 and AX88179A (told apart by bcdDevice)
	ProductAX88178A = 0x178a
)

// bcd179A is the first bcdDevice of an AX88179A; an AX88179 reports at
// most 0x0100 (FreeBSD's newer axge_devs).
const bcd179A = 0x0200

// Delays of the power/clock bring-up (FreeBSD axge_chip_init: hz/4 after
// releasing the PHY reset, hz/10 after selecting the clocks; Linux waits
// 500 and 200 ms). FreeBSD's, which are enough for both drivers' users.
const (
	phyResetDelay = 250 * time.Millisecond
	clockDelay    = 100 * time.Millisecond
)

// controlTimeout bounds every register access (FreeBSD's 1000 ms).
const controlTimeout = time.Second

// Variant is the chip generation.
type Variant uint8

const (
	AX88179 Variant = iota
	AX88178A
	AX88179A // AX88179 product ID, bcdDevice >= 0x0200: needs the firmware-mode switch
)

func (v Variant) String() string {
	switch v {
	case AX88179:
		return "AX88179"
	case AX88178A:
		return "AX88178A"
	case AX88179A:
		return "AX88179A"
	}
	return fmt.Sprintf("Variant(%d)", uint8(v))
}

// Identify returns the variant for a device descriptor's IDs, or false if
// the driver does not drive it.
func Identify(vendor, product, bcdDevice uint16) (Variant, bool) {
	if vendor != VendorASIX {
		return 0, false
	}
	switch product {
	case ProductAX88178A:
		return AX88178A, true
	case ProductAX88179:
		if bcdDevice >= bcd179A {
			return AX88179A, true
		}
		return AX88179, true
	}
	return 0, false
}

// ControlDevice is what the chip layer needs from the USB core's device:
// a control transfer on endpoint 0 that gives up after timeout. On error
// the contents of data are undefined and the chip layer never reads them.
type ControlDevice interface {
	Control(setup usb.Setup, data []byte, timeout time.Duration) (int, error)
}

// ErrShortRead is a register read the device answered with fewer bytes
// than asked for: the register's value is unknown.
var ErrShortRead = errors.New("axge: short register read")

// ChipConfig configures the chip layer.
type ChipConfig struct {
	Dev     ControlDevice
	Variant Variant
	// LinkChanged is called, from the MII pass that noticed it, when the
	// link goes up or down or changes speed (the usbnet NIC's SetLink).
	// It must not call back into the Chip.
	LinkChanged func(gnet.LinkState)
}

// ChipStats count the MII layer's work and its troubles.
type ChipStats struct {
	LinkChanges   gnet.Counter // link state changes reported
	StatChanges   gnet.Counter // statchg passes (QCTRL and MSR programmed)
	PHYReads      gnet.Counter // PHY register reads attempted
	ControlErrors gnet.Counter // register accesses that failed (values not used)
	// TornMedia counts MSR words written from a media state another MII
	// pass replaced while this one slept in a control transfer. The
	// passes exclude each other, so this stays 0; it is the check that
	// they do.
	TornMedia gnet.Counter
}

// Chip is the AX88179 register layer: bring-up, RX filter, and the MII
// passes that follow the PHY and program the bulk-in aggregation and the
// medium status for each link.
//
// # MII passes exclude each other across sleeping transfers
//
// A pass (Tick, MediaChange, StatChange) reads the PHY, decides, and
// writes QCTRL and MSR: several control transfers, each of which sleeps.
// FreeBSD's axge dropped its mutex inside every transfer, so a tick and a
// media change could interleave: one pass saw another's media word half
// rebuilt (0x20, IFM_ETHER with no link: a link flap) and the later
// writer programmed the earlier reader's stale media into MSR.
// Here each pass holds pass for its whole length — a sync.Mutex may be
// held across a sleep — and mu only guards the shared state for the
// instants it is read or written.
type Chip struct {
	cfg   ChipConfig
	Stats ChipStats

	hz hazards

	pass sync.Mutex // held by every MII pass and bring-up sequence, across transfers

	mu          sync.Mutex // guards the fields below; never held across a transfer
	active      Media      // the media word pollstat builds (FreeBSD's mii_media_active)
	reported    Media      // the link last reported (LinkChanged)
	gen         uint64     // bumped whenever active changes
	needStatchg bool       // the last statchg failed: the next tick retries it
	mac         gnet.MAC
	rcr         uint16
}

// NewChip returns the chip layer for a device; nothing is sent yet.
func NewChip(cfg ChipConfig) (*Chip, error) {
	if cfg.Dev == nil {
		return nil, errors.New("axge: ChipConfig.Dev is nil")
	}
	return &Chip{cfg: cfg}, nil
}

// Variant is the chip generation.
func (c *Chip) Variant() Variant { return c.cfg.Variant }

// control runs one vendor request. In requests return ErrShortRead unless
// the device filled all of data.
func (c *Chip) control(in bool, req uint8, value, index uint16, data []byte) error {
	s := usb.Setup{
		RequestType: usb.RequestVendor | usb.RecipientDevice,
		Request:     req, Value: value, Index: index, Length: uint16(len(data)),
	}
	if in {
		s.RequestType |= usb.RequestIn
	}
	n, err := c.cfg.Dev.Control(s, data, controlTimeout)
	if err == nil && in && n != len(data) {
		err = ErrShortRead
	}
	if err != nil {
		c.Stats.ControlErrors.Add(1)
		return fmt.Errorf("axge: %v: %w", s, err)
	}
	return nil
}

func (c *Chip) readMAC(reg uint16, buf []byte) error {
	return c.control(true, ReqAccessMAC, reg, uint16(len(buf)), buf)
}

func (c *Chip) writeMAC(reg uint16, buf []byte) error {
	return c.control(false, ReqAccessMAC, reg, uint16(len(buf)), buf)
}

func (c *Chip) readMAC8(reg uint16) (uint8, error) {
	var b [1]byte
	if err := c.readMAC(reg, b[:]); err != nil {
		return 0, err
	}
	return b[0], nil
}

func (c *Chip) readMAC16(reg uint16) (uint16, error) {
	var b [2]byte
	if err := c.readMAC(reg, b[:]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint16(b[:]), nil
}

func (c *Chip) writeMAC8(reg uint16, v uint8) error {
	return c.writeMAC(reg, []byte{v})
}

func (c *Chip) writeMAC16(reg uint16, v uint16) error {
	var b [2]byte
	binary.LittleEndian.PutUint16(b[:], v)
	return c.writeMAC(reg, b[:])
}

// readPHY reads a register of the internal PHY (counted in PHYReads).
func (c *Chip) readPHY(reg uint16) (uint16, error) {
	c.Stats.PHYReads.Add(1)
	var b [2]byte
	if err := c.control(true, ReqAccessPHY, PHYAddr, reg, b[:]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint16(b[:]), nil
}

func (c *Chip) writePHY(reg, v uint16) error {
	var b [2]byte
	binary.LittleEndian.PutUint16(b[:], v)
	return c.control(false, ReqAccessPHY, PHYAddr, reg, b[:])
}

// Init powers the chip up and programs it for traffic (FreeBSD
// axge_reset + axge_init, Linux ax88179_reset): PHY reset and clocks with
// their delays, compatible firmware mode on an AX88179A, the MAC address
// from NODE_ID, pause levels, checksum offload off, the RX filter, wake-up
// sources off, the default medium. It then restarts autonegotiation and
// runs a first MII pass. A failed step fails Init: a chip half set up is
// not used.
func (c *Chip) Init(promisc bool) error {
	c.pass.Lock()
	err := c.initLocked(promisc)
	c.pass.Unlock()
	if err != nil {
		return err
	}
	return c.MediaChange()
}

func (c *Chip) initLocked(promisc bool) error {
	if err := c.chipInit(); err != nil {
		return err
	}
	var id [6]byte
	if err := c.readMAC(RegNIDR, id[:]); err != nil {
		return fmt.Errorf("axge: reading the MAC address: %w", err)
	}
	rcr := rxFilter(promisc)
	steps := []struct {
		reg uint16
		val []byte
	}{
		{RegPWLLR, []byte{PauseLow}},
		{RegPWLHR, []byte{PauseHigh}},
		// Checksum offload off both ways: the NIC advertises none
		// (a router forwards most frames it receives unchanged).
		{RegCTCR, []byte{0}},
		{RegCRCR, []byte{0}},
		{RegMFA, make([]byte, 8)}, // no hash filter: all multicast is accepted by RCR
		{RegRCR, le16(rcr)},
		{RegMMSR, []byte{0}},
		{RegMSR, le16(MSRDefault)},
	}
	for _, s := range steps {
		if err := c.writeMAC(s.reg, s.val); err != nil {
			return err
		}
	}
	c.mu.Lock()
	c.mac = gnet.MAC(id)
	c.rcr = rcr
	c.active, c.reported = Media{}, Media{}
	c.gen++
	c.mu.Unlock()
	return nil
}

// chipInit is FreeBSD's axge_chip_init: PHY power-down/reset then
// release, clocks, and on an AX88179A the compatible firmware mode (a
// soft reset may otherwise leave the native header layout selected).
func (c *Chip) chipInit() error {
	if err := c.writeMAC16(RegEPPRCR, 0); err != nil {
		return err
	}
	if err := c.writeMAC16(RegEPPRCR, EPPRCRIPRL); err != nil {
		return err
	}
	time.Sleep(phyResetDelay)
	if err := c.writeMAC8(RegClkSelect, ClkACS|ClkBCS); err != nil {
		return err
	}
	time.Sleep(clockDelay)
	if c.cfg.Variant == AX88179A {
		if err := c.control(false, ReqFirmwareMode, FirmwareCompat, 1, []byte{0}); err != nil {
			return fmt.Errorf("axge: selecting compatible firmware mode: %w", err)
		}
	}
	return nil
}

// rxFilter is the RCR word: broadcast and all multicast (a router's
// IPv6, OSPF and mDNS need multicast; the hash filter buys little), CRC
// errors dropped by the chip, IPE off so frames carry no alignment pad.
func rxFilter(promisc bool) uint16 {
	rcr := uint16(RCRStart | RCRDropCRCErr | RCRBroadcast | RCRAllMulti)
	if promisc {
		rcr |= RCRPromisc
	}
	return rcr
}

func le16(v uint16) []byte { return []byte{byte(v), byte(v >> 8)} }

// MAC is the station address read from NODE_ID by Init.
func (c *Chip) MAC() gnet.MAC {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mac
}

// Media is the link as last reported.
func (c *Chip) Media() Media {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reported
}

// SetPromisc rewrites the RX filter.
func (c *Chip) SetPromisc(on bool) error {
	c.lockPass()
	defer c.unlockPass()
	rcr := rxFilter(on)
	if err := c.writeMAC16(RegRCR, rcr); err != nil {
		return err
	}
	c.mu.Lock()
	c.rcr = rcr
	c.mu.Unlock()
	return nil
}

// lockPass and unlockPass bracket an MII pass. The hazard build can
// switch the exclusion off (hazard_on.go); the shipped build cannot.
func (c *Chip) lockPass() {
	if !c.hz.noPassExclusion() {
		c.pass.Lock()
	}
}

func (c *Chip) unlockPass() {
	if !c.hz.noPassExclusion() {
		c.pass.Unlock()
	}
}

// pollstat rebuilds the active media from the PHY, the way an MII PHY
// driver's status routine does (FreeBSD mii_pollstat): the word is reset
// to "valid, no link" and filled in as the registers are read — PHYSR for
// link, speed and duplex, then the link partner's ability (ANLPAR) for
// pause, which MSR's flow-control bits follow (FreeBSD axge_miibus_statchg
// enables TFC/RFC only when pause was negotiated). Between the steps the
// word is incomplete; the pass exclusion is what keeps every other pass
// from seeing it so. A failed read restores the word the pass found: the
// register's value is unknown and is never used.
func (c *Chip) pollstat() error {
	c.mu.Lock()
	prev := c.active
	c.active = Media{}
	c.gen++
	c.mu.Unlock()
	restore := func(err error) error {
		c.mu.Lock()
		c.active = prev
		c.gen++
		c.mu.Unlock()
		return err
	}
	sr, err := c.readPHY(PHYRegPHYSR)
	if err != nil {
		return restore(err)
	}
	m := DecodePHYSR(sr)
	c.mu.Lock()
	c.active.Up, c.active.SpeedMbps, c.active.FullDuplex = m.Up, m.SpeedMbps, m.FullDuplex
	c.gen++
	c.mu.Unlock()
	if !m.Up || !m.FullDuplex {
		return nil
	}
	lpa, err := c.readPHY(PHYRegANLPAR)
	if err != nil {
		return restore(err)
	}
	c.mu.Lock()
	c.active.Pause = lpa&ANLPARPause != 0
	c.gen++
	c.mu.Unlock()
	return nil
}

// Tick is the periodic MII pass (FreeBSD's mii_tick, once a second):
// poll the PHY and, if the link changed, reprogram the chip for it and
// report it. A failed read changes nothing — acting on a register value
// that was never read is what made FreeBSD's link flap 462 times in 30 s.
func (c *Chip) Tick() error {
	c.lockPass()
	defer c.unlockPass()
	if err := c.pollstat(); err != nil {
		return err
	}
	return c.update(false)
}

// MediaChange restarts autonegotiation and reprograms the chip for what
// the PHY reports now (FreeBSD's mii_mediachg, run when the media is set
// and at init).
func (c *Chip) MediaChange() error {
	c.lockPass()
	defer c.unlockPass()
	if err := c.writePHY(PHYRegBMCR, BMCRAutoneg|BMCRRestartAutoneg); err != nil {
		return err
	}
	if err := c.pollstat(); err != nil {
		return err
	}
	return c.update(true)
}

// update compares the active media with the link last reported; on a
// change (or when forced, or to retry a failed statchg) it runs statchg,
// then reports the change. The caller holds the pass.
func (c *Chip) update(force bool) error {
	c.mu.Lock()
	m := c.active
	changed := m != c.reported
	c.reported = m
	run := changed || force || c.needStatchg
	c.mu.Unlock()
	var err error
	if run {
		err = c.statchg()
	}
	if changed {
		c.Stats.LinkChanges.Add(1)
		if c.cfg.LinkChanged != nil {
			c.cfg.LinkChanged(gnet.LinkState{Up: m.Up, SpeedMbps: m.SpeedMbps, FullDuplex: m.FullDuplex})
		}
	}
	return err
}

// StatChange reprograms the chip for the active media (FreeBSD's
// miibus_statchg entry point).
func (c *Chip) StatChange() error {
	c.lockPass()
	defer c.unlockPass()
	return c.statchg()
}

// statchg programs RX_BULKIN_QCTRL from the table by link speed and USB
// speed, then MSR (FreeBSD axge_miibus_statchg, Linux
// ax88179_link_reset). With the link down it writes nothing, as FreeBSD.
// The caller holds the pass.
func (c *Chip) statchg() error {
	c.Stats.StatChanges.Add(1)
	c.mu.Lock()
	m, gen := c.active, c.gen
	c.needStatchg = false
	c.mu.Unlock()
	if !m.Up {
		return nil
	}
	err := c.program(m)
	c.mu.Lock()
	if err != nil {
		c.needStatchg = true
	} else if c.gen != gen {
		// Another pass changed the media while this one slept in
		// its transfers: the MSR just written is stale.
		c.Stats.TornMedia.Add(1)
	}
	c.mu.Unlock()
	return err
}

func (c *Chip) program(m Media) error {
	plsr, err := c.readMAC8(RegPLSR)
	if err != nil {
		return err
	}
	q := BulkInFor(m.SpeedMbps, plsr)
	if err := c.writeMAC(RegBulkInQCtl, q[:]); err != nil {
		return err
	}
	return c.writeMAC16(RegMSR, MSRFor(m))
}

// Stop turns the receiver off (MSR.RE cleared, read-modify-write as
// FreeBSD's axge_stop). A failed read writes nothing: writing back an
// unknown word could set any medium bit.
func (c *Chip) Stop() error {
	c.pass.Lock()
	defer c.pass.Unlock()
	msr, err := c.readMAC16(RegMSR)
	if err != nil {
		return err
	}
	return c.writeMAC16(RegMSR, msr&^MSRRxEnable)
}

// Detach quiesces the chip before the device is released (FreeBSD
// axge_detach): bulk-in forced to answer zero-length packets so a pending
// read completes, clocks off, receiver stopped. Every step is tried; the
// first error is returned.
func (c *Chip) Detach() error {
	c.pass.Lock()
	defer c.pass.Unlock()
	var first error
	for _, err := range []error{
		c.writeMAC16(RegEPPRCR, EPPRCRBulkZero|EPPRCRIPRL),
		c.writeMAC8(RegClkSelect, 0),
		c.writeMAC16(RegRCR, RCRStop),
	} {
		if first == nil {
			first = err
		}
	}
	return first
}
