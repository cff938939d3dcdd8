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
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
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

// namePrefix starts every namespace's name: gowrt-<pid>-<n>, pid being the
// test process that made it.
const namePrefix = "gowrt-"

var reapOnce sync.Once

// New creates a namespace with its loopback up, deleted at test cleanup.
// The first call in a process first removes the namespaces that test
// processes which are gone (killed before their cleanup ran) left behind.
func New(t testing.TB) *NS {
	t.Helper()
	RequireRoot(t)
	reapOnce.Do(func() {
		if err := RemoveOrphans(); err != nil {
			t.Logf("netns: removing orphaned namespaces: %v", err)
		}
	})
	n := &NS{Name: fmt.Sprintf("%s%d-%d", namePrefix, os.Getpid(), seq.Add(1))}
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

// RemoveOrphans deletes every gowrt-<pid>-<n> namespace whose pid is no
// live process, first killing what still runs inside it (a QEMU or a
// helper that outlived its test), and returns the first error.
func RemoveOrphans() error {
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		return fmt.Errorf("ip netns list: %v", err)
	}
	var first error
	for _, line := range strings.Split(string(out), "\n") {
		name, _, _ := strings.Cut(strings.TrimSpace(line), " ")
		pid, ok := ownerPID(name)
		if !ok || alive(pid) {
			continue
		}
		if pids, err := exec.Command("ip", "netns", "pids", name).Output(); err == nil {
			for _, f := range strings.Fields(string(pids)) {
				if p, err := strconv.Atoi(f); err == nil {
					_ = syscall.Kill(p, syscall.SIGKILL)
				}
			}
		}
		if out, err := exec.Command("ip", "netns", "del", name).CombinedOutput(); err != nil && first == nil {
			first = fmt.Errorf("ip netns del %s: %v: %s", name, err, out)
		}
	}
	return first
}

// ownerPID returns the test process ID in a namespace name made by New.
func ownerPID(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, namePrefix)
	if !ok {
		return 0, false
	}
	digits, n, ok := strings.Cut(rest, "-")
	if _, err := strconv.Atoi(n); !ok || err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(digits)
	return pid, err == nil && pid > 0
}

// alive reports whether pid is a process (a zombie counts as gone).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
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

// Start runs a command inside the namespace in the background, its output
// going to log (nil: discarded), and kills it when the test ends.
func (n *NS) Start(t testing.TB, log io.Writer, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("ip", append([]string{"netns", "exec", n.Name}, args...)...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		t.Fatalf("in %s: %s: %v", n.Name, strings.Join(args, " "), err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd
}

// WaitListening waits until a socket in n listens on port (proto "tcp" or
// "udp"): a server started with Start is ready only once it has bound,
// and a test that talks to it sooner races it.
func (n *NS) WaitListening(t testing.TB, proto string, port int) {
	t.Helper()
	flag := map[string]string{"tcp": "-t", "udp": "-u"}[proto]
	if flag == "" {
		t.Fatalf("WaitListening: protocol %q", proto)
	}
	const timeout = 15 * time.Second
	deadline := time.Now().Add(timeout)
	for {
		out, err := n.Exec(5*time.Second, "ss", "-H", "-ln", flag, fmt.Sprintf("sport = :%d", port))
		if err == nil && strings.TrimSpace(out) != "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("in %s: nothing listens on %s port %d after %v (ss: %v %s)", n.Name, proto, port, timeout, err, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
