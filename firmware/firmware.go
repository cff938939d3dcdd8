// Package firmware assembles gowrt's router firmware from its parts and
// runs them: the typed configuration (config/cfg) in the board's storage,
// the router built from it (net/router), the log ring (sys/syslog), the
// supervisor that runs every service and restarts what fails
// (sys/supervisor), cron (sys/cron), the shell on the serial console and
// over SSH (mgmt/shell, mgmt/sshd), and the web UI (mgmt/web), all tied by
// one event bus (sys/event).
//
// A configuration commit is applied without a reboot where the part it
// changes can take it live (the LAN address, DHCP, firewall, remote
// syslog, cron jobs, SSH keys and password); what cannot (the WAN
// settings, the host name, the SSH port, the NTP servers) is logged as
// applying at the next boot.
//
// It knows no board: the caller hands it one (board.Current()), as
// examples/router does.
package firmware

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/gowrt/gowrt/board"
	"github.com/gowrt/gowrt/config/cfg"
	"github.com/gowrt/gowrt/kernel"
	"github.com/gowrt/gowrt/mgmt/auth"
	"github.com/gowrt/gowrt/mgmt/shell"
	"github.com/gowrt/gowrt/mgmt/sshd"
	"github.com/gowrt/gowrt/mgmt/upgrade"
	"github.com/gowrt/gowrt/mgmt/web"
	"github.com/gowrt/gowrt/net/router"
	"github.com/gowrt/gowrt/sys/clock"
	"github.com/gowrt/gowrt/sys/cron"
	"github.com/gowrt/gowrt/sys/event"
	"github.com/gowrt/gowrt/sys/supervisor"
	"github.com/gowrt/gowrt/sys/syslog"
)

// Options configure the firmware.
type Options struct {
	Board   board.Board
	Version string // shown by the shell and the web UI
	// Console is the serial console (default os.Stdout); ConsoleIn, if
	// set, is its input, where the shell runs for whoever is at the
	// console (physical access: no login).
	Console   io.Writer
	ConsoleIn io.Reader
	// Services are started with the firmware's own, under the same
	// supervisor (library users add theirs here).
	Services []supervisor.Service
	// Reboot restarts the device (default: the kernel's reboot on bare
	// metal; elsewhere an error).
	Reboot func() error
	// UpgradeKey verifies sysupgrade images (gowrt build -sign puts the
	// signing key's public half into the firmware). Without it, or on a
	// board that is not board.Upgradable, upgrades are refused.
	UpgradeKey ed25519.PublicKey
	// WatchdogTimeout is the board watchdog's timeout (default 30 s), on
	// boards that implement board.Watchdog: the "watchdog" service pets
	// it six times per timeout while the supervisor and the critical
	// services are healthy.
	WatchdogTimeout time.Duration
}

// Storage item names, beside the router's own (router.StoreLeases,
// router.StoreTime).
const (
	StoreConfig  = "config"
	StoreHostKey = "ssh.hostkey"
)

// Login failures: after maxLoginFailures from one address within
// loginWindow, it is refused for loginLockout (SSH and web alike).
const (
	maxLoginFailures = 5
	loginWindow      = time.Minute
	loginLockout     = 5 * time.Minute
)

// Firmware is the running firmware. Its fields are its parts, for library
// users and tests; they are set by Start and not changed after.
type Firmware struct {
	opts Options

	Ring    *syslog.Ring
	Bus     *event.Bus
	Config  *cfg.Config
	Clock   *clock.System
	Auth    *auth.Auth
	Limiter *auth.Limiter
	Sup     *supervisor.Supervisor
	Router  *router.Router
	Shell   *shell.Shell
	SSH     *sshd.Server
	Web     *web.UI
	Cron    *cron.Cron
	// Upgrader serves sysupgrade (shell command and web UI).
	Upgrader *upgrade.Upgrader

	log     *slog.Logger
	started time.Time
	storage board.Storage // nil: RAM only
	ports   []board.Port

	mu      sync.Mutex
	applied *cfg.Snapshot // the configuration the running parts use
	cronSet []string      // names of the configured cron jobs
	cancel  context.CancelFunc

	lastUptime, lastIdle uint64 // kernel counters at the last busy sample
	lastBusy             float64

	// wifi are the access points on the board's radios (wifi.go), fixed
	// after Start; wifiMu serialises starting and reconfiguring them.
	wifi      []*wifiAP
	wifiPorts []router.Port
	wifiMu    sync.Mutex
}

// Start builds the firmware from the board and its stored configuration
// and starts every service. A stored configuration the router refuses is
// reported and replaced, for this boot, by the defaults: a typo must not
// make the router unreachable.
func Start(ctx context.Context, o Options) (*Firmware, error) {
	if o.Board == nil {
		return nil, errors.New("firmware: no board")
	}
	if o.Console == nil {
		o.Console = os.Stdout
	}
	f := &Firmware{opts: o, started: time.Now()}
	f.Ring = syslog.NewRing(syslog.DefaultSize)
	f.log = f.Logger("firmware")
	f.Bus = event.NewBus()
	if st, ok := o.Board.(board.Storage); ok {
		f.storage = st
	}

	var err error
	f.Config, err = cfg.Open(f.store(StoreConfig), f.Bus)
	if err != nil {
		f.log.Error("configuration: " + err.Error())
		fmt.Fprintf(o.Console, "firmware: configuration: %v\n", err)
	}
	f.Clock = clock.NewSystem()
	f.Auth = auth.New(passwordStore{f}, rand.Reader)
	f.Limiter = auth.NewLimiter(maxLoginFailures, loginWindow, loginLockout)
	f.Sup = supervisor.New(f.Logger("supervisor"), f.Bus)

	f.Upgrader = upgrade.New(upgrade.Config{Board: o.Board.Name(), Key: o.UpgradeKey, Target: f.upgradeTarget,
		Reboot: f.reboot, Log: f.Logger("sysupgrade")})
	if f.Web, err = web.New(web.Config{Source: overview{f}, Config: webConfig{f.Config}, Auth: f.Auth,
		Limiter: f.Limiter, Reboot: f.reboot, Upgrade: webUpgrader{f.Upgrader}, Log: f.Logger("web")}); err != nil {
		return nil, fmt.Errorf("firmware: web UI: %w", err)
	}
	if err := f.startRouter(); err != nil {
		return nil, err
	}
	f.Shell = shell.New(host{f})
	f.Shell.SetLogger(f.Logger("shell"))
	f.Shell.Add(upgradeCommand(f.Upgrader))
	if err := f.startServices(); err != nil {
		_ = f.Router.Close()
		return nil, err
	}
	rctx, cancel := context.WithCancel(ctx)
	f.cancel = cancel
	if err := f.Sup.Start(rctx); err != nil {
		cancel()
		_ = f.Router.Close()
		return nil, fmt.Errorf("firmware: %w", err)
	}
	if tok := f.Auth.SetupToken(); tok != "" {
		// Only on the console: the log ring (and remote syslog, and the
		// klogd copy of the console) must never hold it.
		fmt.Fprintf(o.Console, "firmware: no administrator password is set. One-time setup token: %s\n"+
			"firmware: log in to http://%s/login with it to choose one (or run passwd on this console)\n",
			tok, f.Router.LANAddr().Addr())
	}
	f.log.Info("firmware started", "board", o.Board.Name(), "version", o.Version)
	return f, nil
}

// Stop stops the services and the router.
func (f *Firmware) Stop() error {
	err := f.Sup.Stop(10 * time.Second)
	f.cancel()
	f.stopWireless()
	if e := f.Router.Close(); err == nil {
		err = e
	}
	return err
}

// Logger returns a logger whose records go to the log ring as service's
// (and, where no kernel keeps the console, to the console too).
func (f *Firmware) Logger(service string) *slog.Logger {
	h := f.Ring.Handler(syslog.Daemon, service, slog.LevelInfo)
	if !kernel.Running() {
		// Sim and library mode: no console log feeds the ring, and the
		// person running the process watches its output.
		h = teeHandler{h, slog.NewTextHandler(f.opts.Console, &slog.HandlerOptions{Level: slog.LevelInfo}).
			WithAttrs([]slog.Attr{slog.String("service", service)})}
	}
	return slog.New(h)
}

// store opens one of the board's persistent items (nil: none; the part
// then keeps it in RAM).
func (f *Firmware) store(name string) cfg.Store {
	if f.storage == nil {
		return nil
	}
	s, err := f.storage.Store(name)
	if err != nil {
		f.log.Warn("storage: "+err.Error(), "item", name)
		return nil
	}
	return s
}

// startRouter builds the router from the committed configuration, or
// from the defaults when that fails.
func (f *Firmware) startRouter() error {
	ports, err := f.opts.Board.Ports()
	if err != nil {
		return fmt.Errorf("firmware: %w", err)
	}
	f.ports = ports
	snap := f.Config.Snapshot()
	if f.wifiPorts, err = f.startWireless(snap); err != nil {
		return err
	}
	r, err := f.newRouter(snap)
	if err != nil {
		f.log.Error("router: the configured settings fail, starting with the defaults: " + err.Error())
		fmt.Fprintf(f.opts.Console, "firmware: router: %v; starting with the default configuration\n", err)
		def, _ := cfg.Open(nil, nil)
		snap = def.Snapshot()
		if r, err = f.newRouter(snap); err != nil {
			return fmt.Errorf("firmware: router: %w", err)
		}
	}
	f.Router = r
	f.applied = snap
	if len(f.wifi) > 0 {
		r.SetWifiStats(f.wifiStats)
	}
	f.wifiStart(snap)
	return nil
}

func (f *Firmware) newRouter(snap *cfg.Snapshot) (*router.Router, error) {
	b := f.opts.Board
	rc := router.Config{Board: b.Name(), Bus: f.Bus, Log: f.Logger("router"), Clock: f.Clock, Web: webServer(f.Web)}
	for _, p := range f.ports {
		rp := router.Port{Name: p.Name, NIC: p.NIC}
		if p.Role == board.WAN && rc.WAN == nil {
			rc.WAN = &rp
		} else {
			rc.LAN = append(rc.LAN, rp)
		}
	}
	rc.LAN = append(rc.LAN, f.wifiPorts...)
	if f.storage != nil {
		rc.Storage = func(name string) (router.Store, error) { return f.storage.Store(name) }
	}
	if err := applyConfig(&rc, snap); err != nil {
		return nil, err
	}
	r, err := router.New(rc)
	if err != nil {
		return nil, err
	}
	if err := r.Start(); err != nil {
		return nil, err
	}
	return r, nil
}

// webServer serves the web UI on the router's HTTP port, with the limits
// the router's own status page has. The UI needs net/http (the status page
// is on net/httpd). A closed *http.Server cannot serve again: each router
// gets its own.
func webServer(ui http.Handler) *http.Server {
	l := router.DefaultHTTPLimits
	return &http.Server{Handler: ui, ReadHeaderTimeout: l.ReadHeaderTimeout, ReadTimeout: l.ReadTimeout,
		WriteTimeout: l.WriteTimeout, IdleTimeout: l.IdleTimeout, MaxHeaderBytes: router.HTTPMaxHeaderBytes}
}

// running returns the configuration the running parts use.
func (f *Firmware) running() *cfg.Snapshot {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.applied
}

// reboot restarts the device.
func (f *Firmware) reboot() error {
	f.log.Warn("reboot requested")
	if f.opts.Reboot != nil {
		return f.opts.Reboot()
	}
	return f.rebootDevice()
}

// passwordStore keeps the administrator's password hash in the
// configuration (system.password), committed at once.
type passwordStore struct{ f *Firmware }

func (p passwordStore) PasswordHash() string { return p.f.Config.Snapshot().System.PasswordHash }

func (p passwordStore) SetPasswordHash(h string) error {
	c := p.f.Config
	if err := c.Set("system.password", h); err != nil {
		return err
	}
	if _, err := c.Commit(); err != nil {
		c.Revert()
		return err
	}
	return nil
}

// teeHandler sends each record to two handlers.
type teeHandler struct{ a, b slog.Handler }

func (t teeHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return t.a.Enabled(ctx, l) || t.b.Enabled(ctx, l)
}

func (t teeHandler) Handle(ctx context.Context, r slog.Record) error {
	var err error
	if t.a.Enabled(ctx, r.Level) {
		err = t.a.Handle(ctx, r.Clone())
	}
	if t.b.Enabled(ctx, r.Level) {
		if e := t.b.Handle(ctx, r); err == nil {
			err = e
		}
	}
	return err
}

func (t teeHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return teeHandler{t.a.WithAttrs(as), t.b.WithAttrs(as)}
}

func (t teeHandler) WithGroup(name string) slog.Handler {
	return teeHandler{t.a.WithGroup(name), t.b.WithGroup(name)}
}
