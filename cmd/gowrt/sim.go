package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// twinVar is the variable that makes board/sim register a router's twin.
const twinVar = "github.com/gowrt/gowrt/board/sim.twinName"

// simRun is one gowrt run on the sim board.
type simRun struct {
	pkg            string
	twin           string // a router board run as its sim twin, "" for the sim board
	args           string // the firmware's arguments, split at spaces
	timeout        time.Duration
	stdout, stderr io.Writer
}

// runSim builds r.pkg for the host and runs it as a process until it
// exits, the timeout passes or a signal stops gowrt. The firmware gets the
// signal (SIGTERM on timeout) so it can shut down its TAP devices, and
// SIGKILL if it is still there 10 s later.
func runSim(r simRun) (int, error) {
	ctx, release := runContext(r.timeout)
	defer release()
	p, err := inspect(r.pkg, nil)
	if err != nil {
		return 1, err
	}
	if err := checkSim(p, r.pkg); err != nil {
		return 1, err
	}
	dir, err := newWorkDir()
	if err != nil {
		return 1, err
	}
	defer os.RemoveAll(dir)

	bin := filepath.Join(dir, "firmware")
	what, args := "the sim board", []string{"build", "-o", bin}
	if r.twin != "" {
		what = r.twin + "'s sim twin"
		args = append(args, "-ldflags", "-X "+twinVar+"="+r.twin)
	}
	fmt.Fprintf(r.stderr, "gowrt: building %s for %s (a host program)\n", r.pkg, what)
	build := exec.CommandContext(ctx, "go", append(args, r.pkg)...)
	build.Stdout, build.Stderr = r.stderr, r.stderr
	if err := build.Run(); err != nil {
		if code, why := stopped(ctx); why != nil {
			return code, why
		}
		return 1, fmt.Errorf("building %s for sim: %w", r.pkg, err)
	}
	cmd := exec.CommandContext(ctx, bin, strings.Fields(r.args)...)
	supervise(ctx, cmd, 10*time.Second)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, r.stdout, r.stderr
	if err := cmd.Start(); err != nil {
		return 1, err
	}
	fmt.Fprintf(r.stderr, "gowrt: running %s on %s (pid %d); Ctrl-C stops it\n", r.pkg, what, cmd.Process.Pid)
	err = cmd.Wait()
	if code, why := stopped(ctx); why != nil {
		return code, why
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), nil
	}
	return 0, err
}
