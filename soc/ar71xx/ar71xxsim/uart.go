package ar71xxsim

import (
	"fmt"

	"github.com/gowrt/gowrt/hwsim"
	"github.com/gowrt/gowrt/soc/ar71xx"
)

// The model's own register facts for the console UART (FreeBSD
// sys/mips/atheros/uart_cpu_ar71xx.c: an ns8250 with registers 4 bytes
// apart; ar933x_uart.h for the AR933x's own UART).
const (
	u16550RBR    = 0x00 // receive buffer (read) / transmit holding (write)
	u16550IER    = 0x04
	u16550LSR    = 0x14
	u16550IERRDA = 1 << 0
	u16550LSRDR  = 1 << 0
	u16550LSRTHR = 1 << 5 // THRE
	u16550LSRTE  = 1 << 6 // TEMT

	u933xData   = 0x00
	u933xCS     = 0x04
	u933xInt    = 0x0C
	u933xIntEn  = 0x10
	u933xRXCSR  = 1 << 8
	u933xTXCSR  = 1 << 9
	u933xHostEn = 1 << 13
	u933xRXVal  = 1 << 0

	uartBusyReads = 2 // status reads a transmitted byte keeps the transmitter busy for
)

// UART models the console UART at 0x1802_0000: a 16550 on a 4-byte stride,
// or the AR933x's own UART, per chip. Received bytes (Type) raise MISC
// line 3 while the receive interrupt is enabled and data is waiting.
//
// Hazard reproduced: the transmitter stays busy for a few status reads
// after each byte; a byte written while it is busy is lost and reported
// (a console that does not wait for THRE / TX_CSR garbles its output).
type UART struct {
	sys   *hwsim.System
	reset *Reset
	is933 bool

	rx    []byte
	out   []byte
	busy  int
	ier   uint32 // 16550 IER, or AR933x INT_EN
	cs    uint32 // AR933x CS
	intSt uint32 // AR933x INT (RX_VALID latched)
	regs  Regs

	// Overruns counts bytes lost to writes while the transmitter was busy.
	Overruns int
}

func newUART(sys *hwsim.System, info *ar71xx.Info, reset *Reset) *UART {
	return &UART{sys: sys, reset: reset, is933: info.Family == ar71xx.AR933x}
}

// Type queues bytes as if typed on the console.
func (u *UART) Type(p []byte) {
	u.sys.Do(func() {
		u.rx = append(u.rx, p...)
		if u.is933 {
			u.intSt |= u933xRXVal
		}
		u.update()
	})
}

// Output returns what was transmitted so far.
func (u *UART) Output() []byte {
	var b []byte
	u.sys.Do(func() { b = append(b, u.out...) })
	return b
}

// update drives MISC line 3 (UART) from the receive state (lock held).
func (u *UART) update() {
	var on bool
	if u.is933 {
		on = u.intSt&u.ier&u933xRXVal != 0 && u.cs&u933xHostEn != 0
	} else {
		on = len(u.rx) > 0 && u.ier&u16550IERRDA != 0
	}
	if on {
		u.reset.RaiseMisc(ar71xx.MiscUART)
	} else {
		u.reset.LowerMisc(ar71xx.MiscUART)
	}
}

func (u *UART) transmit(c byte) {
	if u.busy > 0 {
		u.Overruns++
		u.sys.Report(hwsim.Misuse{Kind: hwsim.ModelRule, Addr: 0, Region: "uart",
			Detail: fmt.Sprintf("byte %q written while the transmitter was busy: lost", c)})
		return
	}
	u.out = append(u.out, c)
	u.busy = uartBusyReads
}

func (u *UART) ReadReg(off uint32, width int) uint32 {
	if u.is933 {
		switch off {
		case u933xData:
			v := uint32(0)
			if u.busy > 0 {
				u.busy--
			} else {
				v |= u933xTXCSR
			}
			if len(u.rx) > 0 {
				v |= u933xRXCSR | uint32(u.rx[0])
			}
			return v
		case u933xCS:
			return u.cs
		case u933xInt:
			return u.intSt
		case u933xIntEn:
			return u.ier
		}
		return u.regs.ReadReg(off, width)
	}
	switch off {
	case u16550RBR:
		if len(u.rx) == 0 {
			return 0
		}
		c := u.rx[0]
		u.rx = u.rx[1:]
		u.update()
		return uint32(c)
	case u16550IER:
		return u.ier
	case u16550LSR:
		v := uint32(0)
		if len(u.rx) > 0 {
			v |= u16550LSRDR
		}
		if u.busy > 0 {
			u.busy--
		} else {
			v |= u16550LSRTHR | u16550LSRTE
		}
		return v
	}
	return u.regs.ReadReg(off, width)
}

func (u *UART) WriteReg(off uint32, width int, val uint32) {
	if u.is933 {
		switch off {
		case u933xData:
			if val&u933xRXCSR != 0 && len(u.rx) > 0 { // pop
				u.rx = u.rx[1:]
			}
			if val&u933xTXCSR != 0 {
				u.transmit(byte(val))
			}
			if len(u.rx) > 0 {
				u.intSt |= u933xRXVal // still data: RX_VALID latches again
			}
			u.update()
			return
		case u933xCS:
			u.cs = val
			u.update()
			return
		case u933xInt: // write 1 to clear
			u.intSt &^= val
			if len(u.rx) > 0 {
				u.intSt |= u933xRXVal
			}
			u.update()
			return
		case u933xIntEn:
			u.ier = val
			u.update()
			return
		}
		u.regs.WriteReg(off, width, val)
		return
	}
	switch off {
	case u16550RBR:
		u.transmit(byte(val))
		return
	case u16550IER:
		u.ier = val
		u.update()
		return
	}
	u.regs.WriteReg(off, width, val)
}
