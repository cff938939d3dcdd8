//go:build mips || mipsle

// Command bench measures kernel costs. Booted under QEMU with
// -icount shift=0,sleep=off, guest time advances exactly 1 ns per
// instruction, so every figure it prints in ns is an instruction count,
// identical from run to run whatever the host is doing.
package main

import (
	"fmt"
	"runtime"
	"sort"
	"sync"
	"syscall"
	"time"
	"unsafe"

	_ "github.com/gowrt/gowrt/board/malta"
	"github.com/gowrt/gowrt/kernel"
)

const (
	sysFutexTime64   = 4422
	futexWaitPrivate = 128
	futexWakePrivate = 129
	sysClockGettime  = 4263
	clockMonotonic   = 1
	iterations       = 20000
	futexRounds      = 2000
)

func main() {
	in, _ := kernel.ReadInfo()
	fmt.Printf("bench: boot-to-main %d ns (kernel entry to main.main), of which %d ns calibrating the clock\n", in.Uptime, in.Calibrate)

	// clock_gettime: the raw system call, and time.Now through the runtime.
	var ts [2]int32
	t0 := kernel.Nanotime32()
	for i := 0; i < iterations; i++ {
		syscall.RawSyscall(sysClockGettime, clockMonotonic, uintptr(unsafe.Pointer(&ts)), 0)
	}
	raw := (kernel.Nanotime32() - t0) / iterations
	t0 = kernel.Nanotime32()
	for i := 0; i < iterations; i++ {
		_ = time.Now()
	}
	now := (kernel.Nanotime32() - t0) / iterations
	t0 = kernel.Nanotime32()
	for i := 0; i < iterations; i++ {
		syscall.RawSyscall(syscall.SYS_GETTID, 0, 0, 0)
	}
	null := (kernel.Nanotime32() - t0) / iterations
	fmt.Printf("bench: clock_gettime %d ns per call (time.Now %d ns; null system call gettid %d ns)\n", raw, now, null)

	// Futex wake-to-run: B wakes A and then blocks; A notes when it runs.
	runtime.GOMAXPROCS(2) // each locked thread keeps its own P while blocked in RawSyscall
	var a, b uint32
	var woke uint32
	var lat []uint32
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // A
		runtime.LockOSThread()
		defer wg.Done()
		for i := 0; i < futexRounds; i++ {
			for a == 0 {
				futex(&a, futexWaitPrivate, 0)
			}
			lat = append(lat, kernel.Nanotime32()-woke)
			a = 0
			b = 1
			futex(&b, futexWakePrivate, 1)
		}
	}()
	runtime.LockOSThread()
	time.Sleep(10 * time.Millisecond) // let A block
	for i := 0; i < futexRounds; i++ {
		a = 1
		woke = kernel.Nanotime32()
		futex(&a, futexWakePrivate, 1)
		for b == 0 {
			futex(&b, futexWaitPrivate, 0)
		}
		b = 0
	}
	wg.Wait()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	fmt.Printf("bench: futex wake-to-run p50 %d ns p99 %d ns (wake, waker blocks, switch)\n",
		lat[len(lat)/2], lat[len(lat)*99/100])

	// RAM at idle.
	time.Sleep(100 * time.Millisecond)
	in, _ = kernel.ReadInfo()
	fmt.Printf("bench: RAM used at idle %d KiB (of %d KiB)\n", in.RAMUsed>>10, in.RAM>>10)
	fmt.Println("bench: done")
}

func futex(addr *uint32, op, val uintptr) {
	syscall.RawSyscall6(sysFutexTime64, uintptr(unsafe.Pointer(addr)), op, val, 0, 0, 0)
}
