package ehci

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gowrt/gowrt/barrier"
	"github.com/gowrt/gowrt/busdma"
	"github.com/gowrt/gowrt/hwsim"
	"github.com/gowrt/gowrt/internal/wrongcode"
	"github.com/gowrt/gowrt/intr"
	"github.com/gowrt/gowrt/usbnet/ehci/ehcisim"
	"github.com/gowrt/gowrt/usbnet/usb"
)

const irqLine = 3

// rigOpts shapes a test machine.
type rigOpts struct {
	seed      uint64
	le        bool // QEMU-style little-endian controller on a little-endian CPU
	tt        bool // ChipIdea core with an integrated TT
	companion int
	speed     usb.Speed
	noDevice  bool
	synopsys  bool // the model has the AR71xx core's IAA defect
	wrong     wrong
}

// wrong is the mistakes a rig makes the driver commit: through wrapped
// contracts (internal/wrongcode), or the driver's in-driver hooks
// (-tags gowrt_hazard only).
type wrong struct {
	noBarriers  bool // descriptor barriers dropped
	noSync      bool // cache maintenance dropped
	tokenFirst  bool // hook: the first qTD's token before its words
	overlayDone bool // hook: completion judged from the qH overlay
	skipAdvance bool // hook: no async-advance wait after unlink
	noAltNext   bool // hook: IN qTDs without an alternate next qTD
	noRestart   bool // hook: a halted qH is left halted
	cerrZero    bool // hook: qTDs retry forever
	noBabble    bool // hook: the Babble status bit is not decoded
	// noSynopsysFix: the driver is not told of the core's IAA defect
	// (configuration, no hook).
	noSynopsysFix bool
}

// inDriver reports whether w needs the driver's own hooks.
func (w wrong) inDriver() bool {
	return w.tokenFirst || w.overlayDone || w.skipAdvance || w.noAltNext || w.noRestart || w.cerrZero || w.noBabble
}

type rig struct {
	sys  *hwsim.System
	sim  *ehcisim.Controller
	hc   *Controller
	dev  *testDev
	disp *intr.Dispatcher
	stop chan struct{}
	wg   sync.WaitGroup
	once sync.Once
	// patience is how long a hazard run waits for a transfer.
	patience time.Duration
}

func newRig(t testing.TB, o rigOpts) *rig {
	t.Helper()
	sys := hwsim.New(hwsim.Config{Seed: o.seed, BigEndianCPU: !o.le, NoEviction: true})
	ctl := sys.NewController(hwsim.ControllerConfig{Name: "cpu", Lines: 8})
	order := barrier.BigEndian
	if o.le {
		order = barrier.LittleEndian
	}
	caplen := uint32(0x20)
	if o.tt {
		caplen = 0x40
	}
	r := &rig{sys: sys, stop: make(chan struct{}), patience: 10 * time.Second}
	r.sim = ehcisim.New(sys, ctl, ehcisim.Config{Ports: 1, Companions: o.companion, IntegratedTT: o.tt,
		CapLength: caplen, RegOrder: order, DescOrder: order, Line: irqLine, SynopsysIAABug: o.synopsys})
	var dma busdma.Platform = sys.Mem
	if o.wrong.noBarriers || o.wrong.noSync {
		p := &wrongcode.Platform{Platform: sys.Mem, CoherentNoBarriers: o.wrong.noBarriers}
		if o.wrong.noSync {
			p.SkipCache = busdma.WritebackInvalidate
		}
		dma = p
	}
	hc, err := New(Config{Name: "ehci0", Regs: r.sim.Map("ehci"), DMA: dma, DescOrder: order,
		IntegratedTT: o.tt, BigEndianCore: o.tt && !o.le, SynopsysIAABug: o.synopsys && !o.wrong.noSynopsysFix})
	if err != nil {
		t.Fatal(err)
	}
	setWrong(t, hc, o.wrong)
	r.hc = hc
	r.disp = intr.NewDispatcher(ctl, ctl)
	if err := ctl.SetTrigger(irqLine, intr.Level); err != nil {
		t.Fatal(err)
	}
	if err := r.disp.Register(irqLine, "ehci0", hc.Interrupt); err != nil {
		t.Fatal(err)
	}
	r.wg.Add(1)
	go func() { defer r.wg.Done(); r.sim.Pump(r.stop) }()
	t.Cleanup(r.close)
	dump = r.dump
	if err := hc.Start(); err != nil {
		t.Fatal(err)
	}
	if !o.noDevice {
		sp := o.speed
		if sp == 0 {
			sp = usb.SpeedHigh
		}
		maxp := 512
		if sp != usb.SpeedHigh {
			maxp = 64
		}
		r.dev = newTestDev(sp, maxp)
		r.sim.Attach(1, r.dev)
	}
	return r
}

var dump func(testing.TB)

func (r *rig) dump(tb testing.TB) {
	r.sys.Do(func() { tb.Logf("model %+v", r.sim.Stats) })
	tb.Logf("USBSTS %#x USBCMD %#x PORTSC %#x ints %d", r.hc.read(regUSBSts), r.hc.read(regUSBCmd), r.hc.read(regPortSC), r.hc.Stats.Interrupts.Load())
	r.hc.mu.Lock()
	defer r.hc.mu.Unlock()
	for _, p := range r.hc.pipes {
		tb.Logf("pipe %+v qh %#x overlay next %#x alt %#x tok %#x cur %#x", p.cfg, p.q.pa, p.q.read(qhOverlay), p.q.read(qhOverlay+4), p.q.read(qhOverlay+8), p.q.read(qhCurrent))
		for _, x := range p.queue {
			for _, d := range x.tds {
				tb.Logf("  td %#x next %#x alt %#x tok %#x", d.pa, d.read(0), d.read(4), d.read(8))
			}
		}
	}
}

func (r *rig) close() {
	r.once.Do(func() {
		r.hc.Stop()
		_ = r.disp.Unregister(irqLine)
		close(r.stop)
		r.wg.Wait()
	})
}

func (r *rig) misuses() []hwsim.Misuse { return r.sys.Misuses() }

// fill copies data into a transfer buffer the driver does not own yet.
// A correct driver never lets the engine read such a buffer, but a wrong
// one (a qTD whose stale buffer pointers the engine follows, as in
// TestHazardMissingBarrier) can: on hardware that is a torn read which
// the data checks catch; in Go it is a data race between this goroutine
// and the model's, which -race reports and fails the test on. Filling
// under the system's lock makes the fill one step to the model; the
// cache-line checks (a device read of a line the CPU wrote and never
// wrote back) are unchanged.
func (r *rig) fill(buf, data []byte) { r.sys.Do(func() { copy(buf, data) }) }

func (r *rig) noMisuse(t testing.TB) {
	t.Helper()
	for _, m := range r.misuses() {
		t.Errorf("misuse: %v", m)
	}
}

// waiter collects Done calls.
type waiter struct{ ch chan *usb.Transfer }

func newWaiter(n int) *waiter { return &waiter{ch: make(chan *usb.Transfer, n)} }
func (w *waiter) done(t *usb.Transfer) {
	w.ch <- t
}
func (w *waiter) wait(tb testing.TB, d time.Duration) *usb.Transfer {
	tb.Helper()
	t, err := w.waitErr(d)
	if err != nil {
		if dump != nil {
			dump(tb)
		}
		tb.Fatal(err)
	}
	return t
}

func (w *waiter) waitErr(d time.Duration) (*usb.Transfer, error) {
	select {
	case t := <-w.ch:
		return t, nil
	case <-time.After(d):
		return nil, fmt.Errorf("no transfer completed in %v", d)
	}
}

// control runs one control transfer and waits for it.
func control(tb testing.TB, p usb.Pipe, s usb.Setup, out []byte) ([]byte, error) {
	tb.Helper()
	t, err := p.NewTransfer(int(s.Length))
	if err != nil {
		tb.Fatal(err)
	}
	w := newWaiter(1)
	t.Done = w.done
	t.Setup = s
	t.Len = int(s.Length)
	t.Flags = usb.ShortOK
	copy(t.Buf, out)
	if err := p.Submit(t); err != nil {
		return nil, err
	}
	if _, err := w.waitErr(5 * time.Second); err != nil {
		return nil, err
	}
	return t.Buf[:t.Actual], t.Err
}

// enumerate resets the port and addresses the device, returning its
// control pipe at address 1.
func (r *rig) enumerate(t testing.TB) (usb.Speed, usb.Pipe) {
	t.Helper()
	sp, p, err := r.enumerateErr(t)
	if err != nil {
		t.Fatal(err)
	}
	return sp, p
}

func (r *rig) enumerateErr(t testing.TB) (usb.Speed, usb.Pipe, error) {
	sp, err := r.hc.ResetPort(1)
	if err != nil {
		return 0, nil, err
	}
	p0, err := r.hc.OpenPipe(usb.PipeConfig{Address: 0, Type: usb.Control, MaxPacket: 64, Speed: sp})
	if err != nil {
		return 0, nil, err
	}
	d, err := control(t, p0, usb.Setup{RequestType: 0x80, Request: 6, Value: 0x0100, Length: 8}, nil)
	if err != nil || !bytes.Equal(d, devDescriptor[:8]) {
		return 0, nil, fmt.Errorf("first GET_DESCRIPTOR: % x, %v", d, err)
	}
	if _, err := control(t, p0, usb.Setup{Request: 5, Value: 1}, nil); err != nil {
		return 0, nil, fmt.Errorf("SET_ADDRESS: %v", err)
	}
	p0.Close()
	p, err := r.hc.OpenPipe(usb.PipeConfig{Address: 1, Type: usb.Control, MaxPacket: 64, Speed: sp})
	if err != nil {
		return 0, nil, err
	}
	d, err = control(t, p, usb.Setup{RequestType: 0x80, Request: 6, Value: 0x0100, Length: 255}, nil)
	if err != nil || !bytes.Equal(d, devDescriptor[:]) {
		return 0, nil, fmt.Errorf("GET_DESCRIPTOR at address 1: % x, %v", d, err)
	}
	return sp, p, nil
}

func TestEnumerateBigEndian(t *testing.T) {
	r := newRig(t, rigOpts{seed: 1})
	sp, p := r.enumerate(t)
	if sp != usb.SpeedHigh {
		t.Fatalf("speed %v", sp)
	}
	st, err := r.hc.PortStatus(1)
	if err != nil || !st.Connected || !st.Enabled || st.Speed != usb.SpeedHigh {
		t.Fatalf("port status %+v %v", st, err)
	}
	// Control OUT with data, read back with control IN.
	msg := []byte("gowrt ehci control data stage spanning two packets of 64 bytes each, more or less")
	if _, err := control(t, p, usb.Setup{RequestType: 0x40, Request: 1, Length: uint16(len(msg))}, msg); err != nil {
		t.Fatal(err)
	}
	got, err := control(t, p, usb.Setup{RequestType: 0xc0, Request: 2, Length: 200}, nil)
	if err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("vendor read back % x, %v", got, err)
	}
	// An unsupported request stalls.
	if _, err := control(t, p, usb.Setup{RequestType: 0x80, Request: 6, Value: 0x0900, Length: 9}, nil); !errors.Is(err, usb.ErrStall) {
		t.Fatalf("unsupported request: %v, want stall", err)
	}
	// The pipe goes on after a stall.
	if d, err := control(t, p, usb.Setup{RequestType: 0x80, Request: 6, Value: 0x0100, Length: 18}, nil); err != nil || len(d) != 18 {
		t.Fatalf("after stall: %v", err)
	}
	r.noMisuse(t)
}

func TestEnumerateLittleEndian(t *testing.T) {
	r := newRig(t, rigOpts{seed: 2, le: true})
	r.enumerate(t)
	r.noMisuse(t)
}

// TestIntegratedTTFullSpeed: a ChipIdea core runs a full-speed device on
// its root port (PSPD says full; split fields name the root port).
func TestIntegratedTTFullSpeed(t *testing.T) {
	r := newRig(t, rigOpts{seed: 3, tt: true, speed: usb.SpeedFull})
	sp, _ := r.enumerate(t)
	if sp != usb.SpeedFull {
		t.Fatalf("speed %v, want full", sp)
	}
	r.noMisuse(t)
}

// TestFullSpeedNeedsCompanion: without a TT a full-speed device does not
// enable the port; it is handed to the companion and reported clearly.
func TestFullSpeedNeedsCompanion(t *testing.T) {
	for _, cc := range []int{0, 1} {
		r := newRig(t, rigOpts{seed: 4, speed: usb.SpeedFull, companion: cc})
		_, err := r.hc.ResetPort(1)
		if !errors.Is(err, ErrCompanion) {
			t.Fatalf("companions %d: %v, want ErrCompanion", cc, err)
		}
		t.Logf("companions %d: %v", cc, err)
		if _, err := r.hc.OpenPipe(usb.PipeConfig{Type: usb.Control, MaxPacket: 64, Speed: usb.SpeedFull}); err == nil {
			t.Fatal("pipe to a full-speed device on a root port without TT opened")
		}
		r.noMisuse(t)
		r.close()
	}
}

// bulk opens the bulk pipes of an enumerated device.
func (r *rig) bulk(t testing.TB) (out, in usb.Pipe) {
	t.Helper()
	out, in, err := r.bulkErr(t)
	if err != nil {
		t.Fatal(err)
	}
	return out, in
}

func (r *rig) bulkErr(t testing.TB) (out, in usb.Pipe, err error) {
	sp, _, err := r.enumerateErr(t)
	if err != nil {
		return nil, nil, err
	}
	out, err = r.hc.OpenPipe(usb.PipeConfig{Address: 1, Endpoint: 1, Type: usb.Bulk, MaxPacket: r.dev.maxp, Speed: sp})
	if err != nil {
		return nil, nil, err
	}
	in, err = r.hc.OpenPipe(usb.PipeConfig{Address: 1, Endpoint: 2 | usb.EndpointIn, Type: usb.Bulk, MaxPacket: r.dev.maxp, Speed: sp})
	return out, in, err
}

func pattern(seq, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(seq*7 + i*13 + i>>8)
	}
	return b
}

// TestBulkOutMany: four transfers in flight, sizes across qTD and packet
// boundaries; the device receives every byte in order.
func TestBulkOutMany(t *testing.T) {
	r := newRig(t, rigOpts{seed: 5})
	out, _ := r.bulk(t)
	const inFlight, count = 4, 60
	sizes := []int{1, 511, 512, 513, 4096, 20000, 20480, 40000, 0}
	w := newWaiter(inFlight)
	var ts []*usb.Transfer
	for i := 0; i < inFlight; i++ {
		tr, err := out.NewTransfer(40000)
		if err != nil {
			t.Fatal(err)
		}
		tr.Done = w.done
		ts = append(ts, tr)
	}
	var want []byte
	submit := func(tr *usb.Transfer, seq int) {
		n := sizes[seq%len(sizes)]
		data := pattern(seq, n)
		copy(tr.Buf, data)
		tr.Len = n
		tr.Flags = 0
		if n == 512 {
			tr.Flags = usb.ZeroLengthPacket
		}
		want = append(want, data...)
		if err := out.Submit(tr); err != nil {
			t.Fatal(err)
		}
	}
	seq := 0
	for _, tr := range ts {
		submit(tr, seq)
		seq++
	}
	for done := 0; done < count; done++ {
		tr := w.wait(t, 5*time.Second)
		if tr.Err != nil || tr.Actual != tr.Len {
			t.Fatalf("transfer %d: %v, %d of %d", done, tr.Err, tr.Actual, tr.Len)
		}
		if seq < count {
			submit(tr, seq)
			seq++
		}
	}
	var got []byte
	r.sys.Do(func() { got = append(got, r.dev.got...) })
	if !bytes.Equal(got, want) {
		t.Fatalf("device got %d bytes, want %d (first difference at %d)", len(got), len(want), firstDiff(got, want))
	}
	r.noMisuse(t)
}

func firstDiff(a, b []byte) int {
	for i := 0; i < min(len(a), len(b)); i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestBulkInShort: messages of every size through four 16 KiB transfers
// in flight; each ends with a short packet that completes its transfer
// (alternate next qTD) without disturbing the next.
func TestBulkInShort(t *testing.T) {
	r := newRig(t, rigOpts{seed: 6})
	_, in := r.bulk(t)
	sizes := []int{100, 511, 1000, 1536, 5000, 9000, 16000, 0, 3}
	const count = 45
	var msgs [][]byte
	for i := 0; i < count; i++ {
		msgs = append(msgs, pattern(i, sizes[i%len(sizes)]))
	}
	r.sys.Do(func() { r.dev.msgs = append(r.dev.msgs, msgs...) })
	w := newWaiter(4)
	for i := 0; i < 4; i++ {
		tr, err := in.NewTransfer(16384)
		if err != nil {
			t.Fatal(err)
		}
		tr.Done = w.done
		tr.Flags = usb.ShortOK
		if err := in.Submit(tr); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < count; i++ {
		tr := w.wait(t, 5*time.Second)
		if tr.Err != nil || !bytes.Equal(tr.Buf[:tr.Actual], msgs[i]) {
			t.Fatalf("message %d: %v, got %d bytes want %d (diff at %d)", i, tr.Err, tr.Actual, len(msgs[i]), firstDiff(tr.Buf[:tr.Actual], msgs[i]))
		}
		if err := in.Submit(tr); err != nil {
			t.Fatal(err)
		}
	}
	in.Abort()
	r.noMisuse(t)
}

// TestBulkInErrors: short without ShortOK, babble, stall and clear-halt
// with the toggle reset.
func TestBulkInErrors(t *testing.T) {
	r := newRig(t, rigOpts{seed: 7})
	_, in := r.bulk(t)
	w := newWaiter(1)
	tr, _ := in.NewTransfer(2048)
	tr.Done = w.done

	r.sys.Do(func() { r.dev.msgs = append(r.dev.msgs, pattern(1, 700)) })
	tr.Flags = 0
	_ = in.Submit(tr)
	if w.wait(t, 5*time.Second); !errors.Is(tr.Err, usb.ErrShort) || tr.Actual != 700 {
		t.Fatalf("short without ShortOK: %v, %d", tr.Err, tr.Actual)
	}

	r.sys.Do(func() { r.dev.babble = true })
	tr.Flags = usb.ShortOK
	tr.Len = 100
	_ = in.Submit(tr)
	if w.wait(t, 5*time.Second); !errors.Is(tr.Err, usb.ErrBabble) {
		t.Fatalf("babble: %v", tr.Err)
	}

	r.sys.Do(func() { r.dev.stalled[2] = true })
	tr.Len = 2048
	_ = in.Submit(tr)
	if w.wait(t, 5*time.Second); !errors.Is(tr.Err, usb.ErrStall) {
		t.Fatalf("stall: %v", tr.Err)
	}
	// CLEAR_FEATURE(ENDPOINT_HALT) on ep 2 IN; both sides back at DATA0.
	_, ctl := r.hc, r.ctlPipe(t)
	if _, err := control(t, ctl, usb.Setup{RequestType: 2, Request: 1, Value: 0, Index: 0x82}, nil); err != nil {
		t.Fatal(err)
	}
	in.ResetToggle()
	msg := pattern(9, 1500)
	r.sys.Do(func() { r.dev.msgs = append(r.dev.msgs, msg) })
	_ = in.Submit(tr)
	if w.wait(t, 5*time.Second); tr.Err != nil || !bytes.Equal(tr.Buf[:tr.Actual], msg) {
		t.Fatalf("after clear-halt: %v, %d bytes", tr.Err, tr.Actual)
	}
	r.noMisuse(t)
}

// ctlPipe opens another control pipe to address 1.
func (r *rig) ctlPipe(t testing.TB) usb.Pipe {
	p, err := r.hc.OpenPipe(usb.PipeConfig{Address: 1, Type: usb.Control, MaxPacket: 64, Speed: r.dev.speed})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCancel: transfers waiting on a NAKing endpoint are cancelled one in
// the middle, then the rest; the pipe still works and the data stream is
// not disturbed.
func TestCancel(t *testing.T) {
	r := newRig(t, rigOpts{seed: 8})
	_, in := r.bulk(t)
	w := newWaiter(8)
	var ts []*usb.Transfer
	for i := 0; i < 4; i++ {
		tr, _ := in.NewTransfer(4096)
		tr.Done = w.done
		tr.Flags = usb.ShortOK
		if err := in.Submit(tr); err != nil {
			t.Fatal(err)
		}
		ts = append(ts, tr)
	}
	time.Sleep(2 * time.Millisecond) // the controller NAKs away on the first
	in.Cancel(ts[1])
	if got := w.wait(t, time.Second); got != ts[1] || !errors.Is(got.Err, usb.ErrCancelled) {
		t.Fatalf("cancel: %p %v", got, got.Err)
	}
	if err := in.Submit(ts[1]); err != nil {
		t.Fatal(err)
	}
	msgs := [][]byte{pattern(1, 100), pattern(2, 3000), pattern(3, 10), pattern(4, 700)}
	r.sys.Do(func() { r.dev.msgs = append(r.dev.msgs, msgs...) })
	order := []*usb.Transfer{ts[0], ts[2], ts[3], ts[1]}
	for i, want := range order {
		got := w.wait(t, 5*time.Second)
		if got != want || got.Err != nil || !bytes.Equal(got.Buf[:got.Actual], msgs[i]) {
			t.Fatalf("after cancel, completion %d: %v, %d bytes", i, got.Err, got.Actual)
		}
	}
	for _, tr := range ts {
		_ = in.Submit(tr)
	}
	in.Abort()
	for range ts {
		if got := w.wait(t, time.Second); !errors.Is(got.Err, usb.ErrCancelled) {
			t.Fatalf("abort: %v", got.Err)
		}
	}
	in.Close()
	if r.hc.Stats.AsyncAdvances.Load() == 0 {
		t.Fatal("no async-advance doorbell was used")
	}
	r.noMisuse(t)
}

// TestInterruptPipe: an interrupt IN endpoint in the periodic schedule
// delivers status reports; closing it waits for the frame to turn.
func TestInterruptPipe(t *testing.T) {
	for _, tc := range []struct {
		tt    bool
		speed usb.Speed
		iv    int
	}{{false, usb.SpeedHigh, 4}, {false, usb.SpeedHigh, 1}, {true, usb.SpeedFull, 8}} {
		t.Run(fmt.Sprintf("%v-%d", tc.speed, tc.iv), func(t *testing.T) {
			r := newRig(t, rigOpts{seed: 9, tt: tc.tt, speed: tc.speed})
			sp, _ := r.enumerate(t)
			ip, err := r.hc.OpenPipe(usb.PipeConfig{Address: 1, Endpoint: 3 | usb.EndpointIn, Type: usb.Interrupt, MaxPacket: 16, Speed: sp, Interval: tc.iv})
			if err != nil {
				t.Fatal(err)
			}
			w := newWaiter(1)
			tr, _ := ip.NewTransfer(16)
			tr.Done = w.done
			tr.Flags = usb.ShortOK
			_ = ip.Submit(tr)
			for i := 0; i < 5; i++ {
				rep := []byte{0xa1, byte(i), 0, 0, 0, 0, 0, 0}
				r.sys.Do(func() { r.dev.status = append(r.dev.status, rep) })
				w.wait(t, 5*time.Second)
				if tr.Err != nil || !bytes.Equal(tr.Buf[:tr.Actual], rep) {
					t.Fatalf("report %d: %v % x", i, tr.Err, tr.Buf[:tr.Actual])
				}
				_ = ip.Submit(tr)
			}
			ip.Close()
			if got := w.wait(t, time.Second); !errors.Is(got.Err, usb.ErrCancelled) {
				t.Fatalf("close: %v", got.Err)
			}
			r.noMisuse(t)
		})
	}
}

// TestUnplugMidTransfer: the device vanishes with transfers queued; they
// fail with transaction errors that say the device is gone (its root port
// is disconnected), the port reports the disconnect through the
// port-change callback, and the controller survives.
func TestUnplugMidTransfer(t *testing.T) {
	r := newRig(t, rigOpts{seed: 10})
	changed := make(chan int, 8)
	r.hc.SetPortChange(func(p int) { changed <- p })
	out, _ := r.bulk(t)
	w := newWaiter(4)
	for i := 0; i < 3; i++ {
		tr, _ := out.NewTransfer(30000)
		tr.Done = w.done
		_ = out.Submit(tr)
	}
	r.sys.Do(func() { r.dev.nakLeft = 1 << 30 }) // hold them on the wire
	r.sim.Detach(1)
	for i := 0; i < 3; i++ {
		tr := w.wait(t, 5*time.Second)
		if tr.Err == nil {
			continue // finished before the unplug
		}
		if !errors.Is(tr.Err, usb.ErrTransaction) || !errors.Is(tr.Err, usb.ErrGone) {
			t.Fatalf("after unplug: %v, want a transaction error that says the device is gone", tr.Err)
		}
	}
	select {
	case p := <-changed:
		if p != 1 {
			t.Fatalf("port change on %d", p)
		}
	case <-time.After(time.Second):
		t.Fatal("no port change")
	}
	st, _ := r.hc.PortStatus(1)
	if st.Connected || st.Enabled || !st.ConnectChanged {
		t.Fatalf("port after unplug: %+v", st)
	}
	if st, _ = r.hc.PortStatus(1); st.ConnectChanged {
		t.Fatal("connect change reported twice")
	}
	out.Close()
	r.noMisuse(t)
}

// TestSeeds runs a mixed workload under many seeds: every interleaving
// of driver stores and engine steps must be clean.
func TestSeeds(t *testing.T) {
	n := 12
	if testing.Short() {
		n = 4
	}
	err := hwsim.Explore(100, n, func(seed uint64) error {
		r := newRig(t, rigOpts{seed: seed, tt: seed%2 == 0, le: seed%3 == 0})
		defer r.close()
		if err := workload(t, r, 40, 10*time.Second); err != nil {
			return err
		}
		if m := r.misuses(); len(m) > 0 {
			return fmt.Errorf("%d misuses, first %v", len(m), m[0])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// workload pushes count multi-qTD OUT transfers and count IN messages
// through an enumerated device and checks every byte and Actual.
func workload(t testing.TB, r *rig, count int, patience time.Duration) error {
	out, in, err := r.bulkErr(t)
	if err != nil {
		return err
	}
	wo, wi := newWaiter(4), newWaiter(4)
	var want []byte
	var msgs [][]byte
	for i := 0; i < count; i++ {
		msgs = append(msgs, pattern(i, (i*3331)%9000))
	}
	r.sys.Do(func() { r.dev.msgs = append(r.dev.msgs, msgs...) })
	seqOut := 0
	submitOut := func(tr *usb.Transfer) error {
		n := 20000 + (seqOut*977)%20000
		d := pattern(seqOut+1000, n)
		r.fill(tr.Buf, d)
		tr.Len = n
		want = append(want, d...)
		seqOut++
		return out.Submit(tr)
	}
	for i := 0; i < 4; i++ {
		to, _ := out.NewTransfer(40000)
		to.Done = wo.done
		if err := submitOut(to); err != nil {
			return err
		}
		ti, _ := in.NewTransfer(9216)
		ti.Done = wi.done
		ti.Flags = usb.ShortOK
		if err := in.Submit(ti); err != nil {
			return err
		}
	}
	for i := 0; i < count; i++ {
		to, err := wo.waitErr(patience)
		if err != nil {
			return fmt.Errorf("OUT %d: %w", i, err)
		}
		if to.Err != nil || to.Actual != to.Len {
			return fmt.Errorf("OUT %d: %v, %d of %d bytes", i, to.Err, to.Actual, to.Len)
		}
		if seqOut < count {
			if err := submitOut(to); err != nil {
				return err
			}
		}
		ti, err := wi.waitErr(patience)
		if err != nil {
			return fmt.Errorf("IN %d: %w", i, err)
		}
		if ti.Err != nil || !bytes.Equal(ti.Buf[:ti.Actual], msgs[i]) {
			return fmt.Errorf("IN %d: %v, %d bytes, want %d", i, ti.Err, ti.Actual, len(msgs[i]))
		}
		if i+4 < count {
			if err := in.Submit(ti); err != nil {
				return err
			}
		}
	}
	var got []byte
	r.sys.Do(func() { got = append(got, r.dev.got...) })
	if !bytes.Equal(got, want) {
		return fmt.Errorf("device got %d bytes, want %d, first difference at %d", len(got), len(want), firstDiff(got, want))
	}
	return nil
}

// TestAbortRefusesResubmit: a Done that resubmits during Abort is refused
// with ErrCancelled (usb.Pipe.Submit), so Abort leaves the pipe idle.
func TestAbortRefusesResubmit(t *testing.T) {
	r := newRig(t, rigOpts{seed: 15})
	_, in := r.bulk(t)
	var mu sync.Mutex
	var resubmit []error
	done := 0
	for i := 0; i < 3; i++ {
		tr, _ := in.NewTransfer(512)
		tr.Done = func(tr *usb.Transfer) {
			err := in.Submit(tr)
			mu.Lock()
			done++
			resubmit = append(resubmit, err)
			mu.Unlock()
		}
		if err := in.Submit(tr); err != nil {
			t.Fatal(err)
		}
	}
	in.Abort()
	mu.Lock()
	if done != 3 {
		t.Fatalf("%d Done calls during Abort, want 3", done)
	}
	for _, err := range resubmit {
		if !errors.Is(err, usb.ErrCancelled) {
			t.Fatalf("resubmit during Abort: %v, want ErrCancelled", err)
		}
	}
	mu.Unlock()
	// Idle afterwards: a message sent now completes nothing.
	r.sys.Do(func() { r.dev.msgs = append(r.dev.msgs, pattern(1, 100)) })
	time.Sleep(20 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if done != 3 {
		t.Fatalf("a transfer ran after Abort")
	}
	r.noMisuse(t)
}
