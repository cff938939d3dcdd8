//go:build !mips && !mipsle

package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"github.com/gowrt/gowrt/internal/testutil"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gowrt/gowrt/board/ar71xx/boardfile"
)

// startTFTP serves data as name on a loopback port until the test ends.
func startTFTP(t *testing.T, name string, data []byte) (port int, log *testutil.SyncBuffer) {
	t.Helper()
	conn, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	log = &testutil.SyncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	s := &tftpServer{name: name, data: data, log: log, timeout: time.Second}
	done := make(chan error, 1)
	go func() { done <- s.serve(ctx, conn) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return conn.LocalAddr().(*net.UDPAddr).Port, log
}

// curl runs curl (the real TFTP client) with args and returns its exit
// status and stderr.
func curl(t *testing.T, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command("curl", append([]string{"--silent", "--show-error", "--max-time", "60"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), stderr.String()
	}
	if err != nil {
		t.Fatalf("curl: %v", err)
	}
	return 0, stderr.String()
}

// TestTFTPCurl: curl fetches the file byte for byte with the default
// block size, with the blksize option (1468, as U-Boot asks; 8, which
// wraps the block number past 65535), and without options; another name
// gets "file not found", a write request is refused, and the server logs
// each transfer.
func TestTFTPCurl(t *testing.T) {
	data := make([]byte, 700_003) // not a multiple of any block size used
	rand.Read(data)
	port, log := startTFTP(t, "fw.bin", data)
	url := fmt.Sprintf("tftp://127.0.0.1:%d/fw.bin", port)
	dir := t.TempDir()
	for i, extra := range [][]string{nil, {"--tftp-blksize", "1468"}, {"--tftp-blksize", "8"}, {"--tftp-no-options"}} {
		out := filepath.Join(dir, fmt.Sprintf("got%d", i))
		if code, stderr := curl(t, append(extra, "-o", out, url)...); code != 0 {
			t.Fatalf("curl %q: exit %d: %s\nserver log:\n%s", extra, code, stderr, log.String())
		}
		got, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, data) {
			t.Errorf("curl %q: got %d bytes, differing from the %d served", extra, len(got), len(data))
		}
	}
	// The server logs a transfer when the last block's ACK arrives,
	// which may be after curl, holding the whole file, has exited.
	logged := func() int { return strings.Count(log.String(), "sent fw.bin to 127.0.0.1:") }
	for deadline := time.Now().Add(5 * time.Second); logged() < 4 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if n := logged(); n != 4 {
		t.Errorf("%d transfers logged, want 4:\n%s", n, log.String())
	}

	// CURLE_TFTP_NOTFOUND (68) and CURLE_TFTP_PERM (69), from the
	// server's error codes 1 and 2; curl -v shows the error's message.
	code, stderr := curl(t, "-v", "-o", filepath.Join(dir, "other"), fmt.Sprintf("tftp://127.0.0.1:%d/other.bin", port))
	if code != 68 || !strings.Contains(stderr, `TFTP error: file not found: "other.bin"`) {
		t.Errorf("another name: curl exit %d, %s", code, stderr)
	}
	src := filepath.Join(dir, "upload")
	os.WriteFile(src, []byte("evil"), 0o644)
	code, stderr = curl(t, "-v", "-T", src, fmt.Sprintf("tftp://127.0.0.1:%d/fw.bin", port))
	if code != 69 || !strings.Contains(stderr, "TFTP error: gowrt tftp serves one file read-only") {
		t.Errorf("write request: curl exit %d, want 69 (TFTP access violation): %s", code, stderr)
	}
	// The server may log a refusal after curl, holding its error, exited.
	refusalsLogged := func() bool {
		l := log.String()
		return strings.Contains(l, "write requests are refused") && strings.Contains(l, `file not found: "other.bin"`)
	}
	for deadline := time.Now().Add(5 * time.Second); !refusalsLogged() && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if !refusalsLogged() {
		t.Errorf("refusals not logged:\n%s", log.String())
	}
}

// TestTFTPEmptyAndExact: an empty file is one empty block; a file of a
// whole number of blocks ends with an empty one (RFC 1350 §6).
func TestTFTPEmptyAndExact(t *testing.T) {
	for _, n := range []int{0, 512, 1024} {
		data := bytes.Repeat([]byte{0xa5}, n)
		port, log := startTFTP(t, "f", data)
		out := filepath.Join(t.TempDir(), "got")
		if code, stderr := curl(t, "--tftp-no-options", "-o", out, fmt.Sprintf("tftp://127.0.0.1:%d/f", port)); code != 0 {
			t.Fatalf("%d bytes: curl exit %d: %s\n%s", n, code, stderr, log.String())
		}
		if got, _ := os.ReadFile(out); !bytes.Equal(got, data) {
			t.Errorf("%d bytes: got %d", n, len(got))
		}
	}
}

// TestTFTPRetransmit: a client that drops the first DATA gets it again
// after the timeout; a client that answers from another port gets an
// "unknown transfer ID" error without disturbing the transfer.
func TestTFTPRetransmit(t *testing.T) {
	data := []byte("0123456789")
	port, _ := startTFTP(t, "f", data)
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	srv := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}
	c.WriteToUDP([]byte("\x00\x01f\x00octet\x00"), srv)
	buf := make([]byte, 600)
	n, tid, err := c.ReadFromUDP(buf)
	if err != nil || !bytes.Equal(buf[:n], append([]byte{0, 3, 0, 1}, data...)) {
		t.Fatalf("first DATA: %q %v", buf[:n], err)
	}
	start := time.Now()
	n, from, err := c.ReadFromUDP(buf) // not acknowledged: sent again
	if err != nil || from.Port != tid.Port || !bytes.Equal(buf[:n], append([]byte{0, 3, 0, 1}, data...)) {
		t.Fatalf("retransmission: %q %v", buf[:n], err)
	}
	if d := time.Since(start); d < 500*time.Millisecond {
		t.Errorf("retransmitted after %v, before the 1 s timeout", d)
	}
	other, _ := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	defer other.Close()
	other.SetDeadline(time.Now().Add(5 * time.Second))
	other.WriteToUDP([]byte{0, 4, 0, 1}, tid)
	n, _, err = other.ReadFromUDP(buf)
	if err != nil || n < 4 || buf[1] != opERROR || buf[3] != errUnknownTID {
		t.Fatalf("stranger: %q %v", buf[:n], err)
	}
	c.WriteToUDP([]byte{0, 4, 0, 1}, tid) // the real ACK ends the transfer
}

// TestParseRequest: RFC 1350 and RFC 2347 requests, and malformed ones.
func TestParseRequest(t *testing.T) {
	r, err := parseRequest([]byte("\x00\x01fw.bin\x00OCTET\x00blksize\x001468\x00TSIZE\x000\x00blksize\x009\x00"))
	if err != nil || r.op != opRRQ || r.filename != "fw.bin" || r.mode != "octet" ||
		r.options["blksize"] != "1468" || r.options["tsize"] != "0" || len(r.order) != 2 {
		t.Fatalf("%+v %v", r, err)
	}
	s := &tftpServer{name: "fw.bin", data: make([]byte, 1234), timeout: time.Second}
	oack, blk, _ := s.negotiate(r)
	if blk != 1468 || string(oack) != "\x00\x06blksize\x001468\x00tsize\x001234\x00" {
		t.Errorf("OACK %q, block %d", oack, blk)
	}
	if r, _ := parseRequest([]byte("\x00\x01f\x00octet\x00blksize\x0099999\x00timeout\x00300\x00")); true {
		oack, blk, to := s.negotiate(r)
		if blk != maxBlockSize || to != time.Second || string(oack) != "\x00\x06blksize\x0065464\x00" {
			t.Errorf("capped: OACK %q, block %d, timeout %v", oack, blk, to)
		}
	}
	for _, bad := range []string{"", "\x00", "\x00\x03f\x00octet\x00", "\x00\x01f\x00octet", "\x00\x01f\x00", "\x00\x01\x00octet\x00",
		"\x00\x01f\x00octet\x00blksize\x00", "\x00\x01f\x00octet\x00\x00512\x00", "\x00\x01" + strings.Repeat("a", 600) + "\x00octet\x00"} {
		if _, err := parseRequest([]byte(bad)); !errors.Is(err, errMalformed) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// FuzzParseRequest: any packet parses or is refused with errMalformed,
// never a panic, and what parses has a filename, a mode and options
// that came from the packet.
func FuzzParseRequest(f *testing.F) {
	for _, s := range []string{"\x00\x01fw.bin\x00octet\x00", "\x00\x02x\x00netascii\x00",
		"\x00\x01fw.bin\x00octet\x00blksize\x001468\x00tsize\x000\x00timeout\x005\x00", "\x00\x01a\x00b", "\x00\x05\x00\x01err\x00"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		r, err := parseRequest(p)
		if err != nil {
			if !errors.Is(err, errMalformed) {
				t.Fatalf("error %v does not wrap errMalformed", err)
			}
			return
		}
		if r.filename == "" || r.mode == "" || len(p) > maxRequest || !bytes.Contains(p, []byte(r.filename+"\x00")) {
			t.Fatalf("accepted %q as %+v", p, r)
		}
		if len(r.order) != len(r.options) {
			t.Fatalf("options %v, order %v", r.options, r.order)
		}
		s := &tftpServer{name: "x", data: []byte("x"), timeout: time.Second}
		if _, blk, to := s.negotiate(r); blk < minBlockSize || blk > maxBlockSize || to < time.Second {
			t.Fatalf("negotiated block %d, timeout %v", blk, to)
		}
	})
}

// TestConsoleCommands: the U-Boot sequence for a TP-Link board writes
// the firmware partition from the RAM it fetched to, at the flash's kseg1
// address; RedBoot's creates the FIS image with the entry point from the
// ELF header.
func TestConsoleCommands(t *testing.T) {
	got := ubootCommands(boardfile.TLWDR4300, "fw-sysupgrade.bin", 0x3b0000, "192.168.1.2", "192.168.1.1")
	want := `  setenv ipaddr 192.168.1.1
  setenv serverip 192.168.1.2
  tftpboot 0x81000000 fw-sysupgrade.bin
  erase 0x9f020000 +0x7b0000
  cp.b 0x81000000 0x9f020000 0x3b0000
  bootm 0x9f020000
`
	if got != want {
		t.Errorf("U-Boot commands:\n%s\nwant\n%s", got, want)
	}
	hdr := make([]byte, 52)
	copy(hdr, "\x7fELF\x01\x02\x01")
	copy(hdr[24:], []byte{0x80, 0x2d, 0x03, 0xe8})
	got = consoleCommands(boardfile.RSPro, "fw-raw.bin", hdr, "10.0.0.5", routerIP("10.0.0.5"))
	for _, w := range []string{"ip_address -l 10.0.0.1/24 -h 10.0.0.5", "load -r -v -b 0x80100000 -m tftp fw-raw.bin",
		"fis create -b 0x80100000 -l 0x34 -f 0xbf040000 -e 0x802d03e8 -r 0x80100000 gowrt", "fis load gowrt", "exec"} {
		if !strings.Contains(got, w) {
			t.Errorf("RedBoot commands lack %q:\n%s", w, got)
		}
	}
	if routerIP("192.168.1.1") != "192.168.1.2" || routerIP("bogus") != defaultRouterIP {
		t.Error("routerIP")
	}
}
