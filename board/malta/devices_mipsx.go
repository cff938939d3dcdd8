//go:build mips || mipsle

package malta

import (
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/gowrt/gowrt/barrier"
	"github.com/gowrt/gowrt/board"
	"github.com/gowrt/gowrt/flash/cfi"
	"github.com/gowrt/gowrt/flash/confstore"
	"github.com/gowrt/gowrt/soc/malta/pci"
)

// Boot flash layout (QEMU hw/mips/malta.c): a 4 MiB Intel CFI bank at
// physical 0x1E000000; the configuration store uses the last two 64 KiB
// blocks, YAMON's "file flash" (FreeBSD sys/mips/malta/maltareg.h; Linux
// arch/mips/mti-malta/malta-platform.c: "Board Config"), which QEMU's
// -kernel loader never touches and mipsel start-up never swaps (both in
// hw/mips/malta.c).
const (
	FlashBase   = 0x1e000000
	FlashSize   = 4 << 20
	ConfigSlotA = 0x3e0000
	ConfigSlotB = 0x3f0000
	kseg1       = 0xa0000000
	pciIOWindow = 0x18000000 // port 0 of the GT's PCI I/O window
)

// IOSpace returns a Space over PCI I/O ports [port, port+size): the GT
// window maps port N at physical 0x18000000+N; device registers there are
// little-endian.
func IOSpace(name string, port uint64, size uint32) (barrier.Space, error) {
	if port+uint64(size) > 0x200000 {
		return nil, fmt.Errorf("malta: I/O ports %#x+%#x outside the 2 MiB window", port, size)
	}
	return barrier.NewMMIO(name, kseg1+pciIOWindow+uintptr(port), size, barrier.LittleEndian)
}

var (
	pciOnce sync.Once
	pciGT   *pci.GT
	pciDevs []*pci.Device
	pciErr  error
)

// PCI enumerates the PCI bus and assigns BARs, once; later calls return
// the same result.
func PCI() (*pci.GT, []*pci.Device, error) {
	pciOnce.Do(func() {
		pciGT, pciErr = pci.OpenGT()
		if pciErr != nil {
			return
		}
		var errs []error
		pciDevs, errs = pci.Scan(pciGT)
		if len(errs) > 0 {
			pciErr = fmt.Errorf("malta: PCI scan: %v", errs)
			return
		}
		pciErr = pci.Assign(pciGT, pciDevs)
	})
	return pciGT, pciDevs, pciErr
}

var (
	flashOnce sync.Once
	flashChip *cfi.Chip
	flashErr  error
)

// Flash probes the boot flash, once.
func Flash() (*cfi.Chip, error) {
	flashOnce.Do(func() {
		s, err := barrier.NewMMIO("flash", kseg1+FlashBase, FlashSize, barrier.Native)
		if err != nil {
			flashErr = err
			return
		}
		be := binary.NativeEndian.Uint16([]byte{0, 1}) == 1
		flashChip, flashErr = cfi.Probe(s, be)
	})
	return flashChip, flashErr
}

// ConfigStore opens the configuration store in the boot flash. With a
// damaged region it returns the store, empty values and the error (wrapping
// confstore.ErrNoValidCopy): the caller reports it and runs with defaults;
// the next Save rewrites the region.
func ConfigStore() (*confstore.Store, confstore.Values, error) {
	chip, err := Flash()
	if err != nil {
		return nil, confstore.Values{}, err
	}
	return confstore.Open(chip, ConfigSlotA, ConfigSlotB)
}

var (
	sharedOnce sync.Once
	shared     *confstore.Shared
	sharedErr  error
)

// Store implements board.Storage: name is a key of the configuration
// store in the boot flash (ConfigStore), shared by every caller through
// one confstore.Shared, so the store is opened once per boot. Each Save
// of a changed value erases one 64 KiB block (the two slots alternate) and
// programs the whole configuration; a value that does not fit the slot is
// refused with confstore.ErrTooLarge and the previous one kept. A damaged
// region is reported once on the console and the store starts empty.
func (Board) Store(name string) (board.Store, error) {
	sharedOnce.Do(func() {
		s, v, err := ConfigStore()
		if s == nil {
			sharedErr = fmt.Errorf("malta: configuration store: %w", err)
			return
		}
		if err != nil {
			fmt.Printf("malta: configuration store: %v (starting empty)\n", err)
		}
		shared = confstore.Share(s, v)
	})
	if sharedErr != nil {
		return nil, sharedErr
	}
	k, err := shared.Key(name)
	if err != nil {
		return nil, err
	}
	return k, nil
}

var _ board.Storage = Board{}
