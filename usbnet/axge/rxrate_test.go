package axge

import (
	"testing"
	"time"

	"github.com/gowrt/gowrt/usbnet/axge/axgesim"
	"github.com/gowrt/gowrt/usbnet/usb"
	"github.com/gowrt/gowrt/usbnet/usbsim"
)

// rxBus is the host side of a bulk-in endpoint in virtual time: how long
// packets take on the bus and how long a finished transfer takes to come
// back to the chip as a resubmitted one. The figures are the model's
// assumptions, from the USB 2.0 and EHCI specifications:
//   - a high-speed bulk transaction of 512 bytes takes 125 µs / 13 (at
//     most 13 per microframe, USB 2.0 Table 5-10); a short one, 1 µs of
//     protocol plus its bytes at that rate;
//   - a transfer's completion reaches the driver after EHCI's default
//     interrupt threshold, 8 microframes = 1 ms (EHCI 1.0 §2.3.1, USBCMD
//     ITC), and the driver resubmits it at once;
//   - the host revisits an endpoint that NAKed after 5 µs.
type rxBus struct {
	fullPacket time.Duration
	latency    time.Duration
	nakRetry   time.Duration
}

var highSpeedBus = rxBus{fullPacket: 125 * time.Microsecond / 13, latency: time.Millisecond, nakRetry: 5 * time.Microsecond}

func (b rxBus) packet(n, mps int) time.Duration {
	if n == mps {
		return b.fullPacket
	}
	return time.Microsecond + time.Duration(int64(b.fullPacket-time.Microsecond)*int64(n)/int64(mps))
}

type rxResult struct {
	fps       float64 // frames delivered per second of virtual time
	fifoDrops uint64  // frames the chip lost with its FIFO full
	xfers     uint64  // bulk-in transfers
	dropped   int     // frames DecodeRx discarded
}

// measureRx offers 1514-byte frames at the full link rate for dur of
// virtual time and carries bulk-in transfers with inflight of them
// queued at the host, each parsed by the driver's DecodeRx.
func measureRx(t *testing.T, r *rig, bus rxBus, inflight int, dur time.Duration) rxResult {
	t.Helper()
	m, dev, addr := r.model, r.model.Function(), r.dev.Address
	mps := m.MaxPacket()
	var f Framing
	start := m.Now()
	m.OfferLoad(1514, 1)
	defer m.OfferLoad(0, 0)
	before := m.Stats()
	now := start
	ready := inflight
	var back []time.Duration // when finished transfers are queued again (FIFO: constant latency)
	xfer := make([]byte, 0, RxSize)
	pkt := make([]byte, mps)
	frames, dropped := 0, 0
	count := func([]byte) { frames++ }
	for now < start+dur {
		for len(back) > 0 && back[0] <= now {
			ready++
			back = back[1:]
		}
		if ready == 0 {
			now = back[0]
			continue
		}
		m.Advance(now)
		n, _, h := dev.In(addr, axgesim.EPBulkIn, pkt)
		switch h {
		case usbsim.NAK:
			now += bus.nakRetry
			continue
		case usbsim.ACK:
		default:
			t.Fatalf("bulk-in answered %v", h)
		}
		xfer = append(xfer, pkt[:n]...)
		now += bus.packet(n, mps)
		if n < mps || len(xfer) >= RxSize {
			d, _ := f.DecodeRx(xfer, count)
			dropped += d
			xfer = xfer[:0]
			ready--
			back = append(back, now+bus.latency)
		}
	}
	after := m.Stats()
	return rxResult{
		fps:       float64(frames) / dur.Seconds(),
		fifoDrops: after.RxFIFODrops - before.RxFIFODrops,
		xfers:     after.BulkInXfers - before.BulkInXfers,
		dropped:   dropped,
	}
}

const rxRun = 300 * time.Millisecond

// TestHazardAggregationTimer: gigabit on a USB 2 port. The driver
// programs the table's high-speed entry (timer 0x0320, 22 KiB); a driver
// that leaves the power-on entry (timer 0x004f, meant for USB 3) gets
// transfers less than half as big, and with four in flight the 1 ms
// completion latency is no longer hidden: fewer frames/s, more lost in
// the chip's FIFO.
func TestHazardAggregationTimer(t *testing.T) {
	tuned := newRig(t, axgesim.Config{Link: up1000}, AX88179, nil)
	tuned.init(t)
	if tuned.model.QCtrl() != BulkInHigh1000 {
		t.Fatalf("QCTRL %x", tuned.model.QCtrl())
	}
	def := newRig(t, axgesim.Config{Link: up1000}, AX88179, func(d ControlDevice) ControlDevice { return noQCtrl{d} })
	def.init(t)
	if def.model.QCtrl() != BulkInSuper1000 {
		t.Fatalf("default QCTRL %x", def.model.QCtrl())
	}
	good := measureRx(t, tuned, highSpeedBus, RxTransfers, rxRun)
	bad := measureRx(t, def, highSpeedBus, RxTransfers, rxRun)
	if good.dropped != 0 || bad.dropped != 0 {
		t.Fatalf("DecodeRx dropped %d / %d frames of well-formed transfers", good.dropped, bad.dropped)
	}
	ratio := good.fps / bad.fps
	t.Logf("1000 Mb/s on USB 2, %d in flight: table entry %.0f frames/s (%.0f Mb/s, %d transfers), default 0x004f %.0f frames/s (%.0f Mb/s, %d transfers): ratio %.2f; FIFO drops %d vs %d",
		RxTransfers, good.fps, good.fps*1514*8/1e6, good.xfers, bad.fps, bad.fps*1514*8/1e6, bad.xfers, ratio, good.fifoDrops, bad.fifoDrops)
	if ratio < 1.2 {
		t.Fatalf("tuned/default frames/s ratio %.2f: the default timer's cost does not show", ratio)
	}
}

// TestHazardRxInFlight: one bulk-in transfer in flight (FreeBSD before
// the fix) leaves the bus idle for the whole completion latency after
// every transfer; four keep it busy.
func TestHazardRxInFlight(t *testing.T) {
	r := newRig(t, axgesim.Config{Link: up1000}, AX88179, nil)
	r.init(t)
	four := measureRx(t, r, highSpeedBus, RxTransfers, rxRun)
	one := measureRx(t, r, highSpeedBus, 1, rxRun)
	ratio := four.fps / one.fps
	t.Logf("1000 Mb/s on USB 2, table entry: %d in flight %.0f frames/s (%.0f Mb/s), 1 in flight %.0f frames/s (%.0f Mb/s): ratio %.2f; FIFO drops %d vs %d",
		RxTransfers, four.fps, four.fps*1514*8/1e6, one.fps, one.fps*1514*8/1e6, ratio, four.fifoDrops, one.fifoDrops)
	if ratio < 1.5 {
		t.Fatalf("4/1 in-flight frames/s ratio %.2f", ratio)
	}
	if d := NewDriver(Config{}); d.cfg.RxTransfers < 4 {
		t.Fatalf("driver default keeps %d transfers in flight", d.cfg.RxTransfers)
	}
}

// TestRxRateFullSpeed: a 100 Mb/s link behind a full-speed port (UHCI's
// 12 Mb/s). Bulk carries at most 19 packets of 64 bytes per 1 ms frame
// (USB 2.0 Table 5-9), 9.7 Mb/s of payload; UHCI completes transfers at
// frame ends (IOC), so the latency is one frame. The driver picks the
// slow table entry and stays close to the bus bound.
func TestRxRateFullSpeed(t *testing.T) {
	r := newRig(t, axgesim.Config{Speed: usb.SpeedFull, Link: axgesim.Media{Up: true, SpeedMbps: 100, FullDuplex: true, Pause: true}}, AX88179, nil)
	r.init(t)
	if r.model.QCtrl() != BulkInSlow {
		t.Fatalf("QCTRL %x on a full-speed port", r.model.QCtrl())
	}
	fs := rxBus{fullPacket: time.Millisecond / 19, latency: time.Millisecond, nakRetry: 50 * time.Microsecond}
	res := measureRx(t, r, fs, RxTransfers, time.Second)
	mbps := res.fps * 1514 * 8 / 1e6
	t.Logf("100 Mb/s on USB 1.1 full speed: %.0f frames/s, %.2f Mb/s of frames (bus bound 9.73 Mb/s of payload)", res.fps, mbps)
	if mbps > 9.73 || mbps < 8 {
		t.Fatalf("%.2f Mb/s through a 9.73 Mb/s bus", mbps)
	}
}
