//go:build mips || mipsle

package kernel

// Console output for the kernel itself: polled, allocation-free, usable in
// trap context. Newlines become CR LF, like a Linux tty with ONLCR.

//go:nosplit
func kputc(c byte) {
	if c == '\n' {
		platformPutc('\r')
	}
	platformPutc(c)
	l := &ks().conlog
	l.buf[l.pos%conlogSize] = c
	l.pos++
}

// conlogSize is how much console output the kernel keeps for the
// firmware's log (Linux's dmesg buffer): everything written to the console
// by the kernel and by the program (fd 1 and 2) passes kputc. A power of
// two, so the position wraps without a gap.
const conlogSize = 16 << 10

// consoleRing is the console log. pos counts every byte ever written (mod
// 2^32); the ring holds the last conlogSize of them. It lives in kstate
// (kseg0), not in a Go variable: those are in the TLB-mapped data segment,
// which trap context must not touch. Only kputc writes it, with
// interrupts off (trap context) or from the boot thread.
type consoleRing struct {
	buf [conlogSize]byte
	pos uint32
}

// consoleLog copies console output from position from (as returned by an
// earlier call) to buf, at most n bytes. Output older than the ring is gone:
// the copy starts at the oldest byte still kept. v0 = bytes copied, v1 =
// the position of the first of them, so the caller knows what it missed
// and where to continue (v1 + v0).
//
//go:nosplit
func (k *kstate) consoleLog(fr *frame, buf uintptr, n, from uint32) {
	conlog := &k.conlog
	end := conlog.pos
	if end-from > conlogSize {
		from = end - conlogSize
	}
	avail := end - from
	if n > avail {
		n = avail
	}
	for i := uint32(0); i < n; i++ {
		if !k.uw8(buf+uintptr(i), conlog.buf[(from+i)%conlogSize]) {
			fail(fr, eFAULT)
			return
		}
	}
	fr[3] = from
	ok(fr, n)
}

//go:nosplit
func kputs(s string) {
	for i := 0; i < len(s); i++ {
		kputc(s[i])
	}
}

//go:nosplit
func kputhex(v uint32) {
	kputs("0x")
	for i := 28; i >= 0; i -= 4 {
		kputc("0123456789abcdef"[(v>>uint(i))&15])
	}
}

// kputdec prints v in decimal (32-bit arithmetic only: 64-bit division on
// mips32 is a runtime call that can panic).
//
//go:nosplit
func kputdec(v int32) {
	u := uint32(v)
	if v < 0 {
		kputc('-')
		u = uint32(-v)
	}
	var buf [10]byte
	n := uint(0)
	for {
		buf[n%10] = byte('0' + u%10)
		n++
		u /= 10
		if u == 0 || n >= 10 {
			break
		}
	}
	for n > 0 {
		n--
		kputc(buf[n%10])
	}
}
