package argesim_test

import (
	"errors"
	"testing"

	"github.com/gowrt/gowrt/arge"
	"github.com/gowrt/gowrt/arge/argesim"
	"github.com/gowrt/gowrt/barrier"
	"github.com/gowrt/gowrt/hwsim"
	"github.com/gowrt/gowrt/mdio/phy"
	"github.com/gowrt/gowrt/mdio/phy/physim"
	"github.com/gowrt/gowrt/soc/ar71xx"
)

// model builds a MAC model with a hand-made 4-descriptor TX ring and RX
// ring in memory, a 1000/full link, and no driver: the test plays the
// driver with direct device-view stores so that only the model's
// semantics are under test.
type model struct {
	sys     *hwsim.System
	mac     *argesim.MAC
	reg     *hwsim.Region
	txBase  uint32
	rxBase  uint32
	buf     []byte
	bufAddr uint32
	sent    [][]byte
	irq     *hwsim.Controller
	misuses []hwsim.Misuse
}

func newModel(t *testing.T) *model {
	t.Helper()
	sys := hwsim.New(hwsim.Config{Seed: 1, BigEndianCPU: true, NoPostedWrites: true, NoStaleReads: true, NoEviction: true, AgentRate: 1})
	info, _ := ar71xx.Identify(0x2120)
	m := &model{sys: sys, irq: sys.NewController(hwsim.ControllerConfig{Name: "cpu", Lines: 6})}
	sys.OnMisuse(func(x hwsim.Misuse) { m.misuses = append(m.misuses, x) })
	var err error
	m.mac, err = argesim.New(sys, argesim.Config{Info: info, IRQ: m.irq, Line: 2})
	if err != nil {
		t.Fatal(err)
	}
	m.reg = m.mac.Map("arge0")
	p := physim.New(1, true)
	p.AnegReads = 0
	p.SetPartner(physim.GigabitPartner)
	sys.Do(func() { p.ReadReg(phy.RegBMSR) })
	m.mac.AttachPHY(0, p)
	m.mac.SetWire(argesim.WireFunc(func(f []byte) { m.sent = append(m.sent, append([]byte(nil), f...)) }))
	w := func(off, v uint32) { m.reg.Write32(off, v) }
	w(arge.RegMACCfg1, arge.Cfg1TXEnable|arge.Cfg1RXEnable)
	w(arge.RegMACCfg2, arge.Cfg2IfMode1000|arge.Cfg2FullDuplex)
	w(arge.RegFIFOCfg5, arge.FIFOCfg5ByteMode)
	ring, addr, err := sys.Mem.AllocCoherent("rings", 8*arge.DescSize, 16, barrier.Native)
	if err != nil {
		t.Fatal(err)
	}
	_ = ring
	m.txBase, m.rxBase = uint32(addr), uint32(addr)+4*arge.DescSize
	m.buf, _, _ = sys.Mem.AllocCached("bufs", 8*256, 32)
	a, _, _ := sys.Mem.Translate(m.buf)
	m.bufAddr = uint32(a)
	for i := uint32(0); i < 4; i++ {
		m.desc(m.txBase, i, 0, arge.DescEmpty)
		m.desc(m.rxBase, i, m.bufAddr+(4+i)*256, arge.DescEmpty|256)
	}
	w(arge.RegTXDesc, m.txBase)
	w(arge.RegRXDesc, m.rxBase)
	w(arge.RegIntEnable, arge.IntAll)
	return m
}

func (m *model) store(addr, v uint32) {
	m.sys.Do(func() { _ = m.sys.Mem.DevStore32(uint64(addr), v, barrier.Native) })
}

func (m *model) load(addr uint32) (v uint32) {
	m.sys.Do(func() { v, _ = m.sys.Mem.DevLoad32(uint64(addr), barrier.Native) })
	return v
}

func (m *model) desc(base, i, buf, ctrl uint32) {
	d := base + i*arge.DescSize
	m.store(d+arge.DescBuf, buf)
	m.store(d+arge.DescCtrl, ctrl)
	m.store(d+arge.DescNext, base+((i+1)%4)*arge.DescSize)
}

func TestModelTXWalksAndCounts(t *testing.T) {
	m := newModel(t)
	// A two-descriptor frame in buffers 0 and 1 (written "in memory").
	for i := 0; i < 100; i++ {
		m.buf[i] = byte(i)
	}
	if err := m.sys.Mem.Cache(1, m.buf[:512]); err != nil { // writeback
		t.Fatal(err)
	}
	m.desc(m.txBase, 0, m.bufAddr, arge.DescMore|60)
	m.desc(m.txBase, 1, m.bufAddr+60, 40)
	m.reg.Write32(arge.RegTXCtrl, arge.TXCtrlEnable)
	m.sys.Sched.Settle(20)
	if len(m.sent) != 1 || len(m.sent[0]) != 100 || m.sent[0][99] != 99 {
		t.Fatalf("sent %d frames", len(m.sent))
	}
	// Both descriptors handed back, two packets counted, engine stopped at
	// the EMPTY third descriptor.
	if m.load(m.txBase+arge.DescCtrl)&arge.DescEmpty == 0 || m.load(m.txBase+arge.DescSize+arge.DescCtrl)&arge.DescEmpty == 0 {
		t.Fatal("descriptors not handed back")
	}
	st := m.reg.Read32(arge.RegTXStatus)
	if st>>arge.StatusCountShift&0xFF != 2 || st&arge.TXStatusPktSent == 0 || m.reg.Read32(arge.RegTXCtrl) != 0 {
		t.Fatalf("TX status %#x, ctrl %#x", st, m.reg.Read32(arge.RegTXCtrl))
	}
	if m.irq.Pending()&(1<<2) == 0 {
		t.Fatal("interrupt line not raised")
	}
	// Writing PKT_SENT decrements by one; a third write over-acks.
	m.reg.Write32(arge.RegTXStatus, arge.TXStatusPktSent)
	if st := m.reg.Read32(arge.RegTXStatus); st>>arge.StatusCountShift&0xFF != 1 {
		t.Fatalf("after one ack: %#x", st)
	}
	m.reg.Write32(arge.RegTXStatus, arge.TXStatusPktSent)
	if m.reg.Read32(arge.RegTXStatus)&arge.TXStatusPktSent != 0 || m.irq.Pending()&(1<<2) != 0 {
		t.Fatal("count 0 still shows PKT_SENT / line")
	}
	m.reg.Write32(arge.RegTXStatus, arge.TXStatusPktSent)
	if m.mac.Snapshot().OverAcks != 1 {
		t.Fatal("over-ack not counted")
	}
}

func TestModelTXChainEndsMidFrame(t *testing.T) {
	m := newModel(t)
	m.desc(m.txBase, 0, m.bufAddr, arge.DescMore|60) // MORE, but the next is EMPTY
	m.reg.Write32(arge.RegTXCtrl, arge.TXCtrlEnable)
	m.sys.Sched.Settle(20)
	if len(m.sent) != 0 || m.mac.Snapshot().TXTruncated != 1 {
		t.Fatalf("sent %d, stats %+v", len(m.sent), m.mac.Snapshot())
	}
	if m.reg.Read32(arge.RegTXStatus)&arge.TXStatusUnderrun == 0 || len(m.misuses) != 1 {
		t.Fatalf("underrun not raised / reported: %v", m.misuses)
	}
}

func TestModelRXOverflowAndFCS(t *testing.T) {
	m := newModel(t)
	m.reg.Write32(arge.RegRXCtrl, arge.RXCtrlEnable)
	f := make([]byte, 60)
	f[0] = 0xAA
	for i := 0; i < 6; i++ {
		if err := m.mac.Deliver(f); err != nil && i < 5 {
			t.Fatalf("frame %d refused", i)
		}
		m.sys.Sched.Settle(10)
	}
	// Four buffers: four frames in, the fifth finds no descriptor.
	st := m.reg.Read32(arge.RegRXStatus)
	if st>>arge.StatusCountShift&0xFF != 4 || st&arge.RXStatusOverflow == 0 || m.reg.Read32(arge.RegRXCtrl) != 0 {
		t.Fatalf("RX status %#x ctrl %#x stats %+v", st, m.reg.Read32(arge.RegRXCtrl), m.mac.Snapshot())
	}
	if got := m.load(m.rxBase + arge.DescCtrl); got != 64 {
		t.Fatalf("RX descriptor ctrl %#x, want length 64 (60 + FCS) with EMPTY clear", got)
	}
}

func TestModelModeMismatchDrops(t *testing.T) {
	m := newModel(t)
	m.reg.Write32(arge.RegFIFOCfg5, 0) // byte mode off at 1000 Mbit/s
	if err := m.mac.Deliver(make([]byte, 60)); !errors.Is(err, argesim.ErrNoLink) {
		t.Fatalf("frame with the MAC misconfigured for the link: %v, want ErrNoLink", err)
	}
	if m.mac.Snapshot().ModeDrops != 1 {
		t.Fatal("mode drop not counted")
	}
}

// TestModelRXRefusals: a frame too long for MAX_FRAME_LEN (or for the
// model) or too short for a header is refused with a final error and
// counted in the MIB at once, however many times it is offered; only a
// full FIFO is back-pressure, which Offer leaves uncounted and Deliver
// counts as a drop.
func TestModelRXRefusals(t *testing.T) {
	m := newModel(t)
	mib := func(i int) uint32 { return m.reg.Read32(arge.MIB[i].Off) }
	const oversize, undersize, dropped = 20, 19, 23
	if got := m.reg.Read32(arge.RegMaxFrameLen); got != 1536 {
		t.Fatalf("MAX_FRAME_LEN after reset %d, want 1536", got)
	}
	for _, n := range []int{1533, 1600, 2044, 2045, 9000} {
		if err := m.mac.Offer(make([]byte, n)); !errors.Is(err, argesim.ErrTooLong) {
			t.Fatalf("%d-byte frame: %v, want ErrTooLong", n, err)
		}
	}
	if err := m.mac.Deliver(make([]byte, 1532)); err != nil {
		t.Fatalf("1532-byte frame (1536 with FCS): %v", err)
	}
	m.reg.Write32(arge.RegMaxFrameLen, 1518)
	if err := m.mac.Deliver(make([]byte, 1515)); !errors.Is(err, argesim.ErrTooLong) {
		t.Fatalf("1515-byte frame with MAX_FRAME_LEN 1518: %v, want ErrTooLong", err)
	}
	if err := m.mac.Deliver(make([]byte, 13)); !errors.Is(err, argesim.ErrRunt) {
		t.Fatalf("13-byte frame: %v, want ErrRunt", err)
	}
	st := m.mac.Snapshot()
	if st.RXTooLong != 6 || mib(oversize) != 6 || st.RXRunts != 1 || mib(undersize) != 1 {
		t.Fatalf("too long %d (MIB %d), runts %d (MIB %d); want 6, 6, 1, 1",
			st.RXTooLong, mib(oversize), st.RXRunts, mib(undersize))
	}
	// Fill the FIFO (8 frames; the RX engine is not enabled).
	for i := 0; i < 7; i++ {
		if err := m.mac.Deliver(make([]byte, 60)); err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
	}
	if err := m.mac.Offer(make([]byte, 60)); !errors.Is(err, argesim.ErrFIFOFull) {
		t.Fatalf("offer to a full FIFO: %v, want ErrFIFOFull", err)
	}
	if st := m.mac.Snapshot(); st.RXFIFODrops != 0 || mib(dropped) != 0 {
		t.Fatalf("back-pressure counted as a drop: %d (MIB %d)", st.RXFIFODrops, mib(dropped))
	}
	if err := m.mac.Deliver(make([]byte, 60)); !errors.Is(err, argesim.ErrFIFOFull) {
		t.Fatalf("deliver to a full FIFO: %v, want ErrFIFOFull", err)
	}
	if st := m.mac.Snapshot(); st.RXFIFODrops != 1 || mib(dropped) != 1 {
		t.Fatalf("FIFO drop counted %d (MIB %d), want 1", st.RXFIFODrops, mib(dropped))
	}
	// An oversize frame is refused for its length even with the FIFO full:
	// it is never mistaken for back-pressure.
	if err := m.mac.Offer(make([]byte, 4000)); !errors.Is(err, argesim.ErrTooLong) {
		t.Fatalf("oversize frame to a full FIFO: %v, want ErrTooLong", err)
	}
}

// Offer and Deliver do not allocate: the sim board calls them per frame.
func TestModelDeliverAllocs(t *testing.T) {
	m := newModel(t)
	f, big := make([]byte, 60), make([]byte, 3000)
	if n := testing.AllocsPerRun(100, func() {
		_ = m.mac.Offer(f)
		_ = m.mac.Deliver(big)
	}); n != 0 {
		t.Fatalf("%v allocations per Offer + Deliver", n)
	}
}
