//go:build mips || mipsle

package kernel

// Physical memory for device DMA (trap side of sysGowrtDMAAlloc).
//
// busdma's MIPS backend (busdma/mipsdma) needs physically contiguous memory
// that it reaches through kseg0 (cached) and kseg1 (uncached). Program
// pages cannot serve: they are scattered frames behind the page table, and
// the Go runtime returns idle heap pages with madvise, which frees their
// frames while a device might still write them. So the kernel hands out
// runs of frames that leave the frame pool for good (DMA memory is set up
// once, when a driver attaches, and never freed); the program side
// (DMA.AllocPhys) carves them into buffers.

const (
	dmaMaxPages = 4096 // 16 MiB per call
	// bitsPerFrame: a 4 KiB scratch frame holds the free bits of 32768
	// frames (128 MiB); two cover the 256 MiB kseg0 can reach.
	bitsPerFrame = pageSize * 8
)

// dmaAlloc takes npages physically contiguous free frames whose first frame
// number is a multiple of alignPages, zeroes them, removes them from the
// frame pool and returns their physical address.
//
//go:nosplit
func (k *kstate) dmaAlloc(fr *frame, npages, alignPages uint32) {
	m := &k.mem
	if npages == 0 || npages > dmaMaxPages || alignPages == 0 || alignPages&(alignPages-1) != 0 || alignPages > dmaMaxPages {
		fail(fr, eINVAL)
		return
	}
	if m.nfree < npages+2+pageInReserve || m.limit < npages {
		fail(fr, eNOMEM)
		return
	}
	// Scratch bitmap of free frames.
	b0, ok0 := k.allocFrame()
	b1, ok1 := k.allocFrame()
	if !ok0 || !ok1 {
		if ok0 {
			k.freeFrame(b0)
		}
		if ok1 {
			k.freeFrame(b1)
		}
		fail(fr, eNOMEM)
		return
	}
	zeroPage(kseg0 + b0)
	zeroPage(kseg0 + b1)
	for c := uint32(0); c < colours; c++ {
		for i := uint32(0); i < m.colourFree[c&colourMask]; i++ {
			pfn := *mem32(k.colourStack(c) + uintptr(i)*4)
			w := dmaBitWord(b0, b1, pfn)
			*mem32(w) |= 1 << (pfn & 31)
		}
	}
	// Highest aligned run: low memory stays for the program.
	nfr := uint32(m.ramTop >> pageShift)
	if nfr > 2*bitsPerFrame {
		nfr = 2 * bitsPerFrame
	}
	run, start, found := uint32(0), uint32(0), false
	for p := nfr; p > 0; {
		p--
		if *mem32(dmaBitWord(b0, b1, p))&(1<<(p&31)) == 0 {
			run = 0
			continue
		}
		run++
		if run >= npages && p&(alignPages-1) == 0 {
			start, found = p, true
			break
		}
	}
	k.freeFrame(b0)
	k.freeFrame(b1)
	if !found {
		fail(fr, eNOMEM)
		return
	}
	// Take the run's frames out of the colour stacks.
	for c := uint32(0); c < colours; c++ {
		base := k.colourStack(c)
		j := uint32(0)
		n := m.colourFree[c&colourMask]
		for i := uint32(0); i < n; i++ {
			pfn := *mem32(base + uintptr(i)*4)
			if pfn >= start && pfn < start+npages {
				continue
			}
			*mem32(base + uintptr(j)*4) = pfn
			j++
		}
		m.nfree -= n - j
		m.colourFree[c&colourMask] = j
	}
	m.limit -= npages
	for p := start; p < start+npages; p++ {
		zeroPage(kseg0 + uintptr(p)<<pageShift)
	}
	// kseg0 is write-back: the zeroes sit in dirty lines. Push them out
	// and drop the lines, so no line of these frames can later be evicted
	// over what a device wrote, whichever alias (kseg0 buffers synced by
	// busdma, kseg1 descriptor rings) the program uses.
	dcacheWbInv(kseg0+uintptr(start)<<pageShift, uintptr(npages)<<pageShift)
	ok(fr, start<<pageShift)
}

// dmaBitWord returns the kseg0 address of the bitmap word holding pfn's bit.
//
//go:nosplit
func dmaBitWord(b0, b1 uintptr, pfn uint32) uintptr {
	b := b0
	if pfn >= bitsPerFrame {
		b = b1
	}
	return kseg0 + b + uintptr((pfn%bitsPerFrame)>>5)*4
}
