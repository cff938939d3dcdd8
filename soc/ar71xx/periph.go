package ar71xx

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/gowrt/gowrt/barrier"
)

// 16550 registers as the AR71xx family lays them out: register n at byte
// offset 4*n (FreeBSD uart_cpu_ar71xx.c uses ns8250 with regshft 2). Each
// is accessed as a 32-bit word whose low byte is the 8-bit register, which
// is byte-lane correct on the big-endian bus without the "+3" trick the
// FreeBSD hints need for 8-bit accesses.
const (
	UARTRBR     = 0x00 // receive buffer (read) / THR (write)
	UARTIER     = 0x04
	UARTLSR     = 0x14 // FreeBSD ar71xxreg.h AR71XX_UART_LSR
	UARTLSRDR   = 1 << 0
	UARTLSRTHRE = 1 << 5
	UARTLSRTEMT = 1 << 6
)

// AR933x UART registers (FreeBSD ar933x_uart.h).
const (
	UART933xData      = 0x00
	UART933xDataRXCSR = 1 << 8 // RX data valid; write it to pop the byte
	UART933xDataTXCSR = 1 << 9 // TX ready; write it with the byte to send
	UART933xCS        = 0x04
	UART933xClock     = 0x08
	UART933xInt       = 0x0C
	UART933xIntEn     = 0x10
)

// UART is the console UART in polled mode, for either UART kind.
type UART struct {
	kind  UARTKind
	r     barrier.Space
	mu    sync.Mutex
	tries int
}

// ErrUARTBusy is returned when the transmitter never became ready.
var ErrUARTBusy = errors.New("ar71xx: UART transmitter stuck")

// NewUART returns the console UART of the SoC described by info.
func NewUART(info *Info, r barrier.Space) *UART {
	return &UART{kind: info.UART, r: r, tries: 1 << 20}
}

// Write sends p, polling for transmitter space before every byte.
func (u *UART) Write(p []byte) (int, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for i, c := range p {
		switch u.kind {
		case UART933x:
			if _, ok := barrier.Poll32(u.r, UART933xData, UART933xDataTXCSR, UART933xDataTXCSR, u.tries); !ok {
				return i, ErrUARTBusy
			}
			u.r.Write32(UART933xData, uint32(c)|UART933xDataTXCSR)
		default:
			if _, ok := barrier.Poll32(u.r, UARTLSR, UARTLSRTHRE, UARTLSRTHRE, u.tries); !ok {
				return i, ErrUARTBusy
			}
			u.r.Write32(UARTRBR, uint32(c))
		}
	}
	u.r.Barrier()
	return len(p), nil
}

// Receive returns a received byte, or ok=false when none is waiting.
func (u *UART) Receive() (b byte, ok bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.r.Barrier()
	switch u.kind {
	case UART933x:
		v := u.r.Read32(UART933xData)
		if v&UART933xDataRXCSR == 0 {
			return 0, false
		}
		u.r.Write32(UART933xData, UART933xDataRXCSR) // pop
		u.r.Barrier()
		return byte(v), true
	default:
		if u.r.Read32(UARTLSR)&UARTLSRDR == 0 {
			return 0, false
		}
		return byte(u.r.Read32(UARTRBR)), true
	}
}

// GPIO drives the GPIO block. Set and Clear use the write-one SET/CLEAR
// registers, so they need no lock against each other; direction changes
// are read-modify-writes and are serialised.
type GPIO struct {
	r  barrier.Space
	mu sync.Mutex
}

// NewGPIO returns the GPIO block over r.
func NewGPIO(r barrier.Space) *GPIO { return &GPIO{r: r} }

func checkPin(pin int) error {
	if pin < 0 || pin > 31 {
		return fmt.Errorf("ar71xx: GPIO %d out of range", pin)
	}
	return nil
}

// SetOutput makes pin an output (true) or an input.
func (g *GPIO) SetOutput(pin int, out bool) error {
	if err := checkPin(pin); err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if out {
		barrier.SetBits32(g.r, GPIOOE, 0, 1<<uint(pin))
	} else {
		barrier.SetBits32(g.r, GPIOOE, 1<<uint(pin), 0)
	}
	g.r.Barrier()
	return nil
}

// Set drives pin to v.
func (g *GPIO) Set(pin int, v bool) error {
	if err := checkPin(pin); err != nil {
		return err
	}
	if v {
		g.r.Write32(GPIOSet, 1<<uint(pin))
	} else {
		g.r.Write32(GPIOClear, 1<<uint(pin))
	}
	g.r.Barrier()
	return nil
}

// Get reads pin's input level.
func (g *GPIO) Get(pin int) (bool, error) {
	if err := checkPin(pin); err != nil {
		return false, err
	}
	g.r.Barrier()
	return g.r.Read32(GPIOIn)&(1<<uint(pin)) != 0, nil
}

// Watchdog is the reset block's watchdog: the timer counts down at
// WatchdogHz (the AHB or the reference clock) and the action fires at zero
// (FreeBSD ar71xx_wdog.c, Linux ath79_wdt.c).
type Watchdog struct{ r barrier.Space }

// NewWatchdog returns the watchdog over the reset block.
func NewWatchdog(reset barrier.Space) *Watchdog { return &Watchdog{r: reset} }

// Arm loads the timer with ticks and sets action (WdogAction*). The timer
// is loaded before the action is enabled so an old short count cannot
// fire the new action.
func (w *Watchdog) Arm(ticks, action uint32) error {
	if action&^WdogActionMask != 0 {
		return fmt.Errorf("ar71xx: bad watchdog action %d", action)
	}
	w.r.Write32(RstWdogTimer, ticks)
	w.r.Barrier()
	w.r.Write32(RstWdogCtrl, action)
	w.r.Barrier()
	return nil
}

// Pet reloads the timer.
func (w *Watchdog) Pet(ticks uint32) {
	w.r.Write32(RstWdogTimer, ticks)
	w.r.Barrier()
}

// Disarm sets the action to none.
func (w *Watchdog) Disarm() {
	w.r.Write32(RstWdogCtrl, WdogActionNone)
	w.r.Barrier()
}

// WatchdogTimer is the watchdog in time units, for board packages: it
// implements board.Watchdog (package board defines the interface; this
// package does not import it). hz is the timer's rate, WatchdogHz.
type WatchdogTimer struct {
	w     *Watchdog
	hz    uint32
	mu    sync.Mutex
	ticks uint32 // reload value of the armed timeout, 0 when disarmed
}

// NewWatchdogTimer returns the watchdog over the reset block counting at
// hz (WatchdogHz of the running chip).
func NewWatchdogTimer(reset barrier.Space, hz uint32) *WatchdogTimer {
	return &WatchdogTimer{w: NewWatchdog(reset), hz: hz}
}

// MaxTimeout is the longest timeout the 32-bit timer holds at hz: about
// 21 s at a 200 MHz AHB clock, 107 s at a 40 MHz reference.
func (t *WatchdogTimer) MaxTimeout() time.Duration {
	if t.hz == 0 {
		return 0
	}
	return time.Duration(uint64(math.MaxUint32) * uint64(time.Second) / uint64(t.hz))
}

// Arm loads the timer with timeout, clamped to MaxTimeout, and sets the
// action to a full chip reset; it returns the timeout armed.
func (t *WatchdogTimer) Arm(timeout time.Duration) (time.Duration, error) {
	if t.hz == 0 {
		return 0, errors.New("ar71xx: watchdog: the timer's clock rate is unknown")
	}
	if timeout <= 0 {
		return 0, fmt.Errorf("ar71xx: watchdog: timeout %v", timeout)
	}
	if m := t.MaxTimeout(); timeout > m {
		timeout = m
	}
	ticks := uint64(timeout) * uint64(t.hz) / uint64(time.Second)
	if ticks == 0 {
		ticks = 1
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ticks = uint32(ticks)
	if err := t.w.Arm(t.ticks, WdogActionReset); err != nil {
		return 0, err
	}
	return time.Duration(ticks * uint64(time.Second) / uint64(t.hz)), nil
}

// Pet reloads the armed timeout; it does nothing when disarmed.
func (t *WatchdogTimer) Pet() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ticks != 0 {
		t.w.Pet(t.ticks)
	}
}

// Disarm stops the watchdog acting.
func (t *WatchdogTimer) Disarm() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ticks = 0
	t.w.Disarm()
}

// LastResetByWatchdog reports whether the previous reset was the
// watchdog's.
func (t *WatchdogTimer) LastResetByWatchdog() bool { return t.w.LastResetByWatchdog() }

// LastResetByWatchdog reports whether the previous reset was the watchdog's.
func (w *Watchdog) LastResetByWatchdog() bool {
	w.r.Barrier()
	return w.r.Read32(RstWdogCtrl)&WdogLastReset != 0
}
