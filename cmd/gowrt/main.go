// Command gowrt builds gowrt firmware images and runs them under QEMU.
//
//	gowrt build -board malta-be|malta-le -o FILE PKG
//	gowrt run   [-board sim|malta-be|malta-le] [-m MiB] [-append ARGS] [-timeout D] PKG
//
// build compiles PKG (a main package that imports its board package, e.g.
// github.com/gowrt/gowrt/board/malta) with the stock Go toolchain as
// GOOS=linux GOARCH=mips|mipsle GOMIPS=softfloat and the kernel's link layout.
// run builds into a temporary file, boots it under qemu-system-mips(el) -M
// malta with -no-reboot, streams the console, and exits with the program's
// exit code (taken from the kernel's final "gowrt: exit N" line).
//
// The sim board (the default for run) builds PKG for the host instead and
// runs it as a process: the firmware's real drivers against hardware
// models, with TAP devices as its Ethernet ports (see board/sim). -append
// then gives the program's arguments.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gowrt/gowrt/internal/image"
)

func usage() {
	fmt.Fprintln(os.Stderr, `usage:
  gowrt build -board malta-be|malta-le -o FILE PKG
  gowrt run   [-board sim|malta-be|malta-le] [-m MiB] [-append ARGS] [-timeout DURATION] PKG`)
	os.Exit(2)
}

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	code := 0
	switch os.Args[1] {
	case "build":
		err = build(os.Args[2:])
	case "run":
		code, err = run(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gowrt:", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

func build(args []string) error {
	fs := flag.NewFlagSet("build", flag.ExitOnError)
	board := fs.String("board", "malta-be", "board: malta-be or malta-le")
	out := fs.String("o", "", "output image (ELF)")
	fs.Parse(args)
	if fs.NArg() != 1 || *out == "" {
		usage()
	}
	b, err := image.LookupBoard(*board)
	if err != nil {
		return err
	}
	return image.Build(b, ".", fs.Arg(0), *out)
}

var exitRE = regexp.MustCompile(`^gowrt: exit (-?\d+)\s*$`)

func run(args []string) (int, error) {
	fs := flag.NewFlagSet("run", flag.ExitOnError)
	board := fs.String("board", "sim", "board: sim, malta-be or malta-le")
	mem := fs.Int("m", 128, "RAM in MiB")
	appendArgs := fs.String("append", "", "kernel command line: program arguments, K=V environment, kernel switches")
	timeout := fs.Duration("timeout", 0, "stop QEMU after this long (0: never)")
	fwd := fs.Int("fwd", 0, "malta: QEMU user networking on 192.168.1.0/24 with 127.0.0.1:PORT forwarded to 192.168.1.1:80 (no root needed)")
	fs.Parse(args)
	if fs.NArg() != 1 {
		usage()
	}
	if *board == "sim" {
		return runSim(fs.Arg(0), *appendArgs, *timeout)
	}
	b, err := image.LookupBoard(*board)
	if err != nil {
		return 0, err
	}
	dir, err := os.MkdirTemp("", "gowrt-run")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	img := filepath.Join(dir, "firmware.elf")
	if err := image.Build(b, ".", fs.Arg(0), img); err != nil {
		return 0, err
	}
	ctx := context.Background()
	if *timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *timeout)
		defer cancel()
	}
	var extra []string
	if *fwd > 0 {
		extra = UserNetForward(*fwd)
		fmt.Fprintf(os.Stderr, "gowrt: status page of 192.168.1.1 at http://127.0.0.1:%d/\n", *fwd)
	}
	code, err := Boot(ctx, b, img, *mem, *appendArgs, os.Stdin, os.Stdout, extra...)
	if errors.Is(err, context.DeadlineExceeded) {
		return 124, fmt.Errorf("timed out after %v", *timeout)
	}
	return code, err
}

// Boot runs img under QEMU, copies the console to out and returns the exit
// code the firmware reported.
//
// extra is appended to QEMU's arguments (network options).
func Boot(ctx context.Context, b image.Board, img string, memMiB int, appendArgs string, in io.Reader, out io.Writer, extra ...string) (int, error) {
	args := []string{"-M", "malta", "-cpu", "24Kc", "-m", strconv.Itoa(memMiB),
		"-kernel", img, "-display", "none", "-monitor", "none", "-serial", "stdio", "-no-reboot"}
	args = append(args, extra...)
	if appendArgs != "" {
		args = append(args, "-append", appendArgs)
	}
	cmd := exec.CommandContext(ctx, b.QEMU, args...)
	cmd.WaitDelay = time.Second
	cmd.Stdin = in
	cmd.Stderr = os.Stderr
	pr, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	code := -1
	sc := bufio.NewScanner(pr)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		fmt.Fprintln(out, line)
		if m := exitRE.FindStringSubmatch(line); m != nil {
			code, _ = strconv.Atoi(m[1])
		}
	}
	werr := cmd.Wait()
	if ctx.Err() != nil {
		return 0, ctx.Err()
	}
	if code < 0 {
		if werr != nil {
			return 1, fmt.Errorf("%s: %w (no exit line from the firmware)", b.QEMU, werr)
		}
		return 1, errors.New("firmware stopped without a \"gowrt: exit\" line")
	}
	return code, nil
}

// runSim builds pkg for the host and runs it (sim mode), forwarding
// interrupts so the firmware shuts down cleanly, and returns its exit code.
func runSim(pkg, args string, timeout time.Duration) (int, error) {
	dir, err := os.MkdirTemp("", "gowrt-sim")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "firmware")
	build := exec.Command("go", "build", "-o", bin, pkg)
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		return 0, fmt.Errorf("building %s for sim: %w", pkg, err)
	}
	cmd := exec.Command(bin, strings.Fields(args)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	var deadline <-chan time.Time
	if timeout > 0 {
		deadline = time.After(timeout)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case s := <-sig:
			_ = cmd.Process.Signal(s)
		case <-deadline:
			_ = cmd.Process.Signal(syscall.SIGTERM)
			<-done
			return 124, fmt.Errorf("timed out after %v", timeout)
		case err := <-done:
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				return ee.ExitCode(), nil
			}
			return 0, err
		}
	}
}

// UserNetForward returns QEMU options that cable malta's pcnet to QEMU's
// user-mode network, numbered like the router's LAN (the host side is
// 192.168.1.2), with host port 127.0.0.1:port forwarded to the router's
// status page: the way to reach the firmware without root or TAP devices.
func UserNetForward(port int) []string {
	return []string{"-nic", fmt.Sprintf("user,model=pcnet,net=192.168.1.0/24,host=192.168.1.2,dhcpstart=192.168.1.100,hostfwd=tcp:127.0.0.1:%d-192.168.1.1:80", port)}
}
