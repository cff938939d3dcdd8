// Package gather gives the AP's and the station's gnet.NIC ports one
// contiguous frame from a transmit gather list: the 802.11 encapsulation
// (and software CCMP) works on a single slice.
package gather

import gnet "github.com/gowrt/gowrt/net"

// Flat returns b's frame in one slice: its only segment as it is, or its
// segments copied into buf. False: the frame is longer than buf, too
// large for the port.
func Flat(b gnet.TxBuf, buf []byte) ([]byte, bool) {
	if b.Len() > len(buf) {
		return nil, false
	}
	segs := b.Segments()
	if len(segs) == 1 {
		return segs[0], true
	}
	k := 0
	for _, s := range segs {
		k += copy(buf[k:], s)
	}
	return buf[:k], true
}
