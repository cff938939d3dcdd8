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
//   - a few frames stay back for page-table pages (pageInReserve), so
//     touching memory cannot starve the page tables that map it.
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
func mapTooLarge(newW, oldW, ramPages uint32) bool {
	return newW > oldW && newW-oldW > ramPages
}

// mayPageIn reports whether a demand-zero page may take one of the nfree
// free frames.
func mayPageIn(nfree uint32) bool { return nfree > pageInReserve }
