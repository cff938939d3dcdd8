package axge

import (
	"encoding/binary"
	"errors"

	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/usbnet/usb"
)

// RX aggregation format (FreeBSD if_axge.c axge_rx_frame, Linux
// ax88179_rx_fixup): one bulk-in transfer is
//
//	[frame 0][pad to 8][frame 1][pad to 8]...[pkt_hdr 0][pkt_hdr 1]...[rx_hdr]
//
// rx_hdr, the last 4 bytes (LE32): bits 15:0 packet count, bits 31:16 the
// offset of the pkt_hdr array from the start of the transfer. Each
// pkt_hdr is an LE32 describing one frame, in order.
const (
	rxHdrLen     = 4
	pktHdrLen    = 4
	rxFrameAlign = 8

	pktLenShift = 16
	pktLenMask  = 0x1FFF
	pktCRCErr   = 1 << 29
	pktMIIErr   = 1 << 30
	pktDrop     = 1 << 31
	pktErrMask  = pktCRCErr | pktMIIErr | pktDrop // AXGE_RX_ERR

	ethHeaderLen = 14
)

// TX header (if_axgereg.h AXGE_TXLEN_MASK, AXGE_PADDING): two LE32 words
// before each frame; word 0 holds the length, word 1 the MSS and the
// padding indicator.
const (
	txHdrLen    = 8
	txLenMask   = 0x1FFFF
	txPadding   = 0x80008000
	txPadByte   = 1 // the byte appended when the PAD flag is set
	maxTxFrame  = gnet.RxBufSize
	txOverhead  = txHdrLen + txPadByte
	minTxFrame  = ethHeaderLen
	maxRxFrame  = gnet.RxBufSize
	minRxFrame  = ethHeaderLen
	rxAlignMask = rxFrameAlign - 1
)

// ErrFrameSize is EncodeTx's refusal of a frame shorter than an Ethernet
// header or longer than the driver's buffers.
var ErrFrameSize = errors.New("axge: frame size out of range")

// ErrTxBuffer is EncodeTx's refusal when dst cannot hold the frame and
// its header (the framework sized it wrong).
var ErrTxBuffer = errors.New("axge: TX buffer too small")

// FramingStats break DecodeRx's drops down further than one DropReason.
type FramingStats struct {
	RxFrames    gnet.Counter // frames delivered
	Dummies     gnet.Counter // zero-length dummy headers skipped (not drops)
	CRCErrors   gnet.Counter // pkt_hdr CRC error bit
	MIIErrors   gnet.Counter // pkt_hdr MII error bit
	ChipDrops   gnet.Counter // pkt_hdr drop bit
	Undersize   gnet.Counter // shorter than an Ethernet header
	Oversize    gnet.Counter // longer than gowrt's RX buffers
	Overruns    gnet.Counter // frames whose data would cross into the header array
	BadTrailers gnet.Counter // transfers whose rx_hdr is impossible (all frames lost)
	TxPadded    gnet.Counter // frames sent with the PAD flag and its extra byte
	TxRejected  gnet.Counter // frames EncodeTx refused
}

// Framing packs frames into the AX88179's bulk transfers. It implements
// usbnet.Framing; its methods allocate nothing.
//
// TX padding: when a frame plus its 8-byte header fills a whole number of
// bulk-out packets the chip cannot tell where the transfer ends and waits
// for more (FreeBSD's 57 Mbit/s axge wedged with ENOBUFS this way). Of
// the two fixes in the sources, Framing uses Linux's: set the PAD flag
// in header word 1 and append one byte the chip discards, so the
// transfer ends with a short packet. FreeBSD's other one, a zero-length
// packet (usb.ZeroLengthPacket), costs a whole extra transaction — on a
// full-speed UHCI port a frame slot — and depends on every host
// controller honouring the flag; the byte costs nothing extra.
type Framing struct {
	Stats FramingStats
}

// TxOverhead implements usbnet.Framing: the header plus the pad byte.
func (f *Framing) TxOverhead() int { return txOverhead }

// EncodeTx implements usbnet.Framing.
func (f *Framing) EncodeTx(dst []byte, segs [][]byte, n, maxPacket int) (int, usb.Flags, error) {
	if n < minTxFrame || n > maxTxFrame {
		f.Stats.TxRejected.Add(1)
		return 0, 0, ErrFrameSize
	}
	if len(dst) < n+txOverhead {
		f.Stats.TxRejected.Add(1)
		return 0, 0, ErrTxBuffer
	}
	off := txHdrLen
	for _, s := range segs {
		if off+len(s) > txHdrLen+n {
			f.Stats.TxRejected.Add(1)
			return 0, 0, ErrFrameSize
		}
		off += copy(dst[off:], s)
	}
	if off != txHdrLen+n {
		f.Stats.TxRejected.Add(1)
		return 0, 0, ErrFrameSize
	}
	var word1 uint32
	length := txHdrLen + n
	if maxPacket > 0 && length%maxPacket == 0 {
		word1 = txPadding
		dst[length] = 0
		length += txPadByte
		f.Stats.TxPadded.Add(1)
	}
	binary.LittleEndian.PutUint32(dst[0:], uint32(n)&txLenMask)
	binary.LittleEndian.PutUint32(dst[4:], word1)
	return length, 0, nil
}

// DecodeRx implements usbnet.Framing. xfer is untrusted: the trailer's
// count and offset are checked against len(xfer) before the header array
// is touched (the pre-2022 Linux rx_fixup did not, CVE-2022-2964), and
// every frame must end before the header array starts. reason is the
// first drop's.
func (f *Framing) DecodeRx(xfer []byte, deliver func(frame []byte)) (dropped int, reason gnet.DropReason) {
	if len(xfer) < rxHdrLen {
		if len(xfer) == 0 {
			return 0, 0 // a zero-length packet (EPPRCR.BZ, or a flush): nothing to parse
		}
		f.Stats.BadTrailers.Add(1)
		return 1, gnet.DropRxBadDescriptor
	}
	trailer := binary.LittleEndian.Uint32(xfer[len(xfer)-rxHdrLen:])
	count := int(trailer & 0xFFFF)
	hdrOff := int(trailer >> 16)
	hdrEnd := len(xfer) - rxHdrLen
	// Both terms are at most 0xFFFF·4 + 0xFFFF, far from overflow.
	if hdrOff > hdrEnd || count*pktHdrLen > hdrEnd-hdrOff {
		f.Stats.BadTrailers.Add(1)
		return 1, gnet.DropRxBadDescriptor
	}
	drop := func(r gnet.DropReason, c *gnet.Counter) {
		c.Add(1)
		if dropped == 0 {
			reason = r
		}
		dropped++
	}
	pos := 0
	for i := 0; i < count; i++ {
		h := binary.LittleEndian.Uint32(xfer[hdrOff+i*pktHdrLen:])
		plen := int(h>>pktLenShift) & pktLenMask
		if plen == 0 {
			// The firmware's dummy entry after each real one
			// (Linux ax88179_rx_fixup): no data, skip it.
			f.Stats.Dummies.Add(1)
			continue
		}
		padded := (plen + rxAlignMask) &^ rxAlignMask
		if plen > hdrOff-pos {
			// The data would run into the header array: nothing
			// after this entry can be trusted either.
			for ; i < count; i++ {
				if binary.LittleEndian.Uint32(xfer[hdrOff+i*pktHdrLen:])>>pktLenShift&pktLenMask != 0 {
					drop(gnet.DropRxBadDescriptor, &f.Stats.Overruns)
				}
			}
			break
		}
		frame := xfer[pos : pos+plen]
		if padded > hdrOff-pos {
			pos = hdrOff // the last frame may omit its padding
		} else {
			pos += padded
		}
		switch {
		case h&pktCRCErr != 0:
			drop(gnet.DropRxErrors, &f.Stats.CRCErrors)
		case h&pktMIIErr != 0:
			drop(gnet.DropRxErrors, &f.Stats.MIIErrors)
		case h&pktDrop != 0:
			drop(gnet.DropRxErrors, &f.Stats.ChipDrops)
		case plen < minRxFrame:
			drop(gnet.DropRxUndersize, &f.Stats.Undersize)
		case plen > maxRxFrame:
			drop(gnet.DropRxOversize, &f.Stats.Oversize)
		default:
			f.Stats.RxFrames.Add(1)
			deliver(frame)
		}
	}
	return dropped, reason
}
