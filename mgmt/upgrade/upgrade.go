// Package upgrade serves sysupgrade to the router's administrators: the
// `sysupgrade` shell command (on the serial console and over SSH, the
// image on standard input) and the web UI's upload, both through one
// Upgrader that reads the image, verifies it with package sysupgrade
// against the key built into the firmware and this board's name, writes
// it to the board's flash and reboots.
//
// Everything that can be refused is refused before the first erase: an
// image that is truncated, too big for the firmware partition, for
// another board, not signed by the firmware's key, or whose hash does not
// match; a firmware built without a key, on a board without a flash
// layout. One upgrade runs at a time; a second is refused at once, not
// queued.
package upgrade

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"

	"github.com/gowrt/gowrt/sysupgrade"
)

// Errors the Upgrader returns besides sysupgrade's.
var (
	ErrNoKey   = errors.New("upgrade: this firmware was built without an upgrade key (gowrt build -sign KEY), so it accepts no upgrade")
	ErrNoFlash = errors.New("upgrade: this board has no firmware flash to upgrade")
	ErrBusy    = errors.New("upgrade: an upgrade is already running")
	ErrTooBig  = errors.New("upgrade: image larger than the firmware partition")
)

// Config is what an Upgrader needs.
type Config struct {
	Board string            // this board's name, which images must carry
	Key   ed25519.PublicKey // nil: no upgrades (ErrNoKey)
	// Target returns the flash layout; nil or an error: ErrNoFlash.
	Target func() (sysupgrade.Target, error)
	// Reboot restarts the device after a written upgrade.
	Reboot func() error
	Log    *slog.Logger
}

// Upgrader verifies and writes upgrade images.
type Upgrader struct {
	c    Config
	busy sync.Mutex
}

// New returns an Upgrader.
func New(c Config) *Upgrader {
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	return &Upgrader{c: c}
}

// Request is one upgrade.
type Request struct {
	// KeepConfig keeps the configuration (sysupgrade's default); false is
	// OpenWrt's `sysupgrade -n`.
	KeepConfig bool
	// Test verifies the image and the layout and writes nothing
	// (`sysupgrade -T`).
	Test bool
	// Progress, if not nil, receives one line per tenth written.
	Progress io.Writer
}

// Result says what was done.
type Result struct {
	Metadata sysupgrade.Metadata
	Written  bool // false for a Test request
}

// Upgrade reads the image from r (at most the firmware partition plus the
// image's header), verifies it, and unless req.Test writes it. It does not
// reboot: the caller reports the result first, then calls Reboot.
func (u *Upgrader) Upgrade(ctx context.Context, r io.Reader, req Request) (Result, error) {
	if len(u.c.Key) == 0 {
		return Result{}, ErrNoKey
	}
	if u.c.Target == nil {
		return Result{}, ErrNoFlash
	}
	t, err := u.c.Target()
	if err != nil {
		return Result{}, fmt.Errorf("%w: %v", ErrNoFlash, err)
	}
	if !u.busy.TryLock() {
		return Result{}, ErrBusy
	}
	defer u.busy.Unlock()
	limit := t.FirmwareLen + sysupgrade.HeaderSize + sysupgrade.MaxMetadata + sysupgrade.SignatureSize
	img, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return Result{}, fmt.Errorf("upgrade: reading the image: %w", err)
	}
	if int64(len(img)) > limit {
		return Result{}, fmt.Errorf("%w (%d bytes)", ErrTooBig, t.FirmwareLen)
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	md, _, err := sysupgrade.Verify(img, u.c.Board, u.c.Key)
	if err != nil {
		u.c.Log.Warn("upgrade image refused", "err", err, "bytes", len(img))
		return Result{}, err
	}
	res := Result{Metadata: md}
	if md.Size > t.FirmwareLen {
		return res, fmt.Errorf("%w: firmware %s is %d bytes, the partition holds %d", ErrTooBig, md.Version, md.Size, t.FirmwareLen)
	}
	if req.Test {
		u.c.Log.Info("upgrade image verified (test only)", "version", md.Version, "bytes", md.Size)
		return res, nil
	}
	u.c.Log.Warn("writing upgrade", "version", md.Version, "bytes", md.Size, "keep_config", req.KeepConfig)
	next := int64(1)
	err = sysupgrade.Apply(img, u.c.Board, u.c.Key, t, sysupgrade.Options{KeepConfig: req.KeepConfig},
		func(done, total int64) {
			if req.Progress != nil && done*10 >= next*total {
				fmt.Fprintf(req.Progress, "written %d of %d bytes\n", done, total)
				next = done*10/total + 1
			}
		})
	if err != nil {
		u.c.Log.Error("upgrade failed", "err", err)
		return res, err
	}
	res.Written = true
	u.c.Log.Warn("upgrade written", "version", md.Version)
	return res, nil
}

// Reboot restarts the device.
func (u *Upgrader) Reboot() error {
	if u.c.Reboot == nil {
		return errors.New("upgrade: no reboot on this board")
	}
	return u.c.Reboot()
}

// Usage is the shell command's usage line.
const Usage = "sysupgrade [-n] [-T] [-]"

// Help is the shell command's help.
const Help = `Upgrade the firmware from a signed image read on standard input, e.g.
  ssh root@192.168.1.1 sysupgrade - < gowrt.gowrtupg
then reboot into it. The image must be for this board and signed with the key
this firmware was built with (gowrt build -sign KEY).
  -n  discard the configuration (start the new firmware from its defaults)
  -T  verify the image only; write nothing`

// ParseArgs parses the shell command's arguments.
func ParseArgs(args []string) (Request, error) {
	req := Request{KeepConfig: true}
	for _, a := range args {
		switch a {
		case "-n":
			req.KeepConfig = false
		case "-T":
			req.Test = true
		case "-":
		default:
			if strings.HasPrefix(a, "-") {
				return req, fmt.Errorf("unknown option %s", a)
			}
			return req, fmt.Errorf("%s: files are not supported; pipe the image to standard input (-)", a)
		}
	}
	return req, nil
}
