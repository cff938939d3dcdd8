//go:build mips || mipsle

package kernel

// The Go runtime's 64-bit atomics and the time slice.
//
// On mips32 the runtime has no 64-bit LL/SC, so every 64-bit atomic
// (Xadd64, Xchg64, Cas64, Load64, Store64, Or64, And64 in
// internal/runtime/atomic/atomic_mipsx.go; sync/atomic's 64-bit functions
// jump there) takes ONE global spinlock, internal/runtime/atomic.lock.state,
// through lockAndCheck → spinLock(&lock.state). spinLock
// (internal/runtime/atomic/atomic_mipsx.s) spins on LL until the word is
// zero and never yields: it is written for a multiprocessor where the
// holder runs on another CPU. On this uniprocessor kernel, a thread whose
// time slice ends inside its few-instruction critical section leaves every
// other thread that does a 64-bit atomic (the runtime's sysmon does them
// on every wake-up) spinning for a whole slice, 10 ms, once per spinner.
//
// The kernel therefore does not end a slice while the lock word is
// nonzero: pick lets the current thread run on for lockExtendNs and looks
// again, at most lockMaxExtends times in a row (then it preempts anyway and
// counts an overrun), so a holder always leaves its critical section before
// it is descheduled and nobody spins. A thread found inside spinLock's loop
// while the word is nonzero (a holder descheduled anyway: an overrun) is
// switched away at once instead of spinning out its slice.
//
// Finding the word: the linker refuses a //go:linkname pull of
// internal/runtime/atomic.lock (it is not pushed, and Go 1.23's linkname
// check blocks such references to std internals, from Go and assembly
// alike), and switching the check off would have to be done for every
// build that links the kernel. Xadd64 is pushed (atomic_mipsx.go marks it
// //go:linkname for sync/atomic), so the kernel takes its address and
// decodes, at boot, the straight-line code the compiler emits for
// lockAndCheck's call: the word's address built with LUI/ADDIU (or ORI),
// stored to the first argument slot 4(SP), then JAL to a function whose
// body has spinLock's signature (LL r,0(base); BNE r,zero back to the LL;
// a delay slot; SC to the same base). The result is checked (word-aligned,
// inside the data segment); if the code does not have this shape, the
// kernel runs without the extension and says so at boot.

const (
	// lockExtendNs is how long a slice ending while the lock is held is
	// extended before the kernel looks again: the critical section is a
	// handful of instructions, so one extension normally suffices.
	lockExtendNs = 20_000
	// lockMaxExtends bounds the extensions of one slice (160 µs in all),
	// so a thread that somehow keeps the word set cannot keep the CPU.
	lockMaxExtends = 8
	// lockScanWords bounds the instructions the decoder reads per
	// function.
	lockScanWords = 64
)

// atomicLock is what the kernel knows about the runtime's spinlock.
type atomicLock struct {
	addr    uintptr // VA of internal/runtime/atomic.lock.state; 0: not found
	loopPC  uintptr // PC of spinLock's LL (its spin loop is LL, BNE, delay slot)
	extends uint32  // consecutive extensions of the current slice
}

// MIPS32 instruction fields and opcodes used by the decoder.
const (
	opSpecial = 0x00
	opJAL     = 0x03
	opBNE     = 0x05
	opADDIU   = 0x09
	opORI     = 0x0d
	opLUI     = 0x0f
	opSW      = 0x2b
	opLL      = 0x30
	opSC      = 0x38
	regSP     = 29
)

//go:nosplit
func insOp(w uint32) uint32 { return w >> 26 }

//go:nosplit
func insRs(w uint32) uint32 { return w >> 21 & 31 }

//go:nosplit
func insRt(w uint32) uint32 { return w >> 16 & 31 }

//go:nosplit
func insImm(w uint32) uint32 { return w & 0xffff }

// spinLoopAt returns the PC of the spin loop's LL if the function at pc
// begins like spinLock: within its first 8 instructions an LL r,0(b), then
// BNE r,zero branching back to that LL, a delay slot, SC s,0(b).
//
//go:nosplit
func spinLoopAt(pc uintptr) uintptr {
	if pc < imageBase || pc >= kseg1 || pc&3 != 0 {
		return 0
	}
	for i := uintptr(0); i < 8; i++ {
		a := pc + 4*i
		ll := *mem32(a)
		if insOp(ll) != opLL || insImm(ll) != 0 {
			continue
		}
		r, b := insRt(ll), insRs(ll)
		bne := *mem32(a + 4)
		// Branch target = address of the delay slot + offset*4 = a.
		if insOp(bne) != opBNE || insRs(bne) != r || insRt(bne) != 0 || insImm(bne) != 0xfffe {
			return 0
		}
		sc := *mem32(a + 12)
		if insOp(sc) != opSC || insRs(sc) != b || insImm(sc) != 0 {
			return 0
		}
		return a
	}
	return 0
}

// lockCallees bounds the calls followed one level down.
const lockCallees = 4

// scanLockCall scans the function at pc for a JAL to spinLock whose first
// argument (4(SP)) was built from constants. It returns the argument and
// spinLock's loop PC, or else the first lockCallees other functions it
// calls (for a lockAndCheck the compiler did not inline). Not recursive:
// the kernel's code is nosplit.
//
//go:nosplit
func scanLockCall(pc uintptr) (addr, loop uintptr, callees [lockCallees]uintptr) {
	var val [32]uint32
	var known uint32 // bit n: val[n] holds a constant
	arg, argKnown := uint32(0), false
	n := 0
	for i := uintptr(0); i < lockScanWords; i++ {
		a := pc + 4*i
		w := *mem32(a)
		op, rs, rt := insOp(w), insRs(w), insRt(w)
		switch {
		case op == opLUI:
			val[rt], known = insImm(w)<<16, known|1<<rt
		case op == opADDIU && known&(1<<rs) != 0:
			val[rt], known = val[rs]+uint32(int32(int16(insImm(w)))), known|1<<rt
		case op == opORI && known&(1<<rs) != 0:
			val[rt], known = val[rs]|insImm(w), known|1<<rt
		case op == opSW && rs == regSP && insImm(w) == 4:
			arg, argKnown = val[rt], known&(1<<rt) != 0
		case op == opJAL:
			target := (a+4)&0xf0000000 | uintptr(w&0x03ffffff)<<2
			if l := spinLoopAt(target); l != 0 {
				if argKnown {
					return uintptr(arg), l, callees
				}
				return 0, 0, callees
			}
			if n < lockCallees {
				callees[n] = target
				n++
			}
			known, argKnown = 0, false
		case op == opSpecial && w&0x3f == 0x08: // JR: end of the function
			return 0, 0, callees
		case op == opSpecial:
			known &^= 1 << (w >> 11 & 31) // rd written
		case op >= 0x08 && op <= 0x0f || op >= 0x20 && op <= 0x26 || op == opLL:
			known &^= 1 << rt // other immediates and loads write rt
		}
		known &^= 1 // r0 is not a constant we track
	}
	return 0, 0, callees
}

// findAtomicLock locates the runtime's spinlock word at boot (after the
// data segment is known), in Xadd64 or one call below it. It prints a
// warning if it cannot.
//
//go:nosplit
func (k *kstate) findAtomicLock() {
	addr, loop, callees := scanLockCall(atomicXadd64PC())
	for i := 0; i < lockCallees && addr == 0 && callees[i] != 0; i++ {
		addr, loop, _ = scanLockCall(callees[i])
	}
	if addr == 0 || addr&3 != 0 || addr < k.mem.dataStart || addr >= k.mem.dataEnd {
		kputs("kernel: the runtime's 64-bit atomic lock not found; time slices may end inside it\n")
		return
	}
	k.alock.addr, k.alock.loopPC = addr, loop
}

// peek32 reads a program word without faulting a page in: an untouched
// page reads as zero, which is what demand-zero would give.
//
//go:nosplit
func (k *kstate) peek32(va uintptr) uint32 {
	if va&3 != 0 {
		return 0
	}
	if va >= kseg0 && va < kseg2 {
		return *mem32(va)
	}
	p := k.ptePtr(va, false)
	if p == 0 {
		return 0
	}
	pte := *mem32(p)
	if pte&pteV == 0 {
		return 0
	}
	return *mem32(kseg0 + uintptr(pte>>ptePFNSh)<<pageShift + va&(pageSize-1))
}

// atomicLockHeld reports whether some thread holds the runtime's lock.
//
//go:nosplit
func (k *kstate) atomicLockHeld() bool {
	return k.alock.addr != 0 && k.peek32(k.alock.addr) != 0
}

// spinning reports whether t's saved PC is inside spinLock's loop.
//
//go:nosplit
func (k *kstate) spinning(t *thread) bool {
	pc := uintptr(t.fr[fEPC])
	return k.alock.loopPC != 0 && pc >= k.alock.loopPC && pc < k.alock.loopPC+12
}

// noteSpinner records a thread found spinning on the held lock: its tid,
// the 64-bit atomic it is in (RA) and that function's caller (the word
// at SP: spinLock has no frame, and the atomics save their caller's RA at
// 0(SP), atomic_mipsx.go's functions being nosplit with a frame).
//
//go:nosplit
func (k *kstate) noteSpinner(t *thread) {
	k.stats.lockSpinTraps++
	k.stats.lastSpinTid = t.tid
	k.stats.lastSpinRA = t.fr[31]
	k.stats.lastSpinCaller = k.peek32(uintptr(t.fr[29]))
}

// lockCheck decides, at a trap of the running thread cur whose slice has
// ended (expired), whether cur keeps the CPU because the runtime's lock
// is held (run reports true), or must give it up at once (yield: it is
// spinning on a lock another thread holds). Called from pick only.
//
//go:nosplit
func (k *kstate) lockCheck(cur int32, expired bool) (run, yield bool) {
	if k.alock.loopPC == 0 {
		return false, false
	}
	t := k.th(cur)
	spin := k.spinning(t)
	if !expired && !spin {
		return false, false
	}
	if k.peek32(k.alock.addr) == 0 {
		return false, false
	}
	if spin {
		k.noteSpinner(t)
		if k.hazardPlainSlice() { // test hook: always false in the shipped kernel
			return false, false
		}
		return false, true
	}
	if k.hazardPlainSlice() || k.alock.extends >= lockMaxExtends { // hazardPlainSlice: always false in the shipped kernel
		// The slice ends with the lock held (extensions ran out):
		// cur is descheduled anyway; remember where.
		k.stats.lockOverruns++
		k.stats.lastHoldTid, k.stats.lastHoldPC = t.tid, t.fr[fEPC]
		return false, false
	}
	k.alock.extends++
	k.stats.lockExtends++
	return true, false
}
