// Package headless runs Debian's chromium package headless through
// chromedp for the web UI tests, and collects what the pages log to the
// console (errors, warnings, uncaught exceptions: a CSP violation or a
// failing script shows there). Tests only: shipped code must not link it.
package headless

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"time"

	"github.com/chromedp/chromedp"
)

// Browser is a headless Chromium and its console.
type Browser struct {
	// Ctx is the chromedp context actions run in; it ends at the
	// timeout given to Start or at Close.
	Ctx    context.Context
	cancel []context.CancelFunc

	mu      sync.Mutex
	console []string
	done    chan struct{}
}

// Start launches Chromium with its profile in profileDir (which must be
// empty and unique to this browser), its own output copied to output (nil:
// discarded), and every action bounded by timeout.
func Start(profileDir string, timeout time.Duration, output io.Writer) (*Browser, error) {
	exe, err := exec.LookPath("chromium")
	if err != nil {
		return nil, fmt.Errorf("headless Chromium is needed: install the Debian package \"chromium\" (apt-get install chromium): %v", err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.WindowSize(1280, 1000), chromedp.UserDataDir(profileDir),
		// Chromium's own scratch files (org.chromium.Chromium.*) go with
		// the profile, which the caller removes, instead of piling up in
		// /tmp, one per run.
		chromedp.Env("TMPDIR="+profileDir))
	if output != nil {
		opts = append(opts, chromedp.CombinedOutput(output))
	}
	b := &Browser{done: make(chan struct{})}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	b.Ctx, b.cancel = ctx, []context.CancelFunc{cancel, cancelCtx, cancelAlloc}
	// Console starts the browser: it must be called before any action,
	// not concurrently with one (two callers would each start a browser
	// on the same profile, and chromedp then panics).
	messages := chromedp.Console(ctx)
	go func() {
		defer close(b.done)
		for m, err := range messages {
			if err != nil {
				return
			}
			switch m.Type {
			case chromedp.ConsoleError, chromedp.ConsoleWarning, chromedp.ConsoleException:
				b.mu.Lock()
				b.console = append(b.console, m.String())
				b.mu.Unlock()
			}
		}
	}()
	return b, nil
}

// Console returns the console errors, warnings and exceptions logged so
// far, from the n-th on.
func (b *Browser) Console(n int) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n > len(b.console) {
		return nil
	}
	return append([]string(nil), b.console[n:]...)
}

// Step wraps an action's error with its name and the console so far.
func (b *Browser) Step(name string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w (console: %q)", name, err, b.Console(0))
}

// Close stops the browser and waits for the console reader.
func (b *Browser) Close() {
	for _, c := range b.cancel {
		c()
	}
	select {
	case <-b.done:
	case <-time.After(10 * time.Second):
	}
}

// ErrConsole reports console errors a page logged.
var ErrConsole = errors.New("the page logged console errors")
