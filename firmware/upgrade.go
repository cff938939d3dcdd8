package firmware

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/gowrt/gowrt/board"
	"github.com/gowrt/gowrt/mgmt/shell"
	"github.com/gowrt/gowrt/mgmt/upgrade"
	"github.com/gowrt/gowrt/sysupgrade"
)

// upgradeTarget is the board's flash layout, for the Upgrader.
func (f *Firmware) upgradeTarget() (sysupgrade.Target, error) {
	u, ok := f.opts.Board.(board.Upgradable)
	if !ok {
		return sysupgrade.Target{}, fmt.Errorf("board %s keeps its firmware where the firmware cannot write it", f.opts.Board.Name())
	}
	ff, err := u.FirmwareFlash()
	if err != nil {
		return sysupgrade.Target{}, err
	}
	return sysupgrade.Target{Flash: ff.Flash, FirmwareOff: ff.FirmwareOff, FirmwareLen: ff.FirmwareLen,
		ConfigOff: ff.ConfigOff, ConfigLen: ff.ConfigLen}, nil
}

// upgradeCommand is the shell's sysupgrade: the image on standard input
// (over SSH: ssh root@router sysupgrade - < image).
func upgradeCommand(u *upgrade.Upgrader) shell.Command {
	return shell.Command{Name: "sysupgrade", Usage: upgrade.Usage, Help: upgrade.Help,
		Run: func(ctx context.Context, s *shell.Session, args []string) error {
			req, err := upgrade.ParseArgs(args[1:])
			if err != nil {
				return err
			}
			if s.Console {
				return errors.New("the console cannot carry an image: use ssh root@ROUTER sysupgrade - < IMAGE, or the web UI")
			}
			req.Progress = s.Out
			res, err := u.Upgrade(ctx, s.In, req)
			if err != nil {
				return err
			}
			if !res.Written {
				fmt.Fprintf(s.Out, "image verified: firmware %s for %s, %d bytes; nothing written\n",
					res.Metadata.Version, res.Metadata.Board, res.Metadata.Size)
				return nil
			}
			fmt.Fprintf(s.Out, "firmware %s written; rebooting\n", res.Metadata.Version)
			return u.Reboot()
		}}
}

// webUpgrader adapts the Upgrader to the web UI's interface.
type webUpgrader struct{ u *upgrade.Upgrader }

func (w webUpgrader) Upgrade(ctx context.Context, r io.Reader, keep, test bool) (string, bool, error) {
	res, err := w.u.Upgrade(ctx, r, upgrade.Request{KeepConfig: keep, Test: test})
	return res.Metadata.Version, res.Written, err
}

func (w webUpgrader) Reboot() error { return w.u.Reboot() }
