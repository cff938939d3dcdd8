//go:build mips || mipsle

package kernel

import (
	"unsafe"

	"github.com/gowrt/gowrt/idle"
)

// ELF program-header facts (the image's own headers are loaded at imageBase
// as part of the first PT_LOAD segment).
const (
	elfPhoff   = 28
	elfPhentsz = 42
	elfPhnum   = 44
	ptLoad     = 1
	pfW        = 2
	idleBase   = kseg0 + 0x300 // idle loop copy (below curFrameAddr)
	maxArgs    = 32
)

//go:nosplit
func rd16(a uintptr) uint16 {
	b := (*[2]byte)(unsafePointer(a))
	if bigEndian {
		return uint16(b[0])<<8 | uint16(b[1])
	}
	return uint16(b[1])<<8 | uint16(b[0])
}

//go:nosplit
func cstrlen(a uintptr) uintptr {
	n := uintptr(0)
	for n < 4096 && *(*byte)(unsafePointer(a + n)) != 0 {
		n++
	}
	return n
}

//go:nosplit
func jumpTo(target uintptr) uint32 { return 0x08000000 | uint32(target>>2)&0x03ffffff }

//go:nosplit
func bootFail(msg string) {
	kputs("gowrt: boot: ")
	kputs(msg)
	kputs("\n")
	platformReset()
	waitForever()
}

// boot runs once, from Entry, on the kernel stack with interrupts off. It
// returns the Linux initial stack pointer and the Status to run with.
// loaderConfig is CP0 Config as the loader left it (Entry has set kseg0
// write-back since, see setCacheK0).
//
//go:nosplit
func boot(argc, argv, envp, memsize, loaderConfig uint32) (sp, status uint32) {
	k := ks()
	for a := uintptr(kstateAddr); a < kstackBase; a += 4 {
		*mem32(a) = 0
	}
	k.loaderConfig = loaderConfig
	k.bootCount = readCount()
	k.lastCount = k.bootCount
	k.baseTicks = uint64(k.bootCount)
	k.kernG[0], k.kernG[1], k.kernG[2], k.kernG[3] = kstackBase, kstackTop, kstackBase+4096, kstackBase+4096
	k.idleG = k.kernG
	copy(k.boardName[:], platformName())
	// Any exception before the program runs is a kernel bug: make the
	// trap entry treat it as nested (dump and halt).
	*mem32(inTrapAddr) = 1
	*mem32(curFrameAddr) = uint32(uintptrOf(&k.threads[0].fr))

	// Exception vectors: jumps into the handlers (all in kseg0's first
	// 256 MiB, so a J reaches them).
	refill, general, _ := addrs()
	*mem32(vecRefill) = jumpTo(refill)
	*mem32(vecRefill + 4) = 0
	*mem32(vecGeneral) = jumpTo(general)
	*mem32(vecGeneral + 4) = 0
	*mem32(vecIntr) = jumpTo(general)
	*mem32(vecIntr + 4) = 0
	syncICache(kseg0, 0x300)

	// Page directory: every slot points at the all-invalid page.
	zeroPage(zeroPTEAddr)
	for i := uintptr(0); i < 1024; i++ {
		*mem32(pgdAddr + i*4) = zeroPTEAddr
	}
	tlbEntries := (readConfig1()>>25)&63 + 1
	tlbInit(tlbEntries)

	// RAM reachable through kseg0.
	ram := uintptr(platformRAM(memsize)) &^ (pageSize - 1)
	if ram > 256<<20 {
		ram = 256 << 20
	}
	if ram < 4<<20 {
		bootFail("the platform reports less than 4 MiB of RAM")
	}
	k.ramSize = uint32(ram)
	k.mem.ramTop = ram

	// Find the data segment in the image's own program headers.
	phoff := uintptr(*mem32(imageBase + elfPhoff))
	phnum := uintptr(rd16(imageBase + elfPhnum))
	var dataVA, dataPA, filesz, memsz, imageEnd uintptr
	for i := uintptr(0); i < phnum && i < 16; i++ {
		ph := imageBase + phoff + i*32
		if *mem32(ph) != ptLoad {
			continue
		}
		va, pa := uintptr(*mem32(ph + 8)), uintptr(*mem32(ph + 12))
		fs, ms, fl := uintptr(*mem32(ph + 16)), uintptr(*mem32(ph + 20)), *mem32(ph + 24)
		if fl&pfW != 0 {
			dataVA, dataPA, filesz, memsz = va, pa, fs, ms
			continue
		}
		if end := pa - kseg0 + ms; end > imageEnd {
			imageEnd = end
		}
	}
	if dataVA < kseg2 || dataPA < kseg0 || dataPA >= kseg1 {
		bootFail("image not built by gowrt build (data segment must be linked at -D 0xc0000000 and loaded after the text)")
	}
	dataPA -= kseg0
	if (dataPA^dataVA)&(colours*pageSize-1) != 0 {
		bootFail("data segment's physical address does not match its cache colour (rebuild with gowrt build)")
	}
	dataFileEnd := (dataPA + filesz + pageSize - 1) &^ (pageSize - 1)
	if dataFileEnd > ram {
		bootFail("image larger than RAM")
	}

	// Free frames: everything but the kernel area's used parts (its
	// unused ones: kernelAreaFree), the image and the frame stack itself
	// (at the top of RAM).
	nframes := ram >> pageShift
	k.mem.colourCap = uint32(nframes/colours + 1)
	stackBytes := (uintptr(k.mem.colourCap)*colours*4 + pageSize - 1) &^ (pageSize - 1)
	k.mem.freeStack = kseg0 + ram - stackBytes
	for pa := ram - stackBytes; pa > 0; {
		pa -= pageSize
		if pa < imageBase-kseg0 && !kernelAreaFree(pa) || (pa >= imageBase-kseg0 && pa < imageEnd) ||
			(pa >= dataPA&^(pageSize-1) && pa < dataFileEnd) {
			continue
		}
		k.freeFrame(pa)
	}
	k.mem.framesBoot = k.mem.nfree
	// Keep back enough frames for the page tables of all of RAM in use.
	k.mem.limit = k.mem.nfree - ptSlack - uint32(ram>>pdShift)

	// Map the initial data pages where the loader put them; zero the rest
	// of the last one (the start of BSS). BSS beyond is demand-zero.
	k.mem.dataStart = dataVA &^ (pageSize - 1)
	// gowrt build sets the segment's memsz to its filesz so the loader
	// does not zero (and so back) the BSS; the BSS ends at runtime.end.
	if e := bssEnd(); e > dataVA+memsz {
		memsz = e - dataVA
	}
	k.mem.dataEnd = (dataVA + memsz + pageSize - 1) &^ (pageSize - 1)
	k.mem.mmapBase = userBase
	for off := uintptr(0); off < filesz; off += pageSize {
		p := k.ptePtr(dataVA+off, true)
		pa := (dataPA + off) &^ (pageSize - 1)
		*mem32(p) = uint32(pa>>pageShift)<<ptePFNSh | pteCached | pteV | pteD
	}
	for a := kseg0 + dataPA + filesz; a&(pageSize-1) != 0; a++ {
		*(*byte)(unsafePointer(a)) = 0
	}
	k.addVMA(k.mem.dataStart, k.mem.dataEnd, protRead|protWrite)
	k.findAtomicLock()

	// Interrupt controllers: every line masked but the console's.
	k.rootPins = platformInit() & 0x7c // IP2-IP6: IP0/1 are software, IP7 the timer
	n, con, reserved := platformIntrLines()
	if n < 0 || n > maxIRQ {
		bootFail("the platform's interrupt controller has more than 64 lines")
	}
	k.irqLines = int32(n)
	k.consoleLine = -1
	if con >= 0 && con < n {
		k.consoleLine = int32(con)
	}
	k.reservedLines = reserved
	for l := 0; l < n; l++ {
		if reserved&(1<<uint(l)) == 0 && int32(l) != k.consoleLine {
			k.pinsMasked |= platformIntrMask(l) & k.rootPins
		}
	}
	if k.consoleLine >= 0 {
		k.pinsMasked &^= platformIntrUnmask(int(k.consoleLine)) & k.rootPins
	}

	// Clock: the Count rate (how long finding it took is reported), wall
	// time from the board's RTC if it has one.
	c0 := readCount()
	hz := platformCountHz()
	k.calibTicks = readCount() - c0
	if hz == 0 {
		bootFail("the platform reports no CP0 Count frequency")
	}
	k.setClockRate(hz)
	k.wallSec = platformWallClock()

	// Arguments: QEMU's argv[1] is the -append string; env holds rngseed.
	k.parseBootArgs(uintptr(argc), uintptr(argv), uintptr(envp))

	// The idle loop, copied so its window is 16-byte aligned.
	*mem32(inTrapAddr) = 0
	writeStatus(0) // BEV off: TLB refills now work (the data segment is mapped)
	*mem32(inTrapAddr) = 1
	start, win := idle.Placement(idleBase)
	for i := range idle.Code {
		*mem32(start + uintptr(i)*4) = idle.Code[i]
	}
	syncICache(start, uintptr(len(idle.Code))*4)
	if k.flags&kfNaiveIdle != 0 {
		*mem32(naiveWinAddr) = uint32(win)
	} else {
		*mem32(waitWinAddr) = uint32(win)
	}
	k.idleFr[fEPC] = uint32(start)
	k.idleWaitEnd = uint32(win + idle.WindowSize)
	k.idleFr[4] = uint32(uintptr(unsafe.Pointer(&k.runnable)))
	k.idleFr[5] = sysSchedYield
	k.idleFr[29] = kstackBase - 64
	k.idleFr[30] = uint32(uintptr(unsafe.Pointer(&k.idleG)))
	k.idleFr[fStatus] = stIE

	// Standard input, output and error are the console.
	for i := 0; i < 3; i++ {
		k.fds[i].kind = fdConsole
	}

	// Thread 0 is the program's main thread.
	k.nextTid = 1
	k.threads[0].tid = 1
	k.threads[0].state = tRunnable
	k.nthr = 1
	k.cur = 0
	k.setStatusRun()
	k.arm(k.nanotime(), 0)

	sp = k.buildStack()
	*mem32(inTrapAddr) = 0
	return sp, k.statusRun&^stEXL | stIE
}

//go:nosplit
func hexval(c byte) uint32 {
	switch {
	case c >= '0' && c <= '9':
		return uint32(c - '0')
	case c >= 'a' && c <= 'f':
		return uint32(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return uint32(c-'A') + 10
	}
	return 0
}

//go:nosplit
func strEq(a uintptr, n uintptr, s string) bool {
	if n != uintptr(len(s)) {
		return false
	}
	for i := uintptr(0); i < n; i++ {
		if *(*byte)(unsafePointer(a + i)) != s[i] {
			return false
		}
	}
	return true
}

// parseBootArgs reads the loader's argv/env tables, the MIPS firmware
// convention YAMON set and QEMU's malta loader follows (hw/mips/malta.c,
// load_kernel): argv[1] is the command line (QEMU's -append), env is
// name/value pairs, including QEMU's rngseed.
//
//go:nosplit
func (k *kstate) parseBootArgs(argc, argv, envp uintptr) {
	k.rngKey[0] = readCount()
	if argv >= kseg0 && argv < kseg1 && argc >= 2 {
		cl := uintptr(*mem32(argv + 4))
		if cl >= kseg0 && cl < kseg1 {
			n := cstrlen(cl)
			if n > uintptr(len(k.cmdline)) {
				n = uintptr(len(k.cmdline))
			}
			for i := uintptr(0); i < n; i++ {
				k.cmdline[i&255] = *(*byte)(unsafePointer(cl + i))
			}
			k.cmdlineLen = uint32(n)
		}
	}
	if envp >= kseg0 && envp < kseg1 {
		for i := uintptr(0); i < 32; i += 2 {
			name := uintptr(*mem32(envp + i*4))
			if name < kseg0 || name >= kseg1 {
				break
			}
			val := uintptr(*mem32(envp + i*4 + 4))
			if val < kseg0 || val >= kseg1 {
				break
			}
			if strEq(name, cstrlen(name), "rngseed") {
				n := cstrlen(val)
				for j := uintptr(0); j+1 < n && j < 64; j += 2 {
					b := hexval(*(*byte)(unsafePointer(val + j)))<<4 | hexval(*(*byte)(unsafePointer(val + j + 1)))
					w := (j / 8) & 7
					k.rngKey[w] ^= b << ((j / 2 % 4) * 8)
				}
			}
		}
	}
	// The board's seed material, mixed into the key so far (the loader's
	// seed): the key becomes what platformSeed leaves in the buffer.
	keyToSeed(&k.rngKey, &k.seed)
	platformSeed(&k.seed)
	seedToKey(&k.seed, &k.rngKey)
	k.rngKey[7] ^= readCount()
	// Kernel switches in the command line.
	k.forEachToken(func(a, n uintptr) bool {
		switch {
		case strEq(a, n, "ktrace"):
			k.flags |= kfTrace
		case strEq(a, n, "kidle=naive"):
			k.flags |= kfNaiveIdle
		case strEq(a, n, "knosig"):
			k.flags |= kfNoSig
		case strEq(a, n, "ktest"):
			k.flags |= kfTest
		default:
			return k.hazardToken(a, n)
		}
		return true
	})
}

// forEachToken calls f for every space-separated command-line token; f
// returns true for tokens the kernel consumed.
//
//go:nosplit
func (k *kstate) forEachToken(f func(a, n uintptr) bool) {
	base := uintptr(unsafe.Pointer(&k.cmdline[0]))
	n := uintptr(k.cmdlineLen)
	for i := uintptr(0); i < n; {
		for i < n && *(*byte)(unsafePointer(base + i)) == ' ' {
			i++
		}
		j := i
		for j < n && *(*byte)(unsafePointer(base + j)) != ' ' {
			j++
		}
		if j > i {
			f(base+i, j-i)
		}
		i = j
	}
}

//go:nosplit
func isKernelToken(a, n uintptr) bool {
	return strEq(a, n, "ktrace") || strEq(a, n, "kidle=naive") || strEq(a, n, "knosig") || strEq(a, n, "ktest") || isHazardToken(a, n)
}

//go:nosplit
func hasEq(a, n uintptr) bool {
	for i := uintptr(0); i < n; i++ {
		if *(*byte)(unsafePointer(a + i)) == '=' {
			return true
		}
	}
	return false
}

// buildStack lays out the Linux initial stack below ustackTop:
// argc, argv..., 0, envp..., 0, auxv (AT_PAGESZ, AT_RANDOM), AT_NULL; the
// strings and the 16 AT_RANDOM bytes above it.
//
//go:nosplit
func (k *kstate) buildStack() uint32 {
	top := uintptr(ustackTop)
	put := func(a, n uintptr) uintptr { // copy a string, NUL-terminated
		top -= n + 1
		for i := uintptr(0); i < n; i++ {
			*(*byte)(unsafePointer(top + i)) = *(*byte)(unsafePointer(a + i))
		}
		*(*byte)(unsafePointer(top + n)) = 0
		return top
	}
	var argv, envp [maxArgs]uint32
	nargv, nenv := 0, 0
	name := "gowrt"
	argv[0] = uint32(put(uintptr(unsafe.Pointer(unsafe.StringData(name))), uintptr(len(name))))
	nargv = 1
	ownLimit := false
	k.forEachToken(func(a, n uintptr) bool {
		if isKernelToken(a, n) {
			return true
		}
		if n >= uintptr(len(goMemLimitVar)) && strEq(a, uintptr(len(goMemLimitVar)), goMemLimitVar) {
			ownLimit = true
		}
		if hasEq(a, n) {
			if nenv < maxArgs-1 {
				envp[nenv&(maxArgs-1)] = uint32(put(a, n))
				nenv++
			}
		} else if nargv < maxArgs-1 {
			argv[nargv&(maxArgs-1)] = uint32(put(a, n))
			nargv++
		}
		return true
	})
	if k.flags&kfNoSig != 0 && nenv < maxArgs-1 {
		s := "GODEBUG=asyncpreemptoff=1"
		envp[nenv&(maxArgs-1)] = uint32(put(uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(len(s))))
		nenv++
	}
	if !ownLimit && nenv < maxArgs-1 { // overcommit.go
		var lim [32]byte
		n := goMemLimitEnv(&lim, k.mem.limit)
		envp[nenv&(maxArgs-1)] = uint32(put(uintptr(unsafe.Pointer(&lim[0])), uintptr(n)))
		nenv++
	}
	top &^= 15
	top -= 16
	random := top
	for i := uintptr(0); i < 16; i++ {
		*(*byte)(unsafePointer(random + i)) = k.randByte()
	}
	words := 1 + nargv + 1 + nenv + 1 + 6
	sp := (top - uintptr(words)*4) &^ 7
	w := sp
	push := func(v uint32) {
		*mem32(w) = v
		w += 4
	}
	push(uint32(nargv))
	for i := 0; i < nargv; i++ {
		push(argv[i&(maxArgs-1)])
	}
	push(0)
	for i := 0; i < nenv; i++ {
		push(envp[i&(maxArgs-1)])
	}
	push(0)
	push(6) // AT_PAGESZ
	push(pageSize)
	push(25) // AT_RANDOM
	push(uint32(random))
	push(0) // AT_NULL
	push(0)
	return uint32(sp)
}
