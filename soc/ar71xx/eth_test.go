package ar71xx

import (
	"errors"
	"testing"
)

// TestEthUnits: the instance table's facts (FreeBSD ar71xxreg.h
// AR71XX_GE0_BASE/AR71XX_GE1_BASE, Linux ath79 irq numbers) and an Eth
// bound to its unit: GE1's reset bits, flush register and clock.
func TestEthUnits(t *testing.T) {
	if GE0.Base != 0x1900_0000 || GE1.Base != 0x1A00_0000 || GE0.IRQ != 2 || GE1.IRQ != 3 ||
		GE0.Flush != FlushGE0 || GE1.Flush != FlushGE1 || EthUnits != [2]EthUnit{GE0, GE1} {
		t.Fatalf("instance table %+v %+v", GE0, GE1)
	}
	s, ddr, _, rst, _ := newTestSoC(t, 0x00A2)
	e, err := s.Eth(GE1)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Reset(); err != nil {
		t.Fatal(err)
	}
	if w := rst.writes(RstModuleAR71xx); len(w) != 2 || w[0] != ResetGE1MAC {
		t.Fatalf("RESET_MODULE writes %#x, want GE1's MAC pulsed", w)
	}
	starts := 0
	flushReg(ddr, 0xA0, 1, &starts) // GE1's channel on AR71xx
	if !e.HasFlush() || e.Flush() != nil || starts != 2 {
		t.Fatalf("GE1 flush: channel %v, %d starts", e.HasFlush(), starts)
	}
	if err := e.SetClock(1000); err != nil {
		t.Fatal(err)
	}
	if err := e.SetClock(42); err == nil {
		t.Fatal("a 42 Mbit/s clock was accepted")
	}
	forged := GE1
	forged.IRQ = 5
	if _, err := s.Eth(forged); !errors.Is(err, ErrUnit) {
		t.Fatalf("Eth of a unit not in the table: %v", err)
	}
}
