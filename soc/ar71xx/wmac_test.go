package ar71xx

import (
	"errors"
	"testing"
)

// The WMAC's IP2 handler runs the driver only for the WMAC's sources,
// flushing the WMAC's DDR channel (0xAC on AR934x) first; a PCIe source
// alone is reported, not handed to the WMAC driver. QCA955x does no
// flush, as Linux does none.
func TestWMACHandler(t *testing.T) {
	s, ddr, _, rst, _ := newTestSoC(t, RevMajor9344)
	u, err := WMACOf(s.Info.Family)
	if err != nil {
		t.Fatal(err)
	}
	if u.Base != 0x1810_0000 || u.IRQ != CPUIRQPCI || u.IntStatus != 0xAC {
		t.Fatalf("AR934x WMAC %+v", u)
	}
	starts := 0
	flushReg(ddr, 0xAC, 1, &starts)
	ran, reports := 0, 0
	h, err := s.WMACHandler(u, func() { ran++ }, func(error) { reports++ })
	if err != nil {
		t.Fatal(err)
	}
	rst.set(RstExtIntStatus, 1<<4) // PCIE_RC only
	h()
	if ran != 0 || reports != 1 || starts != 0 {
		t.Fatalf("PCIe source: ran %d, reports %d, flushes %d", ran, reports, starts)
	}
	rst.set(RstExtIntStatus, 1<<2) // WMAC_RXLP
	h()
	if ran != 1 || starts != 2 {
		t.Fatalf("WMAC source: ran %d, flush starts %d (want the channel flushed twice)", ran, starts)
	}

	q, qddr, _, qrst, _ := newTestSoC(t, RevMajor9558)
	qu, err := WMACOf(q.Info.Family)
	if err != nil {
		t.Fatal(err)
	}
	qran := 0
	qh, err := q.WMACHandler(qu, func() { qran++ }, nil)
	if err != nil {
		t.Fatal(err)
	}
	qrst.set(RstExtIntStatus, 1)
	qrst.set(RstBootstrap, BootstrapRef40MHz)
	qh()
	if qran != 1 || len(qddr.log) != 0 {
		t.Fatalf("QCA955x: ran %d, DDR accesses %v", qran, qddr.log)
	}
	if !q.RefClock40MHz(qu) {
		t.Error("40 MHz reference clock not read from BOOTSTRAP")
	}

	old, _, _, _, _ := newTestSoC(t, 0x00A2) // AR71xx
	if _, err := WMACOf(old.Info.Family); !errors.Is(err, ErrNoWMAC) {
		t.Fatalf("AR71xx WMAC: %v", err)
	}
}
