// Package auth is the router's login: one administrator password, kept as a
// bcrypt hash in the configuration (system.password), and a one-time setup
// token for the first boot, when no password exists yet.
//
// The token is printed on the serial console at boot: whoever can read the
// console has physical access and may set the first password with it, over
// SSH or the web UI. Once a password is set the token is gone for good.
package auth

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base32"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"golang.org/x/crypto/bcrypt"
)

// HashCost is the bcrypt work factor; each step doubles the time. Measured
// on the build host (one compare of bcrypt.CompareHashAndPassword):
//
//	cost   amd64 native   qemu-mips user (softfloat)
//	   8        14 ms          44 ms
//	  10        61 ms         166 ms
//
// A 400-680 MHz 24Kc/74Kc router core runs such integer code roughly ten
// times slower than qemu-user on this host, so bcrypt.DefaultCost (10)
// would take about 1.7 s per login on the device; cost 9 takes about
// 0.85 s, under the one second a login may take, while an offline attack
// on a leaked hash still pays 2^9 Blowfish key schedules per guess.
// TestHashCostTiming logs the figure on whatever runs the tests.
const HashCost = 9

// MinPasswordLength is the shortest password SetPassword accepts.
const MinPasswordLength = 8

// MaxPasswordLength is bcrypt's input limit: bytes after the 72nd are
// ignored by the algorithm, so longer passwords are refused rather than
// silently truncated.
const MaxPasswordLength = 72

// tokenBytes is the setup token's entropy: 128 bits.
const tokenBytes = 16

// tokenGroup is how many base32 characters the printed token groups.
const tokenGroup = 4

// HashStore keeps the password hash (the configuration's system.password).
type HashStore interface {
	PasswordHash() string
	SetPasswordHash(h string) error
}

// Errors SetPassword returns.
var (
	ErrBadProof  = errors.New("wrong current password or setup token")
	ErrTooShort  = fmt.Errorf("password shorter than %d characters", MinPasswordLength)
	ErrTooLong   = fmt.Errorf("password longer than %d bytes", MaxPasswordLength)
	ErrNoEntropy = errors.New("no setup token: the random source failed")
)

// Auth checks and sets the administrator password.
type Auth struct {
	mu    sync.Mutex
	st    HashStore
	token string // canonical form (no separators, upper case); "" once a password is set
}

var tokenEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// New returns the login state over st. When no password is set it draws a
// setup token from rand (crypto/rand when nil). If rand fails there is no
// token; the password can then only be set on the console (ResetPassword).
func New(st HashStore, rand io.Reader) *Auth {
	a := &Auth{st: st}
	if st.PasswordHash() != "" {
		return a
	}
	if rand == nil {
		rand = cryptoRand
	}
	var b [tokenBytes]byte
	if _, err := io.ReadFull(rand, b[:]); err == nil {
		a.token = tokenEncoding.EncodeToString(b[:])
	}
	return a
}

var cryptoRand io.Reader = rand.Reader

// PasswordSet reports whether an administrator password exists.
func (a *Auth) PasswordSet() bool { return a.st.PasswordHash() != "" }

// SetupToken is the first-boot token in groups of four base32 characters
// ("ABCD-EFGH-..."), or "" once a password is set.
func (a *Auth) SetupToken() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.token == "" || a.PasswordSet() {
		return ""
	}
	var b strings.Builder
	for i := 0; i < len(a.token); i += tokenGroup {
		if i > 0 {
			b.WriteByte('-')
		}
		b.WriteString(a.token[i:min(i+tokenGroup, len(a.token))])
	}
	return b.String()
}

// Check reports whether password is the administrator password. bcrypt's
// comparison is constant-time; with no password set it is always false.
func (a *Auth) Check(password string) bool {
	h := a.st.PasswordHash()
	if h == "" || len(password) > MaxPasswordLength {
		return false
	}
	return bcrypt.CompareHashAndPassword([]byte(h), []byte(password)) == nil
}

// checkToken compares proof with the setup token in constant time,
// ignoring case, spaces and dashes (people retype it from a console).
func (a *Auth) checkToken(proof string) bool {
	if a.token == "" {
		return false
	}
	canon := strings.Map(func(r rune) rune {
		switch {
		case r == '-' || r == ' ':
			return -1
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		}
		return r
	}, proof)
	return subtle.ConstantTimeCompare([]byte(canon), []byte(a.token)) == 1
}

// SetPassword sets the administrator password. proof is the current
// password, or the setup token while no password is set.
func (a *Auth) SetPassword(proof, newPassword string) error {
	if err := checkPassword(newPassword); err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.PasswordSet() {
		if !a.Check(proof) {
			return ErrBadProof
		}
	} else if !a.checkToken(proof) {
		if a.token == "" {
			return ErrNoEntropy
		}
		return ErrBadProof
	}
	return a.store(newPassword)
}

// ResetPassword sets the password without proof. Only the serial console
// (physical access) may call it, as a lost password is recovered there.
func (a *Auth) ResetPassword(newPassword string) error {
	if err := checkPassword(newPassword); err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.store(newPassword)
}

func (a *Auth) store(pw string) error {
	h, err := bcrypt.GenerateFromPassword([]byte(pw), HashCost)
	if err != nil {
		return err
	}
	if err := a.st.SetPasswordHash(string(h)); err != nil {
		return err
	}
	a.token = ""
	return nil
}

func checkPassword(pw string) error {
	switch {
	case len(pw) < MinPasswordLength:
		return ErrTooShort
	case len(pw) > MaxPasswordLength:
		return ErrTooLong
	}
	return nil
}
