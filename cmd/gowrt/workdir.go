package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// workDirPrefix starts the name of every temporary directory gowrt makes:
// gowrt-<pid>-<random>. A gowrt that exits in any way but SIGKILL removes
// its own; the next gowrt removes those whose process is gone.
const workDirPrefix = "gowrt-"

// newWorkDir removes the work directories of dead gowrt processes and
// makes one for this process.
func newWorkDir() (string, error) {
	removeStaleWorkDirs(os.TempDir())
	return os.MkdirTemp("", fmt.Sprintf("%s%d-*", workDirPrefix, os.Getpid()))
}

// removeStaleWorkDirs removes dir's gowrt-<pid>-* directories whose process
// no longer exists.
func removeStaleWorkDirs(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		pid, ok := workDirPID(e.Name())
		if !ok || !e.IsDir() || processExists(pid) {
			continue
		}
		_ = os.RemoveAll(filepath.Join(dir, e.Name()))
	}
}

// workDirPID returns the process ID in a work directory's name.
func workDirPID(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, workDirPrefix)
	if !ok {
		return 0, false
	}
	digits, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(digits)
	return pid, err == nil && pid > 0
}

// processExists reports whether pid names a live process (one that may
// belong to another user counts as live).
func processExists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
