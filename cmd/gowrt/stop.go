package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

// stopSignals end a run: the firmware (QEMU, or the sim process) is
// stopped and gowrt's temporary files are removed before gowrt exits.
var stopSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP}

// signalError is the cause of a run's context when a signal ended it.
type signalError struct{ sig syscall.Signal }

func (e signalError) Error() string { return fmt.Sprintf("stopped by %v", e.sig) }

// timeoutError is the cause of a run's context when -timeout ended it.
type timeoutError struct{ after time.Duration }

func (e timeoutError) Error() string { return fmt.Sprintf("timed out after %v", e.after) }

// runContext returns the context of one run: it ends on a stop signal or
// after timeout (0: never), with the reason as its cause. release ends it
// and stops listening for signals.
func runContext(timeout time.Duration) (ctx context.Context, release func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, stopSignals...)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			cancel(signalError{s.(syscall.Signal)})
		case <-done:
		}
	}()
	var stopTimer func() bool = func() bool { return false }
	if timeout > 0 {
		t := time.AfterFunc(timeout, func() { cancel(timeoutError{timeout}) })
		stopTimer = t.Stop
	}
	return ctx, func() {
		stopTimer()
		signal.Stop(sigs)
		close(done)
		cancel(nil)
	}
}

// stopped returns, for a run that a signal or its timeout ended, gowrt's
// exit status and the reason: 128+N for signal N, 124 for -timeout (as
// timeout(1) does). It returns a nil error for a run still going.
func stopped(ctx context.Context) (int, error) {
	cause := context.Cause(ctx)
	var se signalError
	var te timeoutError
	switch {
	case errors.As(cause, &se):
		return 128 + int(se.sig), se
	case errors.As(cause, &te):
		return 124, te
	}
	return 0, nil
}

// supervise makes cmd stop with the run: when ctx ends, cmd gets the
// signal that ended the run (SIGTERM after a timeout) and, if it is still
// there grace later, SIGKILL. It also dies if gowrt is killed outright
// (see dieWithParent).
func supervise(ctx context.Context, cmd *exec.Cmd, grace time.Duration) {
	cmd.Cancel = func() error {
		sig := syscall.SIGTERM
		var se signalError
		if errors.As(context.Cause(ctx), &se) {
			sig = se.sig
		}
		return cmd.Process.Signal(sig)
	}
	cmd.WaitDelay = grace
	dieWithParent(cmd)
}
