package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gowrt/gowrt/internal/image"
	"github.com/gowrt/gowrt/internal/qemu"
)

// RAM sizes malta boots gowrt in. Below 16 MiB the Go runtime's first heap
// arenas do not fit beside the image (hello needs 12, the router more);
// 2048 MiB is the most QEMU's malta accepts.
const (
	minMemMiB = 16
	maxMemMiB = 2048
)

// buildImage checks that pkg is firmware for board b and builds its image.
func buildImage(ctx context.Context, b image.Board, pkg, out string, log io.Writer) error {
	p, err := inspect(pkg, b.Tags, b.Env()...)
	if err != nil {
		return err
	}
	if err := checkBoard(p, pkg, b); err != nil {
		return err
	}
	fmt.Fprintf(log, "gowrt: building %s for %s (GOARCH=%s; the first build takes a minute)\n", pkg, b.Name, b.GOARCH)
	start := time.Now()
	if err := image.Build(ctx, b, ".", pkg, out); err != nil {
		return err
	}
	if fi, err := os.Stat(out); err == nil {
		fmt.Fprintf(log, "gowrt: built %s: %.1f MB in %.1fs\n", out, float64(fi.Size())/1e6, time.Since(start).Seconds())
	}
	return nil
}

// maltaRun is one gowrt run on a malta board.
type maltaRun struct {
	board          image.Board
	pkg            string
	memMiB         int
	append         string
	timeout        time.Duration
	fwdPort        int // 0: no user network
	stdout, stderr io.Writer
}

var exitRE = regexp.MustCompile(`^gowrt: exit (-?\d+)\s*$`)

// runMalta builds r.pkg into a temporary directory and boots it under QEMU
// until the firmware exits, the timeout passes or a signal stops gowrt;
// QEMU and the directory go in every case.
func runMalta(r maltaRun) (int, error) {
	ctx, release := runContext(r.timeout)
	defer release()
	dir, err := newWorkDir()
	if err != nil {
		return 1, err
	}
	defer os.RemoveAll(dir)

	img := filepath.Join(dir, "firmware.elf")
	if err := buildImage(ctx, r.board, r.pkg, img, r.stderr); err != nil {
		if code, why := stopped(ctx); why != nil {
			return code, why
		}
		return 1, err
	}
	m := qemu.Machine{Board: r.board, Kernel: img, MemMiB: r.memMiB, Append: r.append, WAN: wanNet}
	if r.fwdPort > 0 {
		if err := portFree(r.fwdPort); err != nil {
			return 1, err
		}
		m.NIC = userNetForward(r.fwdPort)
	}
	cmd := m.Command(ctx)
	supervise(ctx, cmd, 5*time.Second)
	cmd.Stdin = os.Stdin
	cmd.Stderr = r.stderr
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return 1, err
	}
	console := &consoleReader{r: pipe}
	if err := cmd.Start(); err != nil {
		return 1, fmt.Errorf("%s: %w (is QEMU installed? see the README's test command)", r.board.QEMU, err)
	}
	fmt.Fprintf(r.stderr, "gowrt: booting on %s -M %s -m %d (pid %d); Ctrl-C stops it\n", r.board.QEMU, r.board.Machine, m.MemMiB, cmd.Process.Pid)
	if r.fwdPort > 0 {
		go announcePage(ctx, r.fwdPort, r.stderr, func() bool { return console.quietFor(consoleQuiet) })
	}

	code := -1
	sc := bufio.NewScanner(console)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		fmt.Fprintln(r.stdout, line)
		if m := exitRE.FindStringSubmatch(line); m != nil {
			code, _ = strconv.Atoi(m[1])
		}
	}
	werr := cmd.Wait()
	if c, why := stopped(ctx); why != nil {
		return c, why
	}
	if code < 0 {
		if werr != nil {
			return 1, fmt.Errorf("%s: %w (no exit line from the firmware)", r.board.QEMU, werr)
		}
		return 1, errors.New("firmware stopped without a \"gowrt: exit\" line (it reset or powered off)")
	}
	return code, nil
}

// wanNet is the backend of malta's second pcnet, the router's WAN port:
// a QEMU user network of its own (10.0.2.0/24, with QEMU's DHCP server at
// 10.0.2.2), restricted so that nothing the firmware sends on WAN leaves
// QEMU. Firmware that does not use the port never touches the NIC.
const wanNet = "user,restrict=on"

// userNetForward is the -nic backend that puts malta's pcnet on QEMU's
// user-mode network, numbered like the router's LAN (the host side is
// 192.168.1.2), with 127.0.0.1:port forwarded to port 80 of the router:
// the way to reach the firmware's status page without root or TAP devices.
func userNetForward(port int) string {
	return fmt.Sprintf("user,net=192.168.1.0/24,host=192.168.1.2,dhcpstart=192.168.1.100,hostfwd=tcp:127.0.0.1:%d-192.168.1.1:80", port)
}

// portFree tells early, in words, what QEMU would report as a failed
// forwarding rule.
func portFree(port int) error {
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return fmt.Errorf("-fwd %d: cannot forward 127.0.0.1:%d, it is in use or not allowed (%v): choose another port", port, port, err)
	}
	return ln.Close()
}

// announcePage says where the status page is once it answers: QEMU
// listens on the forwarded port from its start, long before the firmware
// serves anything behind it. It comes after the firmware's start-up
// lines, which go on for a moment after its server answers: it waits (5
// seconds at most) until settled says the console is echoed and quiet.
func announcePage(ctx context.Context, port int, log io.Writer, settled func() bool) {
	url := fmt.Sprintf("http://127.0.0.1:%d/", port)
	client := &http.Client{Timeout: 2 * time.Second}
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return
		}
		resp, err := client.Do(req)
		if err != nil {
			continue
		}
		resp.Body.Close()
		for deadline := time.Now().Add(5 * time.Second); !settled() && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		fmt.Fprintf(log, "gowrt: the firmware's port 80 answers at %s (HTTP %d)\n", url, resp.StatusCode)
		return
	}
}

// consoleQuiet is how long the console must be silent, after the page
// answers, before gowrt announces it.
const consoleQuiet = 500 * time.Millisecond

// consoleReader is QEMU's console pipe as the echo loop reads it.
type consoleReader struct {
	r      io.Reader
	inRead atomic.Bool
	reads  atomic.Uint64 // Reads returned
	last   atomic.Int64  // when a Read last returned bytes (UnixNano)
}

func (c *consoleReader) Read(p []byte) (int, error) {
	c.inRead.Store(true)
	n, err := c.r.Read(p)
	c.inRead.Store(false)
	c.reads.Add(1)
	if n > 0 {
		c.last.Store(time.Now().UnixNano())
	}
	return n, err
}

// quietFor reports whether the console is caught up and has printed
// nothing for d.
func (c *consoleReader) quietFor(d time.Duration) bool {
	return time.Since(time.Unix(0, c.last.Load())) >= d && c.caughtUp()
}

// consoleSettle is how long caughtUp watches the echo loop stay put: a
// Read that took bytes from the pipe as caughtUp looked returns well
// within it.
const consoleSettle = 20 * time.Millisecond

// caughtUp reports whether the echo loop has printed every line QEMU
// wrote to the console so far: its scanner, which reads only when it
// holds no whole line, waits in Read on an empty pipe, and stays there
// for consoleSettle. (From outside, a Read that has just emptied the pipe
// looks like one waiting on it until it returns.)
func (c *consoleReader) caughtUp() bool {
	r := c.reads.Load()
	if !c.waiting() {
		return false
	}
	time.Sleep(consoleSettle)
	return c.reads.Load() == r && c.waiting()
}

// waiting reports whether the echo loop is in Read and the pipe holds
// nothing unread (FIONREAD). For a pipe it cannot ask, the pipe counts as
// empty.
func (c *consoleReader) waiting() bool {
	if !c.inRead.Load() {
		return false
	}
	sc, ok := c.r.(syscall.Conn)
	if !ok {
		return true
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return true
	}
	empty := true
	_ = raw.Control(func(fd uintptr) {
		if n, ok := pipePending(fd); ok {
			empty = n == 0
		}
	})
	return empty
}
