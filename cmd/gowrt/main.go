// Command gowrt builds gowrt firmware and runs it, on the sim board as a
// host process or on QEMU malta as a bare-metal image.
//
//	gowrt run   [-board sim|malta-be|malta-le] [flags] PKG
//	gowrt build [-board malta-be|malta-le|ar71xx] [-format elf|uimage] -o FILE PKG
//	gowrt build -board ROUTER [-compress lzma|none] [-sign KEY] [-version V] -o FILE PKG
//	gowrt tftp -board ROUTER [-listen ADDR] FILE
//	gowrt keygen -o FILE
//	gowrt help
//
// PKG is a firmware main package: it imports its board package, e.g.
// github.com/gowrt/gowrt/board/malta (bare metal) or
// github.com/gowrt/gowrt/board/sim (sim mode). gowrt checks that before it
// builds, and says what to change when it is not so. The bare-metal boards
// and how their images are linked and booted are defined in
// internal/image (Boards); boards QEMU cannot emulate (ar71xx and the
// routers of board/ar71xx/boardfile) are built, not run. For a router,
// build writes what its boot loader flashes (router.go), and tftp serves
// it to the boot loader and prints the console commands (tftp.go,
// tftpd.go).
//
// On malta, run builds PKG with the stock Go toolchain (GOOS=linux
// GOARCH=mips|mipsle GOMIPS=softfloat, gowrt's link layout) into a
// temporary directory, boots it under qemu-system-mips(el) -M malta,
// streams the console and exits with the firmware's exit code (from the
// kernel's final "gowrt: exit N" line). SIGINT, SIGTERM and SIGHUP stop
// QEMU and remove the temporary directory; QEMU also dies with gowrt if
// gowrt is killed outright.
//
// On sim (the default), run builds PKG for the host and runs it as a
// process: the firmware's real drivers against hardware models, with TAP
// devices as its Ethernet ports (see board/sim).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/gowrt/gowrt/board/ar71xx/boardfile"
	"github.com/gowrt/gowrt/internal/image"
	"github.com/gowrt/gowrt/internal/image/routers"
	"github.com/gowrt/gowrt/sysupgrade"
)

const usageText = `gowrt builds gowrt firmware and runs it on the sim board or on QEMU malta.

Usage:
  gowrt run   [-board BOARD] [flags] PKG    build PKG and run it
  gowrt build [-board BOARD] -o FILE PKG    build a bare-metal image only
  gowrt tftp -board ROUTER FILE             serve FILE to the router's boot loader
  gowrt keygen -o FILE                      make a key pair for signing upgrades
                                            (FILE: private, FILE.pub: public)
  gowrt wifisim -pcap FILE [flags]          an access point and stations on the
                                            simulated radio medium, with traffic;
                                            every frame on the air goes to FILE
  gowrt help                                this text

PKG is a firmware main package (e.g. ./examples/router, ./examples/hello)
that imports its board package: github.com/gowrt/gowrt/board/sim for the
sim board, github.com/gowrt/gowrt/board/malta for malta.

Boards:
  sim          the default for run: PKG runs as a host process, gowrt's
               real drivers against hardware models of an AR9344 with two
               Ethernet MACs; as root its ports are the TAP devices
               gowrt-lan and gowrt-wan (created down: bring them up and
               address them)
  ROUTER       run with a router board (tl-wdr4300 …) runs PKG as that
               router's sim twin: its board file drives the SoC, MAC,
               switch and flash models; each socket is a TAP device
               gowrt-LABEL (gowrt-lan1 … gowrt-wan); needs root
%s
Flags of run:
  -board BOARD      sim, malta-be, malta-le or a router (its sim twin;
                    default sim)
  -append ARGS      malta: the kernel command line, i.e. the firmware's
                    arguments and K=V environment (e.g. "-run-for 30s");
                    sim: the firmware's arguments, split at spaces
  -timeout D        stop the firmware after D (e.g. 30s; default: never);
                    gowrt then exits 124
  -m MiB            malta: RAM, %d to %d MiB (default 128)
  -fwd PORT         malta: put the on-board pcnet on QEMU's user network as
                    192.168.1.0/24 and forward 127.0.0.1:PORT to TCP port 80
                    of 192.168.1.1 (the router's web UI; only port 80
                    is forwarded); needs no root. Either way malta's
                    second pcnet, the WAN port, is on a restricted user
                    network of its own (10.0.2.0/24)

Flags of wifisim (the medium runs on a virtual clock: -duration is
simulated time; each station pings a host behind the AP every 100 ms):
  -ssid S           the network's name (default gowrt)
  -passphrase P     WPA2-PSK passphrase (8..63 characters); none: open
  -stations K       stations, 1 to 64 (default 1)
  -duration D       simulated time (default 5s)
  -hw-crypto        CCMP in the radios' key caches instead of software
  -seed N           the medium's random seed (default 1)
  -pcap FILE        the radiotap capture; Wireshark decrypts it with the
                    key "wpa-pwd" P:S

Flags of build:
  -board BOARD      a bare-metal board (default malta-be)
  -o FILE           the image to write
  -format F         malta and ar71xx: elf (default: what QEMU's -kernel or
                    U-Boot's bootelf loads) or uimage (the load segments as
                    one binary, LZMA-compressed, in a U-Boot legacy image
                    for bootm). Routers get their boot loader's format:
                      TP-Link (tl-wdr4300, tl-wdr3600, archer-c7-v2): FILE
                      is the factory image (TP-Link header, padded for the
                      vendor's web upgrade) and FILE-sysupgrade (before the
                      extension) the unpadded one for the boot loader's
                      console and gowrt tftp
                      U-Boot (carambola2, ap135): FILE is a uImage
                      RedBoot (rspro): FILE is the ELF and FILE-raw.bin the
                      flat binary for fis create; the commands are printed
  -compress C       routers with U-Boot: lzma (default) or none. The build
                    warns when the firmware decompresses to more than the
                    boot loader's bootm limit, which would refuse it
                    (OpenWrt boots through a small self-decompressing
                    loader, which gowrt does not have); an uncompressed
                    uImage is copied, not decompressed. Every router build
                    prints the image's size against the firmware partition
                    and fails when it does not fit
  -sign KEY         routers: also write FILE.gowrtupg, the flashed bytes
                    signed with KEY (from gowrt keygen) for the running
                    firmware's sysupgrade, with the board's name and -version
  -version V        routers: the firmware's version, linked into PKG's
                    main.version and put in the signed metadata (default:
                    dev, and nothing linked)

Flags of tftp (a read-only TFTP server, RFC 1350 with the blksize and
tsize options, serving FILE only):
  -board ROUTER     the router whose boot loader fetches FILE: decides the
                    console commands gowrt prints (U-Boot: setenv, tftpboot,
                    erase, cp.b, bootm; RedBoot: load, fis create, exec)
  -listen ADDR      UDP address (default :69, which needs root)

run exits with the firmware's exit code; 124 after -timeout, 128+N when
stopped by signal N. Examples:

  gowrt run ./examples/router                          sim router
  gowrt run -board malta-be ./examples/hello           boot hello on QEMU
  gowrt run -board malta-le -fwd 8080 ./examples/router  then browse http://127.0.0.1:8080/
`

// usageError is a mistake in how gowrt was called: the message, then a
// pointer to the help, exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return usageError{fmt.Sprintf(format, a...)} }

func main() {
	os.Exit(gowrt(os.Args[1:], os.Stdout, os.Stderr))
}

// gowrt runs one command and returns the process's exit status.
func gowrt(args []string, stdout, stderr io.Writer) int {
	code, err := dispatch(args, stdout, stderr)
	var ue usageError
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintf(stdout, usageText, boardHelp(), minMemMiB, maxMemMiB)
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "gowrt: %s\nRun 'gowrt help' for usage.\n", ue.msg)
		return 2
	case err != nil:
		fmt.Fprintln(stderr, "gowrt:", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

func dispatch(args []string, stdout, stderr io.Writer) (int, error) {
	if len(args) == 0 {
		return 2, usagef("no command given: use gowrt run, gowrt build or gowrt help")
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		return 0, flag.ErrHelp
	case "build":
		return 0, build(args[1:], stderr)
	case "run":
		return run(args[1:], stdout, stderr)
	case "keygen":
		return 0, keygen(args[1:], stderr)
	case "tftp":
		return 0, tftp(args[1:], stdout, stderr)
	case "wifisim":
		return wifisim(args[1:], stdout, stderr)
	}
	return 2, usagef("unknown command %q: use gowrt run, gowrt build, gowrt tftp, gowrt keygen or gowrt help", args[0])
}

// newFlags returns a flag set that reports its errors to the caller
// instead of exiting.
func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// parse parses args and returns the one package argument.
func parse(fs *flag.FlagSet, args []string) (string, error) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return "", err
		}
		return "", usagef("%s: %v", fs.Name(), err)
	}
	switch fs.NArg() {
	case 0:
		return "", usagef("%s: which package? e.g. gowrt %s ./examples/router", fs.Name(), fs.Name())
	case 1:
		return fs.Arg(0), nil
	}
	return "", usagef("%s: one package expected, got %q (flags go before the package)", fs.Name(), fs.Args())
}

// boardNames lists every board gowrt knows, sim first.
func boardNames() string {
	return "sim, " + strings.Join(image.Names(), ", ")
}

// validVersion reports whether v can be linked in with -X and carried
// in a signed upgrade's metadata.
func validVersion(v string) bool {
	if len(v) == 0 || len(v) > sysupgrade.MaxName {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] <= ' ' || v[i] > '~' || v[i] == '\'' || v[i] == '"' {
			return false
		}
	}
	return true
}

// uimageRouters lists the routers whose boot loader takes a uImage.
func uimageRouters() []string {
	var n []string
	for _, name := range boardfile.Names() {
		if r, _ := boardfile.Lookup(name); r.Image.Format == boardfile.UImage {
			n = append(n, name)
		}
	}
	return n
}

// boardHelp describes the bare-metal boards for the help text.
func boardHelp() string {
	var b strings.Builder
	for _, n := range image.Names() {
		fmt.Fprintf(&b, "  %-12s %s\n", n, image.Boards[n].Doc)
	}
	return b.String()
}

func build(args []string, stderr io.Writer) error {
	fs := newFlags("build")
	boardName := fs.String("board", "malta-be", "")
	out := fs.String("o", "", "")
	format := fs.String("format", "elf", "")
	compress := fs.String("compress", compressLZMA, "")
	signKey := fs.String("sign", "", "")
	version := fs.String("version", "dev", "")
	pkg, err := parse(fs, args)
	if err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *format != "elf" && *format != "uimage" {
		return usagef("build: -format %q: elf or uimage", *format)
	}
	if *boardName == "sim" {
		return usagef("build: the sim board runs firmware as a host process: use gowrt run %s (or go build)", pkg)
	}
	b, ok := image.Boards[*boardName]
	if !ok {
		return usagef("build: unknown board %q (boards: %s)", *boardName, boardNames())
	}
	if *out == "" {
		return usagef("build: -o FILE is required (where to write the image)")
	}
	if routers.Of(b) != nil {
		if set["format"] {
			return usagef("build: -format applies to malta and ar71xx: the %s gets its boot loader's %s image", b.Name, routers.Of(b).Image.Format)
		}
		if *compress != compressLZMA && *compress != compressNone {
			return usagef("build: -compress %q: lzma or none", *compress)
		}
		if set["compress"] && routers.Of(b).Image.Format != boardfile.UImage {
			return usagef("build: -compress applies to the U-Boot uImage routers (%s); the %s's %s image is always %s",
				strings.Join(uimageRouters(), ", "), b.Name, routers.Of(b).Image.Format, map[bool]string{true: "LZMA", false: "uncompressed"}[routers.Of(b).Image.Format == boardfile.TPLink])
		}
		if !validVersion(*version) {
			return usagef("build: -version %q: 1 to %d printable ASCII characters, no spaces", *version, sysupgrade.MaxName)
		}
		return buildRouter(context.Background(), routerBuild{board: b, pkg: pkg, out: *out, compress: *compress,
			signKey: *signKey, version: *version, linkVer: set["version"], log: stderr})
	}
	for _, f := range []string{"compress", "sign", "version"} {
		if set[f] {
			return usagef("build: -%s applies to the router boards (%s)", f, strings.Join(boardfile.Names(), ", "))
		}
	}
	if *format == "elf" {
		return buildImage(context.Background(), b, pkg, *out, stderr)
	}
	dir, err := os.MkdirTemp("", "gowrt-build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	elfPath := filepath.Join(dir, "firmware.elf")
	if err := buildImage(context.Background(), b, pkg, elfPath, stderr); err != nil {
		return err
	}
	return writeUImage(elfPath, *out, pkg, stderr)
}

func run(args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlags("run")
	boardName := fs.String("board", "sim", "")
	mem := fs.Int("m", 128, "")
	appendArgs := fs.String("append", "", "")
	timeout := fs.Duration("timeout", 0, "")
	fwd := fs.Int("fwd", 0, "")
	pkg, err := parse(fs, args)
	if err != nil {
		return 2, err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *timeout < 0 {
		return 2, usagef("run: -timeout %v is negative", *timeout)
	}
	if *boardName == "sim" {
		for _, f := range []string{"m", "fwd"} {
			if set[f] {
				return 2, usagef("run: -%s applies to the malta boards only (the sim board's RAM is the host's, its ports are TAP devices)", f)
			}
		}
		return runSim(simRun{pkg: pkg, args: *appendArgs, timeout: *timeout, stdout: stdout, stderr: stderr})
	}
	b, ok := image.Boards[*boardName]
	if !ok {
		return 2, usagef("run: unknown board %q (boards: %s)", *boardName, boardNames())
	}
	if routers.Of(b) != nil {
		// QEMU emulates no AR71xx machine: a router runs as its sim twin.
		for _, f := range []string{"m", "fwd"} {
			if set[f] {
				return 2, usagef("run: -%s applies to the malta boards only (%s runs as its sim twin, a host program with TAP devices as its sockets)", f, b.Name)
			}
		}
		return runSim(simRun{pkg: pkg, twin: b.Name, args: *appendArgs, timeout: *timeout, stdout: stdout, stderr: stderr})
	}
	if !b.Bootable() {
		return 2, usagef("run: board %s cannot be booted under QEMU (QEMU emulates no such machine): build its image with gowrt build -board %s -o FILE %s and load it on the board", b.Name, b.Name, pkg)
	}
	if *mem < minMemMiB || *mem > maxMemMiB {
		return 2, usagef("run: -m %d: malta boots gowrt in %d to %d MiB of RAM", *mem, minMemMiB, maxMemMiB)
	}
	if set["fwd"] && (*fwd < 1 || *fwd > 65535) {
		return 2, usagef("run: -fwd %d is not a TCP port (1-65535)", *fwd)
	}
	return runMalta(maltaRun{board: b, pkg: pkg, memMiB: *mem, append: *appendArgs,
		timeout: *timeout, fwdPort: *fwd, stdout: stdout, stderr: stderr})
}
