package uhci

import (
	"testing"
	"time"

	"github.com/gowrt/gowrt/hwsim"
	"github.com/gowrt/gowrt/usbnet/uhci/uhcisim"
	"github.com/gowrt/gowrt/usbnet/usb"
)

// quietRig is a controller, model and device with no goroutines of
// their own (no dispatcher, no pump, a poll that never ticks): the
// caller settles the model and calls Interrupt itself, so allocation
// counts and benchmark figures are the driver's and the model's only.
func quietRig(tb testing.TB, inOrder bool) (*hwsim.System, *HC, *testDev, *uhcisim.Controller) {
	tb.Helper()
	sys := hwsim.New(hwsim.Config{Seed: 1, NoPostedWrites: true, NoStaleReads: true, NoEviction: true})
	model := uhcisim.New(sys, nil, uhcisim.Config{InOrder: inOrder})
	hc, err := New(Config{Regs: model.Map("uhci"), DMA: sys.Mem, PortPoll: time.Hour})
	if err != nil {
		tb.Fatal(err)
	}
	dev := &testDev{}
	stop := make(chan struct{})
	go model.Pump(stop) // only for Start's reset and the port reset
	if err := hc.Start(); err != nil {
		tb.Fatal(err)
	}
	model.Plug(1, dev)
	if _, err := hc.ResetPort(1); err != nil {
		tb.Fatal(err)
	}
	close(stop)
	tb.Cleanup(hc.Stop)
	dev.set(func(d *testDev) { d.addr = 5 })
	return sys, hc, dev, model
}

// cycle submits x and drives the model and the completion pass until
// x's Done ran.
func cycle(tb testing.TB, sys *hwsim.System, hc *HC, p usb.Pipe, x *usb.Transfer, done *bool) {
	*done = false
	if err := p.Submit(x); err != nil {
		tb.Fatal(err)
	}
	for i := 0; !*done; i++ {
		sys.Sched.Settle(256)
		hc.Interrupt()
		if i > 10000 {
			tb.Fatal("transfer never completed")
		}
	}
}

// TestZeroAllocs: submitting a transfer, the controller running it, and
// its completion (scan, sync, Done) allocate nothing, for bulk OUT and
// for bulk IN with a short packet (queue restart and toggle fix).
func TestZeroAllocs(t *testing.T) {
	sys, hc, dev, _ := quietRig(t, false)
	out, err := hc.OpenPipe(usb.PipeConfig{Address: 5, Endpoint: 0x02, Type: usb.Bulk, MaxPacket: devBulkMP, Speed: usb.SpeedFull})
	if err != nil {
		t.Fatal(err)
	}
	in, err := hc.OpenPipe(usb.PipeConfig{Address: 5, Endpoint: 0x82, Type: usb.Bulk, MaxPacket: devBulkMP, Speed: usb.SpeedFull})
	if err != nil {
		t.Fatal(err)
	}
	done := false
	xo, _ := out.NewTransfer(2048)
	xo.Done = func(*usb.Transfer) { done = true }
	xo.Len = 1514
	xi, _ := in.NewTransfer(2048)
	xi.Flags = usb.ShortOK
	xi.Done = func(*usb.Transfer) { done = true }
	frame := testFrame(1, 1000)
	// The device's queues grow on the test side; keep them from
	// allocating inside the measured runs.
	dev.set(func(d *testDev) {
		d.sinkOut = true
		d.outFrame = make([]byte, 0, 4096)
		d.inFrames = make([][]byte, 0, 1024)
	})
	if n := testing.AllocsPerRun(50, func() { cycle(t, sys, hc, out, xo, &done) }); n != 0 {
		t.Errorf("bulk out: %v allocations per transfer", n)
	}
	dev.set(func(d *testDev) {
		for i := 0; i < 60; i++ {
			d.inFrames = append(d.inFrames, frame)
		}
	})
	if n := testing.AllocsPerRun(50, func() {
		xi.Len = len(xi.Buf)
		cycle(t, sys, hc, in, xi, &done)
	}); n != 0 {
		t.Errorf("bulk in: %v allocations per transfer", n)
	}
	if dev.sunk != 51 {
		t.Fatalf("device got %d frames, want 51", dev.sunk)
	}
	if xi.Actual != len(frame) || xi.Err != nil {
		t.Fatalf("bulk in: %d %v", xi.Actual, xi.Err)
	}
}

// BenchmarkBulkOut sends 1514-byte frames through the model (every
// transfer 24 TDs and a zero-length packet's worth of bookkeeping).
func BenchmarkBulkOut(b *testing.B) {
	sys, hc, dev, _ := quietRig(b, true)
	out, err := hc.OpenPipe(usb.PipeConfig{Address: 5, Endpoint: 0x02, Type: usb.Bulk, MaxPacket: devBulkMP, Speed: usb.SpeedFull})
	if err != nil {
		b.Fatal(err)
	}
	done := false
	x, _ := out.NewTransfer(2048)
	x.Done = func(*usb.Transfer) { done = true }
	x.Len = 1514
	dev.set(func(d *testDev) { d.sinkOut = true; d.outFrame = make([]byte, 0, 4096) })
	b.ReportAllocs()
	b.SetBytes(1514)
	for b.Loop() {
		cycle(b, sys, hc, out, x, &done)
	}
}

// BenchmarkBulkIn receives 1514-byte frames (a short last packet: SPD
// stops the queue, the driver restarts it).
func BenchmarkBulkIn(b *testing.B) {
	sys, hc, dev, _ := quietRig(b, true)
	in, err := hc.OpenPipe(usb.PipeConfig{Address: 5, Endpoint: 0x82, Type: usb.Bulk, MaxPacket: devBulkMP, Speed: usb.SpeedFull})
	if err != nil {
		b.Fatal(err)
	}
	done := false
	x, _ := in.NewTransfer(2048)
	x.Flags = usb.ShortOK
	x.Done = func(*usb.Transfer) { done = true }
	frame := testFrame(1, 1514)
	b.ReportAllocs()
	b.SetBytes(1514)
	for i := 0; b.Loop(); i++ {
		if i%512 == 0 {
			dev.set(func(d *testDev) {
				d.inFrames = d.inFrames[:0]
				for j := 0; j < 512; j++ {
					d.inFrames = append(d.inFrames, frame)
				}
			})
		}
		x.Len = len(x.Buf)
		cycle(b, sys, hc, in, x, &done)
	}
}
