package ar71xxsim

import (
	"github.com/gowrt/gowrt/hwsim"
	"github.com/gowrt/gowrt/soc/ar71xx"
)

// DMAWriter is the path a device model's DMA writes take to memory.
// Implementations run with the System lock held.
type DMAWriter interface {
	DMAWrite(addr uint64, p []byte) error
}

// Direct is a DMAWriter straight into memory (no write buffer).
type Direct struct{ Mem *hwsim.Memory }

func (d Direct) DMAWrite(addr uint64, p []byte) error { return d.Mem.DevWrite(addr, p) }

// pendingDepth is how many writes a channel's buffer holds; a full buffer
// forces its oldest write out. maxWrite bounds one buffered write.
const (
	pendingDepth = 64
	maxWrite     = 2048
)

type pending struct {
	addr uint64
	n    int
	data [maxWrite]byte
}

// Channel is one DMA master's write buffer in the DDR controller.
type Channel struct {
	ddr  *DDR
	name string
	q    [pendingDepth]*pending
	n    int
	free []*pending

	// Buffered counts writes that waited; Flushes counts drains by the
	// flush register; Reordered counts writes that overtook older ones.
	Buffered, Flushes, Reordered uint64
}

// DDR is the DDR controller block: flush registers and write buffers.
type DDR struct {
	sys      *hwsim.System
	info     *ar71xx.Info
	direct   bool
	chans    [5]*Channel
	busyLeft [5]int
}

func newDDR(sys *hwsim.System, info *ar71xx.Info, direct bool) *DDR {
	d := &DDR{sys: sys, info: info, direct: direct}
	for c := range d.chans {
		// Records are allocated on first use and recycled, so a busy
		// channel allocates nothing once warmed up.
		d.chans[c] = &Channel{ddr: d, name: ar71xx.FlushChannel(c).String(), free: make([]*pending, 0, pendingDepth)}
	}
	sys.Sched.AddAgent("ddr-writebuffer", d.drainStep)
	return d
}

// Channel returns the DMA write path of flush channel c.
func (d *DDR) Channel(c ar71xx.FlushChannel) *Channel { return d.chans[c] }

// DMAWrite buffers a write (or applies it when the buffer model is off or
// the write is too big to buffer). Lock held.
func (c *Channel) DMAWrite(addr uint64, p []byte) error {
	if c.ddr.direct || len(p) > maxWrite {
		c.drainAll()
		return c.ddr.sys.Mem.DevWrite(addr, p)
	}
	if c.n == pendingDepth {
		c.applyAt(0)
	}
	var e *pending
	if len(c.free) > 0 {
		e = c.free[len(c.free)-1]
		c.free = c.free[:len(c.free)-1]
	} else {
		e = new(pending)
	}
	e.addr, e.n = addr, len(p)
	copy(e.data[:], p)
	c.q[c.n] = e
	c.n++
	c.Buffered++
	return nil
}

// Pending returns how many writes wait in the buffer.
func (c *Channel) Pending() int { return c.n }

func (c *Channel) applyAt(i int) {
	e := c.q[i]
	copy(c.q[i:c.n], c.q[i+1:c.n])
	c.n--
	c.q[c.n] = nil
	_ = c.ddr.sys.Mem.DevWrite(e.addr, e.data[:e.n])
	c.free = append(c.free, e)
}

func (c *Channel) drainAll() {
	for c.n > 0 {
		c.applyAt(0)
	}
}

func overlap(a *pending, b *pending) bool {
	return a.addr < b.addr+uint64(b.n) && b.addr < a.addr+uint64(a.n)
}

// drainStep is the scheduler agent: one buffered write, chosen by the seed,
// reaches memory — possibly before older writes to other addresses.
func (d *DDR) drainStep() bool {
	var ch *Channel
	for _, c := range d.chans {
		if c.n > 0 {
			ch = c
			break
		}
	}
	if ch == nil {
		return false
	}
	i := d.sys.Sched.Intn(ch.n)
	for j := 0; j < i; j++ {
		if overlap(ch.q[j], ch.q[i]) {
			i = j
			break
		}
	}
	if i != 0 {
		ch.Reordered++
	}
	ch.applyAt(i)
	return true
}

func (d *DDR) channelAt(off uint32) int {
	for c, o := range d.info.DDRFlush {
		if o != 0 && o == off {
			return c
		}
	}
	return -1
}

// ReadReg: a flush register reads 1 while its flush is in progress.
func (d *DDR) ReadReg(off uint32, width int) uint32 {
	c := d.channelAt(off)
	if c < 0 {
		return 0
	}
	if d.busyLeft[c] > 0 {
		d.busyLeft[c]--
		return 1
	}
	return 0
}

// WriteReg: writing 1 to a flush register drains its channel; the register
// then stays busy for a few reads.
func (d *DDR) WriteReg(off uint32, width int, val uint32) {
	c := d.channelAt(off)
	if c < 0 || val&1 == 0 {
		return
	}
	ch := d.chans[c]
	ch.drainAll()
	ch.Flushes++
	d.busyLeft[c] = d.sys.Sched.Intn(4)
}
