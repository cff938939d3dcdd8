//go:build mips || mipsle

package kernel

import "unsafe"

// Page-table entries use the EntryLo layout directly, so the refill handler
// copies them into the TLB unchanged: PFN<<6 | C<<3 | D | V | G.
const (
	pteV      = 1 << 1
	pteD      = 1 << 2
	pteCached = 3 << 3 // cacheable noncoherent, write-back
	ptePFNSh  = 6
	pdShift   = 22 // each directory slot maps 4 MiB
	userTop   = 0x80000000
	userBase  = 0x00400000 // below: never mapped, so nil dereferences fault
	// The program's data+BSS live in kseg2 (the Go linker loses the data
	// contents when -D is below -T), the heap and mmap space in kuseg.
	ptSlack = 16 // frames kept back for page-table pages, plus one per 4 MiB of RAM
)

// --- physical frames --------------------------------------------------

// Frames are kept in one free stack per cache colour. The 24K/74K D-cache is
// virtually indexed: with 8 or 16 KiB per way, two mappings of a frame whose
// addresses differ in bits 12-13 would sit in different cache lines. The
// kernel reaches program pages through kseg0 (virtual = physical), so a
// demand-zero page gets a frame whose colour matches its virtual address,
// and the data segment is loaded at a 64 KiB-aligned physical address (cmd
// gowrt) so its colours match too. QEMU does not model caches; this matters
// on hardware.
const (
	colours    = 4 // 16 KiB / 4 KiB: covers ways up to 16 KiB
	colourMask = colours - 1
)

//go:nosplit
func (k *kstate) colourStack(c uint32) uintptr {
	return k.mem.freeStack + uintptr(c&colourMask)*uintptr(k.mem.colourCap)*4
}

// allocFrameColour takes a frame of colour c, or of any colour if none is
// left (counted: on hardware such a page would need cache maintenance).
//
//go:nosplit
func (k *kstate) allocFrameColour(c uint32) (pa uintptr, ok bool) {
	m := &k.mem
	if m.nfree == 0 {
		return 0, false
	}
	if m.colourFree[c&colourMask] == 0 {
		m.colourMisses++
		for i := uint32(0); i < colours; i++ {
			if m.colourFree[i&colourMask] > 0 {
				c = i
				break
			}
		}
	}
	c &= colourMask
	m.colourFree[c]--
	m.nfree--
	pa = uintptr(*mem32(k.colourStack(c) + uintptr(m.colourFree[c])*4)) << pageShift
	if used := m.framesBoot - m.nfree; used > m.peakUsed {
		m.peakUsed = used
	}
	return pa, true
}

// allocFrame takes a frame for the kernel's own use (any colour: the
// kernel only reaches it through kseg0), from the fullest colour.
//
//go:nosplit
func (k *kstate) allocFrame() (pa uintptr, ok bool) {
	best := uint32(0)
	for i := uint32(1); i < colours; i++ {
		if k.mem.colourFree[i&colourMask] > k.mem.colourFree[best&colourMask] {
			best = i
		}
	}
	return k.allocFrameColour(best)
}

//go:nosplit
func (k *kstate) freeFrame(pa uintptr) {
	m := &k.mem
	c := uint32(pa>>pageShift) & colourMask
	*mem32(k.colourStack(c) + uintptr(m.colourFree[c&colourMask])*4) = uint32(pa >> pageShift)
	m.colourFree[c&colourMask]++
	m.nfree++
}

//go:nosplit
func zeroPage(kva uintptr) {
	p := (*[pageSize / 4]uint32)(unsafe.Add(nil, kva))
	for i := range p {
		p[i] = 0
	}
}

// --- page table -------------------------------------------------------

// ptePtr returns the page-table slot for va, creating the page-table page
// if create is set. It returns 0 if there is none (or no memory for one).
//
//go:nosplit
func (k *kstate) ptePtr(va uintptr, create bool) uintptr {
	pd := mem32(pgdAddr + (va>>pdShift)*4)
	pt := uintptr(*pd)
	if pt == zeroPTEAddr {
		if !create {
			return 0
		}
		pa, ok := k.allocFrame()
		if !ok {
			return 0
		}
		k.mem.ptPages++
		pt = kseg0 + pa
		zeroPage(pt)
		*pd = uint32(pt)
	}
	return pt + ((va>>pageShift)&1023)*4
}

// --- address-space regions ---------------------------------------------

// findVMA returns the index of the region containing va, or -1.
//
//go:nosplit
func (k *kstate) findVMA(va uintptr) int {
	m := &k.mem
	lo, hi := 0, m.nvma
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		v := &m.vmas[mid&(maxVMA-1)]
		if va < v.start {
			hi = mid
		} else if va >= v.end {
			lo = mid + 1
		} else {
			return mid
		}
	}
	return -1
}

// rangeFree reports whether no region overlaps [start, end).
//
//go:nosplit
func (k *kstate) rangeFree(start, end uintptr) bool {
	m := &k.mem
	for i := 0; i < m.nvma; i++ {
		v := &m.vmas[i&(maxVMA-1)]
		if v.start < end && start < v.end {
			return false
		}
	}
	return true
}

// findGap returns the lowest free range of n bytes at or above from.
//
//go:nosplit
func (k *kstate) findGap(from, n uintptr) uintptr {
	m := &k.mem
	a := from
	for i := 0; i < m.nvma; i++ {
		v := &m.vmas[i&(maxVMA-1)]
		if v.end <= a {
			continue
		}
		if v.start >= a+n {
			break
		}
		a = v.end
	}
	if a+n > userTop || a+n < a {
		return 0
	}
	return a
}

// removeRange cuts [start, end) out of the region list, splitting regions
// as needed. It reports false only if the table is full.
//
//go:nosplit
func (k *kstate) removeRange(start, end uintptr) bool {
	m := &k.mem
	for i := 0; i < m.nvma; i++ {
		v := &m.vmas[i&(maxVMA-1)]
		if v.end <= start || v.start >= end {
			continue
		}
		switch {
		case v.start >= start && v.end <= end: // fully covered
			k.deleteVMA(i)
			i--
		case v.start < start && v.end > end: // split in two
			if m.nvma >= maxVMA {
				return false
			}
			tail := vma{start: end, end: v.end, prot: v.prot}
			v.end = start
			k.insertVMA(i+1, tail)
			return true
		case v.start < start:
			v.end = start
		default:
			v.start = end
		}
	}
	return true
}

//go:nosplit
func (k *kstate) deleteVMA(i int) {
	m := &k.mem
	for j := i; j+1 < m.nvma; j++ {
		m.vmas[j&(maxVMA-1)] = m.vmas[(j+1)&(maxVMA-1)]
	}
	m.nvma--
}

//go:nosplit
func (k *kstate) insertVMA(i int, v vma) {
	m := &k.mem
	for j := m.nvma; j > i; j-- {
		m.vmas[j&(maxVMA-1)] = m.vmas[(j-1)&(maxVMA-1)]
	}
	m.vmas[i&(maxVMA-1)] = v
	m.nvma++
}

// addVMA inserts a region into a free range, merging with equal neighbours.
//
//go:nosplit
func (k *kstate) addVMA(start, end uintptr, prot uint32) bool {
	m := &k.mem
	i := 0
	for i < m.nvma && m.vmas[i&(maxVMA-1)].start < start {
		i++
	}
	if i > 0 {
		p := &m.vmas[(i-1)&(maxVMA-1)]
		if p.end == start && p.prot == prot {
			p.end = end
			if i < m.nvma {
				n := &m.vmas[i&(maxVMA-1)]
				if n.start == end && n.prot == prot {
					p.end = n.end
					k.deleteVMA(i)
				}
			}
			return true
		}
	}
	if i < m.nvma {
		n := &m.vmas[i&(maxVMA-1)]
		if n.start == end && n.prot == prot {
			n.start = start
			return true
		}
	}
	if m.nvma >= maxVMA {
		return false
	}
	k.insertVMA(i, vma{start: start, end: end, prot: prot})
	return true
}

// writablePages counts the pages of [start, end) covered by writable regions.
//
//go:nosplit
func (k *kstate) writablePages(start, end uintptr) uint32 {
	m := &k.mem
	n := uint32(0)
	for i := 0; i < m.nvma; i++ {
		v := &m.vmas[i&(maxVMA-1)]
		if v.prot&protWrite == 0 || v.end <= start || v.start >= end {
			continue
		}
		s, e := v.start, v.end
		if s < start {
			s = start
		}
		if e > end {
			e = end
		}
		if s < k.mem.dataEnd && e > k.mem.dataStart {
			continue // the program image is charged per touched page
		}
		n += uint32((e - s) >> pageShift)
	}
	return n
}

// dropPages frees the frames behind [start, end) and removes them from the
// TLB; the pages read as zero when next touched. It returns the number of
// frames freed.
//
//go:nosplit
func (k *kstate) dropPages(start, end uintptr) (freed uint32) {
	for va := start; va < end; {
		if *mem32(pgdAddr + (va>>pdShift)*4) == zeroPTEAddr {
			va = (va>>pdShift + 1) << pdShift
			continue
		}
		p := k.ptePtr(va, false)
		if pte := *mem32(p); pte&pteV != 0 {
			*mem32(p) = 0
			k.freeFrame(uintptr(pte>>ptePFNSh) << pageShift)
			freed++
			tlbInvalidate(va)
			if va >= k.mem.dataStart && va < k.mem.dataEnd && k.mem.bssPages > 0 {
				k.mem.bssPages--
			}
		}
		va += pageSize
	}
	return freed
}

// --- system calls ------------------------------------------------------

//go:nosplit
func (k *kstate) mmap(fr *frame, addr, n uintptr, prot, flags, fd uint32) {
	if n == 0 || addr&(pageSize-1) != 0 {
		fail(fr, eINVAL)
		return
	}
	if flags&mapAnon == 0 {
		fail(fr, eNODEV) // no files to map
		return
	}
	n = (n + pageSize - 1) &^ (pageSize - 1)
	if n >= userTop {
		fail(fr, eNOMEM)
		return
	}
	m := &k.mem
	var start uintptr
	if flags&mapFixed != 0 {
		if addr < userBase || addr+n > userTop || addr+n < addr {
			fail(fr, eINVAL)
			return
		}
		start = addr
	} else if addr >= userBase && addr+n <= userTop && addr+n > addr && k.rangeFree(addr, addr+n) {
		start = addr
	} else {
		start = k.findGap(m.mmapBase, n)
		if start == 0 {
			fail(fr, eNOMEM)
			return
		}
	}
	end := start + n
	// Commit charge: new writable pages minus those being replaced.
	newW := uint32(0)
	if prot&protWrite != 0 {
		newW = uint32(n >> pageShift)
	}
	oldW := k.writablePages(start, end)
	if mapTooLarge(newW, oldW, k.ramSize>>pageShift) { // heuristic overcommit: overcommit.go
		fail(fr, eNOMEM)
		return
	}
	if flags&mapFixed != 0 {
		m.returned += uint64(k.dropPages(start, end))
		if !k.removeRange(start, end) {
			fail(fr, eNOMEM)
			return
		}
		m.committed -= oldW
	}
	if !k.addVMA(start, end, prot) {
		fail(fr, eNOMEM)
		return
	}
	m.committed += newW
	ok(fr, uint32(start))
}

//go:nosplit
func (k *kstate) munmap(fr *frame, addr, n uintptr) {
	if addr&(pageSize-1) != 0 || n == 0 {
		fail(fr, eINVAL)
		return
	}
	end := (addr + n + pageSize - 1) &^ (pageSize - 1)
	if end > userTop || end < addr {
		end = userTop
	}
	k.mem.committed -= k.writablePages(addr, end)
	k.mem.returned += uint64(k.dropPages(addr, end))
	if !k.removeRange(addr, end) {
		fail(fr, eNOMEM)
		return
	}
	ok(fr, 0)
}

//go:nosplit
func (k *kstate) madvise(fr *frame, addr, n uintptr, advice uint32) {
	if addr&(pageSize-1) != 0 {
		fail(fr, eINVAL)
		return
	}
	if advice == madvDontneed || advice == madvFree {
		end := (addr + n + pageSize - 1) &^ (pageSize - 1)
		if end > userTop || end < addr {
			fail(fr, eINVAL)
			return
		}
		// The runtime's scavenger returns idle heap pages this way
		// (runtime/mem_linux.go, sysUnusedOS): their frames go back
		// to the free pool and the pages read as zero when touched
		// again, which is what both advices promise on Linux.
		k.mem.returned += uint64(k.dropPages(addr, end))
	}
	ok(fr, 0)
}

// --- faults and program-memory access ----------------------------------

// pageIn materialises the page containing va if a region allows the access.
//
//go:nosplit
func (k *kstate) pageIn(va uintptr, write bool) bool {
	i := k.findVMA(va)
	if i < 0 {
		return false
	}
	v := &k.mem.vmas[i&(maxVMA-1)]
	if v.prot&(protRead|protWrite) == 0 || (write && v.prot&protWrite == 0) {
		return false
	}
	p := k.ptePtr(va, true)
	if p == 0 {
		k.oom(va)
		return false
	}
	if *mem32(p)&pteV != 0 {
		return true // raced with nothing: already present (stale TLB entry)
	}
	inImage := va >= k.mem.dataStart && va < k.mem.dataEnd
	// Anonymous pages may take any free frame (allocFrameColour fails
	// when none is left); BSS pages keep the reserve, as the program's
	// own image is charged per touched page.
	if inImage && !mayPageIn(k.mem.nfree) {
		k.oom(va)
		return false
	}
	pa, ok := k.allocFrameColour(uint32(va>>pageShift) & colourMask)
	if !ok {
		k.oom(va)
		return false
	}
	if inImage {
		k.mem.bssPages++
	}
	zeroPage(kseg0 + pa)
	pte := uint32(pa>>pageShift)<<ptePFNSh | pteCached | pteV
	if v.prot&protWrite != 0 {
		pte |= pteD
	}
	*mem32(p) = pte
	k.stats.pageFaults++
	return true
}

//go:nosplit
func (k *kstate) oom(va uintptr) {
	kputs("gowrt: out of memory paging in ")
	kputhex(uint32(va))
	kputs("\n")
	k.exit(137)
}

// kaddr translates a program address for kernel access: kseg0/kseg1 as is,
// kuseg through the page table (faulting pages in). 0 if not accessible.
//
//go:nosplit
func (k *kstate) kaddr(va uintptr, write bool) uintptr {
	if va >= kseg0 && va < kseg2 {
		return va
	}
	for try := 0; try < 2; try++ {
		if p := k.ptePtr(va, false); p != 0 {
			pte := *mem32(p)
			if pte&pteV != 0 {
				if write && pte&pteD == 0 {
					return 0
				}
				return kseg0 + uintptr(pte>>ptePFNSh)<<pageShift + va&(pageSize-1)
			}
		}
		if !k.pageIn(va, write) {
			return 0
		}
	}
	return 0
}

//go:nosplit
func (k *kstate) ur32(va uintptr) (uint32, bool) {
	if va&3 != 0 {
		return 0, false
	}
	p := k.kaddr(va, false)
	if p == 0 {
		return 0, false
	}
	return *mem32(p), true
}

//go:nosplit
func (k *kstate) uw32(va uintptr, v uint32) bool {
	if va&3 != 0 {
		return false
	}
	p := k.kaddr(va, true)
	if p == 0 {
		return false
	}
	*mem32(p) = v
	return true
}

//go:nosplit
func (k *kstate) uw8(va uintptr, v byte) bool {
	p := k.kaddr(va, true)
	if p == 0 {
		return false
	}
	*(*byte)(unsafe.Add(nil, p)) = v
	return true
}

//go:nosplit
func (k *kstate) ur8(va uintptr) (byte, bool) {
	p := k.kaddr(va, false)
	if p == 0 {
		return 0, false
	}
	return *(*byte)(unsafe.Add(nil, p)), true
}

//go:nosplit
func (k *kstate) ur64(va uintptr) (uint64, bool) {
	hi, ok1 := k.ur32(va + hiOff)
	lo, ok2 := k.ur32(va + loOff)
	return uint64(hi)<<32 | uint64(lo), ok1 && ok2
}

//go:nosplit
func (k *kstate) uw64(va uintptr, v uint64) bool {
	return k.uw32(va+hiOff, uint32(v>>32)) && k.uw32(va+loOff, uint32(v))
}

// copyOut copies n bytes from kernel address src to program address dst.
//
//go:nosplit
func (k *kstate) copyOut(dst, src, n uintptr) bool {
	for n > 0 {
		p := k.kaddr(dst, true)
		if p == 0 {
			return false
		}
		c := pageSize - dst&(pageSize-1)
		if c > n {
			c = n
		}
		for i := uintptr(0); i < c; i++ {
			*(*byte)(unsafe.Add(nil, p+i)) = *(*byte)(unsafe.Add(nil, src+i))
		}
		dst += c
		src += c
		n -= c
	}
	return true
}
