package cdcecm_test

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/gowrt/gowrt/hwsim"
	"github.com/gowrt/gowrt/intr"
	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/usbnet/cdcecm"
	"github.com/gowrt/gowrt/usbnet/cdcecm/ecmsim"
	"github.com/gowrt/gowrt/usbnet/uhci"
	"github.com/gowrt/gowrt/usbnet/uhci/uhcisim"
	"github.com/gowrt/gowrt/usbnet/usb"
)

// TestOverUHCIModel runs the whole stack a malta board runs, on models:
// the ECM function (ecmsim) on the UHCI model's root port (uhcisim, which
// writes descriptors back out of order), the UHCI driver, the USB core's
// Bus, this driver and the usbnet NIC; on both CPU byte orders. Frames of
// every length class cross both ways intact.
func TestOverUHCIModel(t *testing.T) {
	for _, be := range []bool{false, true} {
		name := "le"
		if be {
			name = "be"
		}
		t.Run(name, func(t *testing.T) {
			const line = 11
			sys := hwsim.New(hwsim.Config{Seed: 19, BigEndianCPU: be, NoEviction: true})
			ctl := sys.NewController(hwsim.ControllerConfig{Name: "i8259", Lines: 16})
			model := uhcisim.New(sys, ctl, uhcisim.Config{Line: line})
			hc, err := uhci.New(uhci.Config{Name: "uhci0", Regs: model.Map("uhci"), DMA: sys.Mem, PortPoll: 5 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			disp := intr.NewDispatcher(ctl, ctl)
			if err := ctl.SetTrigger(line, intr.Level); err != nil {
				t.Fatal(err)
			}
			if err := disp.Register(line, "uhci", hc.Interrupt); err != nil {
				t.Fatal(err)
			}
			stop := make(chan struct{})
			pumped := make(chan struct{})
			go func() { defer close(pumped); model.Pump(stop) }()
			if err := hc.Start(); err != nil {
				t.Fatal(err)
			}
			attached := make(chan *cdcecm.Port, 1)
			drv := &cdcecm.Driver{OnAttach: func(p *cdcecm.Port) { attached <- p }}
			bus := usb.NewBus(hc, usb.BusConfig{Drivers: []usb.Driver{drv}, Debounce: 5 * time.Millisecond,
				Log: func(s string) { t.Log(s) }})
			bus.Start()
			defer func() {
				bus.Stop()
				hc.Stop()
				_ = disp.Unregister(line)
				close(stop)
				<-pumped
				for _, m := range sys.Misuses() {
					t.Errorf("misuse: %v", m)
				}
			}()
			fn := ecmsim.New(peerMAC)
			model.Plug(1, fn.Device)
			var port *cdcecm.Port
			select {
			case port = <-attached:
			case <-time.After(20 * time.Second):
				t.Fatalf("no attach; bus %+v", bus.Stats())
			}
			h := &handler{}
			if err := port.Start(h); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "link up", func() bool { return port.Link().Up })
			sizes := []int{60, 64, 65, 128, 500, 1472, 1514}
			for i, n := range sizes {
				fn.Send(testFrame(n, byte(i)))
			}
			deadline := time.Now().Add(10 * time.Second)
			for h.nFrames() != len(sizes) {
				if time.Now().After(deadline) {
					t.Fatalf("%d of %d frames to the host; model %+v queued %d; uhci errors %d short %d restarts %d; nic rx errors %d stalls %d decode drops %v",
						h.nFrames(), len(sizes), fn.Stats(), fn.Queued(), hc.Stats.Errors.Load(), hc.Stats.Short.Load(), hc.Stats.Restarts.Load(),
						port.Stats.RxXferErrors.Load(), port.Stats.Stalls.Load(), port.Counters().Drops)
				}
				time.Sleep(time.Millisecond)
			}
			for i, n := range sizes {
				if !bytes.Equal(h.frames[i], testFrame(n, byte(i))) {
					t.Fatalf("frame %d (%d bytes) differs", i, n)
				}
			}
			for i, n := range sizes {
				f := testFrame(n, byte(50+i))
				for {
					err := port.Transmit(txBuf{f})
					if err == nil {
						break
					}
					if !errors.Is(err, gnet.ErrTxFull) {
						t.Fatal(err)
					}
					time.Sleep(time.Millisecond)
				}
				select {
				case got := <-fn.Frames():
					if !bytes.Equal(got, f) {
						t.Fatalf("wire frame %d: %d bytes, want %d", i, len(got), n)
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("wire frame %d missing", i)
				}
			}
			if c := port.Counters(); c.Drops != [gnet.NumDropReasons]uint64{} {
				t.Fatalf("drops %+v", c.Drops)
			}
		})
	}
}
