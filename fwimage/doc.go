// Package fwimage turns a linked gowrt firmware ELF into the files a
// router's boot loader and vendor firmware accept: a flat raw binary
// (Raw), LZMA-compressed (LZMA), wrapped in a U-Boot legacy uImage
// (UImage) or in TP-Link's v1 firmware header (TPLink), and checked
// against the board's firmware partition (Fits).
//
// # From the ELF to a flat binary
//
// internal/image links firmware with text at 0x80101000 in kseg0 (the
// ELF and program headers one page below, at 0x80100000, where the kernel
// reads its program headers) and the data segment at 0xc0000000 in the
// TLB-mapped kseg2. A flat binary built from the virtual addresses would
// span a gigabyte. internal/image.FixupELF, which every board's Build
// applies, rewrites the data PT_LOAD's physical address (p_paddr, the
// load address, LMA) to the first 64 KiB boundary after the read-only
// segments, still in kseg0, and its memory size to its file size. For
// examples/hello (malta-be) that gives:
//
//	PT_LOAD off 0x000000 vaddr 0x80100000 paddr 0x80100000 filesz 0x0f1d2c  R E (headers + .text)
//	PT_LOAD off 0x0f2000 vaddr 0x801f2000 paddr 0x801f2000 filesz 0x0cd9f0  R   (.rodata, pclntab)
//	PT_LOAD off 0x1c0000 vaddr 0xc0000000 paddr 0x802c0000 filesz 0x009d00  RW  (data; BSS not loaded)
//
// Raw lays each PT_LOAD's file bytes out at its p_paddr, zero-filling the
// gaps (here 0x802bf9f0..0x802c0000), so the binary is exactly what an
// ELF loader (QEMU -kernel, U-Boot bootelf) would have put in RAM: loaded
// at its lowest LMA (0x80100000, a kseg0 address, which is how U-Boot on
// MIPS names load addresses) it starts with the ELF header and program
// headers the kernel reads, and the kernel maps the data pages at
// 0xc0000000 and serves the BSS as demand-zero pages as it does after an
// ELF load. The entry point is e_entry (kernel.Entry), inside the text,
// not the load address. An ELF whose data segment was not moved (no
// FixupELF) spans about 1 GiB and is refused, as are overlapping segments
// and any layout spanning more than 64 MiB.
//
// # Compression
//
// LZMA writes the classic ".lzma" ("LZMA alone") format: one properties
// byte, a 32-bit little-endian dictionary size and a 64-bit little-endian
// uncompressed size, then the stream without an end marker. That is what
// U-Boot's bootm (lib/lzma/LzmaTools.c, lzmaBuffToBuffDecompress), the
// TP-Link boot loaders and OpenWrt's lzma-loader take. The properties are
// lc=1, lp=2, pb=2, as OpenWrt compresses MIPS kernels
// (include/image-commands.mk, Build/lzma): MIPS code is 4-byte words.
// The dictionary choice is explained at LZMA.
//
// # Sizes, and a limit to watch
//
// For the malta-be link layout: examples/hello is 1.79 MiB raw, 0.61 MiB
// compressed (34%); examples/router 12.5 MiB raw, 3.7 MiB compressed
// (30%): it fits an 8 MiB TP-Link's 7.75 MiB firmware area easily. But
// U-Boot's bootm refuses to decompress more than CONFIG_SYS_BOOTM_LEN
// bytes (8 MiB unless the board raises it, common/bootm.c), and vendor
// U-Boots on these routers have similar fixed limits; the router's
// 12.5 MiB raw image exceeds that default. The board descriptions
// (board/ar71xx/boardfile, Image.BootmLimit) state the limit, and gowrt
// build warns when the raw size is over it (nothing has been booted on
// hardware).
package fwimage
