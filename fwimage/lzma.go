package fwimage

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/ulikunitz/xz/lzma"
)

// LZMA properties for MIPS kernels, as OpenWrt's include/image-commands.mk
// (Build/lzma: "-lc1 -lp2 -pb2") compresses them: 4-byte instruction
// words make lp=2/pb=2 the right position model.
const (
	lzmaLC = 1
	lzmaLP = 2
	lzmaPB = 2
)

// Dictionary size bounds. The boot loaders decode buffer to buffer
// (U-Boot's lzmaBuffToBuffDecompress, OpenWrt's lzma-loader: the output
// buffer is the window), so the dictionary costs them no RAM; decoders
// that allocate it (xz/unlzma, a streaming decoder) allocate the header's
// value. LZMA therefore uses the smallest power of two that covers the
// whole image, between 64 KiB and 8 MiB: compression sees the whole image
// (a 3 MiB firmware gets a 4 MiB dictionary), and no decoder is asked for
// more than a quarter of a 32 MiB board's RAM.
const (
	minDict = 64 << 10
	maxDict = 8 << 20
)

// LZMA compresses raw into the classic .lzma format (13-byte header:
// properties, dictionary size, uncompressed size; no end marker).
func LZMA(raw []byte) ([]byte, error) {
	if len(raw) == 0 {
		return nil, errors.New("fwimage: nothing to compress")
	}
	dict := minDict
	for dict < len(raw) && dict < maxDict {
		dict <<= 1
	}
	cfg := lzma.WriterConfig{
		Properties:   &lzma.Properties{LC: lzmaLC, LP: lzmaLP, PB: lzmaPB},
		DictCap:      dict,
		SizeInHeader: true,
		Size:         int64(len(raw)),
		EOSMarker:    false,
	}
	var out bytes.Buffer
	w, err := cfg.NewWriter(&out)
	if err != nil {
		return nil, fmt.Errorf("fwimage: lzma: %w", err)
	}
	if _, err := w.Write(raw); err != nil {
		return nil, fmt.Errorf("fwimage: lzma: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("fwimage: lzma: %w", err)
	}
	return out.Bytes(), nil
}
