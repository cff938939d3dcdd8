package uhci

// Register offsets in the I/O BAR (Universal Host Controller Interface
// Design Guide rev 1.1, §2.1, Table 1). Every register is little-endian;
// USBCMD..FRNUM and PORTSC are 16 bits wide, FRBASEADD 32, SOFMOD 8.
const (
	regUSBCMD    = 0x00
	regUSBSTS    = 0x02
	regUSBINTR   = 0x04
	regFRNUM     = 0x06
	regFRBASEADD = 0x08
	regSOFMOD    = 0x0c
	regPORTSC1   = 0x10 // PORTSC2 follows at 0x12

	// RegSize is the size of the I/O BAR (PCI BAR4 of the PIIX4 function 2).
	RegSize = 0x20
)

// USBCMD bits (Design Guide §2.1.1).
const (
	cmdRS      = 0x0001 // Run/Stop
	cmdHCRESET = 0x0002 // Host Controller Reset, self-clearing
	cmdGRESET  = 0x0004 // Global Reset: drives USB reset on every port
	cmdEGSM    = 0x0008 // Enter Global Suspend Mode
	cmdFGR     = 0x0010 // Force Global Resume
	cmdSWDBG   = 0x0020 // Software Debug (single-step)
	cmdCF      = 0x0040 // Configure Flag (software semaphore)
	cmdMAXP    = 0x0080 // Max Packet for full-speed bandwidth reclamation: 1 = 64 bytes
)

// USBSTS bits (§2.1.2), write one to clear.
const (
	stsUSBINT = 0x0001 // a TD with IOC completed, or a short packet was detected
	stsERRINT = 0x0002 // a transaction failed (error counter ran out, babble, stall...)
	stsRD     = 0x0004 // Resume Detect
	stsHSE    = 0x0008 // Host System Error (PCI): the controller halted
	stsHCPE   = 0x0010 // Host Controller Process Error: the schedule was corrupt; halted
	stsHCH    = 0x0020 // HCHalted
	stsAll    = stsUSBINT | stsERRINT | stsRD | stsHSE | stsHCPE
)

// USBINTR bits (§2.1.3).
const (
	intrTOCRC  = 0x0001 // timeout/CRC interrupt enable
	intrResume = 0x0002
	intrIOC    = 0x0004
	intrSP     = 0x0008 // short packet interrupt enable
)

// FRNUM and the frame list (§2.1.4, §3.1).
const (
	frnumMask     = 0x07ff // 11-bit frame counter; bits 9:0 index the list
	frameListLen  = 1024
	frameListSize = frameListLen * 4
	frameListAlgn = 4096
	sofmodDefault = 64 // 1 ms frames at 12 MHz (§2.1.6)
)

// PORTSC bits (§2.1.7). CSC and PEC are write-one-to-clear, so a
// read-modify-write of PORTSC masks them out (portWriteMask) unless it
// means to clear them. Bits 10 and 11 are Intel's over-current
// indicator and change (reserved in rev 1.1, used by the PIIX4 and
// later: Linux drivers/usb/host/uhci-hcd.h USBPORTSC_OC/OCC).
const (
	portCCS  = 0x0001 // Current Connect Status
	portCSC  = 0x0002 // Connect Status Change (W1C)
	portPE   = 0x0004 // Port Enabled
	portPEC  = 0x0008 // Port Enable Change (W1C)
	portRD   = 0x0040 // Resume Detect
	portLSDA = 0x0100 // Low Speed Device Attached
	portPR   = 0x0200 // Port Reset
	portOC   = 0x0400 // over-current (PIIX4)
	portOCC  = 0x0800 // over-current change (W1C, PIIX4)
	portSUSP = 0x1000 // Suspend

	portW1C       = portCSC | portPEC | portOCC
	portWriteMask = portPE | portRD | portPR | portSUSP // bits a RMW may carry
)

// Link pointers: frame list entries, QH head/element, TD link (§3.1, §3.2.1, §3.3.1).
const (
	linkT  = 0x1 // Terminate: the pointer is not valid
	linkQH = 0x2 // Q: the pointer names a QH, not a TD
	linkVF = 0x4 // Vf (TD link only): depth first, stay in this QH
)

// TD layout (§3.2): four little-endian words.
const (
	tdLink   = 0
	tdCtrl   = 4
	tdToken  = 8
	tdBuffer = 12
	tdSize   = 16
	qhHead   = 0
	qhElem   = 4
	qhSize   = 16
)

// TD control and status (§3.2.2).
const (
	ctrlActLen   = 0x000007ff // actual length - 1 (0x7ff: zero bytes)
	ctrlBitstuff = 1 << 17
	ctrlCRCTO    = 1 << 18 // CRC or timeout: no valid handshake
	ctrlNAK      = 1 << 19
	ctrlBabble   = 1 << 20
	ctrlDBE      = 1 << 21 // data buffer error (over/underrun)
	ctrlStalled  = 1 << 22
	ctrlActive   = 1 << 23
	ctrlIOC      = 1 << 24
	ctrlIOS      = 1 << 25
	ctrlLS       = 1 << 26 // low-speed device
	ctrlCErr3    = 3 << 27 // error counter: 3 retries before giving up
	ctrlSPD      = 1 << 29 // short packet detect
	ctrlErrors   = ctrlBitstuff | ctrlCRCTO | ctrlBabble | ctrlDBE | ctrlStalled
)

// TD token (§3.2.3).
const (
	pidSETUP       = 0x2d
	pidIN          = 0x69
	pidOUT         = 0xe1
	tokenAddrShift = 8
	tokenEPShift   = 15
	tokenToggle    = 1 << 19
	tokenLenShift  = 21 // maximum length - 1; 0x7ff: zero-length packet
	maxLenNull     = 0x7ff
)
