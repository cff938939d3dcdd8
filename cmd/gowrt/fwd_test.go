//go:build !mips && !mipsle

package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestUserNetForward boots the router on malta with QEMU user networking
// and fetches its status page through the host port forward: the path a
// newcomer without root uses. No TAP device, no root.
func TestUserNetForward(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()

	tool := filepath.Join(t.TempDir(), "gowrt")
	if out, err := exec.Command("go", "build", "-o", tool, ".").CombinedOutput(); err != nil {
		t.Fatalf("build gowrt: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	// The firmware stops by itself (-run-for), so QEMU ends with it.
	cmd := exec.CommandContext(ctx, tool, "run", "-board", "malta-be", "-m", "32",
		"-fwd", fmt.Sprint(port), "-append", "-run-for 25s", "../../examples/router")
	var console strings.Builder
	cmd.Stdout, cmd.Stderr = &console, &console
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	url := fmt.Sprintf("http://127.0.0.1:%d/", port)
	client := &http.Client{Timeout: 3 * time.Second}
	var page string
	for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline) && page == ""; {
		select {
		case err := <-done:
			t.Fatalf("firmware ended before the status page answered: %v", err)
		case <-time.After(500 * time.Millisecond):
		}
		resp, err := client.Get(url)
		if err != nil {
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			page = string(b)
		}
	}
	if !strings.Contains(page, "<th>Board</th><td>malta</td>") {
		t.Fatalf("no status page at %s: %q", url, page)
	}
	if err := <-done; err != nil {
		t.Fatalf("gowrt run: %v", err)
	}
	// gowrt says where the page is once it answers: after QEMU started.
	// (It also waits for the console to settle, so it normally follows
	// the firmware's start-up lines; a loaded host may stall the firmware
	// between its server's start and its LAN-up line, so that order is
	// logged, not asserted.)
	out := console.String()
	announce := strings.Index(out, fmt.Sprintf("gowrt: the firmware's port 80 answers at %s", url))
	booting := strings.Index(out, "gowrt: booting on ")
	up := strings.Index(out, "router: board malta, LAN up")
	if announce < 0 || booting < 0 || announce < booting || up < 0 {
		t.Errorf("the page's address is not announced after QEMU started (announce at %d, booting at %d, LAN up at %d):\n%s", announce, booting, up, out)
	}
	t.Logf("announcement at byte %d of the console, LAN up at %d", announce, up)
	// The second pcnet, on its own restricted user network, is the
	// router's WAN port.
	if !regexp.MustCompile(`(?m)^router: port wan +wan 52:54:00:12:34:57`).MatchString(out) {
		t.Errorf("no WAN port on malta:\n%s", out)
	}
}
