package argesim

// The model's own copy of the MAC's register facts, so that a wrong
// constant in the driver (package arge) is caught by the model instead of
// shared with it. Sources: FreeBSD sys/mips/atheros/ar71xxreg.h
// (AR71XX_MAC_*, AR71XX_DMA_*) and if_argevar.h; Linux
// drivers/net/ethernet/atheros/ag71xx.c (AG71XX_REG_*, the descriptor
// layout, and the ethtool statistics table for the MIB).

// Register offsets.
const (
	regMACCfg1      = 0x000
	regMACCfg2      = 0x004
	regMaxFrameLen  = 0x010
	regMIICmd       = 0x024
	regMIIAddr      = 0x028
	regMIIControl   = 0x02C
	regMIIStatus    = 0x030
	regMIIIndicator = 0x034
	regIFControl    = 0x038
	regFIFOCfg5     = 0x05C
	regMIBFirst     = 0x080 // the MIB counters, one word each, in mibBits order
	regMIBLast      = 0x12C
	regTXCtrl       = 0x180
	regTXDesc       = 0x184
	regTXStatus     = 0x188
	regRXCtrl       = 0x18C
	regRXDesc       = 0x190
	regRXStatus     = 0x194
	regIntEnable    = 0x198
	regIntStatus    = 0x19C
)

// MAC_CFG1, MAC_CFG2, IFCONTROL, FIFO_CFG5.
const (
	cfg1TXEnable     = 1 << 0
	cfg1RXEnable     = 1 << 2
	cfg1SoftReset    = 1 << 31
	cfg2FullDuplex   = 1 << 0
	cfg2IfModeMask   = 3 << 8
	cfg2IfMode10_100 = 1 << 8 // nibble mode
	cfg2IfMode1000   = 2 << 8 // byte mode
	ifControlSpd100  = 1 << 16
	fifoCfg5ByteMode = 1 << 19
)

// MII management.
const (
	miiCmdRead      = 1 << 0
	miiAddrPHYShift = 8
	miiIndBusy      = 1 << 0
)

// DMA control, status and interrupt bits.
const (
	txCtrlEnable     = 1 << 0
	rxCtrlEnable     = 1 << 0
	txStatusPktSent  = 1 << 0
	txStatusUnderrun = 1 << 1
	txStatusBusError = 1 << 3
	rxStatusPktRecvd = 1 << 0
	rxStatusOverflow = 1 << 2
	rxStatusBusError = 1 << 3
	statusCountShift = 16 // the packet count in bits 23:16

	intTXPktSent  = 1 << 0
	intRXPktRecvd = 1 << 4
	intRXOverflow = 1 << 6
	intRXBusError = 1 << 7
)

// Descriptor layout: four 32-bit words in the MAC's (big-endian) order.
const (
	descBuf   = 0
	descCtrl  = 4
	descNext  = 8
	descEmpty = 1 << 31 // owned by software
	descMore  = 1 << 24 // another fragment of this frame follows
)

// mibBits is the width of each MIB counter field, in register order from
// regMIBFirst (tx_rx_64 .. tx_fragments); the counters wrap at it.
var mibBits = [...]uint8{
	18, 18, 18, 18, 18, 18, 18, // tx_rx_64 .. tx_rx_1519_1522
	24, 18, 12, 18, 22, 18, 12, 12, 12, 16, 12, 12, // rx_bytes .. rx_carrier_sense_errors
	12, 12, 12, 12, 12, // rx_undersize, rx_oversize, rx_fragments, rx_jabber, rx_dropped
	24, 18, 18, 18, 12, 12, 12, 12, 12, 12, 12, 13, 12, 12, 12, 12, 12, 12, 12, 12, // tx_bytes .. tx_fragments
}

// The model's MIB writes use the counters by index; the table must cover
// the whole register range.
var _ [(regMIBLast-regMIBFirst)/4 + 1]struct{} = [len(mibBits)]struct{}{}
