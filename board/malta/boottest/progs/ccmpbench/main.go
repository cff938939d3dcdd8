//go:build mips || mipsle

// Command ccmpbench measures what software CCMP costs on gowrt's MIPS
// target: on QEMU malta under -icount shift=0,sleep=off (one guest
// nanosecond per instruction) it protects and then checks frames of a
// 1500-octet body with package wlan/ccmp, the AP's software crypto
// placement, and prints the guest time per frame, which is instructions
// per frame. The raw AES block encryptions of the same 1500 octets are
// measured beside it: CCM runs AES twice per block (CBC-MAC and CTR), so
// twice that is the floor.
//
// Output: "ccmpbench: frames=N encap=I decap=I aes=I" (instructions per
// frame) and "ccmpbench: done"; a decryption that does not give back the
// plaintext prints "ccmpbench: FAIL".
package main

import (
	"bytes"
	"crypto/aes"
	"fmt"
	"os"
	"strconv"

	"github.com/gowrt/gowrt/net/netstack"
	"github.com/gowrt/gowrt/wlan/ccmp"
)

const (
	// bodyLen is the MPDU body the issue names: a 1500-octet frame.
	bodyLen = 1500
	// qosHeaderLen is a three-address QoS data header (802.11-2016 9.3.2.1):
	// frame control, duration, three addresses, sequence control, QoS control.
	qosHeaderLen = 26
	// defaultFrames: enough that the kernel's clock interrupts are noise.
	defaultFrames = 500
)

func fail(what string, err error) {
	fmt.Printf("ccmpbench: FAIL %s: %v\n", what, err)
	os.Exit(1)
}

// qosData builds a QoS data frame from a station to the AP (To DS) with a
// body of n octets.
func qosData(n int) []byte {
	f := make([]byte, qosHeaderLen+n, qosHeaderLen+n+ccmp.Overhead)
	f[0], f[1] = 0x88, 0x01                     // type data, subtype QoS data; To DS
	copy(f[4:10], []byte{0x02, 0, 0, 0, 0, 1})  // A1 BSSID
	copy(f[10:16], []byte{0x02, 0, 0, 0, 0, 2}) // A2 the station
	copy(f[16:22], []byte{0x02, 0, 0, 0, 0, 3}) // A3 the destination
	f[24] = 0                                   // TID 0
	for i := range n {
		f[qosHeaderLen+i] = byte(i * 7)
	}
	return f
}

func main() {
	frames := defaultFrames
	if len(os.Args) > 1 {
		n, err := strconv.Atoi(os.Args[1])
		if err != nil || n <= 0 {
			fail("frames", fmt.Errorf("%q", os.Args[1]))
		}
		frames = n
	}
	tk := bytes.Repeat([]byte{0x5a}, ccmp.TKLen)
	tx, err := ccmp.NewKey(tk, 0)
	if err != nil {
		fail("key", err)
	}
	rx, _ := ccmp.NewKey(tk, 0)
	plain := qosData(bodyLen)
	sealed := make([][]byte, frames)
	for i := range sealed {
		sealed[i] = make([]byte, len(plain), len(plain)+ccmp.Overhead)
		copy(sealed[i], plain)
	}

	// Encapsulation: each frame in place, with its own PN.
	t0 := netstack.Nanotime()
	for i := range sealed {
		if sealed[i], err = tx.Encap(sealed[i]); err != nil {
			fail("encap", err)
		}
	}
	t1 := netstack.Nanotime()
	// Decapsulation, in PN order as the replay check wants.
	for i := range sealed {
		out, err := rx.Decap(sealed[i])
		if err != nil {
			fail("decap", err)
		}
		sealed[i] = out
	}
	t2 := netstack.Nanotime()
	for i := range sealed {
		if !bytes.Equal(sealed[i], plain) {
			fail("decap", fmt.Errorf("frame %d does not decrypt to the plaintext", i))
		}
	}

	// The baseline: raw AES of the body's blocks, once per frame.
	blk, _ := aes.NewCipher(tk)
	buf := make([]byte, (bodyLen+15)/16*16)
	t3 := netstack.Nanotime()
	for range frames {
		for off := 0; off < len(buf); off += 16 {
			blk.Encrypt(buf[off:off+16], buf[off:off+16])
		}
	}
	t4 := netstack.Nanotime()
	n := int64(frames)
	fmt.Printf("ccmpbench: frames=%d encap=%d decap=%d aes=%d\n", frames, (t1-t0)/n, (t2-t1)/n, (t4-t3)/n)
	fmt.Println("ccmpbench: done")
}
