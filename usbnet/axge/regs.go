package axge

// The AX88179/AX88178A register map. Every fact here is from FreeBSD's
// sys/dev/usb/net/if_axgereg.h and Linux's drivers/net/usb/ax88179_178a.c
// (register offsets, bit values, the bulk-in control table); the names
// follow FreeBSD's where both drivers have one.

// Vendor requests (bRequest) on endpoint 0. MAC access: wValue = register,
// wIndex = wLength = byte count. PHY access: wValue = PHY address, wIndex =
// PHY register, 2 data bytes. Multi-byte values are little-endian.
const (
	ReqAccessMAC    = 0x01 // AXGE_ACCESS_MAC
	ReqAccessPHY    = 0x02 // AXGE_ACCESS_PHY
	ReqAccessEEPROM = 0x04 // AXGE_ACCESS_EEPROM
	ReqFirmwareMode = 0x08 // AXGE_FW_MODE (AX88179A only)
)

// Firmware modes of the AX88179A (wValue of ReqFirmwareMode). The driver
// parses the 178A/179 RX header layout, so it always selects compatible
// mode (FreeBSD's axge_chip_init does the same after every chip init).
const (
	FirmwareCompat = 0 // 178A/179-compatible packet headers
	FirmwareNative = 1 // 179A native headers (larger, incompatible)
)

// PHYAddr is the internal PHY's MDIO address (AXGE_PHY_ADDR).
const PHYAddr = 3

// MAC registers (byte offsets in the ACCESS_MAC space).
const (
	RegPLSR       = 0x02 // physical link status: USB speed of the upstream port
	RegRCR        = 0x0B // RX control, 16 bits
	RegNIDR       = 0x10 // node ID (MAC address), 6 bytes
	RegMFA        = 0x16 // multicast hash, 8 bytes
	RegMSR        = 0x22 // medium status, 16 bits
	RegMMSR       = 0x24 // monitor mode (wake-up sources)
	RegEPPRCR     = 0x26 // PHY power and reset control, 16 bits
	RegBulkInQCtl = 0x2E // RX_BULKIN_QCTRL, 5 bytes {ctrl, timer lo, timer hi, size, ifg}
	RegClkSelect  = 0x33 // clock select
	RegCRCR       = 0x34 // RX checksum offload control
	RegCTCR       = 0x35 // TX checksum offload control
	RegPWLHR      = 0x54 // pause water level high
	RegPWLLR      = 0x55 // pause water level low
)

// PLSR: the speed of the USB link the chip is attached with.
const (
	PLSRUSBFull  = 0x01 // USB_FS
	PLSRUSBHigh  = 0x02 // USB_HS
	PLSRUSBSuper = 0x04 // USB_SS
)

// RCR bits.
const (
	RCRStop        = 0x0000
	RCRPromisc     = 0x0001
	RCRAllMulti    = 0x0002 // ACPT_ALL_MCAST
	RCRBroadcast   = 0x0008 // ACPT_BCAST
	RCRMulticast   = 0x0010 // ACPT_MCAST: through the MFA hash
	RCRStart       = 0x0080
	RCRDropCRCErr  = 0x0100
	RCRIPAlignment = 0x0200 // IPE: 2-byte pad before each frame; left off
)

// MSR bits.
const (
	MSRGigabit    = 0x0001 // GM
	MSRFullDuplex = 0x0002 // FD
	MSREn125MHz   = 0x0008
	MSRRxFlowCtl  = 0x0010 // RFC
	MSRTxFlowCtl  = 0x0020 // TFC
	MSRRxEnable   = 0x0100 // RE
	MSR100        = 0x0200 // PS
)

// MSRDefault is what init writes before the first link: gigabit full
// duplex with flow control, receiver on (FreeBSD axge_init, Linux reset).
const MSRDefault = MSRGigabit | MSRFullDuplex | MSRRxFlowCtl | MSRTxFlowCtl | MSRRxEnable

// EPPRCR bits.
const (
	EPPRCRBulkZero = 0x0010 // BZ: bulk-in returns zero-length packets
	EPPRCRIPRL     = 0x0020 // internal PHY reset released
)

// CLK_SELECT bits.
const (
	ClkBCS = 0x01
	ClkACS = 0x02
)

// Checksum offload bits (CRCR and CTCR share the layout).
const (
	CsumIP  = 0x01
	CsumTCP = 0x02
	CsumUDP = 0x04
)

// Pause water levels both drivers write.
const (
	PauseHigh = 0x52
	PauseLow  = 0x34
)

// PHY registers and PHYSR bits (the internal PHY's vendor status
// register, read by Linux's ax88179_link_reset).
const (
	PHYRegBMCR   = 0x00 // basic mode control (IEEE 802.3 clause 22)
	PHYRegANLPAR = 0x05 // link partner ability (IEEE 802.3 clause 28)
	PHYRegPHYSR  = 0x11

	ANLPARPause = 0x0400 // partner can pause (IEEE 802.3 annex 28B, bit 10)

	BMCRAutoneg        = 0x1000
	BMCRRestartAutoneg = 0x0200

	PHYSRSpeedMask = 0xC000
	PHYSRSpeed1000 = 0x8000
	PHYSRSpeed100  = 0x4000
	PHYSRSpeed10   = 0x0000
	PHYSRFull      = 0x2000
	PHYSRLink      = 0x0400
)

// BulkInCtl is one RX_BULKIN_QCTRL setting: the chip aggregates received
// frames into one bulk-in transfer until it holds about Size KiB or Timer
// expires (field meanings from the register's name and Linux's use of
// Size for its URB size; neither driver documents them further).
type BulkInCtl [5]byte

// Timer is the flush timer field (little-endian 16 bits).
func (b BulkInCtl) Timer() uint16 { return uint16(b[1]) | uint16(b[2])<<8 }

// SizeKiB is the size field.
func (b BulkInCtl) SizeKiB() int { return int(b[3]) }

// The bulk-in control table (axge_bulk_size[] / AX88179_BULKIN_SIZE[]).
var (
	BulkInSuper1000 = BulkInCtl{7, 0x4f, 0x00, 0x12, 0xff} // also the power-on default
	BulkInHigh1000  = BulkInCtl{7, 0x20, 0x03, 0x16, 0xff}
	BulkIn100       = BulkInCtl{7, 0xae, 0x07, 0x18, 0xff}
	BulkInSlow      = BulkInCtl{7, 0xcc, 0x4c, 0x18, 0x08} // 10 Mb/s, or any speed on a full-speed port
)

// BulkInFor picks the table entry by Ethernet speed and the USB speed in
// PLSR (FreeBSD axge_miibus_statchg, Linux ax88179_link_reset).
func BulkInFor(speedMbps int, plsr uint8) BulkInCtl {
	switch {
	case speedMbps == 1000 && plsr&PLSRUSBSuper != 0:
		return BulkInSuper1000
	case speedMbps == 1000 && plsr&PLSRUSBHigh != 0:
		return BulkInHigh1000
	case speedMbps == 100 && plsr&(PLSRUSBSuper|PLSRUSBHigh) != 0:
		return BulkIn100
	}
	return BulkInSlow
}

// Media is the link as the PHY's status register describes it.
type Media struct {
	Up         bool
	SpeedMbps  int
	FullDuplex bool
	// Pause: the link partner can pause (full duplex only); MSR's
	// flow-control bits follow it.
	Pause bool
}

// DecodePHYSR reads the link out of a PHYSR value.
func DecodePHYSR(sr uint16) Media {
	if sr&PHYSRLink == 0 {
		return Media{}
	}
	m := Media{Up: true, FullDuplex: sr&PHYSRFull != 0, SpeedMbps: 10}
	switch sr & PHYSRSpeedMask {
	case PHYSRSpeed1000:
		m.SpeedMbps = 1000
	case PHYSRSpeed100:
		m.SpeedMbps = 100
	}
	return m
}

// MSRFor is the medium status word for an up link (statchg): receiver on,
// duplex, flow control when pause was negotiated (FreeBSD; Linux always
// enables it with full duplex), and the speed bits.
func MSRFor(m Media) uint16 {
	msr := uint16(MSRRxEnable)
	if m.FullDuplex {
		msr |= MSRFullDuplex
		if m.Pause {
			msr |= MSRTxFlowCtl | MSRRxFlowCtl
		}
	}
	switch m.SpeedMbps {
	case 1000:
		msr |= MSRGigabit | MSREn125MHz
	case 100:
		msr |= MSR100
	}
	return msr
}
