package kernel

// Memory admission, Linux's heuristic overcommit (vm.overcommit_memory=0,
// the default: Documentation/mm/overcommit-accounting.rst). The Go runtime
// maps its heap in 4 MiB steps on 32-bit targets (runtime/mheap.go,
// mheap.grow; heapArenaBytes) and touches only what it allocates, so strict
// commit accounting refuses the first heap growth on a board whose free RAM
// is under 4 MiB, such as the router on 16 MiB, although the pages it
// needs are there. So, as on Linux:
//
//   - mmap refuses only a mapping with more writable pages than the
//     board has RAM (mapTooLarge; mm/util.c, __vm_enough_memory, the
//     OVERCOMMIT_GUESS case, compares with total RAM, not free RAM);
//   - RAM is charged when a page is first touched; when none is left the
//     kernel ends the program with status 137 (SIGKILL's, as Linux's OOM
//     killer does), printing the address;
//   - a few frames stay back for page-table pages (pageInReserve) when
//     the program's BSS is paged in.
//
// The commit charge is still counted and reported (Info.Committed): it is
// what strict accounting would have refused.

// pageInReserve is the number of free frames a demand-zero page may not
// take: they are for page-table pages (one per 4 MiB of address space
// touched) and the kernel's DMA scratch bitmap (two frames). 64 KiB: the
// Go heap, stacks and mmap space of a router touch far fewer than 14
// distinct 4 MiB regions.
const pageInReserve = 16

// mapTooLarge reports whether a mapping that adds newW writable pages
// over oldW it replaces is refused on a board of ramPages pages of RAM.
//
//go:nosplit
func mapTooLarge(newW, oldW, ramPages uint32) bool {
	return newW > oldW && newW-oldW > ramPages
}

// mayPageIn reports whether a demand-zero page may take one of the nfree
// free frames.
//
//go:nosplit
func mayPageIn(nfree uint32) bool { return nfree > pageInReserve }

// The runtime is told how much RAM it can have: unless the command line
// sets GOMEMLIMIT itself (GOMEMLIMIT=off turns the limit off), the kernel
// puts GOMEMLIMIT=<bytes> in the program's environment, seven eighths of
// the frames free after boot. Near that limit the garbage collector runs
// more often and the scavenger returns freed heap pages at once
// (runtime/mgcscavenge.go: the memory-limit goal), instead of the runtime
// growing into RAM the board does not have; the eighth left over is for
// what the limit does not count: data and BSS pages, DMA memory, page
// tables.
const goMemLimitVar = "GOMEMLIMIT="

// goMemLimitEnv writes GOMEMLIMIT=<bytes> for a program that can hold
// limitPages pages into buf and returns its length.
//
//go:nosplit
func goMemLimitEnv(buf *[32]byte, limitPages uint32) int {
	n := copy(buf[:], goMemLimitVar)
	v := limitPages / 8 * 7 << pageShiftAll
	var digits [10]byte
	d := len(digits)
	for {
		d--
		digits[d] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			break
		}
	}
	n += copy(buf[n:], digits[d:])
	return n
}

// pageShiftAll is pageShift (layout_mipsx.go) for code built on every
// GOARCH.
const pageShiftAll = 12
