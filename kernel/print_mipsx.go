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
