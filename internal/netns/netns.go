//go:build linux

// Package netns makes Linux network namespaces for end-to-end tests: the
// test hosts that real Linux tools (ping, curl, iperf3, dhclient) run in,
// wired to gowrt through TAP or veth devices. Every namespace is deleted
// when the test ends, whether it passed or failed.
//
// The tests need root (CAP_SYS_ADMIN, CAP_NET_ADMIN) and iproute2. CI runs
// as root with iproute2 installed; RequireRoot fails the test there rather
// than skipping it, and skips only on a developer's unprivileged machine.
package netns

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

var seq atomic.Uint32

// RequireRoot stops a test that cannot run without root: skipped on a
// developer's machine, failed in CI (CI=true), where it must run.
func RequireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatal("this end-to-end test needs root; CI must run it as root")
	}
	t.Skip("needs root for network namespaces and TAP devices (CI runs it)")
}

// NS is a network namespace.
type NS struct {
	Name string
}

// New creates a namespace with its loopback up, deleted at test cleanup.
func New(t testing.TB) *NS {
	t.Helper()
	RequireRoot(t)
	n := &NS{Name: fmt.Sprintf("gowrt-%d-%d", os.Getpid(), seq.Add(1))}
	if out, err := exec.Command("ip", "netns", "add", n.Name).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add %s: %v: %s", n.Name, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("ip", "netns", "del", n.Name).CombinedOutput(); err != nil {
			t.Errorf("ip netns del %s: %v: %s", n.Name, err, out)
		}
	})
	n.Must(t, "ip", "link", "set", "lo", "up")
	return n
}

// Exec runs a command inside the namespace with a time limit and returns
// its combined output.
func (n *NS) Exec(timeout time.Duration, args ...string) (string, error) {
	cmd := exec.Command("ip", append([]string{"netns", "exec", n.Name}, args...)...)
	cmd.WaitDelay = time.Second
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(timeout):
		if cmd.Process != nil {
			_ = cmd.Process.Kill()
		}
		<-done
		return string(out), fmt.Errorf("%s: timed out after %v", strings.Join(args, " "), timeout)
	}
	return string(out), err
}

// Must runs a command in the namespace and fails the test if it fails.
func (n *NS) Must(t testing.TB, args ...string) string {
	t.Helper()
	out, err := n.Exec(30*time.Second, args...)
	if err != nil {
		t.Fatalf("in %s: %s: %v\n%s", n.Name, strings.Join(args, " "), err, out)
	}
	return out
}

// Adopt moves the network interface link (from the test's own namespace)
// into n and configures it with addr (CIDR, may be empty) and up.
func (n *NS) Adopt(t testing.TB, link, addr string) {
	t.Helper()
	if out, err := exec.Command("ip", "link", "set", link, "netns", n.Name).CombinedOutput(); err != nil {
		t.Fatalf("ip link set %s netns %s: %v: %s", link, n.Name, err, out)
	}
	if addr != "" {
		n.Must(t, "ip", "addr", "add", addr, "dev", link)
	}
	n.Must(t, "ip", "link", "set", link, "up")
}
