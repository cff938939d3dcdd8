// Package kernel lets an ordinary Go program, built by the stock toolchain as
// GOOS=linux GOARCH=mips|mipsle GOMIPS=softfloat, run on bare-metal MIPS32.
//
// The package takes the reset entry (the image is linked with
// -T 0x80101000 -D 0xc0000000 -E github.com/gowrt/gowrt/kernel.Entry, see
// cmd/gowrt), installs the exception vectors, and then services the Linux o32
// system calls the unmodified Go runtime makes: threads (clone, futex),
// time (clock_gettime, nanosleep, a tickless Compare timer), memory (mmap,
// munmap, madvise over a page table with demand-zero paging), the netpoller's
// epoll and eventfd, signals (faults become recoverable panics, SIGURG keeps
// asynchronous preemption working) and the console.
//
// Everything runs in kernel mode on one CPU. The kernel itself runs only in
// trap context (EXL set, interrupts off, on its own stack in kseg0), keeps all
// of its state in a fixed kseg0 area outside the Go heap and outside the
// program's data segment, never allocates, never stores heap pointers (so no
// write barriers), and touches program memory only through explicit page-table
// translation, so a kernel bug cannot take a TLB fault on itself. A test
// (kernel/boottest) checks these rules on the linked binary.
//
// Memory layout (virtual):
//
//	0x00000000-0x003fffff  unmapped: nil dereferences fault
//	0x00400000-0x7fffffff  heap and mmap space (the Go heap must be below
//	                       2 GiB), through the page table, demand-zero
//	0x80000000-0x800fffff  kseg0: vectors, page directory, kernel state,
//	                       kernel stack, the initial (m0) stack
//	0x80100000-...         kseg0: text and rodata, then (64 KiB aligned) the
//	                       physical home of the initial data pages
//	0xc0000000-...         kseg2: program data+BSS (-D), through the page
//	                       table; BSS is demand-zero
//
// The data segment is in kseg2 rather than in kuseg because Go 1.26's
// linker writes an all-zero data segment when -D is below -T.
//
// Physical frames not used by the image are handed out one 4 KiB page at a
// time on first touch; untouched BSS (such as the 32 MiB FIPS DRBG buffer that
// every crypto-using program carries) and untouched anonymous memory cost no
// RAM.
//
// Kernel command-line switches (QEMU -append, alongside program arguments
// and K=V environment variables): ktrace prints every system call,
// knosig disables signal delivery (and sets GODEBUG=asyncpreemptoff=1),
// kidle=naive leaves the idle window unregistered (a test of the race it
// closes), ktest allows a deliberate kernel fault (a test of the fault path).
//
// Built with -tags gowrt_hazard (the boot tests do), the kernel also has
// hazard-injection hooks: a system call that makes a Compare write land
// after its deadline, and the switch kcompare=noguard, which trusts every
// Compare write instead of re-reading Count (a deadline Count has passed
// when the write lands is then signalled only after Count wraps). The
// shipped kernel contains neither.
//
// A program becomes firmware by importing its board package, for example
// import _ "github.com/gowrt/gowrt/board/malta".
package kernel
