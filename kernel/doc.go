// Package kernel lets an ordinary Go program, built by the stock toolchain as
// GOOS=linux GOARCH=mips|mipsle GOMIPS=softfloat, run on bare-metal MIPS32.
//
// The package takes the reset entry (the image is linked with
// -T 0x80101000 -D 0x00400000 -E github.com/gowrt/gowrt/kernel.Entry, see
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
//	0x00400000-...         program data+BSS (-D), then heap and mmap space,
//	                       all through the page table, demand-zero
//	0x80000000-0x800fffff  kseg0: vectors, page directory, kernel state,
//	                       kernel stack, the initial (m0) stack
//	0x80100000-...         kseg0: text and rodata, then the physical home of
//	                       the initial data pages
//
// Physical frames not used by the image are handed out one 4 KiB page at a
// time on first touch; untouched BSS (such as the 32 MiB FIPS DRBG buffer that
// every crypto-using program carries) and untouched anonymous memory cost no
// RAM.
//
// A program becomes firmware by importing its board package, for example
// import _ "github.com/gowrt/gowrt/board/malta".
package kernel
