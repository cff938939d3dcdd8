package main

import (
	"fmt"
	"io"
	"os"
	"path"
	"time"

	"github.com/gowrt/gowrt/fwimage"
)

// bootmDefaultLimit is how much U-Boot's bootm decompresses unless a board
// raises it (CONFIG_SYS_BOOTM_LEN, 8 MiB by default): a firmware whose raw
// image is larger needs a boot loader built with a larger limit.
const bootmDefaultLimit = 8 << 20

// writeUImage turns the firmware ELF at elfPath into a U-Boot legacy
// uImage at out: the flat binary of its load segments, LZMA-compressed
// (fwimage). It reports the sizes, and warns when the raw image is over
// U-Boot's default decompression limit.
func writeUImage(elfPath, out, pkg string, log io.Writer) error {
	elfBytes, err := os.ReadFile(elfPath)
	if err != nil {
		return err
	}
	raw, load, entry, err := fwimage.Raw(elfBytes)
	if err != nil {
		return err
	}
	comp, err := fwimage.LZMA(raw)
	if err != nil {
		return err
	}
	name := "gowrt " + path.Base(pkg)
	if len(name) > 32 {
		name = name[:32]
	}
	img, err := fwimage.UImage{Name: name, Load: load, Entry: entry, Comp: "lzma", OS: "linux", Arch: "mips",
		Type: "kernel", Time: time.Now()}.Build(comp)
	if err != nil {
		return err
	}
	if err := os.WriteFile(out, img, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(log, "gowrt: uImage %s: %d bytes (raw %d bytes at %#x, entry %#x; LZMA %d bytes, %.0f%%)\n",
		out, len(img), len(raw), load, entry, len(comp), 100*float64(len(comp))/float64(len(raw)))
	if len(raw) > bootmDefaultLimit {
		fmt.Fprintf(log, "gowrt: warning: the raw image (%d bytes) is over U-Boot's default bootm limit of %d bytes; "+
			"the board's U-Boot must be built with a larger CONFIG_SYS_BOOTM_LEN\n", len(raw), bootmDefaultLimit)
	}
	return nil
}
