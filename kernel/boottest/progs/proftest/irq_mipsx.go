//go:build mips || mipsle

package main

import (
	"bytes"
	"fmt"
	"runtime/pprof"
	"time"

	"github.com/gowrt/gowrt/board/malta"
	soc "github.com/gowrt/gowrt/soc/malta"
)

// The MC146818 RTC's periodic interrupt, as progs/irqtest drives it.
const (
	rtcA = 0x0a
	rtcB = 0x0b
	rtcC = 0x0c
)

func rtc(reg uint8) uint8 { soc.Outb(soc.PortRTCIdx, reg); return soc.Inb(soc.PortRTCData) }
func rtcSet(reg, v uint8) { soc.Outb(soc.PortRTCIdx, reg); soc.Outb(soc.PortRTCData, v) }

// handlerForProfile is an interrupt handler's work: a receive path's
// frames.
//
//go:noinline
func handlerForProfile(d time.Duration) {
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		for i := 0; i < 100; i++ {
			sink = sink*6364136223846793005 + 1442695040888963407
		}
	}
}

// handlerProfile takes a CPU profile for 1 s while the RTC's interrupt
// handler, at 1024 Hz through intr.Dispatcher, works 300 µs a run, and
// returns it. A line's goroutine returns from its blocking wait straight
// into itself, so its thread is sampled only once the goroutine has passed
// through the scheduler, where the runtime turns profiling on for a thread
// (intr's profileResync).
func handlerProfile() ([]byte, error) {
	var buf bytes.Buffer
	d := malta.NewDispatcher()
	if err := d.Register(soc.IRQRTC, "rtc", func() {
		rtc(rtcC) // clear the device's cause before the line is unmasked
		handlerForProfile(300 * time.Microsecond)
	}); err != nil {
		return nil, fmt.Errorf("register: %v", err)
	}
	// The handler runs before the profile starts, as a router's receive
	// path does: its thread is the one profiling must be turned on for.
	rtcSet(rtcA, rtc(rtcA)&0xf0|0x06) // 1024 Hz
	rtcSet(rtcB, rtc(rtcB)|0x40)      // PIE
	rtc(rtcC)
	time.Sleep(50 * time.Millisecond)
	if err := pprof.StartCPUProfile(&buf); err != nil {
		return nil, err
	}
	time.Sleep(time.Second)
	pprof.StopCPUProfile()
	rtcSet(rtcB, rtc(rtcB)&^0x40)
	rtc(rtcC)
	if err := d.Unregister(soc.IRQRTC); err != nil {
		return nil, fmt.Errorf("unregister: %v", err)
	}
	return buf.Bytes(), nil
}
