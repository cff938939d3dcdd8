package wire

import (
	"fmt"
	"sync"

	"github.com/gowrt/gowrt/ath/ar9300"
	"github.com/gowrt/gowrt/ath/power"
	"github.com/gowrt/gowrt/barrier"
	"github.com/gowrt/gowrt/board"
	"github.com/gowrt/gowrt/board/ar71xx/boardfile"
	"github.com/gowrt/gowrt/busdma"
	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/soc/ar71xx"
	"github.com/gowrt/gowrt/wlan/radio"
)

// The WMAC: AR934x and QCA955x routers have an AR9300-family 802.11 MAC
// built into the SoC. Radios wires it like Ports wires the Ethernet: the
// ath/ar9300 driver over the WMAC's register window (soc/ar71xx
// WMACOf: 0x18100000), DMA from the platform, its interrupt on IP2
// demultiplexed from PCIe and preceded by the DDR flush the chip needs,
// and the refcounted force-awake of ath/power.
//
// What this does not do, so a real chip will not transmit: the baseband
// and radio bring-up (the initvals tables, synthesizer programming for
// the channel, calibration, the calibration data in the ART partition,
// transmit power), which package ath/ar9300 documents as out of scope.
// The MAC side (descriptors, queues, key cache, beacon timers) is what
// runs, and what the sim twin exercises against the MAC model.

// WMACHardware is what Radios needs from the platform beyond Hardware.
type WMACHardware interface {
	Hardware
	// WMAC returns the WMAC's register window and where its DMA memory
	// comes from (on the hardware the platform's, DMA()).
	WMAC(u ar71xx.WMACUnit) (barrier.Space, busdma.Platform, error)
	// WMACInterrupt connects handler to the WMAC's interrupt: on the
	// hardware the IP2 line, the handler run only for the WMAC's
	// sources and after the DDR flush (ar71xx SoC.WMACHandler).
	WMACInterrupt(u ar71xx.WMACUnit, name string, handler func()) error
}

// RadioMAC is radio i's address: the board's base address made locally
// administered (bit 1 of the first octet) with i added to the last
// octet, so it never equals a port's or br-lan's address (the vendors'
// own choice per board is not recorded in the descriptions).
func RadioMAC(base gnet.MAC, i int) [6]byte {
	m := [6]byte(base)
	m[0] |= 0x02
	m[5] += byte(i)
	return m
}

// Radios brings up b's radios on the WMAC (radios on PCIe are listed by
// the description but not brought up: there is no PCIe host driver) and
// returns them ready to Start.
func Radios(b *boardfile.Board, hw WMACHardware, base gnet.MAC) ([]board.Radio, error) {
	var out []board.Radio
	for i, r := range b.Radios {
		if r.Bus != boardfile.WMAC {
			continue
		}
		s, err := hw.SoC()
		if err != nil {
			return nil, err
		}
		u, err := ar71xx.WMACOf(s.Info.Family)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %s: %v", ErrBoard, b.Name, r.Name, err)
		}
		regs, dma, err := hw.WMAC(u)
		if err != nil {
			return nil, fmt.Errorf("wire: %s: %w", r.Name, err)
		}
		name := "wmac" + r.Name[len("radio"):]
		pw := power.New(name, regs) // a barrier.Space: power orders its writes
		d, err := ar9300.New(ar9300.Config{Name: name, Regs: regs, DMA: dma, Power: pw, MAC: RadioMAC(base, i),
			Delay: hw.Sleep})
		if err != nil {
			return nil, fmt.Errorf("wire: %s: %w", r.Name, err)
		}
		if err := hw.WMACInterrupt(u, name, d.Interrupt); err != nil {
			return nil, fmt.Errorf("wire: %s: interrupt: %w", r.Name, err)
		}
		out = append(out, board.Radio{Name: r.Name, Band5G: r.Band5G, Radio: &AwakeRadio{Driver: d, Power: pw}})
	}
	return out, nil
}

// AwakeRadio is a WMAC driver that holds one force-awake reference from
// Start to Stop: an AP beacons at every TBTT and answers stations at any
// time, so its MAC must not network-sleep between register accesses
// (the driver's own holds bracket only each access).
type AwakeRadio struct {
	*ar9300.Driver
	Power *power.Chip

	mu   sync.Mutex
	held bool
}

var _ radio.Radio = (*AwakeRadio)(nil)

// Start implements radio.Radio: the chip is held awake, then started.
func (r *AwakeRadio) Start(rx radio.Receiver) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.held {
		if err := r.Power.Hold(); err != nil {
			return err
		}
		r.held = true
	}
	if err := r.Driver.Start(rx); err != nil {
		r.held = false
		_ = r.Power.Release()
		return err
	}
	return nil
}

// Stop implements radio.Radio: the driver stops, then the interface's
// hold is dropped.
func (r *AwakeRadio) Stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Driver.Stop()
	if r.held {
		r.held = false
		_ = r.Power.Release()
	}
}
