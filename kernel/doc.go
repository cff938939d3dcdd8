// Package kernel lets an ordinary Go program, built by the stock toolchain as
// GOOS=linux GOARCH=mips|mipsle GOMIPS=softfloat, run on bare-metal MIPS32.
//
// The package takes the reset entry (the image is linked with
// -T 0x80101000 -D 0xc0000000 -E github.com/gowrt/gowrt/kernel.Entry, see
// internal/image), installs the exception vectors, and then services the Linux o32
// system calls the unmodified Go runtime makes: threads (clone, futex),
// time (clock_gettime, nanosleep, a tickless Compare timer; clock_settime
// and clock_adjtime ADJ_SETOFFSET set the wall clock), memory (mmap,
// munmap, madvise over a page table with demand-zero paging), the netpoller's
// epoll and eventfd, signals (faults become recoverable panics, SIGURG keeps
// asynchronous preemption working) and the console. Interrupt lines reach
// goroutines through private calls: a blocking wait (IRQWait), or a
// descriptor per line that the netpoller waits on (IRQFD, IRQPoll).
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
//	                       kernel stack, the initial (m0) stack; the
//	                       frames between them go to the frame pool
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
// RAM. Mappings are admitted as under Linux's default heuristic overcommit
// (a mapping is refused only if it is larger than RAM; running out of
// frames on a fault ends the program with status 137), because the runtime
// grows its heap in 4 MiB mappings. munmap and madvise(MADV_DONTNEED or
// MADV_FREE), the runtime scavenger's call, put frames back in the pool
// (Info.Returned counts them). The program's environment gets
// GOMEMLIMIT, seven eighths of the RAM free after boot, unless the command
// line sets it, so the runtime collects and scavenges before the board runs
// out (overcommit.go).
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
// when the write lands is then signalled only after Count wraps), and
// the switch kslice=plain, which ends time slices without regard to the Go
// runtime's 64-bit atomic spinlock (see below). The shipped kernel
// contains none of them.
//
// Time slices (10 ms between runnable threads) do not end while the Go
// runtime's 64-bit atomic spinlock is held: on mips32 every 64-bit atomic
// takes that one lock, and a holder descheduled inside it used to leave
// the next thread (often sysmon) spinning for a whole slice. The kernel
// finds the lock word at boot by decoding the runtime's Xadd64, extends a
// slice ending while it is held by 20 µs at a time (at most 8 times), and
// switches a thread found spinning on it away at once
// (atomiclock_mipsx.go; Info.AtomicLock, LockExtends, LockOverruns,
// LockSpinTraps).
//
// A program becomes firmware by importing its board package, for example
// import _ "github.com/gowrt/gowrt/board/malta".
//
// # Platform hooks
//
// The kernel knows no board. What differs between boards it asks of
// platform hooks, functions it declares without bodies
// (platform_mipsx.go, which is the contract) and the SoC package of the
// board being built defines, binding each to the kernel's name with a push
// //go:linkname, the way TamaGo's board packages provide its runtime's
// hooks: the console (put and get a character), the root interrupt
// controller with N lines (poll, mask, unmask, end of interrupt, pending,
// trigger mode), the CP0 Count rate, the RAM size, wall time from an RTC,
// reset and power-off. The boot hooks (name, RAM, controller set-up and
// description, Count rate, wall time) run once before traps are live; the
// rest run in trap context under the kernel's own rules (nosplit, no
// allocation, no write barriers, no panics, no Go variables: only
// constants, arguments and the registers). kernel/boottest walks the
// linked image from the trap entry into the hooks' implementations, and
// TestPlatformHookSignatures checks every provider's signatures against
// the declarations, which the linker does not. A program that links no
// SoC package does not link: the linker names each missing hook
// ("relocation target github.com/gowrt/gowrt/kernel.platformPutc not
// defined").
//
// What is the same on every MIPS32 board is not a hook: cache geometry
// and TLB size (Config1), the Count/Compare timer on IP7, the boot
// arguments (the MIPS firmware convention: argc, argv, envp in a0-a2).
//
// Providers: soc/malta (i8259 pair, COM1, PIT-measured Count, MC146818
// RTC, FPGA soft reset, PIIX4 power-off) and soc/ar71xx/baremetal (the
// AR71xx family's UART, CPU pins and MISC controller, Count from the PLL
// registers, reset controller).
//
// # Adding a board or SoC
//
// Nothing in this package changes. For a new SoC, write its provider: a
// package that defines every hook of platform_mipsx.go with exactly that
// signature, each preceded by
//
//	//go:linkname platformPutc github.com/gowrt/gowrt/kernel.platformPutc
//	//go:nosplit
//
// and reaching its registers through constant kseg1 addresses (assembly
// loads and stores, so the compiler cannot merge or drop them). Put the
// register logic where it can be tested against the SoC's hardware model,
// as soc/ar71xx does (generic over its register access, instantiated with
// kseg1 in soc/ar71xx/baremetal and with the ar71xxsim model in tests).
// For a new board on a known SoC, write the board package: it imports
// this package and the SoC's provider, registers itself with package board
// and wires its devices. Then add the board's image definition (GOARCH,
// link layout, the loader's view, the QEMU machine if any) to
// internal/image's Boards, and give kernel/boottest's discipline walk an
// image of it (TestBuildOnlyBoards does this for boards QEMU cannot boot).
package kernel
