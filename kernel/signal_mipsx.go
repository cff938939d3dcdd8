//go:build mips || mipsle

package kernel

// Signals (mips numbering) and the o32 rt_sigframe the Go runtime expects
// (Linux arch/mips/kernel/signal.c, struct rt_sigframe; Go's
// runtime/defs_linux_mipsx.go): a 24-byte argument area, siginfo at +24
// (128 bytes), ucontext at +152 (Go's layout, 628 bytes).
const (
	sigILL  = 4
	sigTRAP = 5
	sigFPE  = 8
	sigKILL = 9
	sigBUS  = 10
	sigSEGV = 11
	sigURG  = 21
	sigPROF = 29

	sigDFL = 0
	sigIGN = 1

	saNodefer = 0x40000000

	frameSize    = 784 // 24 + 128 + 628, rounded to 8
	siOff        = 24
	ucOff        = 152
	ucStack      = 8
	ucMcontext   = 24
	scStatus     = 4
	scPC         = 8
	scRegs       = 16
	scMdhi       = 548
	scMdlo       = 556
	ucSigmask    = 612
	siTkill      = 0xfffffffa // SI_TKILL = -6
	siKernel     = 0x80       // SI_KERNEL: what the runtime expects of a setitimer SIGPROF
	segvMaperr   = 1
	segvAccerr   = 2
	busAdraln    = 1
	illIllopc    = 1
	trapBrkpt    = 1
	fpeIntovf    = 2
	maxSigNum    = 128
	sigsetWords  = 4
	sigsetBytes  = 16
	syncSigsMask = 1<<(sigILL-1) | 1<<(sigTRAP-1) | 1<<(sigFPE-1) | 1<<(sigBUS-1) | 1<<(sigSEGV-1)
)

//go:nosplit
func sigbit(sig uint32) uint64 { return 1 << ((sig - 1) & 63) }

//go:nosplit
func (k *kstate) sigaction(fr *frame, sig uint32, act, oact uintptr) {
	if sig == 0 || sig > maxSigNum {
		fail(fr, eINVAL)
		return
	}
	if sig >= numSig {
		// Signals 65..128 exist on mips but nothing raises them: accept
		// and report SIG_DFL, as the runtime requires success.
		if oact != 0 {
			for i := uintptr(0); i < 24; i += 4 {
				k.uw32(oact+i, 0)
			}
		}
		ok(fr, 0)
		return
	}
	a := &k.sigact[sig&127]
	if oact != 0 {
		if !k.uw32(oact, a.flags) || !k.uw32(oact+4, a.handler) ||
			!k.uw32(oact+8, uint32(a.mask)) || !k.uw32(oact+12, uint32(a.mask>>32)) ||
			!k.uw32(oact+16, 0) || !k.uw32(oact+20, 0) {
			fail(fr, eFAULT)
			return
		}
	}
	if act != 0 {
		if sig == sigKILL || sig == 23 /* SIGSTOP on mips */ {
			fail(fr, eINVAL)
			return
		}
		flags, ok1 := k.ur32(act)
		h, ok2 := k.ur32(act + 4)
		m0, ok3 := k.ur32(act + 8)
		m1, ok4 := k.ur32(act + 12)
		if !ok1 || !ok2 || !ok3 || !ok4 {
			fail(fr, eFAULT)
			return
		}
		a.flags, a.handler, a.mask = flags, h, uint64(m1)<<32|uint64(m0)
	}
	ok(fr, 0)
}

//go:nosplit
func (k *kstate) sigprocmask(fr *frame, t *thread, how uint32, set, oset uintptr) {
	old := t.sigmask
	if set != 0 {
		m0, ok1 := k.ur32(set)
		m1, ok2 := k.ur32(set + 4)
		if !ok1 || !ok2 {
			fail(fr, eFAULT)
			return
		}
		m := uint64(m1)<<32 | uint64(m0)
		switch how {
		case sigBlock:
			t.sigmask |= m
		case sigUnblock:
			t.sigmask &^= m
		case sigSetmask:
			t.sigmask = m
		default:
			fail(fr, eINVAL)
			return
		}
		t.sigmask &^= sigbit(sigKILL) | sigbit(23)
	}
	if oset != 0 {
		if !k.uw32(oset, uint32(old)) || !k.uw32(oset+4, uint32(old>>32)) ||
			!k.uw32(oset+8, 0) || !k.uw32(oset+12, 0) {
			fail(fr, eFAULT)
			return
		}
	}
	ok(fr, 0)
}

//go:nosplit
func (k *kstate) onAltstack(t *thread, sp uint32) bool {
	return t.altOn != 0 && sp-t.altSP < t.altSize
}

//go:nosplit
func (k *kstate) sigaltstack(fr *frame, t *thread, ss, oss uintptr) {
	if oss != 0 {
		flags := uint32(ssDisable)
		if t.altOn != 0 {
			flags = 0
			if k.onAltstack(t, fr[29]) {
				flags = ssOnstack
			}
		}
		if !k.uw32(oss, t.altSP) || !k.uw32(oss+4, t.altSize) || !k.uw32(oss+8, flags) {
			fail(fr, eFAULT)
			return
		}
	}
	if ss != 0 {
		sp, ok1 := k.ur32(ss)
		size, ok2 := k.ur32(ss + 4)
		flags, ok3 := k.ur32(ss + 8)
		if !ok1 || !ok2 || !ok3 {
			fail(fr, eFAULT)
			return
		}
		if k.onAltstack(t, fr[29]) {
			fail(fr, ePERM)
			return
		}
		if flags&ssDisable != 0 {
			t.altOn, t.altSP, t.altSize = 0, 0, 0
		} else {
			t.altOn, t.altSP, t.altSize = 1, sp, size
		}
	}
	ok(fr, 0)
}

//go:nosplit
func (k *kstate) tgkill(fr *frame, tid, sig uint32) {
	if sig == 0 || sig >= numSig {
		fail(fr, eINVAL)
		return
	}
	for i := int32(0); i < k.nthr; i++ {
		t := k.th(i)
		if t.state != tFree && (tid == 0 || t.tid == tid) {
			t.sigpend |= sigbit(sig)
			ok(fr, 0)
			return
		}
	}
	fail(fr, eSRCH)
}

// deliverSignals runs at the end of every trap for the thread about to run:
// it delivers one pending, unblocked signal.
//
//go:nosplit
func (k *kstate) deliverSignals(t *thread) {
	p := t.sigpend &^ t.sigmask
	if p == 0 || t.state != tRunnable {
		return
	}
	sig := uint32(1)
	for p&1 == 0 {
		p >>= 1
		sig++
	}
	t.sigpend &^= sigbit(sig)
	a := &k.sigact[sig&127]
	if a.handler == sigDFL || a.handler == sigIGN || k.flags&kfNoSig != 0 {
		return // SIGURG's default is to ignore; nothing else is raised
	}
	code := uint32(siTkill)
	if sig == sigPROF {
		code = siKernel // from the profiling timer (runtime validSIGPROF)
	}
	k.pushSignal(t, sig, code, 0)
}

// pushSignal builds a signal frame for sig on t's alternate stack and makes
// the thread resume in the handler. It reports false if it cannot.
//
//go:nosplit
func (k *kstate) pushSignal(t *thread, sig, code, addr uint32) bool {
	a := &k.sigact[sig&127]
	if t.altOn == 0 || a.handler == sigDFL || a.handler == sigIGN {
		return false
	}
	fr := &t.fr
	sp := t.altSP + t.altSize
	if k.onAltstack(t, fr[29]) {
		sp = fr[29] - 32
	}
	sp = (sp - frameSize) &^ 7
	base := uintptr(sp)
	for i := uintptr(0); i < frameSize; i += 4 {
		if !k.uw32(base+i, 0) {
			return false
		}
	}
	si := base + siOff
	k.uw32(si, sig)
	k.uw32(si+4, code)
	k.uw32(si+12, addr)
	uc := base + ucOff
	k.uw32(uc+ucStack, t.altSP)
	k.uw32(uc+ucStack+4, t.altSize)
	sc := uc + ucMcontext
	k.uw32(sc+scStatus, fr[fStatus])
	k.uw64(sc+scPC, uint64(fr[fEPC]))
	for r := uintptr(1); r < 32; r++ {
		k.uw64(sc+scRegs+r*8, uint64(fr[r&31]))
	}
	k.uw64(sc+scMdhi, uint64(fr[fHI]))
	k.uw64(sc+scMdlo, uint64(fr[fLO]))
	k.uw32(uc+ucSigmask, uint32(t.sigmask))
	k.uw32(uc+ucSigmask+4, uint32(t.sigmask>>32))

	if a.flags&saNodefer == 0 {
		t.sigmask |= sigbit(sig)
	}
	t.sigmask |= a.mask
	_, _, sigret := addrs()
	fr[4] = sig
	fr[5] = uint32(si)
	fr[6] = uint32(uc)
	fr[25] = a.handler
	fr[29] = sp
	fr[31] = uint32(sigret)
	fr[fEPC] = a.handler
	k.stats.signals++
	return true
}

// sigreturn restores the context saved by pushSignal (possibly edited by the
// handler: Go's preparePanic and pushCall rewrite pc, sp and ra).
//
//go:nosplit
func (k *kstate) sigreturn(fr *frame) {
	t := k.th(k.cur)
	uc := uintptr(fr[29]) + ucOff
	sc := uc + ucMcontext
	pc, good := k.ur64(sc + scPC)
	if !good || k.cur == idleTid {
		k.fatal(fr, "bad sigreturn frame")
		return
	}
	var regs [32]uint32
	for r := uintptr(1); r < 32; r++ {
		v, _ := k.ur64(sc + scRegs + r*8)
		regs[r&31] = uint32(v)
	}
	hi, _ := k.ur64(sc + scMdhi)
	lo, _ := k.ur64(sc + scMdlo)
	m0, _ := k.ur32(uc + ucSigmask)
	m1, _ := k.ur32(uc + ucSigmask + 4)
	for r := 1; r < 32; r++ {
		if r == 26 || r == 27 {
			continue
		}
		fr[r&31] = regs[r&31]
	}
	fr[fHI] = uint32(hi)
	fr[fLO] = uint32(lo)
	fr[fEPC] = uint32(pc)
	t.sigmask = (uint64(m1)<<32 | uint64(m0)) &^ (sigbit(sigKILL) | sigbit(23))
}

// fault turns a CPU exception in program code into a signal, or stops the
// machine with a register dump when the program cannot take it.
//
//go:nosplit
func (k *kstate) fault(fr *frame, exc uint32) {
	if k.cur == idleTid {
		k.fatal(fr, "exception in the idle loop")
		return
	}
	t := k.th(k.cur)
	bad := fr[fBadVAddr]
	var sig, code, addr uint32
	switch exc {
	case excTLBL, excTLBS, excMod:
		if exc != excMod && k.pageIn(uintptr(bad), exc == excTLBS) {
			tlbInvalidate(uintptr(bad))
			return
		}
		sig, code, addr = sigSEGV, segvMaperr, bad
		if k.findVMA(uintptr(bad)) >= 0 {
			code = segvAccerr
		}
	case excAdEL, excAdES:
		sig, code, addr = sigBUS, busAdraln, bad
		if bad >= userTop {
			sig, code = sigSEGV, segvMaperr
		}
	case excRI, excCpU:
		sig, code, addr = sigILL, illIllopc, fr[fEPC]
	case excBp, excTr:
		sig, code, addr = sigTRAP, trapBrkpt, fr[fEPC]
	case excOv:
		sig, code, addr = sigFPE, fpeIntovf, fr[fEPC]
	default:
		k.fatal(fr, "unexpected exception")
		return
	}
	if t.sigmask&sigbit(sig) == 0 && k.flags&kfNoSig == 0 && k.pushSignal(t, sig, code, addr) {
		return
	}
	k.fatal(fr, "unhandled fault")
}

// fatal prints a register dump of fr and stops the machine.
//
//go:nosplit
func (k *kstate) fatal(fr *frame, why string) {
	kputs("\ngowrt: fatal: ")
	kputs(why)
	kputs("\n")
	dumpFrame(fr)
	k.exit(139)
}

//go:nosplit
func dumpFrame(fr *frame) {
	kputs("  epc ")
	kputhex(fr[fEPC])
	kputs(" cause ")
	kputhex(fr[fCause])
	kputs(" status ")
	kputhex(fr[fStatus])
	kputs(" badvaddr ")
	kputhex(fr[fBadVAddr])
	for r := 0; r < 32; r++ {
		if r%4 == 0 {
			kputs("\n ")
		}
		kputs(" r")
		kputdec(int32(r))
		kputs(" ")
		kputhex(fr[r&31])
	}
	kputs("\n  hi ")
	kputhex(fr[fHI])
	kputs(" lo ")
	kputhex(fr[fLO])
	kputs("\n")
	// Stack words help find the Go caller chain when the stack is in kseg0
	// (m0's g0 and the kernel's own); program stacks are not touched here.
	if sp := uintptr(fr[29]); sp >= kseg0 && sp < kseg0+0x100000-64 && sp&3 == 0 {
		kputs("  stack:")
		for i := uintptr(0); i < 16; i++ {
			kputc(' ')
			kputhex(*mem32(sp + i*4))
		}
		kputs("\n")
	}
}

// nestedFault runs when an exception hits the kernel itself (trap context).
// The outer trap's frame is intact; the nested registers are at
// nestFrameAddr. Nothing can be recovered: dump both and stop.
//
//go:nosplit
func nestedFault() {
	k := ks()
	kputs("\ngowrt: fatal: exception in kernel trap context\n nested:\n")
	dumpFrame((*frame)(unsafePointer(nestFrameAddr)))
	kputs(" interrupted context:\n")
	dumpFrame(k.frameOf(k.cur))
	k.exit(139)
}
