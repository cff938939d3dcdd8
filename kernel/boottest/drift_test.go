//go:build !mips && !mipsle

package boottest

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gowrt/gowrt/kernel"
)

// Runtime drift guard: the Go runtime and std may start issuing system calls
// the kernel does not know. Run representative programs as ordinary
// linux/mips binaries under qemu-mips -strace and fail on any system call
// the kernel neither implements nor refuses on purpose (kernel.Classify, the
// table the trap handler itself uses).

var (
	straceCallRE    = regexp.MustCompile(`^\d+ ([a-z_0-9]+)\(`)
	straceUnknownRE = regexp.MustCompile(`^\d+ Unknown syscall (\d+)`)
	sysnumRE        = regexp.MustCompile(`^\s*SYS_([A-Z0-9_]+)\s*=\s*(\d+)`)
)

// sysnums maps lower-case o32 system-call names to numbers, from the Go
// distribution's own table (syscall/zsysnum_linux_mips.go).
func sysnums(t *testing.T) map[string]uint32 {
	t.Helper()
	f, err := os.Open(filepath.Join(runtime.GOROOT(), "src", "syscall", "zsysnum_linux_mips.go"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m := map[string]uint32{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if s := sysnumRE.FindStringSubmatch(sc.Text()); s != nil {
			n, _ := strconv.Atoi(s[2])
			m[strings.ToLower(s[1])] = uint32(n)
		}
	}
	if m["clock_gettime"] != 4263 || m["futex"] != 4238 {
		t.Fatalf("could not read the o32 system-call table (%d entries)", len(m))
	}
	// Calls newer than Go's frozen syscall table (Linux
	// arch/mips/kernel/syscalls/syscall_o32.tbl), and qemu's spellings.
	m["getrandom"] = 4353
	m["statx"] = 4366
	m["clock_gettime64"] = 4403
	m["clock_nanosleep_time64"] = 4407
	m["futex_time64"] = 4422
	m["epoll_pwait2"] = 4441
	m["mmap2"] = 4210
	m["_llseek"] = 4140
	m["sigreturn"] = 4119
	return m
}

func TestRuntimeDrift(t *testing.T) {
	nums := sysnums(t)
	progs := []struct {
		pkg  string
		args []string
	}{
		{"./examples/hello", nil},
		{selftest, []string{"goroutines", "mutex", "gc", "sleep", "ticker", "select", "rand", "nilderef", "preempt", "fmt", "maps", "waitgroup", "mmap", "echo"}},
		{"./kernel/boottest/progs/netssh", nil},
	}
	dir := t.TempDir()
	seen := map[uint32]int{}
	for _, p := range progs {
		bin := filepath.Join(dir, filepath.Base(p.pkg))
		build := exec.Command("go", "build", "-o", bin, p.pkg)
		build.Env = append(os.Environ(), "GOOS=linux", "GOARCH=mips", "GOMIPS=softfloat", "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", p.pkg, err, out)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := exec.CommandContext(ctx, "qemu-mips", append([]string{"-strace", bin}, p.args...)...)
		cmd.Stdin = strings.NewReader("line for echo\n")
		var out bytes.Buffer
		cmd.Stdout = &out
		cmd.Stderr = &out
		cmd.Run() // exit status is irrelevant: hello fails without the kernel
		cancel()
		n := 0
		for _, l := range strings.Split(out.String(), "\n") {
			if m := straceUnknownRE.FindStringSubmatch(l); m != nil {
				v, _ := strconv.Atoi(m[1])
				seen[uint32(v)]++
				n++
			} else if m := straceCallRE.FindStringSubmatch(l); m != nil {
				if v, ok := nums[m[1]]; ok {
					seen[v]++
					n++
				} else {
					t.Errorf("%s: strace names a system call %q missing from the o32 table", p.pkg, m[1])
				}
			}
		}
		if n < 50 {
			t.Fatalf("%s: only %d system calls traced; is qemu-mips -strace working?\n%s", p.pkg, n, out.String())
		}
	}
	var list []string
	for nr, c := range seen {
		d, errno := kernel.Classify(nr)
		switch d {
		case kernel.Unknown:
			t.Errorf("the runtime issues system call %d (%d times), which the kernel does not handle", nr, c)
		case kernel.Refused:
			list = append(list, strconv.Itoa(int(nr))+"(refused:"+strconv.Itoa(int(errno))+")")
		default:
			list = append(list, strconv.Itoa(int(nr)))
		}
	}
	sort.Strings(list)
	t.Logf("system calls issued: %s", strings.Join(list, " "))
	// The guard must be able to fail: a number nobody implements.
	if d, _ := kernel.Classify(4999); d != kernel.Unknown {
		t.Fatal("Classify accepts anything")
	}
}
