//go:build mips || mipsle

// Command ehcitest runs the ehci driver on a real controller model:
// QEMU's PCI EHCI (usb-ehci, 8086:24CD) on malta. It finds the controller
// on PCI (BAR0 in the GT's memory window, little-endian registers and
// descriptors), enables bus mastering, takes DMA memory from the kernel
// and its interrupt through the i8259, then enumerates the high-speed
// device on the root hub (QEMU's usb-storage), prints its device
// descriptor, configures it and reads blocks through the bulk-only
// transport (INQUIRY, READ(10)), printing the SHA-256 of what it read.
package main

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/gowrt/gowrt/barrier"
	"github.com/gowrt/gowrt/board/malta"
	"github.com/gowrt/gowrt/busdma/mipsdma"
	"github.com/gowrt/gowrt/intr"
	"github.com/gowrt/gowrt/kernel"
	"github.com/gowrt/gowrt/soc/malta/pci"
	"github.com/gowrt/gowrt/usbnet/ehci"
	"github.com/gowrt/gowrt/usbnet/usb"
)

// QEMU's ICH4-style EHCI (hw/usb/hcd-ehci-pci.c "usb-ehci").
const (
	ehciVendor = 0x8086
	ehciDevice = 0x24cd
	kseg1      = 0xa0000000
	readBlocks = 8 // READ(10) of blocks 0..7
	blockSize  = 512
)

func fail(what string, err error) {
	fmt.Printf("ehcitest: FAIL %s: %v\n", what, err)
	os.Exit(1)
}

func main() {
	gt, devs, err := malta.PCI()
	if err != nil {
		fail("pci", err)
	}
	var d *pci.Device
	for _, x := range devs {
		if x.Vendor == ehciVendor && x.Device == ehciDevice {
			d = x
		}
	}
	if d == nil || d.BAR[0].Kind != pci.BARMem32 || d.IRQ < 0 {
		fail("pci", fmt.Errorf("no usb-ehci with a memory BAR and an IRQ: %v", d))
	}
	pci.SetMaster(gt, d.Addr)
	regs, err := barrier.NewMMIO("ehci", kseg1+uintptr(d.BAR[0].Addr), uint32(d.BAR[0].Size), barrier.LittleEndian)
	if err != nil {
		fail("mmio", err)
	}
	plat, err := mipsdma.New(kernel.DMA)
	if err != nil {
		fail("dma", err)
	}
	hc, err := ehci.New(ehci.Config{Name: "ehci0", Regs: regs, DMA: plat, DescOrder: barrier.LittleEndian})
	if err != nil {
		fail("new", err)
	}
	disp := malta.NewDispatcher()
	if err := disp.Controller().SetTrigger(d.IRQ, intr.Level); err != nil {
		fail("trigger", err)
	}
	if err := disp.Register(d.IRQ, "ehci", hc.Interrupt); err != nil {
		fail("register", err)
	}
	if err := hc.Start(); err != nil {
		fail("start", err)
	}
	fmt.Printf("ehci: %v bar0 %#x irq %d, %d ports\n", d.Addr, d.BAR[0].Addr, d.IRQ, hc.Ports())

	port := 0
	for try := 0; try < 100 && port == 0; try++ {
		for p := 1; p <= hc.Ports(); p++ {
			if st, err := hc.PortStatus(p); err == nil && st.Connected {
				port = p
				break
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	if port == 0 {
		fail("port", errors.New("nothing connected"))
	}
	sp, err := hc.ResetPort(port)
	if err != nil {
		fail("reset", err)
	}
	fmt.Printf("ehci: port %d: %v-speed device\n", port, sp)

	p0, err := hc.OpenPipe(usb.PipeConfig{Type: usb.Control, MaxPacket: 64, Speed: sp})
	if err != nil {
		fail("pipe", err)
	}
	if _, err := control(p0, usb.Setup{RequestType: 0x80, Request: 6, Value: 0x0100, Length: 8}, nil); err != nil {
		fail("GET_DESCRIPTOR(8)", err)
	}
	if _, err := control(p0, usb.Setup{Request: 5, Value: 1}, nil); err != nil {
		fail("SET_ADDRESS", err)
	}
	p0.Close()
	time.Sleep(2 * time.Millisecond) // SET_ADDRESS recovery (USB 2.0 §9.2.6.3)
	ctl, err := hc.OpenPipe(usb.PipeConfig{Address: 1, Type: usb.Control, MaxPacket: 64, Speed: sp})
	if err != nil {
		fail("pipe", err)
	}
	dd, err := control(ctl, usb.Setup{RequestType: 0x80, Request: 6, Value: 0x0100, Length: 18}, nil)
	if err != nil || len(dd) != 18 {
		fail("GET_DESCRIPTOR(device)", fmt.Errorf("%v, %d bytes", err, len(dd)))
	}
	fmt.Printf("device: usb %x.%02x class %d vid:pid %04x:%04x maxpacket0 %d configs %d\n",
		dd[3], dd[2], dd[4], binary.LittleEndian.Uint16(dd[8:]), binary.LittleEndian.Uint16(dd[10:]), dd[7], dd[17])

	cfg, err := control(ctl, usb.Setup{RequestType: 0x80, Request: 6, Value: 0x0200, Length: 255}, nil)
	if err != nil || len(cfg) < 9 {
		fail("GET_DESCRIPTOR(config)", err)
	}
	var in, out usb.PipeConfig
	for i := 0; i+2 <= len(cfg) && cfg[i] >= 2 && i+int(cfg[i]) <= len(cfg); i += int(cfg[i]) {
		if cfg[i+1] != 5 || cfg[i] < 7 || cfg[i+3]&3 != 2 {
			continue
		}
		pc := usb.PipeConfig{Address: 1, Endpoint: cfg[i+2], Type: usb.Bulk,
			MaxPacket: int(binary.LittleEndian.Uint16(cfg[i+4:]) & 0x7ff), Speed: sp}
		if pc.In() {
			in = pc
		} else {
			out = pc
		}
	}
	if in.Endpoint == 0 || out.Endpoint == 0 {
		fail("config", fmt.Errorf("no bulk endpoints in % x", cfg))
	}
	if _, err := control(ctl, usb.Setup{Request: 9, Value: uint16(cfg[5])}, nil); err != nil {
		fail("SET_CONFIGURATION", err)
	}
	fmt.Printf("config %d: bulk in %#02x out %#02x, max packet %d\n", cfg[5], in.Endpoint, out.Endpoint, in.MaxPacket)

	bin, err := hc.OpenPipe(in)
	if err != nil {
		fail("bulk in", err)
	}
	bout, err := hc.OpenPipe(out)
	if err != nil {
		fail("bulk out", err)
	}
	b := &bot{in: bin, out: bout}
	inq, err := b.command([]byte{0x12, 0, 0, 0, 36, 0}, 36)
	if err != nil {
		fail("INQUIRY", err)
	}
	fmt.Printf("inquiry: %q %q\n", inq[8:16], inq[16:32])
	t0 := time.Now()
	read10 := []byte{0x28, 0, 0, 0, 0, 0, 0, 0, readBlocks, 0}
	data, err := b.command(read10, readBlocks*blockSize)
	if errors.Is(err, errCheck) {
		// The first media access after power-on reports CHECK
		// CONDITION (UNIT ATTENTION, SPC-3 §5.6); REQUEST SENSE
		// clears it and the command is repeated.
		sense, serr := b.command([]byte{0x03, 0, 0, 0, 18, 0}, 18)
		if serr != nil || len(sense) < 14 {
			fail("REQUEST SENSE", serr)
		}
		fmt.Printf("sense: key %#x asc %#02x ascq %#02x\n", sense[2]&0xf, sense[12], sense[13])
		data, err = b.command(read10, readBlocks*blockSize)
	}
	if err != nil {
		fail("READ(10)", err)
	}
	sum := sha256.Sum256(data)
	fmt.Printf("read: %d bytes sha256 %x in %d us\n", len(data), sum, time.Since(t0).Microseconds())
	st := &hc.Stats
	fmt.Printf("ehci: completed %d failed %d interrupts %d doorbells %d\n",
		st.Completed.Load(), st.Failed.Load(), st.Interrupts.Load(), st.AsyncAdvances.Load())
	hc.Stop()
	fmt.Println("ehcitest: ok")
}

// control runs one control transfer and waits for it (1 s).
func control(p usb.Pipe, s usb.Setup, outData []byte) ([]byte, error) {
	t, err := p.NewTransfer(int(s.Length))
	if err != nil {
		return nil, err
	}
	t.Setup, t.Len, t.Flags = s, int(s.Length), usb.ShortOK
	copy(t.Buf, outData)
	return run(p, t)
}

func run(p usb.Pipe, t *usb.Transfer) ([]byte, error) {
	done := make(chan struct{}, 1)
	t.Done = func(*usb.Transfer) { done <- struct{}{} }
	if err := p.Submit(t); err != nil {
		return nil, err
	}
	select {
	case <-done:
	case <-time.After(time.Second):
		p.Cancel(t)
		<-done
		return nil, usb.ErrTimeout
	}
	return t.Buf[:t.Actual], t.Err
}

// errCheck is a command that failed with CHECK CONDITION (CSW status 1).
var errCheck = errors.New("command failed (check condition)")

// bot is the USB mass-storage bulk-only transport (USB Mass Storage Class
// Bulk-Only Transport rev 1.0 §5: a 31-byte CBW, the data stage, a 13-byte
// CSW).
type bot struct {
	in, out usb.Pipe
	tag     uint32
}

func (b *bot) command(cb []byte, n int) ([]byte, error) {
	b.tag++
	cbw, err := b.out.NewTransfer(31)
	if err != nil {
		return nil, err
	}
	binary.LittleEndian.PutUint32(cbw.Buf[0:], 0x43425355) // "USBC"
	binary.LittleEndian.PutUint32(cbw.Buf[4:], b.tag)
	binary.LittleEndian.PutUint32(cbw.Buf[8:], uint32(n))
	cbw.Buf[12] = 0x80 // data in
	cbw.Buf[13] = 0    // LUN
	cbw.Buf[14] = byte(len(cb))
	copy(cbw.Buf[15:], cb)
	if _, err := run(b.out, cbw); err != nil {
		return nil, fmt.Errorf("CBW: %w", err)
	}
	data, err := b.in.NewTransfer(n)
	if err != nil {
		return nil, err
	}
	data.Flags = usb.ShortOK
	got, err := run(b.in, data)
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	csw, err := b.in.NewTransfer(13)
	if err != nil {
		return nil, err
	}
	c, err := run(b.in, csw)
	if err != nil || len(c) != 13 || binary.LittleEndian.Uint32(c) != 0x53425355 {
		return nil, fmt.Errorf("CSW % x: %v", c, err)
	}
	if tag := binary.LittleEndian.Uint32(c[4:]); tag != b.tag || c[12] > 1 {
		return nil, fmt.Errorf("CSW tag %d (want %d) status %d", tag, b.tag, c[12])
	}
	if c[12] == 1 {
		return nil, errCheck
	}
	return got, nil
}
