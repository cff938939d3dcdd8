package uhci

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gowrt/gowrt/busdma"
	"github.com/gowrt/gowrt/hwsim"
	"github.com/gowrt/gowrt/internal/wrongcode"
	"github.com/gowrt/gowrt/intr"
	"github.com/gowrt/gowrt/usbnet/uhci/uhcisim"
	"github.com/gowrt/gowrt/usbnet/usb"
)

const line = 11

// wrong is the mistakes a rig makes the driver commit: through wrapped
// contracts (internal/wrongcode), or the driver's in-driver hooks
// (-tags gowrt_hazard only).
type wrong struct {
	noSync        bool // busdma syncs do no cache maintenance
	noBarriers    bool // descriptor-memory barriers dropped
	publishFirst  bool // hook: first TD's Active before its token
	lengthFirst   bool // hook: length read before Active
	noFrameWait   bool // hook: TDs reused right after unlinking
	globalOrder   bool // hook: completion pass in global submission order
	noRetoggle    bool // hook: toggles not fixed after a short packet
	noErrLimit    bool // hook: TDs retried forever (C_ERR 0)
	friendlyModel bool // model writes status back whole, in order

	// agentRate is not a mistake: how often the model runs between two
	// driver accesses (hwsim.Config.AgentRate; 0 = hwsim's default).
	agentRate int
}

// hooked reports whether w needs the driver's in-driver hooks.
func (w wrong) hooked() bool {
	return w.publishFirst || w.lengthFirst || w.noFrameWait || w.globalOrder || w.noRetoggle || w.noErrLimit
}

type rig struct {
	sys   *hwsim.System
	model *uhcisim.Controller
	hc    *HC
	dev   *testDev
	disp  *intr.Dispatcher
	stop  chan struct{}
	done  sync.WaitGroup
	once  sync.Once
	ports chan int
}

func newRig(t testing.TB, seed uint64, be bool, w wrong, mods ...func(*Config)) *rig {
	t.Helper()
	// NoEviction: see pcnet's rig; missing syncs are still caught at
	// sync time and on device reads (TestHazardMissingSync).
	sys := hwsim.New(hwsim.Config{Seed: seed, BigEndianCPU: be, NoEviction: true, AgentRate: w.agentRate})
	ctl := sys.NewController(hwsim.ControllerConfig{Name: "i8259", Lines: 16})
	r := &rig{sys: sys, stop: make(chan struct{}), dev: &testDev{}, ports: make(chan int, 16)}
	r.model = uhcisim.New(sys, ctl, uhcisim.Config{Line: line, InOrder: w.friendlyModel})
	cfg := Config{Name: "uhci0", Regs: r.model.Map("uhci"), DMA: sys.Mem, TDs: 512, PortPoll: 5 * time.Millisecond}
	if w.noSync || w.noBarriers {
		p := &wrongcode.Platform{Platform: sys.Mem, CoherentNoBarriers: w.noBarriers}
		if w.noSync {
			p.SkipCache = busdma.WritebackInvalidate
		}
		cfg.DMA = p
	}
	for _, m := range mods {
		m(&cfg)
	}
	hc, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	setHooks(t, hc, w)
	r.hc = hc
	r.disp = intr.NewDispatcher(ctl, ctl)
	if err := ctl.SetTrigger(line, intr.Level); err != nil {
		t.Fatal(err)
	}
	if err := r.disp.Register(line, "uhci", hc.Interrupt); err != nil {
		t.Fatal(err)
	}
	hc.SetPortChange(func(p int) {
		select {
		case r.ports <- p:
		default:
		}
	})
	r.done.Add(1)
	go func() { defer r.done.Done(); r.model.Pump(r.stop) }()
	if err := hc.Start(); err != nil {
		t.Fatal(err)
	}
	r.model.Plug(1, r.dev)
	t.Cleanup(r.close)
	return r
}

func (r *rig) close() {
	r.once.Do(func() {
		r.hc.Stop()
		_ = r.disp.Unregister(line)
		close(r.stop)
		r.done.Wait()
	})
}

func (r *rig) noMisuse(t testing.TB) {
	t.Helper()
	for _, m := range r.sys.Misuses() {
		t.Errorf("misuse: %v", m)
	}
}

func newTransfer(t testing.TB, p usb.Pipe, size int) (*usb.Transfer, chan *usb.Transfer) {
	t.Helper()
	x, err := p.NewTransfer(size)
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan *usb.Transfer, 4)
	x.Done = func(x *usb.Transfer) { ch <- x }
	return x, ch
}

func wait(t testing.TB, ch chan *usb.Transfer, what string) *usb.Transfer {
	t.Helper()
	select {
	case x := <-ch:
		return x
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: no completion", what)
	}
	return nil
}

// control runs one control request and returns its data and error.
func control(t testing.TB, p usb.Pipe, s usb.Setup, out []byte) ([]byte, error) {
	t.Helper()
	x, ch := newTransfer(t, p, int(s.Length))
	x.Setup = s
	x.Len = int(s.Length)
	if !s.In() {
		x.Len = copy(x.Buf, out)
	}
	if err := p.Submit(x); err != nil {
		return nil, err
	}
	x = wait(t, ch, s.String())
	return append([]byte(nil), x.Buf[:x.Actual]...), x.Err
}

func getDescriptor(typ uint8, length uint16) usb.Setup {
	return usb.Setup{RequestType: usb.RequestIn, Request: 6, Value: uint16(typ) << 8, Length: length}
}

// enumerate resets port 1 and addresses the device as 5, the way the
// core will: 8 bytes of the device descriptor at address 0 with an
// 8-byte max packet, SET_ADDRESS, then the rest at the new address.
func (r *rig) enumerate(t testing.TB) usb.Pipe {
	t.Helper()
	sp, err := r.hc.ResetPort(1)
	if err != nil || sp != usb.SpeedFull {
		t.Fatalf("reset port: %v %v", sp, err)
	}
	p0, err := r.hc.OpenPipe(usb.PipeConfig{Type: usb.Control, MaxPacket: 8, Speed: sp})
	if err != nil {
		t.Fatal(err)
	}
	d, err := control(t, p0, getDescriptor(1, 8), nil)
	if err != nil || !bytes.Equal(d, devDescriptor[:8]) {
		t.Fatalf("device descriptor at address 0: % x, %v", d, err)
	}
	if _, err := control(t, p0, usb.Setup{Request: 5, Value: 5}, nil); err != nil {
		t.Fatalf("set address: %v", err)
	}
	p0.Close()
	p, err := r.hc.OpenPipe(usb.PipeConfig{Address: 5, Type: usb.Control, MaxPacket: int(d[7]), Speed: sp})
	if err != nil {
		t.Fatal(err)
	}
	d, err = control(t, p, getDescriptor(1, 18), nil)
	if err != nil || !bytes.Equal(d, devDescriptor) {
		t.Fatalf("device descriptor at address 5: % x, %v", d, err)
	}
	return p
}

// TestEnumerate addresses the device and reads its descriptors on both
// byte orders under several seeds: a configuration descriptor shorter
// than the request ends the data stage with a short packet and the
// status stage still runs.
func TestEnumerate(t *testing.T) {
	for _, be := range []bool{false, true} {
		for seed := uint64(1); seed <= 4; seed++ {
			t.Run(fmt.Sprintf("be=%v/seed=%d", be, seed), func(t *testing.T) {
				r := newRig(t, seed, be, wrong{})
				select {
				case p := <-r.ports:
					if p != 1 {
						t.Fatalf("port change on %d", p)
					}
				case <-time.After(5 * time.Second):
					t.Fatal("no port change reported")
				}
				ps, err := r.hc.PortStatus(1)
				if err != nil || !ps.Connected || !ps.ConnectChanged || ps.Speed != usb.SpeedFull {
					t.Fatalf("port status %+v %v", ps, err)
				}
				p := r.enumerate(t)
				d, err := control(t, p, getDescriptor(2, 255), nil)
				if err != nil || !bytes.Equal(d, devConfig) {
					t.Fatalf("configuration: % x, %v", d, err)
				}
				// Twice: the control pipe's TDs rotate.
				d, err = control(t, p, getDescriptor(2, 9), nil)
				if err != nil || !bytes.Equal(d, devConfig[:9]) {
					t.Fatalf("configuration header: % x, %v", d, err)
				}
				// An unsupported request stalls.
				if _, err := control(t, p, usb.Setup{RequestType: 0xc0, Request: 0x99, Length: 4}, nil); !errors.Is(err, usb.ErrStall) {
					t.Fatalf("unsupported request: %v", err)
				}
				if _, err := control(t, p, getDescriptor(1, 18), nil); err != nil {
					t.Fatalf("after a stall: %v", err)
				}
				ps, _ = r.hc.PortStatus(1)
				if ps.ConnectChanged || !ps.Enabled {
					t.Fatalf("port status after reset %+v", ps)
				}
				r.close()
				r.noMisuse(t)
			})
		}
	}
}

func testFrame(i, n int) []byte {
	f := make([]byte, n)
	for j := range f {
		f[j] = byte(i*7 + j)
	}
	return f
}

// bulk opens the device's bulk pipes (after enumerate).
func (r *rig) bulk(t testing.TB) (in, out usb.Pipe) {
	t.Helper()
	var err error
	in, err = r.hc.OpenPipe(usb.PipeConfig{Address: 5, Endpoint: 0x82, Type: usb.Bulk, MaxPacket: devBulkMP, Speed: usb.SpeedFull})
	if err != nil {
		t.Fatal(err)
	}
	out, err = r.hc.OpenPipe(usb.PipeConfig{Address: 5, Endpoint: 0x02, Type: usb.Bulk, MaxPacket: devBulkMP, Speed: usb.SpeedFull})
	if err != nil {
		t.Fatal(err)
	}
	return in, out
}

var frameSizes = []int{1, 63, 64, 65, 127, 128, 200, 1514, 1024, 60}

// TestBulk receives frames with four bulk-in transfers in flight and
// sends frames with four bulk-out transfers in flight: every frame ends
// in a short packet (or a zero-length one), so the queue stops and is
// restarted with fixed toggles after almost every frame. What arrives is
// what was sent, in order, on both byte orders.
func TestBulk(t *testing.T) {
	for _, be := range []bool{false, true} {
		for seed := uint64(1); seed <= 3; seed++ {
			t.Run(fmt.Sprintf("be=%v/seed=%d", be, seed), func(t *testing.T) {
				r := newRig(t, seed, be, wrong{})
				r.enumerate(t)
				in, out := r.bulk(t)
				const frames = 40
				var want [][]byte
				for i := 0; i < frames; i++ {
					want = append(want, testFrame(i, frameSizes[i%len(frameSizes)]))
				}
				got := make(chan []byte, frames)
				for i := 0; i < 4; i++ {
					x, err := in.NewTransfer(2048)
					if err != nil {
						t.Fatal(err)
					}
					x.Flags = usb.ShortOK
					x.Done = func(x *usb.Transfer) {
						if x.Err != nil {
							if !errors.Is(x.Err, usb.ErrCancelled) && !errors.Is(x.Err, usb.ErrGone) {
								t.Errorf("bulk in: %v", x.Err)
							}
							return
						}
						got <- append([]byte(nil), x.Buf[:x.Actual]...)
						x.Len = len(x.Buf)
						if err := in.Submit(x); err != nil && !errors.Is(err, usb.ErrGone) {
							t.Errorf("resubmit: %v", err)
						}
					}
					if err := in.Submit(x); err != nil {
						t.Fatal(err)
					}
				}
				r.dev.queueIn(want...)
				for i := range want {
					select {
					case f := <-got:
						if !bytes.Equal(f, want[i]) {
							t.Fatalf("frame %d: got %d bytes, want %d", i, len(f), len(want[i]))
						}
					case <-time.After(10 * time.Second):
						t.Fatalf("frame %d never arrived", i)
					}
				}
				// OUT: four transfers cycling.
				free := make(chan *usb.Transfer, 4)
				for i := 0; i < 4; i++ {
					x, err := out.NewTransfer(2048)
					if err != nil {
						t.Fatal(err)
					}
					x.Flags = usb.ZeroLengthPacket
					x.Done = func(x *usb.Transfer) {
						if x.Err != nil || x.Actual != x.Len {
							t.Errorf("bulk out: %d of %d, %v", x.Actual, x.Len, x.Err)
						}
						free <- x
					}
					free <- x
				}
				for i, f := range want {
					var x *usb.Transfer
					select {
					case x = <-free:
					case <-time.After(10 * time.Second):
						t.Fatalf("out frame %d: no transfer came back", i)
					}
					x.Len = copy(x.Buf, f)
					if err := out.Submit(x); err != nil {
						t.Fatal(err)
					}
				}
				deadline := time.Now().Add(10 * time.Second)
				for len(r.dev.received()) < frames && time.Now().Before(deadline) {
					time.Sleep(time.Millisecond)
				}
				rx := r.dev.received()
				if len(rx) != frames {
					t.Fatalf("device got %d frames of %d", len(rx), frames)
				}
				for i := range rx {
					if !bytes.Equal(rx[i], want[i]) {
						t.Fatalf("out frame %d: device got %d bytes, want %d", i, len(rx[i]), len(want[i]))
					}
				}
				// The device has the last frame before the controller
				// retires its TD: wait for every OUT transfer's
				// completion, or close would end one as gone (a loaded
				// host made this test fail so).
				for i := 0; i < cap(free); i++ {
					select {
					case <-free:
					case <-time.After(10 * time.Second):
						t.Fatalf("out transfer %d of %d never completed", i+1, cap(free))
					}
				}
				r.close()
				r.noMisuse(t)
				st := &r.hc.Stats
				t.Logf("completed %d short %d restarts %d", st.Completed.Load(), st.Short.Load(), st.Restarts.Load())
			})
		}
	}
}

// TestInterruptPipe polls the notification endpoint at an 8-frame
// interval through the interrupt skeleton.
func TestInterruptPipe(t *testing.T) {
	r := newRig(t, 2, true, wrong{})
	r.enumerate(t)
	p, err := r.hc.OpenPipe(usb.PipeConfig{Address: 5, Endpoint: 0x81, Type: usb.Interrupt, MaxPacket: 8, Speed: usb.SpeedFull, Interval: 8})
	if err != nil {
		t.Fatal(err)
	}
	x, ch := newTransfer(t, p, 8)
	x.Flags = usb.ShortOK
	for i := 0; i < 5; i++ {
		note := []byte{0xa1, 0, byte(i), 0, 0, 0, 0, 0}
		r.dev.set(func(d *testDev) { d.notes = append(d.notes, note) })
		x.Len = 8
		if err := p.Submit(x); err != nil {
			t.Fatal(err)
		}
		x = wait(t, ch, "interrupt")
		if x.Err != nil || !bytes.Equal(x.Buf[:x.Actual], note) {
			t.Fatalf("notification %d: % x %v", i, x.Buf[:x.Actual], x.Err)
		}
	}
	r.close()
	r.noMisuse(t)
}

// TestStallAndClearHalt: a halted bulk endpoint fails the transfer with
// ErrStall; CLEAR_FEATURE(ENDPOINT_HALT) and ResetToggle make it work
// again.
func TestStallAndClearHalt(t *testing.T) {
	r := newRig(t, 3, false, wrong{})
	ep0 := r.enumerate(t)
	in, _ := r.bulk(t)
	x, ch := newTransfer(t, in, 512)
	x.Flags = usb.ShortOK
	r.dev.queueIn(testFrame(1, 100), testFrame(2, 70))
	if err := in.Submit(x); err != nil {
		t.Fatal(err)
	}
	if x = wait(t, ch, "first"); x.Err != nil || x.Actual != 100 {
		t.Fatalf("first: %d %v", x.Actual, x.Err)
	}
	r.dev.set(func(d *testDev) { d.halted[2] = true })
	if err := in.Submit(x); err != nil {
		t.Fatal(err)
	}
	if x = wait(t, ch, "stalled"); !errors.Is(x.Err, usb.ErrStall) {
		t.Fatalf("halted endpoint: %v", x.Err)
	}
	if _, err := control(t, ep0, usb.Setup{RequestType: usb.RecipientEndpt, Request: 1, Index: 0x82}, nil); err != nil {
		t.Fatal(err)
	}
	in.ResetToggle()
	if err := in.Submit(x); err != nil {
		t.Fatal(err)
	}
	if x = wait(t, ch, "after clear"); x.Err != nil || !bytes.Equal(x.Buf[:x.Actual], testFrame(2, 70)) {
		t.Fatalf("after clear-halt: %d %v", x.Actual, x.Err)
	}
	r.close()
	r.noMisuse(t)
}

// TestBabble: the device sends more than the packet allows.
func TestBabble(t *testing.T) {
	r := newRig(t, 4, true, wrong{})
	r.enumerate(t)
	in, _ := r.bulk(t)
	r.dev.set(func(d *testDev) { d.babble = true })
	r.dev.queueIn(testFrame(1, 100))
	x, ch := newTransfer(t, in, 512)
	if err := in.Submit(x); err != nil {
		t.Fatal(err)
	}
	if x = wait(t, ch, "babble"); !errors.Is(x.Err, usb.ErrBabble) {
		t.Fatalf("babble: %v", x.Err)
	}
	r.close()
	r.noMisuse(t)
}

// TestNoResponse: a device that stops answering costs three tries per
// TD (C_ERR), then the transfer fails with a transaction error.
func TestNoResponse(t *testing.T) {
	r := newRig(t, 5, false, wrong{})
	r.enumerate(t)
	_, out := r.bulk(t)
	r.dev.set(func(d *testDev) { d.silent = true })
	before := r.model.Stats().Timeouts
	x, ch := newTransfer(t, out, 64)
	if err := out.Submit(x); err != nil {
		t.Fatal(err)
	}
	if x = wait(t, ch, "silent"); !errors.Is(x.Err, usb.ErrTransaction) {
		t.Fatalf("silent device: %v", x.Err)
	}
	if n := r.model.Stats().Timeouts - before; n != 3 {
		t.Fatalf("%d tries, want 3", n)
	}
	r.close()
	r.noMisuse(t)
}

// TestUnplugMidTransfer: the device vanishes with four bulk-in transfers
// in flight; each fails (no answer: a transaction error), the poll
// reports the port change once, and the port reads disconnected.
func TestUnplugMidTransfer(t *testing.T) {
	r := newRig(t, 6, true, wrong{})
	r.enumerate(t)
	<-r.ports
	_, _ = r.hc.PortStatus(1)
	in, _ := r.bulk(t)
	ch := make(chan *usb.Transfer, 8)
	for i := 0; i < 4; i++ {
		x, err := in.NewTransfer(2048)
		if err != nil {
			t.Fatal(err)
		}
		x.Flags = usb.ShortOK
		x.Done = func(x *usb.Transfer) { ch <- x }
		if err := in.Submit(x); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(5 * time.Millisecond) // NAKing: in flight
	r.model.Unplug(1)
	for i := 0; i < 4; i++ {
		x := wait(t, ch, "unplugged")
		if !errors.Is(x.Err, usb.ErrTransaction) {
			t.Fatalf("transfer %d after unplug: %v", i, x.Err)
		}
	}
	select {
	case p := <-r.ports:
		if p != 1 {
			t.Fatalf("change on port %d", p)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no port change")
	}
	ps, _ := r.hc.PortStatus(1)
	if ps.Connected || ps.Enabled || !ps.ConnectChanged {
		t.Fatalf("port after unplug: %+v", ps)
	}
	r.close()
	r.noMisuse(t)
}

// TestCancel: Cancel of a transfer waiting on a NAKing endpoint calls
// Done with ErrCancelled before it returns; the transfers behind it keep
// running with the right toggles; Abort cancels the rest.
func TestCancel(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		r := newRig(t, seed, seed%2 == 0, wrong{})
		r.enumerate(t)
		in, _ := r.bulk(t)
		var xs []*usb.Transfer
		ch := make(chan *usb.Transfer, 8)
		for i := 0; i < 4; i++ {
			x, err := in.NewTransfer(256)
			if err != nil {
				t.Fatal(err)
			}
			x.Flags = usb.ShortOK
			x.Done = func(x *usb.Transfer) { ch <- x }
			if err := in.Submit(x); err != nil {
				t.Fatal(err)
			}
			xs = append(xs, x)
		}
		in.Cancel(xs[1])
		select {
		case x := <-ch:
			if x != xs[1] || !errors.Is(x.Err, usb.ErrCancelled) {
				t.Fatalf("cancel: %p %v", x, x.Err)
			}
		default:
			t.Fatal("Cancel returned before Done")
		}
		r.dev.queueIn(testFrame(1, 100), testFrame(2, 64), testFrame(3, 10))
		for i, w := range [][]byte{testFrame(1, 100), testFrame(2, 64), testFrame(3, 10)} {
			x := wait(t, ch, "after cancel")
			if x != xs[[]int{0, 2, 3}[i]] || x.Err != nil || !bytes.Equal(x.Buf[:x.Actual], w) {
				t.Fatalf("seed %d frame %d: %d bytes %v", seed, i, x.Actual, x.Err)
			}
		}
		// The cancelled one resubmits and works.
		xs[1].Len = 256
		if err := in.Submit(xs[1]); err != nil {
			t.Fatal(err)
		}
		for _, x := range xs[2:] {
			x.Len = 256
			if err := in.Submit(x); err != nil {
				t.Fatal(err)
			}
		}
		r.dev.queueIn(testFrame(4, 33))
		if x := wait(t, ch, "resubmitted"); x != xs[1] || x.Err != nil || x.Actual != 33 {
			t.Fatalf("resubmitted: %d %v", x.Actual, x.Err)
		}
		in.Abort()
		for i := 0; i < 2; i++ {
			select {
			case x := <-ch:
				if !errors.Is(x.Err, usb.ErrCancelled) {
					t.Fatalf("abort: %v", x.Err)
				}
			default:
				t.Fatal("Abort returned before Done")
			}
		}
		in.Close()
		r.close()
		r.noMisuse(t)
	}
}
