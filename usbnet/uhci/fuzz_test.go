package uhci

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/gowrt/gowrt/usbnet/usb"
)

// FuzzCompletion writes arbitrary control/status words into the TDs of
// queued transfers, as a broken or hostile controller could, and runs the
// completion pass and an Abort: the driver must neither panic nor report
// more data than a transfer asked for, nor an error outside the core's
// set, and the pipe must work afterwards.
func FuzzCompletion(f *testing.F) {
	sys, hc, _, _ := quietRig(f, true)
	// Halt the controller so only the fuzzer writes status.
	hc.regs.Write16(regUSBCMD, cmdCF)
	hc.regs.Barrier()
	sys.Sched.Settle(10000)
	in, err := hc.OpenPipe(usb.PipeConfig{Address: 5, Endpoint: 0x82, Type: usb.Bulk, MaxPacket: devBulkMP, Speed: usb.SpeedFull})
	if err != nil {
		f.Fatal(err)
	}
	ctl, err := hc.OpenPipe(usb.PipeConfig{Address: 5, Type: usb.Control, MaxPacket: 8, Speed: usb.SpeedFull})
	if err != nil {
		f.Fatal(err)
	}
	var done []*usb.Transfer
	mk := func(p usb.Pipe, size int) *usb.Transfer {
		x, err := p.NewTransfer(size)
		if err != nil {
			f.Fatal(err)
		}
		x.Done = func(x *usb.Transfer) { done = append(done, x) }
		return x
	}
	xs := []*usb.Transfer{mk(in, 256), mk(in, 256), mk(in, 256), mk(ctl, 64)}
	le := func(ws ...uint32) []byte {
		b := make([]byte, 4*len(ws))
		for i, w := range ws {
			binary.LittleEndian.PutUint32(b[4*i:], w)
		}
		return b
	}
	f.Add(byte(3), le(0x3f, 0x3f, 0x13, ctrlActive))                  // two full, one short
	f.Add(byte(0), le(ctrlStalled|0x7ff, 0, 0))                       // stall
	f.Add(byte(1), le(0x7ff, 0x7fe, ctrlBabble|ctrlStalled|0x40))     // babble
	f.Add(byte(2), le(0x07, 0x03, 0x07, 0x07ff))                      // control short read
	f.Add(byte(7), le(0xffffffff, 0x12345678, 0x7ffffff, 0, 1, 2, 3)) // noise
	allowed := []error{usb.ErrStall, usb.ErrBabble, usb.ErrTransaction, usb.ErrDataBuffer, usb.ErrShort, usb.ErrCancelled}
	f.Fuzz(func(t *testing.T, sel byte, words []byte) {
		done = done[:0]
		for i, x := range xs {
			if sel&(1<<i) == 0 {
				continue
			}
			x.Len = max(0, len(x.Buf)-int(sel>>4)*7)
			x.Flags = usb.Flags(sel>>6) & usb.ShortOK
			if x == xs[3] {
				x.Setup = usb.Setup{RequestType: usb.RequestIn, Request: 6, Value: 0x100, Length: uint16(x.Len)}
			}
			p := in
			if x == xs[3] {
				p = ctl
			}
			if err := p.Submit(x); err != nil {
				t.Fatal(err)
			}
		}
		for _, p := range []usb.Pipe{in, ctl} {
			pp := p.(*pipe)
			for x := pp.head; x != nil; x = x.next {
				for i := 0; i < x.n && len(words) >= 4; i++ {
					hc.tdMem.Write32(hc.tdOff(x.tds[i])+tdCtrl, binary.LittleEndian.Uint32(words))
					words = words[4:]
				}
			}
		}
		hc.service()
		in.Abort()
		ctl.Abort()
		for _, x := range done {
			if x.Actual < 0 || x.Actual > x.Len {
				t.Fatalf("actual %d of %d", x.Actual, x.Len)
			}
			ok := x.Err == nil
			for _, e := range allowed {
				ok = ok || errors.Is(x.Err, e)
			}
			if !ok {
				t.Fatalf("error %v", x.Err)
			}
		}
		for _, x := range xs {
			if x.HC.(*xfer).submitted {
				t.Fatal("a transfer is still submitted after Abort")
			}
		}
	})
}
