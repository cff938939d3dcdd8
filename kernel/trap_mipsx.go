//go:build mips || mipsle

package kernel

// Status and Cause bits (MIPS32 PRA).
const (
	stIE      = 1 << 0
	stEXL     = 1 << 1
	stBEV     = 1 << 22
	stIMShift = 8
	causeIP   = 0xff << 8
	pinTimer  = 7 // CP0 Count/Compare interrupt pin (IntCtl.IPTI on MIPS32R2 cores)
	causeBD   = 1 << 31
)

// Exception codes (Cause.ExcCode).
const (
	excInt  = 0
	excMod  = 1
	excTLBL = 2
	excTLBS = 3
	excAdEL = 4
	excAdES = 5
	excBp   = 9
	excRI   = 10
	excCpU  = 11
	excOv   = 12
	excTr   = 13
	excSys  = 8
)

const (
	sliceNs   = 10_000_000    // preemption slice between runnable threads
	horizonNs = 1_000_000_000 // the timer fires at least this often (Count wrap is ~25 s)
	minDelta  = 0             // a deadline missed while writing Compare is caught by re-reading Count
)

//go:nosplit
func (k *kstate) frameOf(i int32) *frame {
	if i < 0 {
		return &k.idleFr
	}
	return &k.threads[i&(maxThreads-1)].fr
}

//go:nosplit
func (k *kstate) th(i int32) *thread { return &k.threads[i&(maxThreads-1)] }

// trap is called by trapEntry with the interrupted context saved in the
// current frame. Interrupts are off (EXL) for its whole run.
//
//go:nosplit
func trap() {
	k := ks()
	k.stats.traps++
	if k.idling {
		// The idle loop (its WAIT included) ran until this trap; the
		// trap's own work counts as busy.
		k.idleTicks += uint64(readCount() - k.idleSince)
		k.idling = false
	}
	fr := k.frameOf(k.cur)
	exc := (fr[fCause] >> 2) & 31
	yield := false
	switch exc {
	case excInt:
		// An interrupt the entry code took inside the idle window has
		// had its EPC moved to the window's end, where a wake from WAIT
		// also resumes; the window-hit counter tells the two apart.
		hits := *mem32(waitHitsAddr)
		skipped := hits != k.seenWaitHits
		k.seenWaitHits = hits
		if !skipped && k.cur == idleTid && k.idleRetRunnable != 0 && fr[fEPC] == k.idleWaitEnd && k.idleRetEPC != k.idleWaitEnd {
			// The idle loop was resumed knowing work was runnable, yet
			// it ran on into WAIT and was woken from there by this
			// interrupt: it slept with work to do (a lost wake-up).
			k.stats.idleStalls++
		}
		k.interrupt()
	case excSys:
		k.stats.syscalls++
		var fast bool
		fast, yield = k.syscall(fr)
		if k.flags&kfTrace != 0 {
			kputs(" = ")
			kputhex(fr[2])
			if fr[7] != 0 {
				kputs(" (error)")
			}
			kputs("\n")
		}
		if fast {
			return
		}
	default:
		k.fault(fr, exc)
	}
	k.schedule(yield)
}

// interrupt handles every pending, enabled interrupt line.
//
//go:nosplit
func (k *kstate) interrupt() {
	k.stats.interrupts++
	pend := readCause() & readStatus() & causeIP
	pins := pend >> stIMShift
	if root := pins & k.rootPins; root != 0 {
		// Each line taken is masked, so the poll moves on; the bound
		// keeps a controller that misbehaves from holding the CPU.
		for n := 0; n < maxIRQ; n++ {
			line := platformIntrPoll(root)
			if line < 0 {
				break
			}
			root &^= k.irq(line)
		}
	}
	if pins&3 != 0 { // software interrupts: just clear them
		writeCause(readCause() &^ (3 << stIMShift))
	}
	// IP7 (timer) needs nothing here: schedule() processes deadlines and
	// rewrites Compare, which clears the interrupt.
	if pins&(1<<pinTimer) != 0 {
		k.armed = 0
	}
}

// setStatusRun derives the Status threads run with: the root controller's
// pins but those masked for a line, the timer, EXL (cleared on the way
// out by ERET).
//
//go:nosplit
func (k *kstate) setStatusRun() {
	k.statusRun = (k.rootPins&^k.pinsMasked|1<<pinTimer)<<stIMShift | stEXL
}

// maskLine masks line at the controller or, for a line that is a CPU pin,
// in Status.
//
//go:nosplit
func (k *kstate) maskLine(line int) (pins uint32) {
	pins = platformIntrMask(line) & k.rootPins
	if pins != 0 {
		k.pinsMasked |= pins
		k.setStatusRun()
	}
	return pins
}

//go:nosplit
func (k *kstate) unmaskLine(line int) {
	if pins := platformIntrUnmask(line) & k.rootPins; pins != 0 {
		k.pinsMasked &^= pins
		k.setStatusRun()
	}
}

// irq handles one line taken by platformIntrPoll and returns the CPU pins
// it masked.
//
//go:nosplit
func (k *kstate) irq(irq int) (pins uint32) {
	if k.flags&kfTrace != 0 {
		kputs("[irq ")
		kputdec(int32(irq))
		kputs("]\n")
	}
	if irq >= int(k.irqLines) || k.reservedLines&(1<<uint(irq)) != 0 {
		// Not a line the kernel hands out: end it and carry on.
		platformIntrEOI(irq)
		return 0
	}
	line := uint(irq) & (maxIRQ - 1)
	if int32(line) == k.consoleLine {
		k.consoleRX()
		platformIntrEOI(irq)
		return 0
	}
	// A line delivered to a goroutine through the intr contract: mask it
	// at the controller, remember it fired, wake its waiter. The handler
	// goroutine unmasks it when done.
	pins = k.maskLine(irq)
	platformIntrEOI(irq)
	// Count it even if nobody has opened the line yet (the Dispatcher
	// unmasks before its goroutine's first Wait): it is delivered by the
	// first Wait, never lost. The line stays masked until then.
	k.irqFired[line]++
	k.irqTaken[line] = uint32(k.nanotime())
	for i := int32(0); i < k.nthr; i++ {
		t := k.th(i)
		if t.state == tBlocked && t.wait == wIRQ && t.waddr == uintptr(line) {
			n := k.irqFired[line]
			k.irqFired[line] = 0
			k.wake(t, n, 0)
			t.fr[3] = k.irqTaken[line]
			return pins
		}
	}
	if fd := k.irqFD[line]; fd != 0 {
		k.fdReady(uint32(fd))
	}
	return pins
}

// consoleRX drains the console into the receive ring and wakes a reader.
//
//go:nosplit
func (k *kstate) consoleRX() {
	got := false
	for n := 0; n < rxSize; n++ {
		c := platformGetc()
		if c < 0 {
			break
		}
		if k.rxw-k.rxr < rxSize {
			k.rx[k.rxw&(rxSize-1)] = byte(c)
			k.rxw++
		}
		got = true
	}
	if got {
		k.fdReady(0)
	}
}

// wake makes a blocked thread runnable with the given syscall result.
//
//go:nosplit
func (k *kstate) wake(t *thread, r2 uint32, r7 uint32) {
	t.fr[2] = r2
	t.fr[7] = r7
	t.state = tRunnable
	t.wait = wNone
	t.deadline = 0
}

//go:nosplit
func (k *kstate) block(t *thread, wait uint32, waddr uintptr, deadline int64) {
	t.state = tBlocked
	t.wait = wait
	t.waddr = waddr
	t.deadline = deadline
}

// expire completes the blocked calls whose deadline has passed.
//
//go:nosplit
func (k *kstate) expire(now int64) {
	for i := int32(0); i < k.nthr; i++ {
		t := k.th(i)
		if t.state != tBlocked || t.deadline == 0 || t.deadline > now {
			continue
		}
		switch t.wait {
		case wFutex:
			k.wake(t, eTIMEDOUT, 1)
		case wSleep, wEpoll:
			k.wake(t, 0, 0)
		}
	}
}

// schedule picks what runs next, programs the timer and delivers signals.
// An interrupt that arrives while the CPU idles does not switch here: it
// returns to the idle loop, which sees k.runnable and gives up the CPU
// with a system call (yield); that keeps the idle window meaningful.
//
//go:nosplit
func (k *kstate) schedule(yield bool) {
	for {
		now := k.nanotime()
		k.expire(now)
		busy := int64(0)
		if k.profNext != 0 {
			busy = k.busyNanos(now)
			k.profTick(busy)
		}
		next, others := k.pick(now, yield)
		if next != k.cur {
			k.stats.switches++
			k.cur = next
			k.sliceEnd = now + sliceNs
			k.alock.extends = 0
			if next != idleTid && !k.hazardPlainSlice() && k.atomicLockHeld() {
				// The holder was descheduled anyway (an overrun,
				// or the switch is to it): look again soon, so
				// that a thread which spins on it does not spin
				// out a whole slice.
				k.sliceEnd = now + lockExtendNs
			}
		}
		if next == idleTid {
			k.runnable = 0
			if others > 0 {
				k.runnable = 1
			}
		}
		deadline := int64(0)
		if others > 0 && next != idleTid {
			deadline = k.sliceEnd
		}
		for i := int32(0); i < k.nthr; i++ {
			t := k.th(i)
			if t.state == tBlocked && t.deadline != 0 && (deadline == 0 || t.deadline < deadline) {
				deadline = t.deadline
			}
		}
		if k.profNext != 0 && next != idleTid {
			// The CPU is busy from now on: the busy time runs
			// with the clock until the next trap.
			if at := now + k.profNext - busy; deadline == 0 || at < deadline {
				deadline = at
			}
		}
		if k.arm(now, deadline) {
			break
		}
		yield = false
	}
	if k.cur != idleTid {
		k.deliverSignals(k.th(k.cur))
	}
	fr := k.frameOf(k.cur)
	fr[fStatus] = k.statusRun | fr[fStatus]&stIE
	if k.cur == idleTid {
		k.idleRetEPC, k.idleRetRunnable = fr[fEPC], k.runnable
		k.idling, k.idleSince = true, readCount()
	}
	*mem32(curFrameAddr) = uint32(uintptrOf(fr))
}

// pick chooses the next context. others counts runnable threads that will
// not run now.
//
//go:nosplit
func (k *kstate) pick(now int64, yield bool) (next int32, others int) {
	cur := k.cur
	nrun := 0
	for i := int32(0); i < k.nthr; i++ {
		if k.th(i).state == tRunnable {
			nrun++
		}
	}
	if cur == idleTid && !yield {
		return idleTid, nrun
	}
	curRunnable := cur != idleTid && k.th(cur).state == tRunnable
	if curRunnable && !yield {
		// A slice does not end inside the runtime's 64-bit atomic
		// lock, and a thread spinning on it gives up the CPU
		// (atomiclock_mipsx.go).
		expired := nrun > 1 && now >= k.sliceEnd
		run, spinner := k.lockCheck(cur, expired)
		if run {
			k.sliceEnd = now + lockExtendNs
			return cur, nrun - 1
		}
		if !expired && !(spinner && nrun > 1) {
			return cur, nrun - 1
		}
	}
	// Round robin from the slot after cur.
	start := cur + 1
	if cur == idleTid {
		start = 0
	}
	i := start
	for n := int32(0); n < k.nthr; n++ {
		if i >= k.nthr {
			i = 0
		}
		if k.th(i).state == tRunnable {
			return i, nrun - 1
		}
		i++
	}
	return idleTid, 0
}

// arm programs Compare for deadline (or the wrap horizon). It reports false
// if the deadline had passed by the time the write landed: the timer
// interrupt is raised when Count becomes equal to Compare, so a value Count
// is already past would be matched only after Count wraps (2^32 ticks,
// 25.8 s at QEMU's rate; likewise on hardware; Linux's mips_next_event in
// arch/mips/kernel/cevt-r4k.c checks the same way). The caller must then
// re-run its deadline processing instead of waiting for the interrupt.
//
//go:nosplit
func (k *kstate) arm(now, deadline int64) bool {
	if deadline == 0 || deadline-now > horizonNs {
		deadline = now + horizonNs
	}
	late := k.hazardLateWrite(deadline) // test hook: always false in the shipped kernel
	if deadline == k.armed && deadline > now && !late {
		return true
	}
	// Convert against a fresh clock reading (Count is in k.lastCount).
	d := deadline - k.nanotime()
	if d < minDelta {
		d = minDelta
	}
	ticks := uint32(uint64(uint32(d)) * uint64(k.ticksPerNs32) >> 32)
	if ticks == 0 {
		ticks = 1
	}
	c := k.lastCount + ticks
	if late {
		k.hazardHold(c)
	}
	writeCompare(c)
	k.stats.timerWrites++
	k.armed = deadline
	if k.hazardTrustWrite() { // test hook: always false in the shipped kernel
		return true
	}
	// The guard: if Count has reached c, the write may have landed too
	// late to be matched.
	if int32(readCount()-c) >= 0 {
		k.stats.timerMissed++
		k.armed = 0
		return false
	}
	return true
}
