package firmware

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/gowrt/gowrt/board"
	"github.com/gowrt/gowrt/sys/supervisor"
)

const svcWatchdog = "watchdog"

// Board watchdog: armed for watchdogTimeout (as the board's hardware
// clamps it) and petted watchdogPets times per armed timeout, so a pet
// may be late by most of a timeout before the board resets: 30 s and
// every 5 s, as OpenWrt's procd does by default (timeout 30, frequency 5).
const (
	watchdogTimeout = 30 * time.Second
	watchdogPets    = 6
)

// watchdogCritical are the services whose failure is worth a reset: the
// one that applies configuration changes, the one that watches the ports
// and cron (which runs the user's jobs). A service is failing when the
// supervisor has parked it (a crash loop) or given up on it.
var watchdogCritical = []string{svcApply, svcLinkWatch, svcCron}

// statusSource is the supervisor, as the watchdog asks it.
type statusSource interface {
	Status() []supervisor.Status
}

// runWatchdog arms wd and pets it every armed/watchdogPets while every
// critical service is healthy. Each pet needs a round trip through the
// supervisor (its Status, under its lock): a wedged supervisor, like a
// parked critical service, stops the pets and the board resets when the
// armed timeout runs out. A clean stop (ctx done) disarms it.
func runWatchdog(ctx context.Context, wd board.Watchdog, sup statusSource, timeout time.Duration, critical []string, log *slog.Logger) error {
	armed, err := wd.Arm(timeout)
	if err != nil {
		return fmt.Errorf("watchdog: arm: %w", err)
	}
	if armed <= 0 {
		wd.Disarm()
		return fmt.Errorf("watchdog: the board armed a timeout of %v", armed)
	}
	log.Info("watchdog armed", "timeout", armed)
	every := max(armed/watchdogPets, time.Millisecond)
	t := time.NewTicker(every)
	defer t.Stop()
	failing := ""
	for {
		select {
		case <-ctx.Done():
			wd.Disarm()
			log.Info("watchdog disarmed")
			return nil
		case <-t.C:
		}
		why := unhealthy(sup.Status(), critical)
		if why != failing {
			if why != "" {
				log.Error("watchdog: no longer petting, the board resets within "+armed.String(), "reason", why)
			} else {
				log.Info("watchdog: petting again")
			}
			failing = why
		}
		if why == "" {
			wd.Pet()
		}
	}
}

// unhealthy says which critical services are failing ("" if none).
func unhealthy(st []supervisor.Status, critical []string) string {
	var bad []string
	for _, name := range critical {
		found := false
		for _, s := range st {
			if s.Name != name {
				continue
			}
			found = true
			if s.State == supervisor.StateParked || s.State == supervisor.StateFailed {
				bad = append(bad, name+" "+s.State)
			}
		}
		if !found {
			bad = append(bad, name+" missing")
		}
	}
	return strings.Join(bad, ", ")
}

// watchdogService is the supervised "watchdog" service if the board has a
// watchdog.
func (f *Firmware) watchdogService() (supervisor.Service, bool) {
	wd, ok := f.opts.Board.(board.Watchdog)
	if !ok {
		return supervisor.Service{}, false
	}
	timeout := f.opts.WatchdogTimeout
	if timeout <= 0 {
		timeout = watchdogTimeout
	}
	log := f.Logger(svcWatchdog)
	return supervisor.Service{Name: svcWatchdog, Restart: supervisor.Always,
		Run: func(ctx context.Context) error {
			return runWatchdog(ctx, wd, f.Sup, timeout, watchdogCritical, log)
		}}, true
}
