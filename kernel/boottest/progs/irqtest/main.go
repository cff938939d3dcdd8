//go:build mips || mipsle

// Command irqtest checks interrupt delivery to goroutines on Malta through
// the intr contract, with a real device: the MC146818 RTC's periodic
// interrupt (ISA IRQ 8, on the slave i8259) at 1024 Hz. Its handler clears
// the RTC's flag by reading register C, as a driver would. It then measures
// interrupt-to-handler-goroutine latency with the kernel's take timestamp.
package main

import (
	"fmt"
	"os"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gowrt/gowrt/board/malta"
	"github.com/gowrt/gowrt/intr/kernelirq"
	"github.com/gowrt/gowrt/kernel"
	soc "github.com/gowrt/gowrt/soc/malta"
)

const (
	rtcLine = soc.IRQRTC
	rtcA    = 0x0a
	rtcB    = 0x0b
	rtcC    = 0x0c
)

func rtc(reg uint8) uint8 { soc.Outb(soc.PortRTCIdx, reg); return soc.Inb(soc.PortRTCData) }
func rtcSet(reg, v uint8) { soc.Outb(soc.PortRTCIdx, reg); soc.Outb(soc.PortRTCData, v) }

func startRTC() {
	rtcSet(rtcA, rtc(rtcA)&0xf0|0x06) // 1024 Hz
	rtcSet(rtcB, rtc(rtcB)|0x40)      // PIE
	rtc(rtcC)
}

func stopRTC() {
	rtcSet(rtcB, rtc(rtcB)&^0x40)
	rtc(rtcC)
}

func main() {
	failed := false
	// 1. Through intr.Dispatcher: handler goroutine per line.
	d := malta.NewDispatcher()
	var runs atomic.Uint32
	if err := d.Register(rtcLine, "rtc", func() {
		rtc(rtcC) // clear the device's cause before the line is unmasked
		runs.Add(1)
	}); err != nil {
		fmt.Println("FAIL register:", err)
		os.Exit(1)
	}
	startRTC()
	time.Sleep(200 * time.Millisecond)
	stopRTC()
	st, _ := d.Stats(rtcLine)
	if err := d.Unregister(rtcLine); err != nil {
		fmt.Println("FAIL unregister:", err)
		failed = true
	}
	fmt.Printf("intr: rtc fired %d, handler runs %d in 200ms (1024 Hz device)\n", st.Fired, st.Runs)
	// The RTC coalesces periods whose flag was not yet cleared, so fewer
	// than 205 is normal; what must not happen is the stream stopping (an
	// edge lost while the line was masked would leave it high forever).
	if st.Fired < 50 || st.Runs == 0 || uint64(runs.Load()) < st.Runs {
		fmt.Println("FAIL intr: too few interrupts delivered")
		failed = true
	} else {
		fmt.Println("PASS intr")
	}

	// 2. Latency: kernel take time -> handler goroutine running.
	if err := kernel.IRQOpen(rtcLine); err != nil {
		fmt.Println("FAIL open:", err)
		os.Exit(1)
	}
	kernel.IRQUnmask(rtcLine)
	startRTC()
	var lat []uint32
	for i := 0; i < 200; i++ {
		_, taken, err := kernel.IRQWaitTimed(rtcLine)
		now := kernel.Nanotime32()
		if err != nil {
			fmt.Println("FAIL wait:", err)
			os.Exit(1)
		}
		lat = append(lat, now-taken)
		rtc(rtcC)
		kernel.IRQUnmask(rtcLine)
	}
	stopRTC()
	kernel.IRQClose(rtcLine)
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	fmt.Printf("irq latency: interrupt to thread blocked in IRQWait p50 %d ns p99 %d ns (n=%d)\n",
		lat[len(lat)/2], lat[len(lat)*99/100], len(lat))

	// 3. The same through the netpoller (kernel.IRQFD, the way
	// kernelirq.Source waits): the goroutine parks in the scheduler and
	// the only thread left waits in epoll_pwait.
	if l, err := pollLatency(); err != nil {
		fmt.Println("FAIL netpoller wait:", err)
		failed = true
	} else {
		fmt.Printf("irq latency: interrupt to goroutine parked in the netpoller p50 %d ns p99 %d ns (n=%d)\n",
			l[len(l)/2], l[len(l)*99/100], len(l))
	}

	// 3b. kernelirq.Source's wait, per interrupt, allocates nothing.
	if a, err := sourceAllocs(); err != nil {
		fmt.Println("FAIL source wait:", err)
		failed = true
	} else {
		fmt.Printf("irq source: %.2f allocations per wait\n", a)
		if a != 0 {
			fmt.Println("FAIL source wait allocates")
			failed = true
		}
	}

	// 4. A lost wake-up leaves the line masked for good, and an idle
	// scheduler never looks: the stream must keep flowing while other
	// goroutines compute, sleep, and hand work to each other.
	if !streamUnderLoad() {
		failed = true
	}
	if failed {
		os.Exit(1)
	}
	fmt.Println("irqtest: ok")
}

// pollLatency measures, for 200 RTC interrupts, the time from the
// kernel taking the interrupt to the goroutine that waits for the line in
// the netpoller running.
func pollLatency() ([]uint32, error) {
	if err := kernel.IRQOpen(rtcLine); err != nil {
		return nil, err
	}
	defer kernel.IRQClose(rtcLine)
	fd, err := kernel.IRQFD(rtcLine)
	if err != nil {
		return nil, err
	}
	// Not closed: the descriptor is the line's for good (kernelirq).
	rc, err := os.NewFile(uintptr(fd), "irq-rtc").SyscallConn()
	if err != nil {
		return nil, err
	}
	var taken uint32
	var werr error
	poll := func(uintptr) bool {
		_, t, err := kernel.IRQPoll(rtcLine)
		if err == syscall.EAGAIN {
			return false
		}
		taken, werr = t, err
		return true
	}
	kernel.IRQUnmask(rtcLine)
	startRTC()
	defer stopRTC()
	var lat []uint32
	for i := 0; i < 200; i++ {
		if err := rc.Read(poll); err != nil {
			return nil, err
		}
		now := kernel.Nanotime32()
		if werr != nil {
			return nil, werr
		}
		lat = append(lat, now-taken)
		rtc(rtcC)
		kernel.IRQUnmask(rtcLine)
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	return lat, nil
}

// sourceAllocs waits for 200 RTC interrupts through kernelirq.Source,
// the way a Dispatcher's goroutine does, after one to set the line up,
// and returns the heap allocations per wait.
func sourceAllocs() (float64, error) {
	src := kernelirq.NewSource(malta.PIC)
	defer src.Close(rtcLine)
	startRTC()
	defer stopRTC()
	wait := func() error {
		if _, err := src.Wait(rtcLine); err != nil {
			return err
		}
		rtc(rtcC)
		return kernel.IRQUnmask(rtcLine)
	}
	kernel.IRQUnmask(rtcLine)
	if err := wait(); err != nil { // opens the line, makes its descriptor
		return 0, err
	}
	const n = 200
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := 0; i < n; i++ {
		if err := wait(); err != nil {
			return 0, err
		}
	}
	runtime.ReadMemStats(&after)
	return float64(after.Mallocs-before.Mallocs) / n, nil
}

// streamUnderLoad runs the RTC through a Dispatcher for a second of
// load, in rounds of two kinds: a goroutine computing (allocating, so the
// collector runs too) in bursts of 1 to 4 ms between short timer sleeps,
// or two goroutines handing a token back and forth. Either keeps the run
// queue from emptying when the line fires, and the line's goroutine is
// parked when it does. It checks that handler runs never pause for long
// and that the stream still flows at full rate afterwards.
//
// Both loads at once starve the line for up to half a second, as they
// starve a goroutine waiting for the network on any Go program on one
// CPU: what the netpoller (or a system call's return) makes runnable
// waits in the global run queue, which the scheduler looks at only
// every 61st time slice, and the hand-off pair keeps inheriting one.
// That measured the same for a thread blocked in IRQWait.
func streamUnderLoad() bool {
	d := malta.NewDispatcher()
	var runs atomic.Uint32
	var last, maxGap atomic.Int64
	if err := d.Register(rtcLine, "rtc", func() {
		rtc(rtcC)
		now := kernel.Nanotime()
		if l := last.Swap(now); l != 0 && now-l > maxGap.Load() {
			maxGap.Store(now - l)
		}
		runs.Add(1)
	}); err != nil {
		fmt.Println("FAIL register:", err)
		return false
	}
	defer d.Unregister(rtcLine)
	startRTC()
	defer stopRTC()
	const rounds = 8
	var sink atomic.Uint32
	for r := 0; r < rounds; r++ {
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(3)
		compute := r < rounds/2
		go func() { // compute in bursts
			defer wg.Done()
			if !compute {
				<-stop
				return
			}
			burst := time.Duration(r%4+1) * time.Millisecond
			for {
				end := time.Now().Add(burst)
				var b []byte
				for time.Now().Before(end) {
					b = make([]byte, 64+r*32)
					b[0]++
				}
				sink.Add(uint32(len(b)))
				select {
				case <-stop:
					return
				case <-time.After(time.Duration(r) * 200 * time.Microsecond):
				}
			}
		}()
		ping, pong := make(chan int), make(chan int)
		go func() { // hand a token back and forth
			defer wg.Done()
			if compute {
				<-stop
				close(ping)
				return
			}
			for i := 0; ; i++ {
				select {
				case <-stop:
					close(ping)
					return
				case ping <- i:
				}
				<-pong
			}
		}()
		go func() {
			defer wg.Done()
			for i := range ping {
				pong <- i
			}
		}()
		time.Sleep(time.Second / rounds)
		close(stop)
		wg.Wait()
	}
	loaded, gap := runs.Load(), time.Duration(maxGap.Load())
	time.Sleep(100 * time.Millisecond)
	quiet := runs.Load() - loaded
	fmt.Printf("intr under load: %d handler runs in 1 s, longest pause %v; %d in the next 100 ms idle\n", loaded, gap, quiet)
	// Idle, the RTC's 1024 Hz bring some 520 runs a second (part 1: it
	// coalesces periods whose flag is still set). Under this load far
	// fewer: the Go scheduler looks at the netpoller only when its run
	// queue is empty, or from sysmon every 10 ms, and a goroutine made
	// runnable then waits its turn in the global run queue, behind a
	// hand-off pair that keeps inheriting its time slice until sysmon
	// preempts it. That bounds a pause to tens of milliseconds, for a
	// goroutine parked in the netpoller as for a thread blocked in
	// IRQWait (which measured the same here). A lost wake-up is
	// unbounded: the line stays masked.
	if loaded < 100 || gap > 200*time.Millisecond || quiet < 40 {
		fmt.Println("FAIL intr under load: the stream paused or stopped")
		return false
	}
	fmt.Println("PASS intr under load")
	return true
}
