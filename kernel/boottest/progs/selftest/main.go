// Command selftest is the kernel's boot-test program: it runs checks of the
// runtime services the kernel provides and prints "PASS name" or
// "FAIL name: why" for each, then "selftest: done N failed". The kernel
// boot tests (kernel/boottest) boot it under QEMU and read the console.
//
// Arguments select what to do: "all" (default) runs every check; "exit=N"
// calls os.Exit(N); "reboot:poweroff" and "reboot:restart" call reboot(2);
// "panic" panics in a goroutine-rich program so the trace can be checked;
// single check names run one check.
package main

import (
	"bufio"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	_ "github.com/gowrt/gowrt/board/malta"
	"github.com/gowrt/gowrt/kernel"
	soc "github.com/gowrt/gowrt/soc/malta"
)

type check struct {
	name string
	fn   func() error
}

var checks = []check{
	{"goroutines", goroutines},
	{"mutex", mutex},
	{"gc", gcPressure},
	{"sleep", sleepAccuracy},
	{"ticker", tickerAccuracy},
	{"select", selectTimeout},
	{"rand", cryptoRand},
	{"nilderef", nilDeref},
	{"preempt", preempt},
	{"fmt", fmtCheck},
	{"maps", maps},
	{"waitgroup", waitGroup},
	{"args", argsEnv},
	{"walltime", wallTime},
	{"mmap", mmapSemantics},
	{"nilpage", nilPage},
	{"sigbus", sigbus},
	{"unknown", unknownSyscall},
	{"divzero", divZero},
	{"threads", manyThreads},
	{"reboot", rebootRefusals},
	{"cache", cacheMode},
	{"scavenge", scavenge},
	{"memlimit", memLimit},
}

func main() {
	args := os.Args[1:]
	if len(args) == 0 {
		args = []string{"all"}
	}
	failed := 0
	for _, a := range args {
		switch {
		case strings.HasPrefix(a, "exit:"):
			n, _ := strconv.Atoi(strings.TrimPrefix(a, "exit:"))
			fmt.Println("selftest: exiting with", n)
			os.Exit(n)
		case strings.HasPrefix(a, "reboot:"):
			what := strings.TrimPrefix(a, "reboot:")
			cmd, ok := map[string]int{"poweroff": syscall.LINUX_REBOOT_CMD_POWER_OFF, "restart": syscall.LINUX_REBOOT_CMD_RESTART}[what]
			if !ok {
				fmt.Println("selftest: no reboot command", what)
				os.Exit(2)
			}
			fmt.Println("selftest: reboot", what)
			err := syscall.Reboot(cmd)
			fmt.Println("selftest: reboot returned:", err)
			os.Exit(1)
		case a == "oom":
			var keep [][]byte
			for i := 0; ; i++ {
				b := make([]byte, 1<<20)
				for j := 0; j < len(b); j += 4096 {
					b[j] = 1
				}
				keep = append(keep, b)
				if i%8 == 0 {
					fmt.Println("oom: holding", len(keep), "MiB")
				}
			}
		case a == "echo":
			// Blocking console read: woken by the UART receive interrupt.
			line, err := bufio.NewReader(os.Stdin).ReadString('\n')
			fmt.Printf("echo: %q %v\n", line, err)
		case a == "timerrace":
			failed += timerRace()
		case a == "stackoverflow":
			// The default limit (250 MB on 32-bit) exceeds a 32 MiB
			// board, which would end in out-of-memory instead.
			debug.SetMaxStack(4 << 20)
			fmt.Println(recurse(0))
		case a == "wrap":
			// Sleep across several CP0 Count wraps (25.8 s each at QEMU's
			// rate) and check the monotonic clock against the RTC.
			r0 := soc.RTCUnix()
			t0 := time.Now()
			time.Sleep(70 * time.Second)
			mono := time.Since(t0)
			rtc := time.Duration(soc.RTCUnix()-r0) * time.Second
			fmt.Printf("wrap: slept %v by the monotonic clock, %v by the RTC\n", mono.Round(time.Millisecond), rtc)
			if d := mono - rtc; d < -2*time.Second || d > 2*time.Second {
				fmt.Println("FAIL wrap: clocks disagree")
				failed++
			} else {
				fmt.Println("PASS wrap")
			}
		case a == "randdump":
			// The first getrandom bytes: a function of the kernel's key.
			var b [16]byte
			if _, err := rand.Read(b[:]); err != nil {
				fmt.Println("FAIL randdump:", err)
				failed++
			} else {
				fmt.Printf("randdump: %x\n", b)
			}
		case a == "sigill":
			// The runtime treats SIGILL as fatal (sigtab: _SigThrow), as
			// on Linux; the boot test checks its message and trace.
			illegal()
		case a == "kcrash":
			fmt.Println("selftest: asking the kernel to fault in trap context")
			syscall.Syscall(4904, 0xdead0000, 0, 0)
			fmt.Println("selftest: still alive after a kernel fault")
		case a == "panic":
			var wg sync.WaitGroup
			wg.Add(1)
			go func() { wg.Wait() }()
			panicNow("boom")
		case a == "all":
			for _, c := range checks {
				failed += run(c)
			}
		default:
			found := false
			for _, c := range checks {
				if c.name == a {
					failed += run(c)
					found = true
				}
			}
			if !found && !strings.Contains(a, "=") {
				fmt.Println("FAIL", a+": no such check")
				failed++
			}
		}
	}
	if in, err := kernel.ReadInfo(); err == nil {
		fmt.Printf("selftest: ram used %d KiB peak %d KiB, %d threads, %d signals, %d page faults, %d colour misses\n",
			in.RAMUsed>>10, in.RAMPeak>>10, in.Threads, in.Signals, in.PageFaults, in.ColourMisses)
	}
	fmt.Printf("selftest: done %d failed\n", failed)
	if failed > 0 {
		os.Exit(1)
	}
}

//go:noinline
func panicNow(msg string) { panic(msg) }

// Kernel hazard hooks (kernels built with -tags gowrt_hazard).
const (
	sysGowrtHazard    = 4906
	hazardOpHeld      = 0
	hazardOpGuard     = 1
	hazardOpLateSleep = 2
	lateSleeps        = 5
	lateSleepNs       = 100_000
)

// timerRace makes lateSleeps sleeps during which a Compare write lands
// late: the kernel holds back the write it makes for the CPU to idle until
// Count has passed the value it writes, so the deadline passes inside the
// write by construction. With the kernel's guard (it re-reads Count after
// the write) every sleep ends on time; without it (kcompare=noguard) the
// timer interrupt comes only when Count wraps round to the value again,
// 2^32 ticks later. The kernel's clock cannot see that stall (it extends
// Count to 64 bits only when it reads it, and nothing runs until the
// interrupt), so each sleep is also timed by the RTC. A sleep the kernel
// spent without idling (the runtime's sysmon thread was running) has no
// late write and is repeated.
func timerRace() int {
	hazard := func(op, arg uintptr) (uintptr, syscall.Errno) {
		r, _, e := syscall.RawSyscall(sysGowrtHazard, op, arg, 0)
		return r, e
	}
	guard, e := hazard(hazardOpGuard, 0)
	if e != 0 {
		fmt.Println("FAIL timerrace: kernel without hazard hooks (build with -tags gowrt_hazard):", e)
		return 1
	}
	mode := "on"
	if guard == 0 {
		mode = "off"
	}
	var tries, caught, stalled int
	var rtcTotal int64
	var longest time.Duration
	for i := 0; i < lateSleeps; i++ {
		for {
			if tries++; tries > 100*lateSleeps {
				fmt.Println("FAIL timerrace: the kernel never held a Compare write back")
				return 1
			}
			held0, _ := hazard(hazardOpHeld, 0)
			st0, _ := kernel.ReadIdleStats()
			r0 := soc.RTCUnix()
			t0 := time.Now()
			if _, e := hazard(hazardOpLateSleep, lateSleepNs); e != 0 {
				fmt.Println("FAIL timerrace: late sleep:", e)
				return 1
			}
			el := time.Since(t0)
			rtc := soc.RTCUnix() - r0
			st1, _ := kernel.ReadIdleStats()
			if held1, _ := hazard(hazardOpHeld, 0); held1 == held0 {
				continue
			}
			if st1.TimerMissed != st0.TimerMissed {
				caught++
			}
			if rtc >= 20 { // a Count wrap is 25.8 s at QEMU's rate
				stalled++
			}
			rtcTotal += rtc
			if el > longest {
				longest = el
			}
			break
		}
	}
	fmt.Printf("timerrace: guard %s: %d sleeps of %v with a late Compare write (%d tries); %d caught by the guard, %d stalled until Count wrapped; %d s by the RTC, longest %v by the kernel clock\n",
		mode, lateSleeps, time.Duration(lateSleepNs), tries, caught, stalled, rtcTotal, longest)
	return 0
}

func run(c check) int {
	start := time.Now()
	err := c.fn()
	if err != nil {
		fmt.Printf("FAIL %s: %v\n", c.name, err)
		return 1
	}
	fmt.Printf("PASS %s (%v)\n", c.name, time.Since(start).Round(time.Millisecond))
	return 0
}

func goroutines() error {
	const stages, msgs = 10, 2000
	in := make(chan int)
	var c chan int = in
	for i := 0; i < stages; i++ {
		out := make(chan int, i%3)
		go func(in, out chan int) {
			for v := range in {
				out <- v + 1
			}
			close(out)
		}(c, out)
		c = out
	}
	go func() {
		for i := 0; i < msgs; i++ {
			in <- i
		}
		close(in)
	}()
	sum := 0
	n := 0
	for v := range c {
		sum += v
		n++
	}
	if want := msgs*(msgs-1)/2 + msgs*stages; n != msgs || sum != want {
		return fmt.Errorf("got %d messages summing to %d, want %d and %d", n, sum, msgs, want)
	}
	return nil
}

func mutex() error {
	var mu sync.Mutex
	counter := 0
	var wg sync.WaitGroup
	const workers, iters = 8, 20000
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < iters; i++ {
				mu.Lock()
				counter++
				if i%1000 == 0 {
					runtime.Gosched()
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if counter != workers*iters {
		return fmt.Errorf("counter %d, want %d", counter, workers*iters)
	}
	return nil
}

var sink [][]byte

func gcPressure() error {
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	keep := make([][]byte, 64)
	total := 0
	for i := 0; total < 64<<20; i++ {
		b := make([]byte, 16<<10+i%4096)
		b[0], b[len(b)-1] = byte(len(b)), byte(len(b)>>8)
		keep[i%len(keep)] = b
		total += len(b)
	}
	sink = keep
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if after.NumGC-before.NumGC < 3 {
		return fmt.Errorf("only %d GC cycles for 64 MiB of garbage", after.NumGC-before.NumGC)
	}
	for i, b := range keep {
		if b == nil || len(b) < 16<<10 || b[0] != byte(len(b)) || b[len(b)-1] != byte(len(b)>>8) {
			return fmt.Errorf("kept buffer %d corrupted", i)
		}
	}
	sink = nil
	return nil
}

// scavenge checks that heap pages the runtime gives back return to the
// kernel: 8 MiB held, then dropped and returned (debug.FreeOSMemory runs
// the scavenger, which calls madvise), must show in Info.Returned and bring
// RAM in use back down.
func scavenge() error {
	const held = 8 << 20
	runtime.GC()
	debug.FreeOSMemory()
	in0, err := kernel.ReadInfo()
	if err != nil {
		return err
	}
	keep := make([][]byte, held/(64<<10))
	for i := range keep {
		keep[i] = make([]byte, 64<<10)
		for j := 0; j < len(keep[i]); j += 4096 {
			keep[i][j] = 1
		}
	}
	in1, err := kernel.ReadInfo()
	if err != nil {
		return err
	}
	sink = keep
	sink, keep = nil, nil
	debug.FreeOSMemory()
	in2, err := kernel.ReadInfo()
	if err != nil {
		return err
	}
	fmt.Printf("scavenge: used %d KiB, %d KiB holding 8 MiB, %d KiB after FreeOSMemory; %d KiB returned\n",
		in0.RAMUsed>>10, in1.RAMUsed>>10, in2.RAMUsed>>10, (in2.Returned-in1.Returned)>>10)
	if in1.RAMUsed < in0.RAMUsed+held {
		return fmt.Errorf("holding 8 MiB took only %d KiB", (in1.RAMUsed-in0.RAMUsed)>>10)
	}
	if in2.Returned-in1.Returned < held*3/4 {
		return fmt.Errorf("only %d KiB of 8 MiB returned", (in2.Returned-in1.Returned)>>10)
	}
	if in2.RAMUsed > in1.RAMUsed-held*3/4 {
		return fmt.Errorf("RAM in use %d KiB after returning, %d KiB before", in2.RAMUsed>>10, in1.RAMUsed>>10)
	}
	return nil
}

// memLimit checks the kernel's GOMEMLIMIT: seven eighths of whole pages
// (kernel/overcommit.go), below the RAM, and what the runtime uses.
func memLimit() error {
	in, err := kernel.ReadInfo()
	if err != nil {
		return err
	}
	lim := debug.SetMemoryLimit(-1)
	fmt.Printf("memlimit: GOMEMLIMIT %q, runtime limit %d KiB of %d KiB RAM\n", os.Getenv("GOMEMLIMIT"), lim>>10, in.RAM>>10)
	if v, _ := strconv.ParseInt(os.Getenv("GOMEMLIMIT"), 10, 64); v != lim {
		return fmt.Errorf("runtime limit %d, environment %q", lim, os.Getenv("GOMEMLIMIT"))
	}
	if lim <= 0 || lim >= int64(in.RAM) || lim%(7*4096) != 0 {
		return fmt.Errorf("limit %d on a board of %d bytes", lim, in.RAM)
	}
	return nil
}

// errors of n timed sleeps of d each, sorted.
func sleepErrors(n int, d time.Duration) []time.Duration {
	errs := make([]time.Duration, n)
	for i := range errs {
		t0 := time.Now()
		time.Sleep(d)
		errs[i] = time.Since(t0) - d
	}
	sort.Slice(errs, func(i, j int) bool { return errs[i] < errs[j] })
	return errs
}

func sleepAccuracy() error {
	errs := sleepErrors(30, 10*time.Millisecond)
	if errs[0] < 0 {
		return fmt.Errorf("a 10ms sleep returned %v early", -errs[0])
	}
	med, p90 := errs[len(errs)/2], errs[len(errs)*9/10]
	fmt.Printf("sleep: 10ms error median %v p90 %v max %v\n", med, p90, errs[len(errs)-1])
	if med >= 2*time.Millisecond || p90 >= 4*time.Millisecond {
		return fmt.Errorf("10ms sleep error median %v p90 %v (want < 2ms, < 4ms)", med, p90)
	}
	return nil
}

func tickerAccuracy() error {
	const n = 30
	tk := time.NewTicker(10 * time.Millisecond)
	defer tk.Stop()
	t0 := time.Now()
	last := t0
	var worst time.Duration
	for i := 0; i < n; i++ {
		t := <-tk.C
		if d := t.Sub(last) - 10*time.Millisecond; i > 0 && d > worst {
			worst = d
		}
		last = t
	}
	avg := time.Since(t0) / n
	fmt.Printf("ticker: 10ms average period %v, worst late tick %v\n", avg, worst)
	if e := avg - 10*time.Millisecond; e < -2*time.Millisecond || e > 2*time.Millisecond {
		return fmt.Errorf("average period %v", avg)
	}
	return nil
}

func selectTimeout() error {
	never := make(chan int)
	for _, d := range []time.Duration{0, time.Millisecond, 20 * time.Millisecond} {
		t0 := time.Now()
		select {
		case <-never:
			return fmt.Errorf("received from a channel nobody sends on")
		case <-time.After(d):
		}
		el := time.Since(t0)
		if el < d || el > d+10*time.Millisecond {
			return fmt.Errorf("select with %v timeout took %v", d, el)
		}
	}
	ready := make(chan int, 1)
	ready <- 1
	select {
	case <-ready:
	case <-time.After(time.Second):
		return fmt.Errorf("ready channel lost to a timeout")
	}
	return nil
}

func cryptoRand() error {
	a, b := make([]byte, 32), make([]byte, 32)
	if _, err := rand.Read(a); err != nil {
		return err
	}
	if _, err := rand.Read(b); err != nil {
		return err
	}
	if string(a) == string(b) {
		return fmt.Errorf("two reads returned the same bytes")
	}
	ones := 0
	for _, x := range append(a, b...) {
		for ; x != 0; x &= x - 1 {
			ones++
		}
	}
	if ones < 200 || ones > 312 { // 512 bits, ~256 ones
		return fmt.Errorf("%d one bits in 512", ones)
	}
	// getrandom(2) itself (crypto/rand may buffer): a read that starts
	// mid-page and spans three page boundaries fills every byte, and a
	// buffer the program does not map is EFAULT.
	big := make([]byte, 4*4096+64)
	const sysGetrandom = 4353 // arch/mips/kernel/syscalls/syscall_o32.tbl
	want := len(big) - 100
	n, _, e := syscall.Syscall(sysGetrandom, uintptr(unsafe.Pointer(&big[100])), uintptr(want), 0)
	if e != 0 || int(n) != want {
		return fmt.Errorf("getrandom of %d bytes: %d, %v", want, n, e)
	}
	if big[99] != 0 || big[100+want-1]|big[100+want-2]|big[100+want-3]|big[100+want-4] == 0 {
		return fmt.Errorf("getrandom wrote before its buffer or not up to its end")
	}
	for off := 100; off+512 <= 100+want; off += 512 {
		ones := 0
		for _, x := range big[off : off+512] {
			for ; x != 0; x &= x - 1 {
				ones++
			}
		}
		if ones < 1800 || ones > 2300 { // 4096 bits, ~2048 ones
			return fmt.Errorf("getrandom: %d one bits in the 4096 at offset %d", ones, off)
		}
	}
	if _, _, e := syscall.Syscall(sysGetrandom, 16, 8, 0); e != syscall.EFAULT {
		return fmt.Errorf("getrandom into page 0: %v, want EFAULT", e)
	}
	return nil
}

type node struct{ next *node }

//go:noinline
func deref(n *node) *node { return n.next }

func nilDeref() (err error) {
	defer func() {
		r := recover()
		re, ok := r.(runtime.Error)
		if !ok || !strings.Contains(re.Error(), "nil pointer dereference") {
			err = fmt.Errorf("recovered %v, want a nil-dereference runtime error", r)
		}
	}()
	deref(nil)
	return fmt.Errorf("nil dereference did not fault")
}

var spin atomic.Uint32

//go:noinline
func spinLoop(p *uint64) {
	for i := uint64(0); ; i++ {
		*p += i // no calls: only asynchronous preemption stops this
	}
}

func preempt() error {
	old := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(old)
	var x uint64
	go func() {
		spin.Store(1)
		spinLoop(&x)
	}()
	for spin.Load() == 0 {
		runtime.Gosched()
	}
	done := make(chan bool)
	go func() {
		time.Sleep(10 * time.Millisecond)
		done <- true
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		return fmt.Errorf("spinning goroutine was never preempted")
	}
	runtime.GC() // stop-the-world needs the spinner preempted too
	return nil
}

func fmtCheck() error {
	got := fmt.Sprintf("%d %x %q %v %.3f %08b %v", -42, 3054, "gö", []int{1, 2}, 3.14159, 5, struct{ A int }{7})
	want := `-42 bee "gö" [1 2] 3.142 00000101 {7}`
	if got != want {
		return fmt.Errorf("got %s want %s", got, want)
	}
	return nil
}

func maps() error {
	m := map[string]int{}
	for i := 0; i < 20000; i++ {
		m["k"+strconv.Itoa(i)] = i
	}
	for i := 0; i < 20000; i += 2 {
		delete(m, "k"+strconv.Itoa(i))
	}
	if len(m) != 10000 {
		return fmt.Errorf("len %d", len(m))
	}
	for k, v := range m {
		if k != "k"+strconv.Itoa(v) || v%2 == 0 {
			return fmt.Errorf("bad entry %s=%d", k, v)
		}
	}
	return nil
}

func waitGroup() error {
	var wg sync.WaitGroup
	var n atomic.Int32
	for i := 0; i < 100; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			time.Sleep(time.Duration(i%7) * time.Millisecond)
			n.Add(1)
		}(i)
	}
	wg.Wait()
	if n.Load() != 100 {
		return fmt.Errorf("%d goroutines finished", n.Load())
	}
	return nil
}

func argsEnv() error {
	if v := os.Getenv("SELFTEST"); v != "yes" {
		return fmt.Errorf("SELFTEST=%q from the kernel command line, want yes", v)
	}
	host, err := os.Hostname()
	if err != nil || host != "gowrt" {
		return fmt.Errorf("hostname %q, %v", host, err)
	}
	return nil
}

// cacheMode: the kernel runs kseg0 write-back (Config.K0 = 3) whatever
// the loader set; it prints both.
func cacheMode() error {
	in, err := kernel.ReadInfo()
	if err != nil {
		return err
	}
	fmt.Printf("cache: K0 %d (the loader's K0 %d)\n", in.K0(), in.LoaderConfig&7)
	if in.K0() != kernel.CacheWriteBack {
		return fmt.Errorf("Config.K0 is %d, want %d (write-back)", in.K0(), kernel.CacheWriteBack)
	}
	if in.Config&^7 != in.LoaderConfig&^7 {
		return fmt.Errorf("Config %#x: bits other than K0 changed from the loader's %#x", in.Config, in.LoaderConfig)
	}
	return nil
}

func wallTime() error {
	now := time.Now()
	if now.Year() < 2024 {
		return fmt.Errorf("wall clock says %v", now)
	}
	return nil
}

// faults reports whether touching *p faults (recoverably: SetPanicOnFault).
func faults(p *byte, write bool) (faulted bool) {
	old := debug.SetPanicOnFault(true)
	defer debug.SetPanicOnFault(old)
	defer func() {
		if r := recover(); r != nil {
			faulted = true
		}
	}()
	if write {
		*p = 1
	} else {
		_ = *(*byte)(noescape(unsafe.Pointer(p)))
	}
	return false
}

//go:noinline
func noescape(p unsafe.Pointer) unsafe.Pointer { return p }

func ramUsed() uint32 {
	in, _ := kernel.ReadInfo()
	return in.RAMUsed
}

// mmapSemantics checks what the runtime relies on: fresh anonymous pages
// read as zero and cost RAM only when touched; MADV_DONTNEED frees them and
// they read as zero again; munmap of a sub-range works and the hole faults;
// PROT_NONE faults; an impossible request fails with ENOMEM.
func mmapSemantics() error {
	const n = 64
	mem, err := syscall.Mmap(-1, 0, n*4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return fmt.Errorf("mmap: %v", err)
	}
	before := ramUsed()
	for i := 0; i < len(mem); i += 4096 {
		if mem[i] != 0 || mem[i+4095] != 0 {
			return errors.New("fresh page not zero")
		}
		mem[i], mem[i+4095] = 0xaa, 0x55
	}
	touched := ramUsed()
	if d := int(touched) - int(before); d < n*4096 || d > (n+4)*4096 {
		return fmt.Errorf("touching %d pages changed RAM used by %d bytes", n, d)
	}
	if err := syscall.Madvise(mem, syscall.MADV_DONTNEED); err != nil {
		return fmt.Errorf("madvise: %v", err)
	}
	if d := int(touched) - int(ramUsed()); d < n*4096 {
		return fmt.Errorf("MADV_DONTNEED freed only %d bytes", d)
	}
	for i := 0; i < len(mem); i += 4096 {
		if mem[i] != 0 || mem[i+4095] != 0 {
			return errors.New("page not zero after MADV_DONTNEED")
		}
	}
	if err := munmap(&mem[16*4096], 8*4096); err != nil {
		return fmt.Errorf("munmap of a sub-range: %v", err)
	}
	if !faults(&mem[20*4096], false) {
		return errors.New("unmapped hole did not fault")
	}
	if faults(&mem[8*4096], true) || faults(&mem[30*4096], true) {
		return errors.New("pages beside the hole fault")
	}
	munmap(&mem[0], 16*4096)
	munmap(&mem[24*4096], (n-24)*4096)
	none, err := syscall.Mmap(-1, 0, 4096, syscall.PROT_NONE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return fmt.Errorf("mmap PROT_NONE: %v", err)
	}
	if !faults(&none[0], false) {
		return errors.New("PROT_NONE page readable")
	}
	syscall.Munmap(none)
	if _, err := syscall.Mmap(-1, 0, 1<<30, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE); err != syscall.ENOMEM {
		return fmt.Errorf("1 GiB writable mmap: %v, want ENOMEM", err)
	}
	return nil
}

// nilPage checks that the low 4 MiB are unmapped: nil-based accesses fault.
func nilPage() error {
	for _, a := range []uintptr{0, 4, 4096, 0x3ffffc} {
		if !faults((*byte)(unsafe.Add(nil, a)), false) {
			return fmt.Errorf("read of %#x did not fault", a)
		}
	}
	return nil
}

// munmap unmaps part of a mapping (syscall.Munmap only takes whole ones).
func munmap(p *byte, n uintptr) error {
	_, _, e := syscall.Syscall(syscall.SYS_MUNMAP, uintptr(unsafe.Pointer(p)), n, 0)
	if e != 0 {
		return e
	}
	return nil
}

// sigbus: an unaligned word load raises AdEL, delivered as SIGBUS and turned
// into a recoverable panic (with SetPanicOnFault, as for any non-nil fault).
func sigbus() (err error) {
	buf := make([]uint32, 4)
	p := (*uint32)(unsafe.Add(unsafe.Pointer(&buf[0]), 1))
	old := debug.SetPanicOnFault(true)
	defer debug.SetPanicOnFault(old)
	defer func() {
		r := recover()
		a, ok := r.(interface{ Addr() uintptr })
		if !ok || a.Addr() != uintptr(unsafe.Pointer(p)) {
			err = fmt.Errorf("recovered %v, want a memory fault at %p", r, p)
		}
	}()
	_ = loadWord(p)
	return errors.New("unaligned load did not fault")
}

//go:noinline
func loadWord(p *uint32) uint32 { return *p }

// unknownSyscall: an unknown number gets ENOSYS every time (the kernel logs
// it once; the boot test counts the log lines).
func unknownSyscall() error {
	for i := 0; i < 3; i++ {
		if _, _, e := syscall.Syscall(4499, 0, 0, 0); e != syscall.ENOSYS {
			return fmt.Errorf("unknown system call returned %v, want ENOSYS", e)
		}
	}
	return nil
}

var zero = 0

// divZero: integer division by zero is the runtime's recoverable panic.
func divZero() (err error) {
	defer func() {
		r := recover()
		if re, ok := r.(runtime.Error); !ok || !strings.Contains(re.Error(), "integer divide by zero") {
			err = fmt.Errorf("recovered %v", r)
		}
	}()
	fmt.Println(1 / zero)
	return errors.New("no panic")
}

//go:noinline
func recurse(n int) int {
	var pad [64]byte
	pad[n%64] = byte(n)
	return recurse(n+1) + int(pad[0])
}

// manyThreads: goroutines blocked in system calls each hold a thread, so
// the runtime clones many (Linux semantics the kernel must keep up with).
func manyThreads() error {
	const n = 80
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ts := syscall.Timespec{Nsec: 50e6}
			syscall.Nanosleep(&ts, nil)
		}()
	}
	wg.Wait()
	in, err := kernel.ReadInfo()
	if err != nil {
		return err
	}
	if in.Threads < 20 {
		return fmt.Errorf("only %d threads for %d blocking system calls", in.Threads, n)
	}
	fmt.Printf("threads: %d kernel threads after %d concurrent blocking system calls\n", in.Threads, n)
	return nil
}

// rebootRefusals: reboot(2) with the wrong magic fails with EINVAL, an
// unknown command too, and switching Ctrl-Alt-Del off succeeds (and
// changes nothing).
func rebootRefusals() error {
	const sysReboot = 4088
	if _, _, e := syscall.RawSyscall6(sysReboot, 0x1234, syscall.LINUX_REBOOT_MAGIC2, syscall.LINUX_REBOOT_CMD_POWER_OFF, 0, 0, 0); e != syscall.EINVAL {
		return fmt.Errorf("bad magic: %v, want EINVAL", e)
	}
	if err := syscall.Reboot(0x7777); err != syscall.EINVAL {
		return fmt.Errorf("unknown command: %v, want EINVAL", err)
	}
	if err := syscall.Reboot(syscall.LINUX_REBOOT_CMD_CAD_OFF); err != nil {
		return fmt.Errorf("CAD_OFF: %v", err)
	}
	return nil
}
