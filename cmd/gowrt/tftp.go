package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/gowrt/gowrt/board/ar71xx/boardfile"
	"github.com/gowrt/gowrt/internal/image"
	"github.com/gowrt/gowrt/internal/image/routers"
)

// The addresses the printed console commands use when gowrt tftp cannot
// tell its own: the router's boot loader at .1 and the TFTP server at .2
// of OpenWrt's LAN, 192.168.1.0/24.
const (
	defaultServerIP = "192.168.1.2"
	defaultRouterIP = "192.168.1.1"
)

// ubootCommands are the U-Boot console commands that fetch file (n bytes)
// from server and write it to the firmware partition, then boot it: the
// sequence TP-Link's and the module vendors' recovery instructions use
// (tftpboot to RAM, erase, cp.b to the memory-mapped flash, bootm from
// flash). U-Boot numbers are hex.
func ubootCommands(r *boardfile.Board, file string, n int, server, router string) string {
	part, _ := r.Part(boardfile.PartFirmware)
	flash := r.Image.FlashBase + uint32(part.Offset)
	var b strings.Builder
	fmt.Fprintf(&b, "  setenv ipaddr %s\n", router)
	fmt.Fprintf(&b, "  setenv serverip %s\n", server)
	fmt.Fprintf(&b, "  tftpboot 0x%x %s\n", r.Image.TFTPLoad, file)
	fmt.Fprintf(&b, "  erase 0x%x +0x%x\n", flash, part.Size)
	fmt.Fprintf(&b, "  cp.b 0x%x 0x%x 0x%x\n", r.Image.TFTPLoad, flash, n)
	fmt.Fprintf(&b, "  bootm 0x%x\n", flash)
	return b.String()
}

// redbootCommands are the RedBoot console commands that fetch the flat
// binary file (n bytes, entry point entry) from server into RAM, store it
// as the FIS image "gowrt" in the firmware area, and boot it (RedBoot's
// load -r -b, fis create with its memory base, length, flash address,
// entry and load address, fis load, exec).
func redbootCommands(r *boardfile.Board, file string, n int, entry uint32, server, router string) string {
	part, _ := r.Part(boardfile.PartFirmware)
	flash := r.Image.FlashBase + uint32(part.Offset)
	load := r.Image.TFTPLoad
	var b strings.Builder
	fmt.Fprintf(&b, "  ip_address -l %s/24 -h %s\n", router, server)
	fmt.Fprintf(&b, "  load -r -v -b 0x%x -m tftp %s\n", load, file)
	fmt.Fprintf(&b, "  fis create -b 0x%x -l 0x%x -f 0x%x -e 0x%x -r 0x%x gowrt\n", load, n, flash, entry, load)
	fmt.Fprintf(&b, "  fis load gowrt\n")
	fmt.Fprintf(&b, "  exec\n")
	b.WriteString("  (first free the area: fis list, then fis delete each image inside 0x" +
		fmt.Sprintf("%x..0x%x", flash, flash+uint32(part.Size)) + "; make \"fis load gowrt; exec\" the boot script with fconfig)\n")
	return b.String()
}

// tftp serves one firmware image to a router's boot loader.
func tftp(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("tftp")
	boardName := fs.String("board", "", "")
	listen := fs.String("listen", ":69", "")
	if err := fs.Parse(args); err != nil {
		return usagef("tftp: %v", err)
	}
	if fs.NArg() != 1 {
		return usagef("tftp: want -board ROUTER [-listen ADDR] FILE (one file)")
	}
	file := fs.Arg(0)
	if *boardName == "" {
		return usagef("tftp: -board ROUTER is required (it decides the boot loader commands; routers: %s)", strings.Join(boardfile.Names(), ", "))
	}
	b, ok := image.Boards[*boardName]
	if !ok || routers.Of(b) == nil {
		return usagef("tftp: -board %q is not a router (routers: %s)", *boardName, strings.Join(boardfile.Names(), ", "))
	}
	host, port, err := net.SplitHostPort(*listen)
	if err != nil {
		return usagef("tftp: -listen %q: %v (e.g. :69 or 192.168.1.2:69)", *listen, err)
	}
	if _, err := net.LookupPort("udp", port); err != nil {
		return usagef("tftp: -listen %q: bad port", *listen)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	r := routers.Of(b)
	if err := checkServable(r, file, data); err != nil {
		return err
	}
	conn, err := net.ListenPacket("udp4", *listen)
	if err != nil {
		if strings.Contains(err.Error(), "permission denied") {
			return fmt.Errorf("tftp: %v: port %s needs root (or -listen :6969 and a boot loader told to use that port)", err, port)
		}
		return fmt.Errorf("tftp: %w", err)
	}
	server := host
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		server = localIPv4()
	}
	name := filepath.Base(file)
	fmt.Fprintf(stderr, "gowrt: tftp: serving %s (%d bytes) read-only on %v for the %s\n", name, len(data), conn.LocalAddr(), r.Model)
	fmt.Fprintf(stderr, "gowrt: on the router's serial console (%d baud), interrupt the boot and enter:\n%s", r.Baud,
		consoleCommands(r, name, data, server, routerIP(server)))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	s := &tftpServer{name: name, data: data, log: stderr, timeout: 2 * time.Second}
	return s.serve(ctx, conn)
}

// checkServable refuses a file that cannot be the router's firmware
// partition contents (a TP-Link factory image is padded past it).
func checkServable(r *boardfile.Board, file string, data []byte) error {
	part, err := r.Part(boardfile.PartFirmware)
	if err != nil {
		return err
	}
	if int64(len(data)) > part.Size {
		hint := ""
		if r.Image.Format == boardfile.TPLink {
			hint = " (serve the -sysupgrade image: the factory image is padded for the vendor's web upgrade)"
		}
		return fmt.Errorf("tftp: %s is %d bytes, more than the %s's %d-byte firmware partition%s", file, len(data), r.Model, part.Size, hint)
	}
	return nil
}

// consoleCommands are the boot loader commands for serving file.
func consoleCommands(r *boardfile.Board, name string, data []byte, server, router string) string {
	if r.Image.Format == boardfile.RedBoot {
		return redbootCommands(r, name, len(data), elfEntry(data), server, router)
	}
	return ubootCommands(r, name, len(data), server, router)
}

// elfEntry reads e_entry of a big-endian 32-bit ELF header at the start
// of data: the fixed-up ELF and its flat binary both begin with it. 0 if
// data is no such header.
func elfEntry(data []byte) uint32 {
	if len(data) < 52 || string(data[:4]) != "\x7fELF" || data[4] != 1 || data[5] != 2 {
		return 0
	}
	return binary.BigEndian.Uint32(data[24:])
}

// localIPv4 returns the host's first non-loopback IPv4 address, for the
// printed serverip, or defaultServerIP.
func localIPv4() string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return defaultServerIP
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() {
			return n.IP.String()
		}
	}
	return defaultServerIP
}

// routerIP picks the boot loader's address in the server's /24: .1, or .2
// when the server is .1.
func routerIP(server string) string {
	ip := net.ParseIP(server).To4()
	if ip == nil {
		return defaultRouterIP
	}
	r := net.IPv4(ip[0], ip[1], ip[2], 1)
	if ip[3] == 1 {
		r = net.IPv4(ip[0], ip[1], ip[2], 2)
	}
	return r.String()
}
