// Package boardflash is an AR71xx router's boot flash as its board
// description lays it out (boardfile.Flash): the configuration store
// (flash/confstore, its two copies in the config partition's two erase
// blocks) as the board's board.Storage, the firmware and config
// partitions as its sysupgrade target (board.Upgradable), and the radio
// calibration partition as a read-only view for the Wi-Fi driver.
//
// It takes a flash.Device, so the same code runs over the SPI NOR driver
// on the router (flash/spinor on the SoC's SPI controller) and over the
// driver on its hostile model in the sim twin (flash/spinor/spinorsim).
package boardflash

import (
	"errors"
	"fmt"
	"sync"

	"github.com/gowrt/gowrt/board"
	"github.com/gowrt/gowrt/board/ar71xx/boardfile"
	"github.com/gowrt/gowrt/flash"
	"github.com/gowrt/gowrt/flash/confstore"
	"github.com/gowrt/gowrt/flash/part"
)

// ErrLayout is wrapped by Open's errors for a flash that does not match
// the description.
var ErrLayout = errors.New("boardflash: flash does not match the board's layout")

// Flash is the board's flash, partitioned.
type Flash struct {
	b   *boardfile.Board
	dev flash.Device
	log func(format string, a ...any)

	once   sync.Once
	shared *confstore.Shared
	err    error
}

// Open checks dev against b's layout: the chip must be as large as the
// description says (a smaller chip would put partitions past its end; a
// larger one means the description is for another board variant), and
// the config partition must be exactly two of its erase blocks, one per
// confstore copy. log receives what is worth telling the console (a
// damaged store); nil discards it.
func Open(b *boardfile.Board, dev flash.Device, log func(format string, a ...any)) (*Flash, error) {
	if dev.Size() != b.Flash.Size {
		return nil, fmt.Errorf("%w: %s has a %d-byte flash, the chip holds %d", ErrLayout, b.Name, b.Flash.Size, dev.Size())
	}
	c, err := b.Part(boardfile.PartConfig)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrLayout, err)
	}
	if bs := int64(dev.BlockSize()); c.Size != 2*bs || c.Offset%bs != 0 {
		return nil, fmt.Errorf("%w: config partition of %#x bytes at %#x is not two %#x-byte erase blocks",
			ErrLayout, c.Size, c.Offset, bs)
	}
	for _, p := range b.Flash.Parts {
		if _, err := part.Sub(dev, toPart(p)); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrLayout, err)
		}
	}
	if log == nil {
		log = func(string, ...any) {}
	}
	return &Flash{b: b, dev: dev, log: log}, nil
}

func toPart(p boardfile.Partition) part.Partition {
	return part.Partition{Name: p.Name, Offset: p.Offset, Size: p.Size, ReadOnly: p.ReadOnly}
}

// Partition returns the named partition as a bounded view; read-only
// partitions (boot loader, calibration) refuse erase and program with
// part.ErrReadOnly.
func (f *Flash) Partition(name string) (flash.Device, error) {
	p, err := f.b.Part(name)
	if err != nil {
		return nil, err
	}
	return part.Sub(f.dev, toPart(p))
}

// ART returns the radio calibration partition, read-only.
func (f *Flash) ART() (flash.Device, error) { return f.Partition(boardfile.PartART) }

// Store implements board.Storage: name is a key of the configuration
// store in the config partition, shared by every caller (one
// confstore.Shared per boot). A damaged store is reported once through
// the log and starts empty; the next save rewrites it.
func (f *Flash) Store(name string) (board.Store, error) {
	f.once.Do(func() {
		cfg, err := f.Partition(boardfile.PartConfig)
		if err != nil {
			f.err = err
			return
		}
		s, v, err := confstore.Open(cfg, 0, int64(cfg.BlockSize()))
		if s == nil {
			f.err = fmt.Errorf("%s: configuration store: %w", f.b.Name, err)
			return
		}
		if err != nil {
			f.log("%s: configuration store: %v (starting empty)", f.b.Name, err)
		}
		f.shared = confstore.Share(s, v)
	})
	if f.err != nil {
		return nil, f.err
	}
	return f.shared.Key(name)
}

// FirmwareFlash implements board.Upgradable.
func (f *Flash) FirmwareFlash() (board.FirmwareFlash, error) {
	fw, err := f.b.Part(boardfile.PartFirmware)
	if err != nil {
		return board.FirmwareFlash{}, err
	}
	c, err := f.b.Part(boardfile.PartConfig)
	if err != nil {
		return board.FirmwareFlash{}, err
	}
	return board.FirmwareFlash{Flash: f.dev, FirmwareOff: fw.Offset, FirmwareLen: fw.Size,
		ConfigOff: c.Offset, ConfigLen: c.Size}, nil
}

var (
	_ board.Storage    = (*Flash)(nil)
	_ board.Upgradable = (*Flash)(nil)
)
