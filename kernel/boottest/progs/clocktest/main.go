// Command clocktest checks kernel.Nanotime, the system-call-free clock,
// against clock_gettime on the gowrt kernel: never behind the system call
// read just before it, never backwards, close to the system call read
// just after it, across timer interrupts, Count wraps are the kernel's
// business (TestClockWrap), and across an idle stretch long enough for the
// fast path to hand over to the system call. It prints the cost of both.
package main

import (
	"fmt"
	"os"
	"syscall"
	"time"
	"unsafe"

	"github.com/gowrt/gowrt/kernel"
)

const sysClockGettime = 4263

func syscallNow() int64 {
	var ts [2]int32
	syscall.RawSyscall(sysClockGettime, 1, uintptr(unsafe.Pointer(&ts)), 0)
	return int64(ts[0])*1e9 + int64(ts[1])
}

func main() {
	if !kernel.Running() {
		fail("kernel.Running is false on the kernel")
	}
	var prev, maxSkew int64
	check := func(n int) {
		for i := 0; i < n; i++ {
			before := syscallNow()
			t := kernel.Nanotime()
			after := syscallNow()
			if t < before || t < prev {
				fail("Nanotime %d went backwards (syscall before %d, previous %d)", t, before, prev)
			}
			if t > after {
				fail("Nanotime %d ahead of the syscall read after it (%d)", t, after)
			}
			maxSkew = max(maxSkew, after-t)
			prev = t
		}
	}
	check(100000)
	time.Sleep(400 * time.Millisecond) // the clock base is now > 1/4 s old
	check(1000)
	for i := 0; i < 5; i++ { // sleeps of all kinds between reads
		time.Sleep(time.Duration(i) * 70 * time.Millisecond)
		check(100)
	}
	const n = 100000
	t0 := syscallNow()
	for i := 0; i < n; i++ {
		kernel.Nanotime()
	}
	t1 := syscallNow()
	for i := 0; i < n; i++ {
		syscallNow()
	}
	t2 := syscallNow()
	fmt.Printf("clocktest: ok, max lag behind the next syscall read %d ns; Nanotime %d ns/read, clock_gettime %d ns/read\n",
		maxSkew, (t1-t0)/n, (t2-t1)/n)
}

func fail(format string, args ...any) {
	fmt.Printf("clocktest: FAIL "+format+"\n", args...)
	os.Exit(1)
}
