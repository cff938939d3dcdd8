package firmware

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/gowrt/gowrt/config/cfg"
	"github.com/gowrt/gowrt/kernel"
	"github.com/gowrt/gowrt/mgmt/shell"
	"github.com/gowrt/gowrt/mgmt/sshd"
	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/sys/cron"
	"github.com/gowrt/gowrt/sys/event"
	"github.com/gowrt/gowrt/sys/supervisor"
	"github.com/gowrt/gowrt/sys/syslog"

	"golang.org/x/crypto/ssh"
)

// Service names, as `services` lists them.
const (
	svcSSH       = "sshd"
	svcCron      = "cron"
	svcRemoteLog = "syslog-remote"
	svcKlogd     = "klogd"
	svcConsole   = "console"
	svcApply     = "config-apply"
	svcTimeWatch = "cron-clock"
	svcLinkWatch = "linkwatch"
)

// linkPoll is how often linkwatch reads the ports' carrier: the NIC
// contract reports link changes to the port's handler (br-lan, the WAN
// interface), not to the firmware, and a second is as fast as a person
// plugging a cable notices.
const linkPoll = time.Second

// maxSSHConns bounds SSH connections at once (each costs its handshake
// state and a shell: tens of KiB).
const maxSSHConns = 4

func (f *Firmware) startServices() error {
	snap := f.running()
	if err := f.startSSH(snap); err != nil {
		return err
	}

	f.Cron = cron.New(f.Clock, f.Logger("cron"))
	f.setCronJobs(snap)
	if err := f.Sup.Add(supervisor.Service{Name: svcCron, Restart: supervisor.Always, Run: f.Cron.Run}); err != nil {
		return err
	}
	// A stepped clock (SNTP) reschedules every job from the new time.
	if err := f.Sup.Add(supervisor.Service{Name: svcTimeWatch, Restart: supervisor.Always, Needs: []string{svcCron},
		Run: func(ctx context.Context) error {
			sub := f.Bus.Time.Subscribe(0)
			defer sub.Close()
			for {
				if _, err := sub.Next(ctx); err != nil {
					return nil
				}
				f.Cron.ClockChanged()
			}
		}}); err != nil {
		return err
	}
	if err := f.Sup.Add(supervisor.Service{Name: svcLinkWatch, Restart: supervisor.Always, Run: f.runLinkWatch}); err != nil {
		return err
	}
	if err := f.Sup.Add(supervisor.Service{Name: svcRemoteLog, Restart: supervisor.Always, Run: f.runRemoteLog}); err != nil {
		return err
	}
	if err := f.Sup.Add(supervisor.Service{Name: svcKlogd, Restart: supervisor.OnFailure, Run: f.runKlogd}); err != nil {
		return err
	}
	if err := f.Sup.Add(supervisor.Service{Name: svcApply, Restart: supervisor.Always, Run: f.runApply}); err != nil {
		return err
	}
	if len(f.wifi) > 0 {
		if err := f.Sup.Add(supervisor.Service{Name: svcWifi, Restart: supervisor.Always, Run: f.runWifi}); err != nil {
			return err
		}
	}
	if in := f.opts.ConsoleIn; in != nil {
		// One session for every restart: it may have read input ahead.
		// Off the device the console is a terminal in cooked mode, which
		// echoes and edits lines itself.
		sess := &shell.Session{In: in, Out: f.opts.Console, Console: true, User: "root", Plain: !kernel.Running()}
		prompt := f.running().System.Hostname + "# "
		if err := f.Sup.Add(supervisor.Service{Name: svcConsole, Restart: supervisor.OnFailure,
			Run: func(ctx context.Context) error {
				// Like OpenWrt's console: no prompt in the middle of the
				// boot messages, a shell once someone is there.
				fmt.Fprintln(f.opts.Console, "Please press Enter to activate this console.")
				entered := make(chan error, 1)
				go func() { entered <- waitEnter(in) }()
				select {
				case err := <-entered:
					if err != nil {
						return nil // no console input (EOF): nothing to serve
					}
				case <-ctx.Done():
					return nil
				}
				return f.Shell.Interactive(ctx, sess, prompt)
			}}); err != nil {
			return err
		}
	}
	if svc, ok := f.watchdogService(); ok {
		if err := f.Sup.Add(svc); err != nil {
			return err
		}
	}
	for _, s := range f.opts.Services {
		if err := f.Sup.Add(s); err != nil {
			return fmt.Errorf("firmware: service %s: %w", s.Name, err)
		}
	}
	return nil
}

// startSSH starts the SSH server on the LAN, on demand: the supervisor
// accepts and runs a session per connection.
func (f *Firmware) startSSH(snap *cfg.Snapshot) error {
	key, err := f.hostKey()
	if err != nil {
		return fmt.Errorf("firmware: SSH host key: %w", err)
	}
	f.SSH, err = sshd.New(sshd.Config{
		HostKey:        key,
		AuthorizedKeys: func() []string { return f.Config.Snapshot().System.AuthorizedKeys },
		Password: func(pw string) bool {
			return f.Config.Snapshot().SSH.PasswordAuth && f.Auth.Check(pw)
		},
		Limiter: f.Limiter,
		Shell:   f.Shell,
		Log:     f.Logger(svcSSH),
	})
	if err != nil {
		return fmt.Errorf("firmware: SSH: %w", err)
	}
	ln, err := f.Router.ListenLAN(snap.SSH.Port)
	if err != nil {
		return fmt.Errorf("firmware: SSH: %w", err)
	}
	return f.Sup.AddListener(svcSSH, ln, maxSSHConns, f.SSH.ServeConn)
}

// hostKey loads the SSH host key from storage, or makes one and keeps it
// (without storage a new key every boot: clients will warn).
func (f *Firmware) hostKey() (ssh.Signer, error) {
	st := f.store(StoreHostKey)
	if st != nil {
		if b, err := st.Load(); err == nil && len(b) > 0 {
			if k, err := ssh.ParsePrivateKey(b); err == nil {
				return k, nil
			}
			f.log.Error("SSH host key in storage is unreadable; making a new one")
		}
	}
	pemBytes, err := sshd.GenerateHostKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	if st != nil {
		if err := st.Save(pemBytes); err != nil {
			f.log.Warn("SSH host key not saved: " + err.Error())
		}
	}
	return ssh.ParsePrivateKey(pemBytes)
}

// runRemoteLog forwards the log to system.log_ip over UDP while one is
// configured; a change restarts it (config-apply).
func (f *Firmware) runRemoteLog(ctx context.Context) error {
	s := f.Config.Snapshot().System
	if !s.LogIP.IsValid() {
		<-ctx.Done()
		return nil
	}
	conn, err := f.Router.Dial(ctx, "udp", netip.AddrPortFrom(s.LogIP, s.LogPort).String())
	if err != nil {
		return fmt.Errorf("remote syslog %v: %w", s.LogIP, err)
	}
	defer conn.Close()
	send := func(b []byte) error { _, err := conn.Write(b); return err }
	return syslog.NewRemote(f.Ring, send, s.Hostname).Run(ctx)
}

// setCronJobs installs the configured jobs (system.crontab lines), each a
// shell command line whose output goes to the log.
func (f *Firmware) setCronJobs(snap *cfg.Snapshot) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, name := range f.cronSet {
		f.Cron.Remove(name)
	}
	f.cronSet = f.cronSet[:0]
	log := f.Logger(svcCron)
	for i, line := range snap.System.Crontab {
		spec, cmd, ok := splitCrontab(line)
		if !ok {
			log.Error("crontab: not five fields and a command", "line", line)
			continue
		}
		name := fmt.Sprintf("crontab[%d]", i)
		err := f.Cron.Add(name, spec, func(ctx context.Context) error {
			var out strings.Builder
			st := f.Shell.Exec(ctx, &shell.Session{In: strings.NewReader(""), Out: &limitWriter{w: &out, n: 4 << 10}, User: "cron"}, cmd)
			for _, l := range strings.Split(strings.TrimRight(out.String(), "\n"), "\n") {
				if l != "" {
					log.Info(l, "job", name)
				}
			}
			if st != 0 {
				return fmt.Errorf("%q exited with status %d", cmd, st)
			}
			return nil
		})
		if err != nil {
			log.Error("crontab: "+err.Error(), "line", line)
			continue
		}
		f.cronSet = append(f.cronSet, name)
	}
}

// splitCrontab splits "m h dom mon dow command" into the schedule and the
// command.
func splitCrontab(line string) (spec, cmd string, ok bool) {
	fields := strings.Fields(line)
	if len(fields) < 6 {
		return "", "", false
	}
	rest := line
	for i := 0; i < 5; i++ {
		rest = strings.TrimLeft(rest, " \t")
		rest = rest[strings.IndexAny(rest, " \t"):]
	}
	return strings.Join(fields[:5], " "), strings.TrimSpace(rest), true
}

// limitWriter keeps at most n bytes.
type limitWriter struct {
	w interface{ Write([]byte) (int, error) }
	n int
}

func (l *limitWriter) Write(p []byte) (int, error) {
	k := min(len(p), l.n)
	if k > 0 {
		_, _ = l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}

// runApply applies each committed configuration to the running parts.
func (f *Firmware) runApply(ctx context.Context) error {
	sub := f.Bus.Config.Subscribe(0)
	defer sub.Close()
	for {
		ev, err := sub.Next(ctx)
		if err != nil {
			return nil
		}
		f.apply(ev.Packages)
	}
}

// apply brings the running parts in line with the committed
// configuration, package by package, and logs what needs a reboot.
func (f *Firmware) apply(pkgs []string) {
	log := f.Logger(svcApply)
	snap := f.Config.Snapshot()
	f.mu.Lock()
	old := f.applied
	f.mu.Unlock()
	var live, reboot []string
	lanMoved := false
	if old.LAN.Addr != snap.LAN.Addr {
		if err := f.Router.SetLANAddr(snap.LAN.Addr); err != nil {
			log.Error("network.lan: " + err.Error())
		} else {
			lanMoved = true
			live = append(live, "network.lan")
		}
	}
	if !sameWAN(old.WAN, snap.WAN) {
		reboot = append(reboot, "network.wan")
	}
	if slices.Contains(pkgs, "dhcp") || lanMoved {
		if err := f.Router.SetDHCP(dhcpConfig(snap)); err != nil {
			log.Error("dhcp: " + err.Error())
		} else {
			live = append(live, "dhcp")
		}
	}
	if slices.Contains(pkgs, "firewall") {
		if fw, err := firewallConfig(snap); err != nil {
			log.Error(err.Error())
		} else if err := f.Router.SetFirewall(fw); err != nil {
			log.Error(err.Error())
		} else {
			live = append(live, "firewall")
		}
	}
	if slices.Contains(pkgs, "system") {
		if old.System.LogIP != snap.System.LogIP || old.System.LogPort != snap.System.LogPort {
			if err := f.Sup.RestartService(svcRemoteLog); err != nil {
				log.Error("remote syslog: " + err.Error())
			}
		}
		if !slices.Equal(old.System.Crontab, snap.System.Crontab) {
			f.setCronJobs(snap)
		}
		if old.System.Hostname != snap.System.Hostname {
			reboot = append(reboot, "system.hostname")
		}
		live = append(live, "system")
	}
	if slices.Contains(pkgs, "dropbear") {
		if old.SSH.Port != snap.SSH.Port {
			reboot = append(reboot, "dropbear.Port")
		}
		live = append(live, "dropbear") // PasswordAuth is read at each login
	}
	if slices.Contains(pkgs, "wireless") {
		if err := f.applyWireless(snap); err != nil {
			log.Error(err.Error())
		} else {
			live = append(live, "wireless")
		}
	}
	// What applies at the next boot stays pending: keep the old values
	// for those parts so a later commit still reports them.
	next := *snap
	if slices.Contains(reboot, "network.wan") {
		next.WAN = old.WAN
	}
	if old.LAN.Addr != snap.LAN.Addr && !lanMoved {
		next.LAN, next.DHCP = old.LAN, old.DHCP
	}
	f.mu.Lock()
	f.applied = &next
	f.mu.Unlock()
	if len(live) > 0 {
		log.Info("applied: " + strings.Join(live, ", "))
	}
	if len(reboot) > 0 {
		log.Warn("applies at the next boot: " + strings.Join(reboot, ", "))
	}
}

func sameWAN(a, b cfg.WAN) bool {
	return a.Proto == b.Proto && a.Addr == b.Addr && a.Gateway == b.Gateway && slices.Equal(a.DNS, b.DNS) && a.Hostname == b.Hostname
}

// runKlogd copies the kernel's console log into the ring, once a second,
// as facility kern (bare metal only: elsewhere the console is the
// process's output). A line holding the setup token is withheld.
func (f *Firmware) runKlogd(ctx context.Context) error {
	buf := make([]byte, 2048)
	var pos uint32
	if _, _, err := kernelConsoleLog(buf[:0], 0); err != nil {
		<-ctx.Done() // no kernel console here
		return nil
	}
	w := &klogWriter{f: f, w: f.Ring.Writer(syslog.Kern, syslog.Notice, "kernel")}
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		for {
			n, start, err := kernelConsoleLog(buf, pos)
			if err != nil {
				return err
			}
			if start != pos {
				fmt.Fprintf(w, "[klogd: %d bytes of console output lost]\n", start-pos)
			}
			if n == 0 {
				break
			}
			_, _ = w.Write(buf[:n])
			pos = start + uint32(n)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// klogWriter passes console text to the ring line by line, withholding
// any line with the setup token in it.
type klogWriter struct {
	f    *Firmware
	w    interface{ Write([]byte) (int, error) }
	line []byte
}

func (k *klogWriter) Write(p []byte) (int, error) {
	for _, c := range p {
		if c == '\r' {
			continue
		}
		k.line = append(k.line, c)
		if c == '\n' || len(k.line) >= 1024 {
			l := k.line
			if tok := k.f.Auth.SetupToken(); tok != "" && strings.Contains(string(l), tok) {
				l = []byte("[a line with the setup token, withheld]\n")
			}
			_, _ = k.w.Write(l)
			k.line = k.line[:0]
		}
	}
	return len(p), nil
}

var errNoReboot = errors.New("reboot: not running on the device (stop the process instead)")

// waitEnter reads in a byte at a time (so nothing is read ahead of the
// shell) until a line ends.
func waitEnter(in io.Reader) error {
	var b [1]byte
	for {
		n, err := in.Read(b[:])
		if err != nil {
			return err
		}
		if n == 1 && (b[0] == '\r' || b[0] == '\n') {
			return nil
		}
	}
}

// runLinkWatch publishes each port's carrier changes on the bus (link
// up/down per port) and logs them.
func (f *Firmware) runLinkWatch(ctx context.Context) error {
	log := f.Logger(svcLinkWatch)
	last := make([]gnet.LinkState, len(f.ports))
	known := make([]bool, len(f.ports)) // the first poll reports every port's state
	t := time.NewTicker(linkPoll)
	defer t.Stop()
	for {
		for i, p := range f.ports {
			ls := p.NIC.Link()
			if known[i] && ls.Up == last[i].Up && ls.SpeedMbps == last[i].SpeedMbps {
				continue
			}
			first := !known[i]
			known[i], last[i] = true, ls
			speed := 0
			switch {
			case ls.Up:
				speed = ls.SpeedMbps
				log.Info(fmt.Sprintf("%s: link up, %d Mbit/s", p.Name, ls.SpeedMbps))
			case first: // a port without a cable at boot
				log.Info(p.Name + ": no link")
			default:
				log.Warn(p.Name + ": link down")
			}
			f.Bus.Link.Publish(event.LinkChange{Port: p.Name, Up: ls.Up, SpeedMbps: speed})
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
