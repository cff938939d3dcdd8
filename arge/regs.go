package arge

// MAC register offsets and bits. Sources: FreeBSD sys/mips/atheros/
// ar71xxreg.h (AR71XX_MAC_*, AR71XX_DMA_*), if_arge.c; Linux drivers/net/
// ethernet/atheros/ag71xx.c (AG71XX_REG_*).
const (
	RegMACCfg1      = 0x000
	RegMACCfg2      = 0x004
	RegIFG          = 0x008
	RegHDuplex      = 0x00C
	RegMaxFrameLen  = 0x010
	RegMIICfg       = 0x020
	RegMIICmd       = 0x024
	RegMIIAddr      = 0x028
	RegMIIControl   = 0x02C
	RegMIIStatus    = 0x030
	RegMIIIndicator = 0x034
	RegIFControl    = 0x038
	RegStaAddr1     = 0x040
	RegStaAddr2     = 0x044
	RegFIFOCfg0     = 0x048
	RegFIFOCfg1     = 0x04C
	RegFIFOCfg2     = 0x050
	RegFIFOCfg3     = 0x054
	RegFIFOCfg4     = 0x058 // RX filter match
	RegFIFOCfg5     = 0x05C // RX filter mask
	RegMIBFirst     = 0x080
	RegMIBLast      = 0x12C
	RegTXCtrl       = 0x180
	RegTXDesc       = 0x184
	RegTXStatus     = 0x188
	RegRXCtrl       = 0x18C
	RegRXDesc       = 0x190
	RegRXStatus     = 0x194
	RegIntEnable    = 0x198
	RegIntStatus    = 0x19C
)

// MAC_CFG1.
const (
	Cfg1TXEnable     = 1 << 0
	Cfg1SyncTX       = 1 << 1
	Cfg1RXEnable     = 1 << 2
	Cfg1SyncRX       = 1 << 3
	Cfg1TXFlowCtl    = 1 << 4
	Cfg1RXFlowCtl    = 1 << 5
	Cfg1Loopback     = 1 << 8
	Cfg1TXFuncReset  = 1 << 16
	Cfg1RXFuncReset  = 1 << 17
	Cfg1TXBlockReset = 1 << 18
	Cfg1RXBlockReset = 1 << 19
	Cfg1SimulReset   = 1 << 30
	Cfg1SoftReset    = 1 << 31
)

// MAC_CFG2.
const (
	Cfg2FullDuplex    = 1 << 0
	Cfg2CRCEnable     = 1 << 1
	Cfg2PadCRC        = 1 << 2
	Cfg2LenCheck      = 1 << 4
	Cfg2HugeFrame     = 1 << 5
	Cfg2IfModeMask    = 3 << 8
	Cfg2IfMode10_100  = 1 << 8 // nibble mode
	Cfg2IfMode1000    = 2 << 8 // byte mode
	Cfg2PreambleShift = 12
)

// MII management.
const (
	MIICfgReset     = 1 << 31
	MIICmdRead      = 1 << 0
	MIICmdScan      = 1 << 1
	MIIAddrPHYShift = 8
	MIIIndBusy      = 1 << 0
	MIIIndScanning  = 1 << 1
	MIIIndNotValid  = 1 << 2
	MIIIndAll       = MIIIndBusy | MIIIndScanning | MIIIndNotValid
)

// IFCONTROL.
const IFControlSpeed100 = 1 << 16

// FIFO_CFG0 module enables, written at shift 8.
const FIFOCfg0All = 0x1F << 8

// FIFO_CFG4 (RX filter match) default: every bit except unicast (17) and
// truncated (16) (FreeBSD FIFO_RX_FILTMATCH_DEFAULT).
const FIFOCfg4Default = 0x0000FFFF

// FIFO_CFG5 (RX filter mask): default sets every bit except length
// mismatch (4), unsupported opcode (12) and BYTE_MODE (19) (FreeBSD
// FIFO_RX_FILTMASK_DEFAULT); BYTE_MODE is set at 1000 Mbit/s only.
const (
	FIFOCfg5ByteMode = 1 << 19
	FIFOCfg5Default  = 0x0007FFFF &^ (1<<4 | 1<<12)
)

// DMA status and interrupt bits.
const (
	TXCtrlEnable = 1 << 0
	RXCtrlEnable = 1 << 0

	TXStatusPktSent  = 1 << 0
	TXStatusUnderrun = 1 << 1
	TXStatusBusError = 1 << 3
	RXStatusPktRecvd = 1 << 0
	RXStatusOverflow = 1 << 2 // bit 2; an old FreeBSD header said bit 1 (wrong)
	RXStatusBusError = 1 << 3
	StatusCountShift = 16
	StatusCountMask  = 0xFF << StatusCountShift

	IntTXPktSent  = 1 << 0
	IntTXUnderrun = 1 << 1
	IntTXBusError = 1 << 3
	IntRXPktRecvd = 1 << 4
	IntRXOverflow = 1 << 6
	IntRXBusError = 1 << 7
	IntAll        = IntTXPktSent | IntTXUnderrun | IntTXBusError | IntRXPktRecvd | IntRXOverflow | IntRXBusError
)

// Descriptor layout: four big-endian 32-bit words (the MAC's native order).
const (
	DescSize      = 16
	DescBuf       = 0
	DescCtrl      = 4
	DescNext      = 8
	DescEmpty     = 1 << 31 // owned by software
	DescMore      = 1 << 24 // another fragment of this frame follows
	descFlagsMask = DescEmpty | DescMore
)
