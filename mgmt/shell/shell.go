// Package shell is the router's command shell, the same on the serial
// console and over SSH: a POSIX-like tokenizer without expansion, a table
// of commands run against a Host, and a line editor for raw terminals.
//
// A command that fails prints "name: error" and gives status 1; an
// unknown one prints "sh: name: not found" and gives 127; a command that
// panics is recovered and reported like an error, so no input can take the
// firmware down.
package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"
)

// Exit statuses (as POSIX shells use them).
const (
	StatusOK       = 0
	StatusError    = 1
	StatusSyntax   = 2   // the line could not be parsed
	StatusNotFound = 127 // XCU 2.8.2: command not found
	// StatusInterrupted: the line was cancelled (^C) before its next
	// command; shells report death by SIGINT as 128+2.
	StatusInterrupted = 130
)

// Command is one shell command.
type Command struct {
	Name, Usage, Help string
	Run               func(ctx context.Context, s *Session, args []string) error
}

// Session is one user's shell: where it reads and writes and who it is.
type Session struct {
	In      io.Reader
	Out     io.Writer
	Console bool // the serial console: physical access (passwd needs no proof)
	User    string

	// Plain says In and Out are not a terminal (a pipe, SSH without a
	// pty): Interactive then neither echoes nor writes CR before LF. The
	// zero value is a raw terminal, as the serial console is.
	Plain bool

	// term is Interactive's input pump, kept so that consecutive
	// Interactive calls on one Session share it (see Interactive).
	term   *terminal
	closed bool
	lastCR bool // readSecret: the last line ended with CR (skip one LF)
}

// ExitStatus is an error a command returns to set the status without a
// message (ping with no reply: status 1, the summary said it all).
type ExitStatus int

func (e ExitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// UsageError makes the shell print the command's usage line.
var UsageError = errors.New("usage")

// errExit is returned by the exit command.
type exitRequest struct{ status int }

func (e exitRequest) Error() string { return "exit" }

// Shell is a command table over a Host.
type Shell struct {
	host Host
	mu   sync.RWMutex
	cmds map[string]Command
	log  *slog.Logger
}

// New returns a shell with the standard commands.
func New(h Host) *Shell {
	sh := &Shell{host: h, cmds: make(map[string]Command), log: slog.New(slog.DiscardHandler)}
	for _, c := range standardCommands(sh) {
		sh.Add(c)
	}
	if ws, ok := h.(WifiStatser); ok {
		sh.Add(wifiStatsCommand("athstats", ws))
		sh.Add(wifiStatsCommand("wifistats", ws))
	}
	return sh
}

// SetLogger sets where recovered command panics are logged (with the stack).
func (sh *Shell) SetLogger(l *slog.Logger) {
	if l != nil {
		sh.log = l
	}
}

// Add adds or replaces a command.
func (sh *Shell) Add(c Command) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.cmds[c.Name] = c
}

func (sh *Shell) lookup(name string) (Command, bool) {
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	c, ok := sh.cmds[name]
	return c, ok
}

func (sh *Shell) commands() []Command {
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	cs := make([]Command, 0, len(sh.cmds))
	for _, c := range sh.cmds {
		cs = append(cs, c)
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].Name < cs[j].Name })
	return cs
}

// Exec runs a command line (commands separated by ';') and returns the
// last command's status. A syntax error runs nothing and gives 2; `exit`
// stops the line. A cancelled ctx stops before the next command.
func (sh *Shell) Exec(ctx context.Context, s *Session, line string) (status int) {
	status, _ = sh.exec(ctx, s, line)
	return status
}

// exec is Exec that also reports whether `exit` was run.
func (sh *Shell) exec(ctx context.Context, s *Session, line string) (status int, exit bool) {
	cmds, err := Tokenize(line)
	if err != nil {
		fmt.Fprintf(s.Out, "sh: %v\n", err)
		return StatusSyntax, false
	}
	for _, args := range cmds {
		if ctx.Err() != nil {
			return StatusInterrupted, false
		}
		status, exit = sh.run(ctx, s, args)
		if exit {
			return status, true
		}
	}
	return status, false
}

// run runs one command and turns its error or panic into a status.
func (sh *Shell) run(ctx context.Context, s *Session, args []string) (status int, exit bool) {
	c, ok := sh.lookup(args[0])
	if !ok {
		fmt.Fprintf(s.Out, "sh: %s: not found\n", args[0])
		return StatusNotFound, false
	}
	err := sh.call(ctx, s, c, args)
	var ex exitRequest
	var es ExitStatus
	switch {
	case err == nil:
		return StatusOK, false
	case errors.As(err, &ex):
		return ex.status, true
	case errors.As(err, &es):
		return int(es), false
	case errors.Is(err, UsageError):
		fmt.Fprintf(s.Out, "usage: %s\n", c.Usage)
	default:
		fmt.Fprintf(s.Out, "%s: %v\n", c.Name, err)
	}
	return StatusError, false
}

func (sh *Shell) call(ctx context.Context, s *Session, c Command, args []string) (err error) {
	defer func() {
		if p := recover(); p != nil {
			sh.log.Error("shell command panicked", "command", c.Name, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return c.Run(ctx, s, args)
}

// Host is what the shell's commands show and change.
type Host interface {
	Info() Info
	Interfaces() []Iface
	Routes() []Route
	Ping(ctx context.Context, dst netip.Addr, seq uint16, size int) (time.Duration, error) // one echo
	Resolve(ctx context.Context, name string) (netip.Addr, error)
	Conntrack() []Conn
	Leases() []Lease
	Switch() (SwitchInfo, bool)
	Logread(ctx context.Context, w io.Writer, args []string) error
	Cfg(in io.Reader, w io.Writer, args []string) error
	Services(w io.Writer, args []string) error
	SetPassword(proof, pw string) error
	Reboot() error
}

// PasswordResetter is an optional Host method: set the password without
// proof. passwd uses it on the serial console (physical access); without
// it the console must give the current password or setup token too.
// *auth.Auth's ResetPassword fits.
type PasswordResetter interface {
	ResetPassword(pw string) error
}

// WifiStatser is an optional Host method: the access point's per-station
// rate control statistics, aggregate sizes and retries (wlan/ap's
// WriteStats). With it the shell has athstats (and wifistats).
type WifiStatser interface {
	WifiStats(w io.Writer) error
}

// Info is the system summary.
type Info struct {
	Board, Version, Hostname string
	Uptime                   time.Duration
	MemTotal, MemUsed        uint64  // bytes
	Busy                     float64 // 0..1, 0 if unknown
}

// Iface is one network interface.
type Iface struct {
	Name, MAC                                     string
	Addrs                                         []netip.Prefix
	Up                                            bool
	MTU                                           int
	SpeedMbps                                     int
	RxPackets, TxPackets, RxBytes, TxBytes, Drops uint64
}

// Route is one routing table entry.
type Route struct {
	Dst     netip.Prefix
	Gateway netip.Addr // invalid: on-link
	Iface   string
}

// Conn is one connection tracking entry.
type Conn struct {
	Proto            string // "tcp", "udp", "icmp"
	Src, Dst, NATSrc netip.AddrPort
	State            string
	Timeout          time.Duration
}

// Lease is one DHCP lease.
type Lease struct {
	MAC, Hostname string
	Addr          netip.Addr
	Expires       time.Time // zero: static
}

// SwitchInfo is an Ethernet switch's state.
type SwitchInfo struct {
	Model string
	Ports []SwitchPort
	VLANs []SwitchVLAN
	ATU   []ATUEntry
}

// SwitchPort is one switch port.
type SwitchPort struct {
	Port      int
	Name      string
	Link      bool
	SpeedMbps int
}

// SwitchVLAN is one VLAN group; Ports as the switch config writes them ("0t 1 2").
type SwitchVLAN struct {
	ID    int
	Ports string
}

// ATUEntry is one address table entry.
type ATUEntry struct {
	MAC        string
	Port, VLAN int
}

// helpText lists the commands.
func (sh *Shell) helpText(w io.Writer, args []string) error {
	if len(args) > 1 {
		c, ok := sh.lookup(args[1])
		if !ok {
			return fmt.Errorf("no such command: %s", args[1])
		}
		fmt.Fprintf(w, "usage: %s\n%s\n", c.Usage, c.Help)
		return nil
	}
	for _, c := range sh.commands() {
		fmt.Fprintf(w, "  %-12s %s\n", c.Name, firstLine(c.Help))
	}
	return nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
