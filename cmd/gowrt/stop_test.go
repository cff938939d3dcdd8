//go:build !mips && !mipsle

package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// buildTool builds gowrt once per test binary.
var buildTool = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "gowrt-tool-test")
	if err != nil {
		return "", err
	}
	tool := filepath.Join(dir, "gowrt")
	if out, err := exec.Command("go", "build", "-o", tool, ".").CombinedOutput(); err != nil {
		return "", fmt.Errorf("build gowrt: %v\n%s", err, out)
	}
	return tool, nil
})

func tool(t *testing.T) string {
	t.Helper()
	p, err := buildTool()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// running is a gowrt run started by a test, its output read line by line.
type running struct {
	cmd   *exec.Cmd
	lines chan string
	mu    sync.Mutex
	out   strings.Builder
	done  chan error
}

// start runs gowrt with args in the module root, TMPDIR set to tmp.
func start(t *testing.T, tmp string, args ...string) *running {
	t.Helper()
	cmd := exec.Command(tool(t), args...)
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	// A QEMU that outlives gowrt holds the output pipe open: Wait must
	// still return, so that the test reports the survivor.
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &running{cmd: cmd, lines: make(chan string, 1000), done: make(chan error, 1)}
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			r.mu.Lock()
			r.out.WriteString(sc.Text() + "\n")
			r.mu.Unlock()
			select {
			case r.lines <- sc.Text():
			default:
			}
		}
		close(r.lines)
	}()
	go func() { err := cmd.Wait(); pw.Close(); r.done <- err }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return r
}

func (r *running) output() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.out.String()
}

// waitFor returns the submatches of the first line matching re.
func (r *running) waitFor(t *testing.T, re *regexp.Regexp, within time.Duration) []string {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case l, ok := <-r.lines:
			if !ok {
				t.Fatalf("gowrt ended before printing a line like %q:\n%s", re, r.output())
			}
			if m := re.FindStringSubmatch(l); m != nil {
				return m
			}
		case <-deadline:
			t.Fatalf("no line like %q within %v:\n%s", re, within, r.output())
		}
	}
}

// exitCode waits for gowrt to end and returns its exit status.
func (r *running) exitCode(t *testing.T, within time.Duration) int {
	t.Helper()
	select {
	case err := <-r.done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil && !errors.Is(err, exec.ErrWaitDelay) {
			t.Fatal(err)
		}
		return 0
	case <-time.After(within):
		t.Fatalf("gowrt did not end within %v:\n%s", within, r.output())
	}
	return -1
}

// gone reports whether pid is no process (or a zombie nobody reaped).
func gone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// "pid (comm) S ...": the state follows the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}

func waitGone(t *testing.T, pid int, what string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !gone(pid); {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("%s (pid %d) still runs", what, pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// workDirs lists the gowrt work directories in tmp.
func workDirs(t *testing.T, tmp string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(tmp, workDirPrefix+"*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var (
	qemuPIDRE = regexp.MustCompile(`^gowrt: booting on qemu-system-mips\S* .*\(pid (\d+)\)`)
	simPIDRE  = regexp.MustCompile(`^gowrt: running .* on the sim board \(pid (\d+)\)`)
	// The router runs until it is stopped.
	routerUpRE = regexp.MustCompile(`^router: board malta, LAN up`)
)

// TestStopSignalsStopQEMU sends each stop signal to a gowrt running
// firmware that never exits on malta: QEMU must end with gowrt, gowrt must
// exit 128+N and leave no work directory (its image) behind.
func TestStopSignalsStopQEMU(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			tmp := t.TempDir()
			r := start(t, tmp, "run", "-board", "malta-le", "-m", "32", "./examples/router")
			qemuPID, _ := strconv.Atoi(r.waitFor(t, qemuPIDRE, 3*time.Minute)[1])
			r.waitFor(t, routerUpRE, time.Minute)
			if len(workDirs(t, tmp)) != 1 {
				t.Fatalf("while running: work directories %q, want one", workDirs(t, tmp))
			}
			if err := r.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if code := r.exitCode(t, 15*time.Second); code != 128+int(sig) {
				t.Errorf("exit status %d, want %d:\n%s", code, 128+int(sig), r.output())
			}
			waitGone(t, qemuPID, "QEMU")
			if d := workDirs(t, tmp); len(d) != 0 {
				t.Errorf("left behind: %q", d)
			}
		})
	}
}

// TestKilledGowrtTakesQEMU kills gowrt outright: QEMU must die with it, and
// the next gowrt removes the dead run's work directory.
func TestKilledGowrtTakesQEMU(t *testing.T) {
	tmp := t.TempDir()
	r := start(t, tmp, "run", "-board", "malta-be", "-m", "32", "./examples/router")
	qemuPID, _ := strconv.Atoi(r.waitFor(t, qemuPIDRE, 3*time.Minute)[1])
	r.waitFor(t, routerUpRE, time.Minute)
	if err := r.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	r.exitCode(t, 15*time.Second)
	waitGone(t, qemuPID, "QEMU after gowrt's SIGKILL")
	if len(workDirs(t, tmp)) != 1 {
		t.Fatalf("after SIGKILL: work directories %q, want the dead run's one", workDirs(t, tmp))
	}
	next := start(t, tmp, "run", "-board", "malta-be", "-m", "32", "-timeout", "2m", "./examples/hello")
	if code := next.exitCode(t, 3*time.Minute); code != 0 {
		t.Fatalf("second run: exit %d:\n%s", code, next.output())
	}
	if d := workDirs(t, tmp); len(d) != 0 {
		t.Errorf("the dead run's work directory survived the next run: %q", d)
	}
}

// TestStopSignalsReachSimFirmware: on the sim board the firmware gets the
// signal (to shut its TAP devices down) and the work directory goes.
func TestStopSignalsReachSimFirmware(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			tmp := t.TempDir()
			r := start(t, tmp, "run", "./cmd/gowrt/testdata/simfw")
			pid, _ := strconv.Atoi(r.waitFor(t, simPIDRE, 3*time.Minute)[1])
			r.waitFor(t, regexp.MustCompile(`^simfw: ready`), time.Minute)
			if err := r.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			r.waitFor(t, regexp.MustCompile(`^simfw: stopped by `+regexp.QuoteMeta(sig.String())), 10*time.Second)
			if code := r.exitCode(t, 15*time.Second); code != 128+int(sig) {
				t.Errorf("exit status %d, want %d:\n%s", code, 128+int(sig), r.output())
			}
			waitGone(t, pid, "sim firmware")
			if d := workDirs(t, tmp); len(d) != 0 {
				t.Errorf("left behind: %q", d)
			}
		})
	}
}

// TestTimeoutStopsQEMU: -timeout ends a firmware that never exits with
// status 124.
func TestTimeoutStopsQEMU(t *testing.T) {
	tmp := t.TempDir()
	r := start(t, tmp, "run", "-board", "malta-le", "-m", "32", "-timeout", "20s", "./examples/router")
	qemuPID, _ := strconv.Atoi(r.waitFor(t, qemuPIDRE, 3*time.Minute)[1])
	if code := r.exitCode(t, 40*time.Second); code != 124 {
		t.Errorf("exit status %d, want 124:\n%s", code, r.output())
	}
	waitGone(t, qemuPID, "QEMU")
	if !strings.Contains(r.output(), "timed out after 20s") {
		t.Errorf("no timeout message:\n%s", r.output())
	}
}

func TestRemoveStaleWorkDirs(t *testing.T) {
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, n := range []string{
		fmt.Sprintf("%s%d-1", workDirPrefix, dead.Process.Pid), // dead run: goes
		fmt.Sprintf("%s%d-2", workDirPrefix, os.Getpid()),      // live run: stays
		"gowrt-boottest123", "gowrt-x-1", "other-" + "12345-1", // not ours: stay
	} {
		if err := os.Mkdir(filepath.Join(dir, n), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	removeStaleWorkDirs(dir)
	ents, _ := os.ReadDir(dir)
	var left []string
	for _, e := range ents {
		left = append(left, e.Name())
	}
	want := []string{fmt.Sprintf("%s%d-2", workDirPrefix, os.Getpid()), "gowrt-boottest123", "gowrt-x-1", "other-12345-1"}
	if strings.Join(left, " ") != strings.Join(want, " ") {
		t.Errorf("left %q, want %q", left, want)
	}
}
