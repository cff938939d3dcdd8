package arge_test

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gowrt/gowrt/arge"
	"github.com/gowrt/gowrt/hwsim"
	"github.com/gowrt/gowrt/intr"
	"github.com/gowrt/gowrt/mdio"
	"github.com/gowrt/gowrt/mdio/phy"
	"github.com/gowrt/gowrt/mdio/phy/physim"
	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/soc/ar71xx"
)

// TestInterruptDriven runs the driver from its interrupt through the real
// intr.Dispatcher: every frame arrives, the handler's budget loop ends,
// and the line does not storm.
func TestInterruptDriven(t *testing.T) {
	// The test fills TX buffers while the dispatcher's goroutine drives
	// the model: cache eviction would read them concurrently (hwsim's
	// NoEviction rule).
	r := newRig(t, rigOpts{seed: 3, budget: 8, fastLink: true, hw: hwsim.Config{NoEviction: true}})
	var rx atomic.Int64
	r.keep = false
	r.onRecv = func([]byte) { rx.Add(1) }
	d := intr.NewDispatcher(r.irq, r.irq)
	if err := d.Register(ar71xx.CPUIRQGE0, "arge0", r.drv.Interrupt); err != nil {
		t.Fatal(err)
	}
	defer d.Unregister(ar71xx.CPUIRQGE0)
	const n = 500
	pool, _, _ := r.sys.Mem.AllocCached("tx", 64*128, 32)
	for i := 0; i < n; i++ {
		b := pool[(i%64)*128 : (i%64)*128+100]
		// Wait for the buffer's previous use to be released, and keep at
		// most half the RX ring in flight: a sender faster than the
		// receiving CPU overflows the ring on hardware too.
		for int64(i)-r.doneA.Load() >= 64 || int64(i)-rx.Load() >= 128 {
			r.sys.Sched.Settle(4)
			time.Sleep(10 * time.Microsecond)
		}
		copy(b, frame(100, uint32(i)))
		if err := r.drv.TransmitFrame(b, uint64(i)); err != nil {
			if errors.Is(err, arge.ErrRingFull) {
				i--
				continue
			}
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for rx.Load() < n && time.Now().Before(deadline) {
		r.sys.Sched.Settle(16)
		time.Sleep(20 * time.Microsecond)
	}
	if rx.Load() != n {
		t.Fatalf("received %d of %d; model %+v driver %+v", rx.Load(), n, r.mac.Snapshot(), &r.drv.Stats)
	}
	st, _ := d.Stats(ar71xx.CPUIRQGE0)
	if st.Runs == 0 {
		t.Fatal("handler never ran")
	}
	t.Logf("%d frames, %d interrupts handled, %d service passes", n, st.Runs, r.drv.Stats.Passes.Load())
}

func TestLinkChangesReprogramMAC(t *testing.T) {
	for _, rev := range []uint32{revAR7161, revAR9344} {
		p100 := physim.Partner{Connected: true, Ability: phy.ANSelector8023 | phy.AN100FD | phy.AN100HD | phy.AN10HD}
		r := newRig(t, rigOpts{rev: rev, seed: 5, partner: &p100})
		if l := r.drv.Link(); l != (gnet.LinkState{Up: true, SpeedMbps: 100, FullDuplex: true}) {
			t.Fatalf("%#x: link %v", rev, l)
		}
		tok := uint64(0)
		send := func(k int) int {
			before := r.rxN
			for i := 0; i < k; i++ {
				tok++
				if err := r.drv.TransmitFrame(frame(80, uint32(i)), tok); err != nil {
					t.Fatal(err)
				}
			}
			r.pump(100, func() bool { return r.rxN-before == k })
			return r.rxN - before
		}
		if got := send(5); got != 5 {
			t.Fatalf("%#x 100/full: %d of 5 frames; model %+v", rev, got, r.mac.Snapshot())
		}
		if !r.soc.EthSpeedProgrammed(0, 100) {
			t.Fatalf("%#x: SoC clock not set for 100", rev)
		}
		// The partner becomes a 10/half device. Until the driver polls
		// the PHY and reprograms, frames do not pass.
		r.phy.SetPartner(physim.Partner{Connected: true, Ability: phy.ANSelector8023 | phy.AN10HD})
		for i := 0; i < 20; i++ {
			r.sys.Do(func() { r.phy.ReadReg(phy.RegBMSR) }) // negotiation proceeds on the cable
		}
		if got := send(3); got != 0 {
			t.Fatalf("%#x: frames passed with MAC still at 100/full", rev)
		}
		if r.mac.Snapshot().ModeDrops == 0 {
			t.Fatalf("%#x: model did not notice the mode mismatch", rev)
		}
		for i := 0; i < 30; i++ {
			if _, _, err := r.pollLink(); err != nil {
				t.Fatal(err)
			}
		}
		if l := r.drv.Link(); l != (gnet.LinkState{Up: true, SpeedMbps: 10}) {
			t.Fatalf("%#x: after renegotiation link %v", rev, l)
		}
		if got := send(5); got != 5 {
			t.Fatalf("%#x 10/half: %d of 5 frames; model %+v", rev, got, r.mac.Snapshot())
		}
		// Gigabit: byte mode, PLL.
		r.phy.SetPartner(physim.GigabitPartner)
		for i := 0; i < 30; i++ {
			if _, _, err := r.pollLink(); err != nil {
				t.Fatal(err)
			}
		}
		if got := send(5); got != 5 || !r.soc.EthSpeedProgrammed(0, 1000) {
			t.Fatalf("%#x 1000/full: %d of 5 frames", rev, got)
		}
		regs := r.regs
		regs.Barrier()
		if regs.Read32(arge.RegFIFOCfg5)&arge.FIFOCfg5ByteMode == 0 || regs.Read32(arge.RegMACCfg2)&arge.Cfg2IfModeMask != arge.Cfg2IfMode1000 {
			t.Fatalf("%#x: gigabit mode not programmed", rev)
		}
	}
}

func TestStationAddressAndMIB(t *testing.T) {
	a1, a2 := arge.StationAddr([6]byte{0x00, 0x03, 0x7f, 0x01, 0x02, 0x03})
	if a1 != 0x0302017f || a2 != 0x03000000 {
		t.Fatalf("StationAddr = %#x %#x (Linux layout expected)", a1, a2)
	}
	r := newRig(t, rigOpts{seed: 9, fastLink: true})
	r.regs.Barrier()
	if r.regs.Read32(arge.RegStaAddr1) != a1 || r.regs.Read32(arge.RegStaAddr2) != a2 {
		t.Fatal("station address not programmed")
	}
	for i := 0; i < 10; i++ {
		if err := r.drv.TransmitFrame(frame(1000, uint32(i)), uint64(i)); err != nil {
			t.Fatal(err)
		}
	}
	r.pump(200, func() bool { return r.rxN == 10 })
	var mib [len(arge.MIB)]uint32
	r.drv.MIBCounters(mib[:])
	if mib[arge.MIBTXPackets] != 10 || mib[arge.MIBRXPackets] != 10 || mib[arge.MIBTXBytes] != 10000 || mib[4] != 20 {
		t.Fatalf("MIB: tx %d rx %d txbytes %d 512-1023 bin %d", mib[arge.MIBTXPackets], mib[arge.MIBRXPackets], mib[arge.MIBTXBytes], mib[4])
	}
}

// TestTXFragmentsZeroCopyAndBounce: on AR7161 (4-byte aligned buffers,
// 4-byte-multiple non-final fragments) a misaligned fragment is bounced,
// on AR9344 it is sent in place; a non-final fragment of odd length is
// bounced on both. Every frame arrives intact.
func TestTXFragmentsZeroCopyAndBounce(t *testing.T) {
	cases := []struct {
		rev     uint32
		offset  int // start of the second fragment within its buffer
		len1    int // length of the first fragment
		bounced bool
	}{
		{revAR7161, 0, 64, false},
		{revAR7161, 2, 64, true},  // misaligned
		{revAR9344, 2, 64, false}, // AR934x takes any alignment
		{revAR9344, 0, 62, true},  // non-final fragment not a multiple of 4
		{revAR7161, 0, 62, true},
	}
	for _, c := range cases {
		r := newRig(t, rigOpts{rev: c.rev, seed: 11, fastLink: true})
		buf, _, _ := r.sys.Mem.AllocCached("frags", 4096, 32)
		f := frame(400, 7)
		a := buf[0:c.len1]
		b := buf[1024+c.offset : 1024+c.offset+200]
		cc := buf[2048 : 2048+400-c.len1-200]
		copy(a, f[:c.len1])
		copy(b, f[c.len1:c.len1+200])
		copy(cc, f[c.len1+200:])
		if err := r.drv.Transmit([][]byte{a, b, cc}, 1); err != nil {
			t.Fatal(err)
		}
		r.pump(100, func() bool { return r.rxN == 1 && r.doneN == 1 })
		if r.rxN != 1 {
			t.Fatalf("%+v: frame not received", c)
		}
		if err := checkFrame(r.got[0], 400, 7); err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		if got := r.drv.Stats.TxBounced.Load() != 0; got != c.bounced {
			t.Fatalf("%+v: bounced = %v", c, got)
		}
	}
}

func TestTransmitRejects(t *testing.T) {
	// AgentRate 1: the engines (almost) never run on their own.
	r := newRig(t, rigOpts{seed: 2, fastLink: true, txRing: 16, hw: hwsim.Config{AgentRate: 1}})
	for _, n := range []int{0, 4, arge.MaxFrameLen + 1} {
		if err := r.drv.TransmitFrame(make([]byte, n), 0); !errors.Is(err, arge.ErrFrameSize) {
			t.Fatalf("%d-byte frame: %v", n, err)
		}
	}
	frags := make([][]byte, arge.MaxTXFrags+1)
	for i := range frags {
		frags[i] = make([]byte, 8)
	}
	if err := r.drv.Transmit(frags, 0); !errors.Is(err, arge.ErrFrameSize) {
		t.Fatalf("%d fragments: %v", len(frags), err)
	}
	// Fill the ring without servicing: ErrRingFull, never a hang, and
	// after service everything drains.
	full := 0
	for i := 0; i < 40; i++ {
		if err := r.drv.TransmitFrame(frame(60, uint32(i)), uint64(i)); errors.Is(err, arge.ErrRingFull) {
			full++
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if full == 0 {
		t.Fatal("a ring that cannot drain never reported ErrRingFull")
	}
	r.pump(200, func() bool { return r.drv.TXQueued() == 0 })
	if r.drv.TXQueued() != 0 {
		t.Fatal("ring did not drain")
	}
	t.Logf("%d of 40 refused with ErrRingFull", full)
}

func TestMIITimeoutAndAddress(t *testing.T) {
	r := newRig(t, rigOpts{seed: 4, fastLink: true})
	if _, err := r.mii.Read(32, 0); !errors.Is(err, mdio.ErrAddress) {
		t.Fatalf("phy 32: %v", err)
	}
	if err := r.mii.Write(0, 32, 0); !errors.Is(err, mdio.ErrAddress) {
		t.Fatalf("reg 32: %v", err)
	}
	// Write then read back through the model's PHY.
	if err := r.mii.Write(0, phy.RegANAR, 0x01E1); err != nil {
		t.Fatal(err)
	}
	if v, err := r.mii.Read(0, phy.RegANAR); err != nil || v != 0x01E1 {
		t.Fatalf("ANAR = %#x, %v", v, err)
	}
	// An absent PHY reads all ones.
	if v, _ := r.mii.Read(9, phy.RegID1); v != 0xFFFF {
		t.Fatalf("absent PHY read %#x", v)
	}
}

// TestStopReleasesBuffers: frames queued when the MAC is stopped are given
// back (TXDone) exactly once, and a restarted MAC works.
func TestStopReleasesBuffers(t *testing.T) {
	r := newRig(t, rigOpts{seed: 6, fastLink: true, hw: hwsim.Config{AgentRate: 1}})
	for i := 0; i < 10; i++ {
		if err := r.drv.TransmitFrame(frame(100, uint32(i)), uint64(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.drv.Stop(); err != nil {
		t.Fatal(err)
	}
	if r.doneN != 10 || r.drv.TXQueued() != 0 {
		t.Fatalf("after Stop: %d released, %d queued", r.doneN, r.drv.TXQueued())
	}
	if err := r.drv.Start(); err != nil {
		t.Fatal(err)
	}
	if err := r.drv.SetLink(gnet.LinkState{Up: true, SpeedMbps: 1000, FullDuplex: true}); err != nil {
		t.Fatal(err)
	}
	if err := r.drv.TransmitFrame(frame(100, 99), 99); err != nil {
		t.Fatal(err)
	}
	before := r.rxN
	if !r.pump(200, func() bool { return r.rxN > before && r.doneN == 11 }) {
		t.Fatalf("no traffic after restart: rx %d done %d", r.rxN-before, r.doneN)
	}
}

// TestLinkFlap: a flap between two PHY passes is seen (latched-low link
// status) and the MAC is reprogrammed when the link comes back.
func TestLinkFlap(t *testing.T) {
	r := newRig(t, rigOpts{seed: 8})
	r.phy.Flap()
	l, changed, err := r.pollLink()
	if err != nil || l.Up || !changed {
		t.Fatalf("flap not seen: %v %v %v", l, changed, err)
	}
	before := r.drv.Stats.LinkChanges.Load()
	for i := 0; i < 20 && !r.drv.Link().Up; i++ {
		_, _, _ = r.pollLink()
	}
	if !r.drv.Link().Up || r.drv.Stats.LinkChanges.Load() != before+1 {
		t.Fatalf("link back %v, reprogrammed %d times", r.drv.Link(), r.drv.Stats.LinkChanges.Load()-before)
	}
}

// TestForwardFromReceive: a Receive callback that transmits (a bridge
// forwarding on the same port) works and does not deadlock against the
// driver's own locks.
func TestForwardFromReceive(t *testing.T) {
	r := newRig(t, rigOpts{seed: 12, fastLink: true})
	r.keep = false
	hops := 0
	var tok uint64 = 100
	r.onRecv = func(f []byte) {
		if hops < 20 {
			hops++
			tok++
			if err := r.drv.TransmitFrame(append([]byte(nil), f...), tok); err != nil {
				t.Error(err)
			}
		}
	}
	if err := r.drv.TransmitFrame(frame(200, 1), 1); err != nil {
		t.Fatal(err)
	}
	if !r.pump(500, func() bool { return hops == 20 && r.rxN == 21 }) {
		t.Fatalf("forwarded %d times, received %d", hops, r.rxN)
	}
}
