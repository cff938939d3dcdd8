// Package malta holds the facts and the register-level code for the parts of
// QEMU's MIPS Malta board (PIIX4 south bridge, GT-64120, FPGA) that the
// bare-metal kernel needs at boot and in trap context, and provides the
// kernel's platform hooks (platform_mipsx.go) from them: the COM1 16550
// console, the i8259 interrupt-controller pair as the root interrupt
// controller, the MC146818 RTC (wall time), the i8254 PIT (to measure the
// CP0 Count rate) and the FPGA soft-reset register.
//
// Addresses are those after QEMU's -kernel stub has moved the GT-64120
// windows to the YAMON layout (ISA I/O at physical 0x18000000): QEMU
// hw/mips/malta.c writes that stub and models the FPGA registers; the
// south-bridge devices are QEMU's hw/isa/piix4.c, hw/isa/isa-superio.c
// (COM1), hw/intc/i8259.c, hw/timer/i8254_common.c and hw/rtc/mc146818rtc.c,
// and Linux's arch/mips/mti-malta/ drives the same board. All accesses are
// byte-wide through kseg1 (uncached), so they need no byte swapping on
// either endian. Every function here is nosplit and allocation-free: they
// run in trap context.
package malta

// Physical and kseg1 addresses (QEMU hw/mips/malta.c; SOFTRES_REG and
// GORESET in Linux's arch/mips/mti-malta/malta-reset.c, older trees).
const (
	// ISAIO is ISA I/O port 0 through kseg1: PA 0x18000000 (GT-64120
	// PCI0 I/O window after the -kernel stub).
	ISAIO = 0xb8000000
	// SoftReset is the FPGA SOFTRES register (PA 0x1F000500); writing
	// SoftResetMagic resets the board, or ends QEMU under -no-reboot.
	SoftReset      = 0xbf000500
	SoftResetMagic = 0x42
)

// ISA I/O ports (PC/AT conventions, PIIX4 + FDC37M817 super-I/O).
const (
	PortPIC1    = 0x20  // i8259 master: command/status
	PortPIC2    = 0xa0  // i8259 slave
	PortPIT0    = 0x40  // i8254 channel 0 counter
	PortPITCtl  = 0x43  // i8254 mode/command
	PortRTCIdx  = 0x70  // MC146818 index
	PortRTCData = 0x71  // MC146818 data
	PortCOM1    = 0x3f8 // 16550 UART, first -serial
)

// 16550 registers (offsets from PortCOM1) and bits.
const (
	uartRBR     = 0 // receive buffer (read)
	uartTHR     = 0 // transmit holding (write)
	uartIER     = 1
	uartIIR     = 2
	uartMCR     = 4
	uartLSR     = 5
	ierRDA      = 0x01 // receive data available interrupt
	mcrOUT2     = 0x08 // gates the IRQ on real PCs; QEMU ignores it
	mcrDTRRTS   = 0x03
	lsrDR       = 0x01 // data ready
	lsrTHRE     = 0x20 // transmit holding register empty
	uartTimeout = 1 << 16
)

// ISA interrupt lines (YAMON convention; FreeBSD sys/mips/malta/maltareg.h).
const (
	IRQPIT     = 0
	IRQCascade = 2
	IRQCOM2    = 3
	IRQCOM1    = 4
	IRQRTC     = 8
	IRQPCIAB   = 10 // pcnet on slot 11
	IRQPCICD   = 11 // PIIX4 UHCI
	NumIRQ     = 16
)

// CPU interrupt pins (Cause.IP bits).
const (
	CPUIPPIC   = 2 // i8259 master INT
	CPUIPTimer = 7 // CP0 Count/Compare
)

// PITHz is the i8254 input clock.
const PITHz = 1193182

// i8259 command words.
const (
	icw1Init  = 0x11 // ICW1: edge, cascade, ICW4 needed
	icw4_8086 = 0x01
	ocw3Poll  = 0x0c // poll command: next read returns 0x80|irq if pending
	ocw3IRR   = 0x0a // next read of the command port returns the request register
	ocw2SEOI  = 0x60 // specific EOI: | level (0-7)
)

// UARTPutc transmits c on COM1, polling THRE (bounded, so a dead UART cannot
// hang the kernel).
//
//go:nosplit
func UARTPutc(c byte) {
	for i := 0; i < uartTimeout; i++ {
		if Inb(PortCOM1+uartLSR)&lsrTHRE != 0 {
			break
		}
	}
	Outb(PortCOM1+uartTHR, c)
}

// UARTGetc returns a received byte if one is waiting.
//
//go:nosplit
func UARTGetc() (byte, bool) {
	if Inb(PortCOM1+uartLSR)&lsrDR == 0 {
		return 0, false
	}
	return Inb(PortCOM1 + uartRBR), true
}

// UARTEnableRX turns on the receive-data interrupt (COM1 → ISA IRQ4).
//
//go:nosplit
func UARTEnableRX() {
	Outb(PortCOM1+uartMCR, mcrDTRRTS|mcrOUT2)
	Outb(PortCOM1+uartIER, ierRDA)
	_ = Inb(PortCOM1 + uartIIR)
}

// PICInit programs the i8259 pair (vector bases 0 and 8, slave on IR2) and
// masks every line: at reset everything is unmasked and the PIT is already
// interrupting (QEMU hw/intc/i8259_common.c, pic_reset_common, clears IMR;
// hw/timer/i8254_common.c starts channel 0 at reset; QEMU 7.2 shows IP2
// pending at boot), so this must run before Status.IM2.
//
//go:nosplit
func PICInit() {
	Outb(PortPIC1, icw1Init)
	Outb(PortPIC1+1, 0x00)
	Outb(PortPIC1+1, 1<<IRQCascade)
	Outb(PortPIC1+1, icw4_8086)
	Outb(PortPIC2, icw1Init)
	Outb(PortPIC2+1, 0x08)
	Outb(PortPIC2+1, IRQCascade)
	Outb(PortPIC2+1, icw4_8086)
	PICSetMask(0xffff)
}

// PICSetMask writes both interrupt mask registers; bit n masks IRQ n.
//
//go:nosplit
func PICSetMask(m uint16) {
	Outb(PortPIC1+1, uint8(m))
	Outb(PortPIC2+1, uint8(m>>8))
}

// PICMask returns both interrupt mask registers (a read of the data port
// returns the IMR; QEMU hw/intc/i8259.c, pic_ioport_read).
//
//go:nosplit
func PICMask() uint16 {
	return uint16(Inb(PortPIC2+1))<<8 | uint16(Inb(PortPIC1+1))
}

// PICRequests returns both interrupt request registers (OCW3 read IRR).
//
//go:nosplit
func PICRequests() uint16 {
	Outb(PortPIC1, ocw3IRR)
	Outb(PortPIC2, ocw3IRR)
	return uint16(Inb(PortPIC2))<<8 | uint16(Inb(PortPIC1))
}

// PICPoll returns the highest-priority pending IRQ and acknowledges it (it
// enters the in-service register), or -1 if none is pending. It uses the
// OCW3 poll command, following the slave through the cascade.
//
//go:nosplit
func PICPoll() int {
	Outb(PortPIC1, ocw3Poll)
	v := Inb(PortPIC1)
	if v&0x80 == 0 {
		return -1
	}
	irq := int(v & 7)
	if irq != IRQCascade {
		return irq
	}
	Outb(PortPIC2, ocw3Poll)
	v = Inb(PortPIC2)
	if v&0x80 == 0 {
		// Spurious on the slave: the master still needs its EOI.
		Outb(PortPIC1, ocw2SEOI|IRQCascade)
		return -1
	}
	return 8 + int(v&7)
}

// ELCR ports and their writable bits (elcr_mask in QEMU's
// hw/intc/i8259_common.c, i8259_init_chip): IRQ 0-2 and 8, 13 are always
// edge-triggered.
const (
	PortELCR1 = 0x4d0
	PortELCR2 = 0x4d1
	elcr1Mask = 0xf8
	elcr2Mask = 0xde
)

// SetELCR selects level (bit set) or edge triggering for each IRQ.
//
//go:nosplit
func SetELCR(level uint16) {
	Outb(PortELCR1, uint8(level)&elcr1Mask)
	Outb(PortELCR2, uint8(level>>8)&elcr2Mask)
}

// ELCR returns the level-triggered lines (the ELCR ports read back, QEMU
// hw/intc/i8259.c, elcr_ioport_read).
//
//go:nosplit
func ELCR() uint16 {
	return uint16(Inb(PortELCR2))<<8 | uint16(Inb(PortELCR1))
}

// ELCRWritable are the lines whose trigger mode can be chosen: the others
// are edge-triggered only.
const ELCRWritable = elcr2Mask<<8 | elcr1Mask

// PICEOI ends the in-service period of irq: a specific EOI on the slave
// for its lines, then on the master for the line itself or the cascade.
// A specific EOI for a level that is not in service changes nothing
// (QEMU hw/intc/i8259.c clears that one ISR bit), so a repeated EOI is
// harmless, unlike a non-specific one, which would end whatever else is in
// service.
//
//go:nosplit
func PICEOI(irq int) {
	if irq >= 8 {
		Outb(PortPIC2, ocw2SEOI|uint8(irq&7))
		Outb(PortPIC1, ocw2SEOI|IRQCascade)
		return
	}
	Outb(PortPIC1, ocw2SEOI|uint8(irq&7))
}

// PITStart runs channel 0 as a free-running rate generator over 65536 counts.
//
//go:nosplit
func PITStart() {
	Outb(PortPITCtl, 0x34) // channel 0, lo/hi byte, mode 2, binary
	Outb(PortPIT0, 0)
	Outb(PortPIT0, 0)
}

// PITRead latches and returns channel 0's down-counter.
//
//go:nosplit
func PITRead() uint16 {
	Outb(PortPITCtl, 0x00)
	lo := Inb(PortPIT0)
	hi := Inb(PortPIT0)
	return uint16(hi)<<8 | uint16(lo)
}

// RTC register numbers (BCD, 24-hour mode, base year 2000 in QEMU).
const (
	rtcSec  = 0x00
	rtcMin  = 0x02
	rtcHour = 0x04
	rtcDay  = 0x07
	rtcMon  = 0x08
	rtcYear = 0x09
	rtcA    = 0x0a
	rtcB    = 0x0b
	rtcC    = 0x0c
	rtcUIP  = 0x80
	rtcBin  = 0x04 // register B: binary, not BCD
	rtcPIE  = 0x40 // register B: periodic interrupt enable
	rtcPF   = 0x40 // register C: periodic flag (cleared by reading C)
	// RTCTickHz is the periodic rate RTCTickStart selects (rate code 6).
	RTCTickHz = 1024
)

// RTCTickStart starts the RTC's periodic flag at RTCTickHz. The flag is
// only set while PIE is on (QEMU models this); IRQ8 stays masked at the
// i8259, so no interrupt is taken.
//
//go:nosplit
func RTCTickStart() {
	a := rtcRead(rtcA)
	rtcWrite(rtcA, a&0xf0|0x06)
	rtcWrite(rtcB, rtcRead(rtcB)|rtcPIE)
	_ = rtcRead(rtcC)
}

// RTCTickWait polls until the next periodic flag and reports whether it
// came (bounded, so a missing RTC cannot hang boot).
//
//go:nosplit
func RTCTickWait() bool {
	for i := 0; i < 1_000_000; i++ {
		if rtcRead(rtcC)&rtcPF != 0 {
			return true
		}
	}
	return false
}

// RTCTickStop turns the periodic flag off again.
//
//go:nosplit
func RTCTickStop() {
	rtcWrite(rtcB, rtcRead(rtcB)&^rtcPIE)
	_ = rtcRead(rtcC)
}

//go:nosplit
func rtcWrite(reg, v uint8) {
	Outb(PortRTCIdx, reg)
	Outb(PortRTCData, v)
}

//go:nosplit
func rtcRead(reg uint8) uint8 {
	Outb(PortRTCIdx, reg)
	return Inb(PortRTCData)
}

// RTCUnix reads the RTC and returns seconds since 1970-01-01 UTC.
//
//go:nosplit
func RTCUnix() int64 {
	for i := 0; i < 100000 && rtcRead(rtcA)&rtcUIP != 0; i++ {
	}
	bin := rtcRead(rtcB)&rtcBin != 0
	conv := func(v uint8) int64 {
		if bin {
			return int64(v)
		}
		return int64(v>>4)*10 + int64(v&15)
	}
	sec, min, hour := conv(rtcRead(rtcSec)), conv(rtcRead(rtcMin)), conv(rtcRead(rtcHour))
	day, mon, year := conv(rtcRead(rtcDay)), conv(rtcRead(rtcMon)), conv(rtcRead(rtcYear))+2000
	return DaysSinceEpoch(year, mon, day)*86400 + hour*3600 + min*60 + sec
}

// DaysSinceEpoch converts a proleptic Gregorian date to days since 1970-01-01.
//
//go:nosplit
func DaysSinceEpoch(y, m, d int64) int64 {
	// Shift the year to start in March so the leap day is last.
	if m <= 2 {
		y--
		m += 12
	}
	era := y / 400
	yoe := y - era*400
	doy := (153*(m-3)+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// Reset resets the board; under QEMU -no-reboot this ends the emulator.
//
//go:nosplit
func Reset() { store32(SoftReset, SoftResetMagic) }
