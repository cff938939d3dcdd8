package pcnet

// Register map, 16-bit I/O mode (WIO), offsets from BAR0. AMD Am79C970A
// (PCnet-PCI II) datasheet, "I/O Resources"; QEMU hw/net/pcnet-pci.c.
const (
	regAPROM = 0x00 // 16 bytes of address PROM: station address in 0..5
	regRDP   = 0x10 // register data port (CSRs)
	regRAP   = 0x12 // register address port
	regReset = 0x14 // a read resets the chip
	regBDP   = 0x16 // bus configuration register data port
	// RegSize is the I/O BAR's size.
	RegSize = 0x20
)

// CSR numbers and bits (Am79C970A datasheet, "Control and Status
// Registers").
const (
	csr0     = 0  // controller status
	csr1     = 1  // init block address, low 16 bits
	csr2     = 2  // init block address, high 16 bits
	csr3     = 3  // interrupt masks and deferral control
	csr4     = 4  // test and features
	csr88    = 88 // chip ID, low
	csr89    = 89 // chip ID, high
	bcr4     = 4  // LED0 / link status
	bcr20    = 20 // software style
	csr0ERR  = 0x8000
	csr0BABL = 0x4000 // babble (transmitter on too long)
	csr0CERR = 0x2000 // collision error
	csr0MISS = 0x1000 // missed frame: no RX descriptor
	csr0MERR = 0x0800 // memory error (bus master timeout)
	csr0RINT = 0x0400
	csr0TINT = 0x0200
	csr0IDON = 0x0100
	csr0INTR = 0x0080 // read-only: an interrupt cause is set
	csr0IENA = 0x0040
	csr0RXON = 0x0020
	csr0TXON = 0x0010
	csr0TDMD = 0x0008
	csr0STOP = 0x0004
	csr0STRT = 0x0002
	csr0INIT = 0x0001
	// csr0Causes are the write-one-to-clear cause bits.
	csr0Causes = csr0BABL | csr0CERR | csr0MISS | csr0MERR | csr0RINT | csr0TINT | csr0IDON

	bcr4LinkStatus = 0x8000 // LEDOUT of LED0, which defaults to link status
	// bcr20Style2 selects SWSTYLE 2: 32-bit PCnet-PCI descriptors and init
	// block (SSIZE32 follows).
	bcr20Style2 = 0x0002
)

// Chip part IDs (CSR88/89 bits 27:12) of the PCnet-PCI family members this
// driver has been written against; QEMU emulates 0x2621.
var knownParts = map[uint16]string{
	0x2621: "Am79C970A PCnet-PCI II",
	0x2623: "Am79C971 PCnet-FAST",
	0x2625: "Am79C973 PCnet-FAST III",
}

// Descriptors, SWSTYLE 2: 16 bytes, little-endian, 16-byte aligned
// (datasheet "Descriptor Rings"; QEMU pcnet.c).
const (
	descSize = 16
	dAddr    = 0 // buffer address
	dCtl     = 4 // BCNT (low 16: two's complement, ONES nibble 0xF) | status (high 16)
	dMisc    = 8 // RX: message byte count (bits 11:0); TX: error bits, summed up by ERR
	descOWN  = 0x8000
	descERR  = 0x4000
	descSTP  = 0x0200
	descENP  = 0x0100
	rxFRAM   = 0x2000
	rxOFLO   = 0x1000
	rxCRC    = 0x0800
	rxBUFF   = 0x0400
	txMORE   = 0x1000
	txONE    = 0x0800
	txDEF    = 0x0400
	bcntOnes = 0xf000
	mcntMask = 0x0fff
)

// Init block, SSIZE32: 28 bytes, little-endian, 4-byte aligned.
const (
	initSize = 28
	ibMode   = 0  // MODE (16) | RLEN<<4 (8) | TLEN<<4 (8)
	ibPADR   = 4  // station address, 6 bytes, then 2 reserved
	ibLADRF  = 12 // logical (multicast hash) address filter, 8 bytes
	ibRDRA   = 20
	ibTDRA   = 24
	// modePROM (MODE bit 15, = CSR15) receives every frame.
	modePROM = 0x8000
)
