//go:build mips || mipsle

package router

import (
	"fmt"
	"sync"
	"time"

	"github.com/gowrt/gowrt/barrier"
	"github.com/gowrt/gowrt/board"
	"github.com/gowrt/gowrt/board/ar71xx/boardfile"
	"github.com/gowrt/gowrt/board/ar71xx/wire"
	"github.com/gowrt/gowrt/busdma"
	"github.com/gowrt/gowrt/busdma/mipsdma"
	"github.com/gowrt/gowrt/intr"
	"github.com/gowrt/gowrt/intr/kernelirq"
	"github.com/gowrt/gowrt/kernel"
	"github.com/gowrt/gowrt/soc/ar71xx"
)

// Physical address windows (MIPS32 Architecture Vol. III, §4.3): kseg1
// reaches physical 0-512 MiB uncached, which device registers need. The
// SPI NOR flash is memory-mapped read-only at physical 0x1f000000 on
// every chip of the family while the SPI controller is in its default
// (memory-mapped) mode, as U-Boot leaves it (Linux ath79 spi driver,
// AR71XX_SPI_FS_GPIO off): the boot loader runs from there.
const (
	kseg1        = 0xa000_0000
	physFlash    = 0x1f00_0000
	maxFlashSize = 16 << 20 // the window's size
	// seedLen is how much of the radio calibration partition seeds the
	// fallback MAC address.
	seedLen = 0x1000
)

// mmio maps physical [pa, pa+size) through kseg1 as native-endian
// registers (the family's blocks are big-endian, like its CPUs).
func mmio(name string, pa, size uint32) (barrier.Space, error) {
	return barrier.NewMMIO(name, kseg1|uintptr(pa), size, barrier.Native)
}

// hardware is wire.Hardware on the real SoC.
type hardware struct {
	dma  *mipsdma.Platform
	disp *intr.Dispatcher

	socOnce sync.Once
	soc     *ar71xx.SoC
	socErr  error
}

var _ wire.Hardware = (*hardware)(nil)

// SoC implements wire.Hardware: the chip identified from REV_ID, its DDR,
// PLL, reset and GMAC blocks mapped.
func (h *hardware) SoC() (*ar71xx.SoC, error) {
	h.socOnce.Do(func() {
		var r ar71xx.Regions
		for _, m := range []struct {
			name string
			pa   uint32
			dst  *barrier.Space
		}{{"ddr", ar71xx.PhysDDR, &r.DDR}, {"pll", ar71xx.PhysPLL, &r.PLL},
			{"reset", ar71xx.PhysReset, &r.Reset}, {"gmac", ar71xx.PhysGMAC, &r.GMAC}} {
			s, err := mmio(m.name, m.pa, ar71xx.BlockSize)
			if err != nil {
				h.socErr = err
				return
			}
			*m.dst = s
		}
		h.soc, h.socErr = ar71xx.Probe(r)
	})
	return h.soc, h.socErr
}

// MAC implements wire.Hardware: unit u's register window.
func (h *hardware) MAC(u ar71xx.EthUnit) (barrier.Space, error) {
	if u.Unit < 0 || u.Unit >= len(ar71xx.EthUnits) || ar71xx.EthUnits[u.Unit] != u {
		return nil, fmt.Errorf("%w: %+v", ar71xx.ErrUnit, u)
	}
	return mmio(fmt.Sprintf("ge%d", u.Unit), u.Base, u.Size)
}

// DMA implements wire.Hardware.
func (h *hardware) DMA() busdma.Platform { return h.dma }

// Interrupt implements wire.Hardware: u's CPU pin is root controller line
// LineIP2+u.IRQ (GE0 on IP4, GE1 on IP5), and the handler runs after the
// DDR flush the chip needs on that pin (none for the GE pins on most
// chips; the arge driver flushes its own channel).
func (h *hardware) Interrupt(u ar71xx.EthUnit, name string, handler func()) error {
	s, err := h.SoC()
	if err != nil {
		return err
	}
	fh, err := s.FlushingHandler(u.IRQ, handler, func(err error) {
		fmt.Printf("router: %s interrupt: %v\n", name, err)
	})
	if err != nil {
		return err
	}
	return h.disp.Register(ar71xx.LineIP2+u.IRQ, name, fh)
}

// Sleep implements wire.Hardware.
func (h *hardware) Sleep(d time.Duration) { time.Sleep(d) }

var (
	upOnce  sync.Once
	upPorts []board.Port
	upErr   error
	// upWired keeps the link pollers' owner for the life of the image.
	upWired *wire.Wired
)

// ports brings the router's ports up, once.
func ports(b *boardfile.Board) ([]board.Port, error) {
	upOnce.Do(func() { upPorts, upErr = bringUp(b) })
	return upPorts, upErr
}

func bringUp(b *boardfile.Board) ([]board.Port, error) {
	plat, err := mipsdma.New(kernel.DMA)
	if err != nil {
		return nil, fmt.Errorf("router: DMA: %w", err)
	}
	hw := &hardware{dma: plat, disp: kernelirq.NewDispatcher(rootController)}
	hw.disp.OnError = func(line int, err error) { fmt.Printf("router: interrupt line %d: %v\n", line, err) }
	s, err := hw.SoC()
	if err != nil {
		return nil, fmt.Errorf("router: %s: %w", b.Name, err)
	}
	if got := s.Info.Family; got != ar71xx.FamilyOf(b.Rev) {
		return nil, fmt.Errorf("router: this image is for the %s (%v), but the SoC is a %v: built for the wrong board?", b.Model, ar71xx.FamilyOf(b.Rev), got)
	}
	base, err := BaseMAC(b, readFlash(b), rev(), calibration(b))
	if err != nil {
		fmt.Printf("router: %s: %v\n", b.Name, err)
	}
	w, err := wire.Ports(b, hw, base)
	if err != nil {
		return nil, fmt.Errorf("router: %s: %w", b.Name, err)
	}
	upWired = w
	return append(w.Ports, usbPorts(b, hw)...), nil // usb_mipsx.go
}

// rev reads REV_ID.
func rev() uint32 {
	r, err := mmio("reset", ar71xx.PhysReset, ar71xx.BlockSize)
	if err != nil {
		return 0
	}
	return r.Read32(ar71xx.RstRevID)
}

// readFlash reads the memory-mapped flash of b.
func readFlash(b *boardfile.Board) FlashReader {
	return func(off int64, p []byte) error {
		size := b.Flash.Size
		if size > maxFlashSize {
			size = maxFlashSize
		}
		if off < 0 || off+int64(len(p)) > size {
			return fmt.Errorf("flash bytes %#x+%d outside the %d MiB window", off, len(p), size>>20)
		}
		f, err := mmio("flash", physFlash, uint32(size))
		if err != nil {
			return err
		}
		for i := range p {
			p[i] = f.Read8(uint32(off) + uint32(i))
		}
		return nil
	}
}

// calibration returns the start of the radio calibration partition, the
// fallback MAC's per-unit seed, or nil on boards without one.
func calibration(b *boardfile.Board) []byte {
	p, err := b.Part(boardfile.PartART)
	if err != nil {
		return nil
	}
	seed := make([]byte, min(p.Size, seedLen))
	if readFlash(b)(p.Offset, seed) != nil {
		return nil
	}
	return seed
}
