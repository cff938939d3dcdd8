// Package sshd is the router's SSH server (golang.org/x/crypto/ssh): root
// only, public keys from the configuration's authorized_keys, a password
// only when the configuration allows it, failed logins limited per source
// address, and session channels that run the router's shell. Nothing
// else: no port forwarding, no subsystems (SFTP), no agent forwarding.
package sshd

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/gowrt/gowrt/mgmt/auth"
	"github.com/gowrt/gowrt/mgmt/shell"
)

// Defaults.
const (
	// DefaultHandshakeTimeout bounds the key exchange and authentication,
	// so a client that stalls cannot hold one of the listener's slots
	// (OpenSSH's LoginGraceTime is 120 s; a router has few slots).
	DefaultHandshakeTimeout = 10 * time.Second
	// DefaultMaxSessions is the number of session channels per connection
	// (OpenSSH's MaxSessions is 10).
	DefaultMaxSessions = 4
	// maxAuthTries is the number of authentication attempts per
	// connection (OpenSSH's MaxAuthTries default, 6).
	maxAuthTries = 6
	// User is the only login name.
	User = "root"
	// DefaultPrompt is the interactive shell's prompt.
	DefaultPrompt = "# "
	serverVersion = "SSH-2.0-gowrt"
)

// Config configures the server.
type Config struct {
	HostKey        ssh.Signer
	AuthorizedKeys func() []string      // authorized_keys lines, read at every login
	Password       func(pw string) bool // nil or PasswordAuth off: no password login
	Limiter        *auth.Limiter        // per source address; nil: no limit
	Shell          *shell.Shell
	Log            *slog.Logger
	MaxSessions    int // channels per connection; 0: DefaultMaxSessions

	HandshakeTimeout time.Duration // 0: DefaultHandshakeTimeout
	Prompt           string        // "": DefaultPrompt
}

// Server serves SSH connections.
type Server struct {
	c                         Config
	log                       *slog.Logger
	logins, failures, refused atomic.Uint64
}

// Stats are the server's counters: successful logins, failed logins
// (connections that ended without one, and each wrong password), and
// connections refused by the limiter.
type Stats struct{ Logins, Failures, Refused uint64 }

// New checks c and returns a server.
func New(c Config) (*Server, error) {
	if c.HostKey == nil {
		return nil, errors.New("sshd: no host key")
	}
	if c.Shell == nil {
		return nil, errors.New("sshd: no shell")
	}
	if c.AuthorizedKeys == nil {
		c.AuthorizedKeys = func() []string { return nil }
	}
	if c.MaxSessions <= 0 {
		c.MaxSessions = DefaultMaxSessions
	}
	if c.HandshakeTimeout <= 0 {
		c.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if c.Prompt == "" {
		c.Prompt = DefaultPrompt
	}
	log := c.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Server{c: c, log: log.With("service", "sshd")}, nil
}

// Stats returns the counters.
func (s *Server) Stats() Stats {
	return Stats{Logins: s.logins.Load(), Failures: s.failures.Load(), Refused: s.refused.Load()}
}

// GenerateHostKey returns a new ed25519 host key as an OpenSSH private key
// in PEM ("OPENSSH PRIVATE KEY"), which ssh.ParsePrivateKey reads.
func GenerateHostKey(rand io.Reader) (pemBytes []byte, err error) {
	_, priv, err := ed25519.GenerateKey(rand)
	if err != nil {
		return nil, err
	}
	blk, err := ssh.MarshalPrivateKey(priv, "gowrt host key")
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(blk), nil
}

// remoteAddr is c's peer address (invalid for a non-IP connection).
func remoteAddr(c net.Conn) netip.Addr {
	switch a := c.RemoteAddr().(type) {
	case *net.TCPAddr:
		return a.AddrPort().Addr().Unmap()
	case nil:
		return netip.Addr{}
	default:
		ap, _ := netip.ParseAddrPort(a.String())
		return ap.Addr().Unmap()
	}
}

// attempt is one connection's authentication record.
type attempt struct {
	mu             sync.Mutex
	rejected       bool // a key or user was refused (counted once, at the end)
	passwordFailed bool // wrong passwords are counted one by one
	refused        bool // the limiter said no mid-connection
}

func (s *Server) allow(src netip.Addr) bool {
	return s.c.Limiter == nil || s.c.Limiter.Allow(src)
}

func (s *Server) failed(src netip.Addr) {
	s.failures.Add(1)
	if s.c.Limiter != nil {
		s.c.Limiter.Failed(src)
	}
}

// authorized reports whether key is one of the authorized_keys lines.
// Lines with options (from=, command=, restrict ...) are skipped: this
// server does not enforce options, and ignoring a restriction would grant
// more than the line says.
func (s *Server) authorized(key ssh.PublicKey) bool {
	want := key.Marshal()
	found := false
	for i, line := range s.c.AuthorizedKeys() {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		k, _, opts, _, err := ssh.ParseAuthorizedKey([]byte(line))
		if err != nil {
			s.log.Warn("bad authorized_keys line ignored", "line", i+1, "err", err)
			continue
		}
		if len(opts) > 0 {
			s.log.Warn("authorized_keys line with options ignored (options are not supported)", "line", i+1, "options", strings.Join(opts, ","))
			continue
		}
		if bytes.Equal(k.Marshal(), want) {
			found = true
		}
	}
	return found
}

func (s *Server) serverConfig(src netip.Addr, at *attempt, log *slog.Logger) *ssh.ServerConfig {
	conf := &ssh.ServerConfig{
		MaxAuthTries:  maxAuthTries,
		ServerVersion: serverVersion,
	}
	conf.AddHostKey(s.c.HostKey)
	gate := func(m ssh.ConnMetadata) error {
		if !s.allow(src) {
			at.mu.Lock()
			at.refused = true
			at.mu.Unlock()
			return errors.New("too many failed logins")
		}
		if m.User() != User {
			at.mu.Lock()
			at.rejected = true
			at.mu.Unlock()
			log.Warn("login refused: unknown user", "user", m.User())
			return errors.New("unknown user")
		}
		return nil
	}
	conf.PublicKeyCallback = func(m ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
		if err := gate(m); err != nil {
			return nil, err
		}
		fp := ssh.FingerprintSHA256(key)
		if !s.authorized(key) {
			at.mu.Lock()
			at.rejected = true
			at.mu.Unlock()
			log.Info("public key not authorized", "key", fp)
			return nil, errors.New("key not authorized")
		}
		return &ssh.Permissions{Extensions: map[string]string{"method": "publickey", "key": fp}}, nil
	}
	if s.c.Password != nil {
		conf.PasswordCallback = func(m ssh.ConnMetadata, pw []byte) (*ssh.Permissions, error) {
			if err := gate(m); err != nil {
				return nil, err
			}
			if !s.c.Password(string(pw)) {
				at.mu.Lock()
				at.passwordFailed = true
				at.mu.Unlock()
				s.failed(src)
				log.Warn("wrong password", "user", m.User())
				return nil, errors.New("wrong password")
			}
			return &ssh.Permissions{Extensions: map[string]string{"method": "password"}}, nil
		}
	}
	return conf
}

// ServeConn serves one connection (the supervisor's AddListener handler)
// until the client leaves or ctx is done.
func (s *Server) ServeConn(ctx context.Context, c net.Conn) {
	defer c.Close()
	src := remoteAddr(c)
	log := s.log.With("src", src.String())
	if !s.allow(src) {
		s.refused.Add(1)
		log.Warn("connection refused: too many failed logins")
		return
	}
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()

	at := &attempt{}
	c.SetDeadline(time.Now().Add(s.c.HandshakeTimeout))
	sconn, chans, reqs, err := ssh.NewServerConn(c, s.serverConfig(src, at, log))
	if err != nil {
		at.mu.Lock()
		refused, rejected, pwFailed := at.refused, at.rejected, at.passwordFailed
		at.mu.Unlock()
		switch {
		case refused:
			s.refused.Add(1)
			log.Warn("login refused: too many failed logins")
		case rejected && !pwFailed:
			s.failed(src)
			log.Warn("authentication failed", "err", err)
		case pwFailed:
			log.Warn("authentication failed", "err", err)
		default:
			log.Debug("handshake failed", "err", err)
		}
		return
	}
	defer sconn.Close()
	c.SetDeadline(time.Time{})
	s.logins.Add(1)
	if s.c.Limiter != nil {
		s.c.Limiter.Succeeded(src)
	}
	log.Info("login", "user", sconn.User(), "method", sconn.Permissions.Extensions["method"], "key", sconn.Permissions.Extensions["key"])
	go ssh.DiscardRequests(reqs) // tcpip-forward and the like: refused

	var (
		wg       sync.WaitGroup
		sessions atomic.Int32
	)
	for nc := range chans {
		if nc.ChannelType() != "session" {
			log.Info("channel refused", "type", nc.ChannelType())
			nc.Reject(ssh.Prohibited, "only session channels are served")
			continue
		}
		if int(sessions.Add(1)) > s.c.MaxSessions {
			sessions.Add(-1)
			nc.Reject(ssh.ResourceShortage, "too many sessions")
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer sessions.Add(-1)
			s.session(ctx, nc, log)
		}()
	}
	wg.Wait()
}

// startReq is a session's shell or exec request.
type startReq struct {
	exec    bool
	command string
	pty     bool
}

// exitStatus is RFC 4254 6.10's "exit-status" payload.
type exitStatus struct{ Status uint32 }

// session runs one session channel (RFC 4254 6): pty-req is remembered,
// env and window-change are accepted and ignored, then one shell or exec.
func (s *Server) session(ctx context.Context, nc ssh.NewChannel, log *slog.Logger) {
	ch, reqs, err := nc.Accept()
	if err != nil {
		return
	}
	defer ch.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	starts := make(chan startReq, 1)
	go func() {
		defer cancel() // the channel is gone: stop what runs in it
		pty, started := false, false
		for req := range reqs {
			switch req.Type {
			case "pty-req":
				if !started {
					pty = true
				}
				req.Reply(!started, nil)
			case "env", "window-change":
				req.Reply(true, nil)
			case "shell", "exec":
				st := startReq{exec: req.Type == "exec", pty: pty}
				if st.exec {
					var p struct{ Command string }
					if ssh.Unmarshal(req.Payload, &p) != nil {
						req.Reply(false, nil)
						continue
					}
					st.command = p.Command
				}
				ok := !started
				req.Reply(ok, nil)
				if ok {
					started = true
					starts <- st
				}
			default: // subsystem (sftp), x11-req, auth-agent-req ...
				req.Reply(false, nil)
			}
		}
	}()
	var st startReq
	select {
	case st = <-starts:
	case <-ctx.Done():
		return
	}
	sess := &shell.Session{In: ch, Out: ch, Console: false, User: User, Plain: !st.pty}
	defer sess.Close()
	var status int
	switch {
	case st.exec && st.pty: // ssh -t router 'ping host': ^C interrupts, CR LF out
		log.Info("exec", "command", st.command, "pty", true)
		status = s.c.Shell.ExecTerminal(ctx, sess, st.command)
	case st.exec:
		log.Info("exec", "command", st.command)
		status = s.c.Shell.Exec(ctx, sess, st.command)
	default:
		if err := s.c.Shell.Interactive(ctx, sess, s.c.Prompt); err != nil && ctx.Err() == nil {
			log.Info("shell ended", "err", err)
			status = 1
		}
	}
	ch.CloseWrite()
	if _, err := ch.SendRequest("exit-status", false, ssh.Marshal(exitStatus{uint32(status)})); err != nil {
		log.Debug("exit-status not sent", "err", fmt.Sprint(err))
	}
}
