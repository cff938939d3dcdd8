//go:build mips || mipsle

// Command uhcitest runs the UHCI driver (usbnet/uhci) on QEMU malta's
// PIIX4 USB function (00:0a.2, 8086:7112, BAR4 I/O, PIRQD: i8259 line 11)
// with QEMU's usb-net attached to root port 1, and talks to the device
// through pipes directly, as the USB core will: the device descriptor at
// address 0 (8 bytes with an 8-byte max packet, then all 18), SET_ADDRESS,
// the descriptor again and the configuration descriptors at the new
// address. It then times back-to-back GET_DESCRIPTOR requests (each
// control transfer is three stages, one or more 1 ms frames) and prints
// "uhcitest: ok".
package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/gowrt/gowrt/board/malta"
	maltausb "github.com/gowrt/gowrt/board/malta/usb"
	"github.com/gowrt/gowrt/busdma/mipsdma"
	"github.com/gowrt/gowrt/intr"
	"github.com/gowrt/gowrt/kernel"
	"github.com/gowrt/gowrt/usbnet/uhci"
	"github.com/gowrt/gowrt/usbnet/usb"
)

func fail(what string, err error) {
	fmt.Printf("uhcitest: FAIL %s: %v\n", what, err)
	os.Exit(1)
}

func main() {
	d, regs, err := maltausb.FindUHCI()
	if err != nil {
		fail("find", err)
	}
	fmt.Printf("uhci: %v\n", d)
	plat, err := mipsdma.New(kernel.DMA)
	if err != nil {
		fail("dma", err)
	}
	hc, err := uhci.New(uhci.Config{Name: "uhci0", Regs: regs, DMA: plat})
	if err != nil {
		fail("new", err)
	}
	disp := malta.NewDispatcher()
	if err := disp.Controller().SetTrigger(d.IRQ, intr.Level); err != nil {
		fail("trigger", err)
	}
	if err := disp.Register(d.IRQ, "uhci", hc.Interrupt); err != nil {
		fail("register", err)
	}
	changes := make(chan int, 4)
	hc.SetPortChange(func(p int) {
		select {
		case changes <- p:
		default:
		}
	})
	if err := hc.Start(); err != nil {
		fail("start", err)
	}
	select {
	case p := <-changes:
		fmt.Printf("uhci: connect change on port %d\n", p)
	case <-time.After(2 * time.Second):
		fail("port", errors.New("no connect change reported"))
	}
	ps, err := hc.PortStatus(1)
	if err != nil || !ps.Connected {
		fail("port 1", fmt.Errorf("%+v %v", ps, err))
	}
	sp, err := hc.ResetPort(1)
	if err != nil {
		fail("reset", err)
	}
	fmt.Printf("uhci: port 1 %s speed, enabled\n", sp)

	p0, err := newCtl(hc, usb.PipeConfig{Type: usb.Control, MaxPacket: 8, Speed: sp})
	if err != nil {
		fail("pipe 0", err)
	}
	dd, err := p0.do(getDescriptor(1, 8))
	if err != nil {
		fail("descriptor (8 bytes)", err)
	}
	mp0 := int(dd[7])
	p0.p.Close()
	if p0, err = newCtl(hc, usb.PipeConfig{Type: usb.Control, MaxPacket: mp0, Speed: sp}); err != nil {
		fail("pipe 0", err)
	}
	dd, err = p0.do(getDescriptor(1, 18))
	if err != nil || len(dd) != 18 {
		fail("device descriptor", fmt.Errorf("% x %v", dd, err))
	}
	fmt.Printf("usb: device %04x:%04x class %d usb %x.%02x ep0 %d bytes, %d configurations\n",
		binary.LittleEndian.Uint16(dd[8:]), binary.LittleEndian.Uint16(dd[10:]), dd[4], dd[3], dd[2], dd[7], dd[17])
	const addr = 1
	if _, err := p0.do(usb.Setup{Request: 5, Value: addr}); err != nil {
		fail("set address", err)
	}
	p0.p.Close()
	time.Sleep(2 * time.Millisecond) // USB 2.0 §9.2.6.3: 2 ms SET_ADDRESS recovery
	p1, err := newCtl(hc, usb.PipeConfig{Address: addr, Type: usb.Control, MaxPacket: mp0, Speed: sp})
	if err != nil {
		fail("pipe 1", err)
	}
	if dd2, err := p1.do(getDescriptor(1, 18)); err != nil || string(dd2) != string(dd) {
		fail("descriptor at the new address", fmt.Errorf("% x %v", dd2, err))
	}
	fmt.Printf("usb: addressed as %d\n", addr)
	for i := 0; i < int(dd[17]); i++ {
		s := getDescriptor(2, 9)
		s.Value |= uint16(i)
		h, err := p1.do(s)
		if err != nil || len(h) != 9 {
			fail("configuration header", fmt.Errorf("% x %v", h, err))
		}
		s.Length = binary.LittleEndian.Uint16(h[2:])
		c, err := p1.do(s)
		if err != nil || len(c) != int(s.Length) {
			fail("configuration", fmt.Errorf("%d of %d bytes, %v", len(c), s.Length, err))
		}
		fmt.Printf("usb: configuration %d: value %d, %d bytes, %d interfaces:%s\n", i, c[5], len(c), c[4], endpoints(c))
	}
	// A request longer than the descriptor: the data stage ends with a
	// short packet, which stops the queue (SPD); the driver restarts it
	// at the status stage.
	if c, err := p1.do(getDescriptor(2, 255)); err != nil {
		fail("short configuration read", err)
	} else {
		fmt.Printf("usb: configuration 0 read with wLength 255: %d bytes\n", len(c))
	}
	// A configuration index past the last stalls.
	s := getDescriptor(2, 9)
	s.Value |= uint16(dd[17])
	if _, err := p1.do(s); !errors.Is(err, usb.ErrStall) {
		fmt.Printf("usb: configuration %d past the last: %v (no stall)\n", dd[17], err)
	}
	const n = 200
	t0 := time.Now()
	for i := 0; i < n; i++ {
		if _, err := p1.do(getDescriptor(1, 18)); err != nil {
			fail("timed descriptor", err)
		}
	}
	el := time.Since(t0)
	fmt.Printf("usb: %d GET_DESCRIPTOR(device) in %d ms: %.2f ms each\n", n, el.Milliseconds(), float64(el.Microseconds())/n/1000)
	if err := pingGateway(hc, p1, sp); err != nil {
		fail("ping through usb-net", err)
	}
	st := &hc.Stats
	fmt.Printf("uhci: interrupts %d completed %d errors %d short %d restarts %d cancelled %d host errors %d frame waits %d (timeouts %d)\n",
		st.Interrupts.Load(), st.Completed.Load(), st.Errors.Load(), st.Short.Load(), st.Restarts.Load(),
		st.Cancelled.Load(), st.HostErrors.Load(), st.FrameWaits.Load(), st.FrameWaitTimeouts.Load())
	p1.p.Close()
	hc.Stop()
	fmt.Println("uhcitest: ok")
}

func getDescriptor(typ uint8, length uint16) usb.Setup {
	return usb.Setup{RequestType: usb.RequestIn, Request: 6, Value: uint16(typ) << 8, Length: length}
}

// endpoints lists the endpoint descriptors in a configuration.
func endpoints(c []byte) string {
	s := ""
	for i := 0; i+2 <= len(c) && c[i] >= 2 && i+int(c[i]) <= len(c); i += int(c[i]) {
		switch {
		case c[i+1] == 4 && c[i] >= 9:
			s += fmt.Sprintf(" [if %d alt %d class %d/%d/%d]", c[i+2], c[i+3], c[i+5], c[i+6], c[i+7])
		case c[i+1] == 5 && c[i] >= 7:
			s += fmt.Sprintf(" ep %#02x %s %d", c[i+2], usb.TransferType(c[i+3]&3), binary.LittleEndian.Uint16(c[i+4:])&0x7ff)
		}
	}
	return s
}

// ctl is a control pipe with one transfer, reused for every request.
type ctl struct {
	p    usb.Pipe
	x    *usb.Transfer
	done chan struct{}
}

func newCtl(hc *uhci.HC, cfg usb.PipeConfig) (*ctl, error) {
	p, err := hc.OpenPipe(cfg)
	if err != nil {
		return nil, err
	}
	x, err := p.NewTransfer(1024)
	if err != nil {
		return nil, err
	}
	c := &ctl{p: p, x: x, done: make(chan struct{}, 1)}
	x.Done = func(*usb.Transfer) { c.done <- struct{}{} }
	return c, nil
}

// do runs one control request and waits for it (1 s, then it is
// cancelled).
func (c *ctl) do(s usb.Setup) ([]byte, error) {
	x := c.x
	x.Setup, x.Len = s, int(s.Length)
	if err := c.p.Submit(x); err != nil {
		return nil, err
	}
	select {
	case <-c.done:
	case <-time.After(time.Second):
		c.p.Cancel(x)
		<-c.done
		if x.Err == usb.ErrCancelled {
			return nil, fmt.Errorf("%v: %w", s, usb.ErrTimeout)
		}
	}
	if x.Err != nil {
		return nil, fmt.Errorf("%v: %w", s, x.Err)
	}
	return append([]byte(nil), x.Buf[:x.Actual]...), nil
}
