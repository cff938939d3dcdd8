//go:build mips || mipsle

package kernel

// File descriptors: 0-2 are the console, the rest are eventfds and epoll
// instances (what the runtime's netpoller needs). There is no file system.

//go:nosplit
func (k *kstate) fd(n uint32) *fdesc {
	if n >= maxFDs {
		return nil
	}
	f := &k.fds[n&(maxFDs-1)]
	if f.kind == fdFree {
		return nil
	}
	return f
}

//go:nosplit
func (k *kstate) newFD(kind, flags uint32) int32 {
	for i := uint32(3); i < maxFDs; i++ {
		f := &k.fds[i&(maxFDs-1)]
		if f.kind == fdFree {
			*f = fdesc{kind: kind, flags: flags}
			return int32(i)
		}
	}
	return -1
}

//go:nosplit
func (k *kstate) write(fr *frame, fd uint32, buf uintptr, n uint32) {
	f := k.fd(fd)
	if f == nil {
		fail(fr, eBADF)
		return
	}
	switch f.kind {
	case fdConsole:
		for i := uint32(0); i < n; {
			p := k.kaddr(buf+uintptr(i), false)
			if p == 0 {
				if i == 0 {
					fail(fr, eFAULT)
					return
				}
				n = i
				break
			}
			c := uint32(pageSize - (buf+uintptr(i))&(pageSize-1))
			if c > n-i {
				c = n - i
			}
			for j := uint32(0); j < c; j++ {
				kputc(*(*byte)(unsafePointer(p + uintptr(j))))
			}
			i += c
		}
		ok(fr, n)
	case fdEventfd:
		if n < 8 {
			fail(fr, eINVAL)
			return
		}
		v, good := k.ur64(buf)
		if !good {
			fail(fr, eFAULT)
			return
		}
		if v == 1<<64-1 {
			fail(fr, eINVAL)
			return
		}
		f.counter += v
		k.fdReady(fd)
		ok(fr, 8)
	default:
		fail(fr, eINVAL)
	}
}

//go:nosplit
func (k *kstate) read(fr *frame, t *thread, fd uint32, buf uintptr, n uint32) {
	f := k.fd(fd)
	if f == nil {
		fail(fr, eBADF)
		return
	}
	switch f.kind {
	case fdConsole:
		if fd != 0 {
			fail(fr, eBADF)
			return
		}
		if n == 0 {
			ok(fr, 0)
			return
		}
		if k.rxw == k.rxr {
			if f.flags&oNonblock != 0 {
				fail(fr, eAGAIN)
				return
			}
			t.a1, t.a2 = uint32(buf), n
			k.block(t, wRead, 0, 0)
			return
		}
		k.consoleCopy(fr, buf, n)
	case fdEventfd:
		if n < 8 {
			fail(fr, eINVAL)
			return
		}
		if f.counter == 0 {
			fail(fr, eAGAIN) // the runtime always uses EFD_NONBLOCK
			return
		}
		if !k.uw64(buf, f.counter) {
			fail(fr, eFAULT)
			return
		}
		f.counter = 0
		ok(fr, 8)
	default:
		fail(fr, eINVAL)
	}
}

// consoleCopy moves received bytes to the reader and sets its result.
//
//go:nosplit
func (k *kstate) consoleCopy(fr *frame, buf uintptr, n uint32) {
	got := uint32(0)
	for got < n && k.rxr != k.rxw {
		if !k.uw8(buf+uintptr(got), k.rx[k.rxr&(rxSize-1)]) {
			break
		}
		k.rxr++
		got++
	}
	if got == 0 {
		fail(fr, eFAULT)
		return
	}
	ok(fr, got)
}

//go:nosplit
func (k *kstate) close(fr *frame, fd uint32) {
	f := k.fd(fd)
	if f == nil {
		fail(fr, eBADF)
		return
	}
	if fd > 2 {
		if f.kind == fdIRQ && k.irqFD[f.line&(maxIRQ-1)] == int32(fd) {
			k.irqFD[f.line&(maxIRQ-1)] = 0
		}
		for i := range k.epitem {
			e := &k.epitem[i]
			if e.used != 0 && (e.fd == int32(fd) || e.epfd == int32(fd)) {
				e.used = 0
			}
		}
		f.kind = fdFree
	}
	ok(fr, 0)
}

//go:nosplit
func (k *kstate) fcntl(fr *frame, fd, cmd, arg uint32) {
	f := k.fd(fd)
	if f == nil {
		fail(fr, eBADF)
		return
	}
	switch cmd {
	case fGetfd, fSetfd:
		ok(fr, 0)
	case fGetfl:
		ok(fr, 2|f.flags) // O_RDWR
	case fSetfl:
		f.flags = arg & oNonblock
		ok(fr, 0)
	default:
		fail(fr, eINVAL)
	}
}

//go:nosplit
func (k *kstate) eventfd(fr *frame, initval, flags uint32) {
	fd := k.newFD(fdEventfd, flags&oNonblock)
	if fd < 0 {
		fail(fr, 24) // EMFILE
		return
	}
	k.fds[fd&(maxFDs-1)].counter = uint64(initval)
	ok(fr, uint32(fd))
}

//go:nosplit
func (k *kstate) epollCreate(fr *frame) {
	fd := k.newFD(fdEpoll, 0)
	if fd < 0 {
		fail(fr, 24)
		return
	}
	ok(fr, uint32(fd))
}

//go:nosplit
func (k *kstate) epollCtl(fr *frame, epfd, op, fd uint32, ev uintptr) {
	if e := k.fd(epfd); e == nil || e.kind != fdEpoll {
		fail(fr, eBADF)
		return
	}
	if k.fd(fd) == nil || fd == epfd {
		fail(fr, eBADF)
		return
	}
	var item *epollItem
	for i := range k.epitem {
		e := &k.epitem[i]
		if e.used != 0 && e.epfd == int32(epfd) && e.fd == int32(fd) {
			item = e
			break
		}
	}
	var events uint32
	var data uint64
	if op != epollCtlDel {
		var ok1, ok2 bool
		events, ok1 = k.ur32(ev)
		data, ok2 = k.ur64(ev + 8)
		if !ok1 || !ok2 {
			fail(fr, eFAULT)
			return
		}
	}
	switch op {
	case epollCtlAdd:
		if item != nil {
			fail(fr, 17) // EEXIST
			return
		}
		for i := range k.epitem {
			if k.epitem[i].used == 0 {
				item = &k.epitem[i]
				break
			}
		}
		if item == nil {
			fail(fr, eNOMEM)
			return
		}
		*item = epollItem{used: 1, epfd: int32(epfd), fd: int32(fd), events: events, data: data, edge: 1}
	case epollCtlMod:
		if item == nil {
			fail(fr, eNOENT)
			return
		}
		item.events, item.data, item.edge = events, data, 1
	case epollCtlDel:
		if item == nil {
			fail(fr, eNOENT)
			return
		}
		item.used = 0
	default:
		fail(fr, eINVAL)
		return
	}
	ok(fr, 0)
	k.fdReady(fd)
}

// readiness returns the EPOLL* bits fd currently has.
//
//go:nosplit
func (k *kstate) readiness(fd int32) uint32 {
	f := k.fd(uint32(fd))
	if f == nil {
		return 0
	}
	switch f.kind {
	case fdConsole:
		r := uint32(0)
		if fd == 0 && k.rxr != k.rxw {
			r |= epollIn
		}
		if fd != 0 {
			r |= epollOut
		}
		return r
	case fdEventfd:
		r := uint32(epollOut)
		if f.counter != 0 {
			r |= epollIn
		}
		return r
	case fdIRQ:
		if k.irqFired[f.line&(maxIRQ-1)] != 0 || k.irqEnabled&(1<<f.line) == 0 {
			return epollIn
		}
	}
	return 0
}

// collect writes up to max ready events of epfd to the program's array.
//
//go:nosplit
func (k *kstate) collect(epfd int32, evs uintptr, max uint32) (n uint32, good bool) {
	for i := range k.epitem {
		if n >= max {
			break
		}
		e := &k.epitem[i]
		if e.used == 0 || e.epfd != epfd {
			continue
		}
		r := k.readiness(e.fd) & e.events
		if r == 0 || (e.events&epollET != 0 && e.edge == 0) {
			continue
		}
		if !k.uw32(evs+uintptr(n)*16, r) || !k.uw64(evs+uintptr(n)*16+8, e.data) {
			return n, false
		}
		e.edge = 0
		n++
	}
	return n, true
}

//go:nosplit
func (k *kstate) epollWait(fr *frame, t *thread, epfd uint32, evs uintptr, max uint32, timeout int32) {
	if e := k.fd(epfd); e == nil || e.kind != fdEpoll {
		fail(fr, eBADF)
		return
	}
	if max == 0 {
		fail(fr, eINVAL)
		return
	}
	n, good := k.collect(int32(epfd), evs, max)
	if !good {
		fail(fr, eFAULT)
		return
	}
	if n > 0 || timeout == 0 {
		ok(fr, n)
		return
	}
	deadline := int64(0)
	if timeout > 0 {
		deadline = k.nanotime() + int64(timeout)*1_000_000
	}
	t.a1, t.a2 = uint32(evs), max
	ok(fr, 0)
	k.block(t, wEpoll, uintptr(epfd), deadline)
}

// fdReady runs when fd may have become readable: it marks edge-triggered
// interests and completes blocked readers and epoll waiters.
//
//go:nosplit
func (k *kstate) fdReady(fd uint32) {
	for i := range k.epitem {
		e := &k.epitem[i]
		if e.used != 0 && e.fd == int32(fd) {
			e.edge = 1
		}
	}
	for i := int32(0); i < k.nthr; i++ {
		t := k.th(i)
		if t.state != tBlocked {
			continue
		}
		switch t.wait {
		case wEpoll:
			n, good := k.collect(int32(t.waddr), uintptr(t.a1), t.a2)
			if !good {
				k.wake(t, eFAULT, 1)
			} else if n > 0 {
				k.wake(t, n, 0)
			}
		case wRead:
			if fd == 0 && k.rxr != k.rxw {
				k.wake(t, 0, 0)
				k.consoleCopy(&t.fr, uintptr(t.a1), t.a2)
			}
		}
	}
}

// Interrupt lines for goroutines (the intr.Source contract; board packages
// build their intr.Controller on these calls). Lines are the platform root
// controller's (platform_mipsx.go).
const (
	irqOpOpen   = 1 // start delivering the line (it stays masked until unmask)
	irqOpClose  = 2 // stop delivering; wakes a waiter with EBADF
	irqOpMask   = 3
	irqOpUnmask = 4
	irqOpAck    = 5 // after the handler: clear a request the controller latched
	irqOpPend   = 6 // the controller's raw request bits (low word in v0, high in v1)
	irqOpEdge   = 7 // edge-triggered
	irqOpLevel  = 8 // level-triggered
	// irqOpFD makes a descriptor for the line, for the netpoller (the
	// newest one is the one the line signals): readable while the line
	// has fired since the last irqOpPoll, or is closed. irqOpPoll is
	// IRQWait that never blocks: EAGAIN if the line has not fired.
	irqOpFD   = 9
	irqOpPoll = 10
)

// irqLine reports whether line is one the kernel hands out.
//
//go:nosplit
func (k *kstate) irqLine(line uint32) bool {
	return line < uint32(k.irqLines) && int32(line) != k.consoleLine && k.reservedLines&(1<<line) == 0
}

//go:nosplit
func (k *kstate) irqOp(fr *frame, op, line uint32) {
	if op == irqOpPend {
		p := platformIntrPending((readCause() >> stIMShift) & k.rootPins)
		ok(fr, uint32(p))
		fr[3] = uint32(p >> 32)
		return
	}
	if !k.irqLine(line) {
		fail(fr, eINVAL)
		return
	}
	bit := uint64(1) << line
	switch op {
	case irqOpFD:
		k.irqFDOp(fr, line)
		return
	case irqOpPoll:
		k.irqPoll(fr, line)
		return
	case irqOpOpen:
		k.irqEnabled |= bit
	case irqOpClose:
		k.irqEnabled &^= bit
		k.irqFired[line&(maxIRQ-1)] = 0
		k.maskLine(int(line))
		for i := int32(0); i < k.nthr; i++ {
			t := k.th(i)
			if t.state == tBlocked && t.wait == wIRQ && t.waddr == uintptr(line) {
				k.wake(t, eBADF, 1)
			}
		}
		if fd := k.irqFD[line&(maxIRQ-1)]; fd != 0 {
			k.fdReady(uint32(fd)) // a parked waiter sees the line closed
		}
	case irqOpMask:
		k.maskLine(int(line))
	case irqOpUnmask:
		k.unmaskLine(int(line))
	case irqOpAck:
		platformIntrEOI(int(line))
	case irqOpEdge, irqOpLevel:
		if !platformIntrSetLevel(int(line), op == irqOpLevel) {
			fail(fr, eINVAL)
			return
		}
	default:
		fail(fr, eINVAL)
		return
	}
	ok(fr, 0)
}

//go:nosplit
func (k *kstate) irqWait(fr *frame, t *thread, line uint32) {
	if line >= maxIRQ || k.irqEnabled&(1<<line) == 0 {
		fail(fr, eBADF)
		return
	}
	if n := k.irqFired[line]; n > 0 {
		k.irqFired[line] = 0
		ok(fr, n)
		fr[3] = k.irqTaken[line]
		return
	}
	k.block(t, wIRQ, uintptr(line), 0)
}

// irqFDOp makes a descriptor for line and makes it the one the line
// signals (a later one replaces it; closing the line's descriptor
// leaves the line without one). The runtime's netpoller takes it like
// any non-blocking descriptor (os.NewFile, then RawConn.Read around
// irqOpPoll): a goroutine waiting for the line then parks in the
// scheduler, not in a system call, so no thread sits in the kernel per
// line and the runtime's sysmon has no system call to retake a P from.
//
//go:nosplit
func (k *kstate) irqFDOp(fr *frame, line uint32) {
	fd := k.newFD(fdIRQ, oNonblock)
	if fd < 0 {
		fail(fr, 24) // EMFILE
		return
	}
	k.fds[fd&(maxFDs-1)].line = line
	k.irqFD[line&(maxIRQ-1)] = fd
	ok(fr, uint32(fd))
}

// irqPoll is irqWait that fails with EAGAIN where irqWait would block.
//
//go:nosplit
func (k *kstate) irqPoll(fr *frame, line uint32) {
	line &= maxIRQ - 1
	if k.irqEnabled&(1<<line) == 0 {
		fail(fr, eBADF)
		return
	}
	n := k.irqFired[line]
	if n == 0 {
		fail(fr, eAGAIN)
		return
	}
	k.irqFired[line] = 0
	ok(fr, n)
	fr[3] = k.irqTaken[line]
}
