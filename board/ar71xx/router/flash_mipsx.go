//go:build mips || mipsle

package router

import (
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/gowrt/gowrt/board/ar71xx/boardfile"
	"github.com/gowrt/gowrt/board/ar71xx/boardflash"
	"github.com/gowrt/gowrt/flash/spinor"
)

// physSPI is the SPI controller's register block (FreeBSD
// sys/mips/atheros/ar71xxreg.h AR71XX_SPI_BASE): the same addresses as
// the flash window, told apart by its function-select register.
const (
	physSPI    = 0x1f00_0000
	spiRegSize = 0x10
)

var (
	flashOnce sync.Once
	bflash    *boardflash.Flash
	flashErr  error
)

// openFlash probes the SPI NOR through the SoC's controller and lays the
// description's partitions over it, once.
func openFlash(b *boardfile.Board) (*boardflash.Flash, error) {
	flashOnce.Do(func() {
		regs, err := mmio("spi", physSPI, spiRegSize)
		if err != nil {
			flashErr = err
			return
		}
		win, err := mmio("flash", physFlash, maxFlashSize)
		if err != nil {
			flashErr = err
			return
		}
		nor, err := spinor.New(spinor.Config{Regs: regs, Mem: win, BigEndian: binary.NativeEndian.Uint16([]byte{0, 1}) == 1})
		if err != nil {
			flashErr = fmt.Errorf("router: SPI flash: %w", err)
			return
		}
		bflash, flashErr = boardflash.Open(b, nor, func(format string, a ...any) { fmt.Printf(format+"\n", a...) })
	})
	return bflash, flashErr
}
