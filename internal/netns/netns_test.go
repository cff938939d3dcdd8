//go:build linux

package netns

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func nsExists(t *testing.T, name string) bool {
	t.Helper()
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == name {
			return true
		}
	}
	return false
}

// TestRemoveOrphans: a namespace left by a test process that died (here: a
// process that has exited, with a sleeper still inside the namespace) is
// removed, its process killed; a live process's namespace and foreign
// namespaces stay.
func TestRemoveOrphans(t *testing.T) {
	RequireRoot(t)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	orphan := fmt.Sprintf("%s%d-1", namePrefix, dead.Process.Pid)
	live := New(t).Name
	foreign := fmt.Sprintf("gowrtx-%d-1", dead.Process.Pid)
	for _, n := range []string{orphan, foreign} {
		if out, err := exec.Command("ip", "netns", "add", n).CombinedOutput(); err != nil {
			t.Fatalf("ip netns add %s: %v %s", n, err, out)
		}
		t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", n).Run() })
	}
	sleeper := exec.Command("ip", "netns", "exec", orphan, "sleep", "600")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- sleeper.Wait() }()

	if err := RemoveOrphans(); err != nil {
		t.Fatal(err)
	}
	if nsExists(t, orphan) {
		t.Errorf("orphaned namespace %s survived", orphan)
	}
	select {
	case err := <-waited:
		if err == nil {
			t.Error("the process inside the orphaned namespace exited by itself?")
		}
	case <-time.After(10 * time.Second):
		_ = sleeper.Process.Kill()
		t.Error("the process inside the orphaned namespace was not killed")
	}
	if !nsExists(t, live) || !nsExists(t, foreign) {
		t.Errorf("removed too much: live %s present %v, foreign %s present %v",
			live, nsExists(t, live), foreign, nsExists(t, foreign))
	}
	if pid, ok := ownerPID(live); !ok || pid != os.Getpid() {
		t.Errorf("ownerPID(%q) = %d, %v", live, pid, ok)
	}
}
