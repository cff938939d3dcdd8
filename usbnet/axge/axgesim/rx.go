package axgesim

import (
	"encoding/binary"
	"time"

	"github.com/gowrt/gowrt/usbnet/usbsim"
)

// Wire overhead of one Ethernet frame beyond the bytes the chip hands
// over: FCS (4), preamble and SFD (8), minimum inter-frame gap (12)
// (IEEE 802.3 clause 4.4.2).
const wireOverhead = 4 + 8 + 12

// timerUnit is the aggregation timer's tick. Inferred, not documented:
// with it the table's timer × link rate comes to its size field for the
// 10, 100 and 1000-on-USB-2 entries (e.g. 0x07AE µs at 100 Mb/s ≈ 24 KiB).
const timerUnit = time.Microsecond

// source is a steady stream of frames arriving at a fraction of the link
// rate.
type source struct {
	frameLen int
	interval time.Duration
	next     time.Duration
	seq      uint32
}

// aggBuf is the aggregation buffer being filled.
type aggBuf struct {
	data    []byte   // frames, each padded to 8
	hdrs    []uint32 // per-packet headers, a dummy after each real one
	firstAt time.Duration
}

// OfferLoad starts a stream of frameLen-byte frames (broadcast, a
// sequence number at bytes 14..17) arriving back to back at fraction of
// the PHY's link rate, from now on; fraction 0 stops it.
func (c *Chip) OfferLoad(frameLen int, fraction float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.catchUp()
	if fraction <= 0 || !c.phy.Up || frameLen < 18 {
		c.load = nil
		return
	}
	bits := float64((frameLen + wireOverhead) * 8)
	iv := time.Duration(bits / (float64(c.phy.SpeedMbps) * 1e6 * fraction) * float64(time.Second))
	c.load = &source{frameLen: frameLen, interval: iv, next: c.now() + iv}
}

// Deliver makes frame arrive from the wire now.
func (c *Chip) Deliver(frame []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.catchUp()
	c.arrive(frame, c.now())
}

// catchUp brings the RX side to the current time: due frames arrive, an
// expired timer closes the buffer.
func (c *Chip) catchUp() {
	now := c.now()
	var buf [2048]byte
	for c.load != nil && c.load.next <= now {
		l := c.load
		fr := buf[:l.frameLen]
		for i := 0; i < 6; i++ {
			fr[i] = 0xFF
		}
		copy(fr[6:12], []byte{0x02, 0, 0, 0, 0, 1})
		fr[12], fr[13] = 0x88, 0xB5 // local experimental EtherType
		binary.BigEndian.PutUint32(fr[14:], l.seq)
		l.seq++
		c.arrive(fr, l.next)
		l.next += l.interval
	}
	c.expire(now)
}

func (c *Chip) receiving() bool {
	return c.rcr&rcrStart != 0 && c.msr&msrRE != 0 && c.phy.Up && c.epprcr&eppBZ == 0
}

func (c *Chip) timer() time.Duration {
	return time.Duration(uint16(c.qctrl[1])|uint16(c.qctrl[2])<<8) * timerUnit
}

func (c *Chip) expire(t time.Duration) {
	if len(c.open.hdrs) > 0 && t >= c.open.firstAt+c.timer() {
		c.closeBuf()
	}
}

func (c *Chip) arrive(frame []byte, t time.Duration) {
	if !c.receiving() {
		c.stats.RxOffDrops++
		return
	}
	c.expire(t)
	padded := (len(frame) + 7) &^ 7
	need := padded + 8 // data plus its header and the dummy
	if c.fifoBytes+need+8 > c.cfg.RxFIFO {
		c.stats.RxFIFODrops++
		return
	}
	if len(c.open.hdrs) == 0 {
		c.open.firstAt = t
	}
	c.open.data = append(c.open.data, frame...)
	for len(c.open.data)%8 != 0 {
		c.open.data = append(c.open.data, 0)
	}
	c.open.hdrs = append(c.open.hdrs, uint32(len(frame))<<16|pktGood, pktDrop)
	c.fifoBytes += need
	c.stats.RxFrames++
	if len(c.open.data) >= int(c.qctrl[3])<<10 || c.timer() == 0 {
		c.closeBuf()
	}
}

// closeBuf turns the aggregation buffer into a bulk-in transfer (the
// layout Linux's ax88179_rx_fixup documents: frames, header array, 4
// bytes of padding when needed so the trailer ends 8-aligned, trailer).
func (c *Chip) closeBuf() {
	b := c.open.data
	off := len(b)
	for _, h := range c.open.hdrs {
		b = binary.LittleEndian.AppendUint32(b, h)
	}
	if (len(b)+4)%8 != 0 {
		b = append(b, 0, 0, 0, 0)
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(off)<<16|uint32(len(c.open.hdrs)))
	c.fifoBytes += len(b) - len(c.open.data) - 8*len(c.open.hdrs)/2
	c.ready = append(c.ready, b)
	c.open = aggBuf{}
}

// bulkIn sends the next packet of the oldest ready transfer, a
// zero-length packet after one that ended on a packet boundary, or NAK.
func (c *Chip) bulkIn(buf []byte) (int, usbsim.Handshake) {
	c.catchUp()
	if c.epprcr&eppBZ != 0 {
		return 0, usbsim.ACK // BZ: zero-length answers
	}
	if len(c.ready) == 0 {
		return 0, usbsim.NAK
	}
	cur := c.ready[0]
	if c.sendZLP {
		c.finishSend(cur)
		return 0, usbsim.ACK
	}
	mps := c.MaxPacket()
	n := copy(buf[:min(len(buf), mps)], cur[c.sendOff:])
	c.sendOff += n
	if c.sendOff == len(cur) {
		if n == mps {
			c.sendZLP = true
		} else {
			c.finishSend(cur)
		}
	}
	return n, usbsim.ACK
}

func (c *Chip) finishSend(cur []byte) {
	c.fifoBytes -= len(cur)
	if c.fifoBytes < 0 {
		c.fifoBytes = 0
	}
	c.ready = c.ready[1:]
	c.sendOff, c.sendZLP = 0, false
	c.stats.BulkInXfers++
}

// bulkOut takes one OUT packet: frames are [8-byte header][frame][one
// byte if the header's PAD flag is set]. A transfer ends with a short
// packet or a zero-length packet. A full packet that ends a frame
// exactly leaves the chip waiting for the transfer's end; if data comes
// instead, bulk-out wedges.
func (c *Chip) bulkOut(data []byte) usbsim.Handshake {
	if c.txWedged {
		return usbsim.NAK
	}
	if len(data) == 0 {
		c.txPend = false
		if len(c.txBuf) != 0 {
			c.stats.TxBadHeaders++
			c.txBuf = c.txBuf[:0]
		}
		return usbsim.ACK
	}
	if c.txPend {
		c.txWedged = true
		c.stats.TxWedges++
		return usbsim.NAK
	}
	c.txBuf = append(c.txBuf, data...)
	for len(c.txBuf) >= 8 {
		w0 := binary.LittleEndian.Uint32(c.txBuf)
		w1 := binary.LittleEndian.Uint32(c.txBuf[4:])
		n := int(w0 & txLenMask)
		need := 8 + n
		pad := w1&txPadding == txPadding
		if pad {
			need++
		}
		if n < 14 || n > 16<<10 {
			c.stats.TxBadHeaders++
			c.txBuf = c.txBuf[:0]
			break
		}
		if len(c.txBuf) < need {
			break
		}
		c.stats.TxFrames++
		if c.cfg.Transmitted != nil {
			c.cfg.Transmitted(c.txBuf[8 : 8+n])
		}
		if pad {
			c.stats.TxPadded++
		}
		c.txBuf = c.txBuf[:copy(c.txBuf, c.txBuf[need:])]
	}
	if len(data) < c.MaxPacket() {
		if len(c.txBuf) != 0 {
			c.stats.TxBadHeaders++
			c.txBuf = c.txBuf[:0]
		}
	} else if len(c.txBuf) == 0 {
		c.txPend = true
	}
	return usbsim.ACK
}
