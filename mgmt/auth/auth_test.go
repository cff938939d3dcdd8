package auth

import (
	"bytes"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"golang.org/x/crypto/bcrypt"
)

type memStore struct{ h string }

func (m *memStore) PasswordHash() string           { return m.h }
func (m *memStore) SetPasswordHash(h string) error { m.h = h; return nil }

func TestSetupTokenFormat(t *testing.T) {
	seed := bytes.Repeat([]byte{0xff}, tokenBytes)
	a := New(&memStore{}, bytes.NewReader(seed))
	tok := a.SetupToken()
	// 128 bits of ones = 25 '7's and a final "4" (bits 111 padded with 00 = 28) in base32.
	want := "7777-7777-7777-7777-7777-7777-74"
	if tok != want {
		t.Fatalf("token %q, want %q", tok, want)
	}
	if a.PasswordSet() || a.Check("") {
		t.Fatal("no password should be set")
	}
}

func TestSetupTokenRandomAndUnique(t *testing.T) {
	a, b := New(&memStore{}, nil), New(&memStore{}, nil)
	if a.SetupToken() == b.SetupToken() || len(strings.ReplaceAll(a.SetupToken(), "-", "")) != 26 {
		t.Fatalf("tokens %q %q", a.SetupToken(), b.SetupToken())
	}
}

func TestFirstBootFlow(t *testing.T) {
	st := &memStore{}
	a := New(st, nil)
	tok := a.SetupToken()
	if err := a.SetPassword("wrong-token", "longenough"); !errors.Is(err, ErrBadProof) {
		t.Fatalf("wrong token: %v", err)
	}
	if err := a.SetPassword(tok, "short"); !errors.Is(err, ErrTooShort) {
		t.Fatalf("short: %v", err)
	}
	if err := a.SetPassword(tok, strings.Repeat("x", 73)); !errors.Is(err, ErrTooLong) {
		t.Fatalf("long: %v", err)
	}
	// Lower case without dashes is the same token.
	loose := strings.ToLower(strings.ReplaceAll(tok, "-", " "))
	if err := a.SetPassword(loose, "correct horse"); err != nil {
		t.Fatal(err)
	}
	if !a.PasswordSet() || a.SetupToken() != "" {
		t.Fatal("token must be gone after the first password")
	}
	if cost, _ := bcrypt.Cost([]byte(st.h)); cost != HashCost {
		t.Fatalf("cost %d", cost)
	}
	if !a.Check("correct horse") || a.Check("correct hors") || a.Check("") {
		t.Fatal("Check")
	}
	// The token is no proof any more; the current password is.
	if err := a.SetPassword(tok, "another one"); !errors.Is(err, ErrBadProof) {
		t.Fatalf("token after set: %v", err)
	}
	if err := a.SetPassword("correct horse", "another one"); err != nil {
		t.Fatal(err)
	}
	if !a.Check("another one") || a.Check("correct horse") {
		t.Fatal("changed password")
	}
	if err := a.ResetPassword("console pw"); err != nil || !a.Check("console pw") {
		t.Fatalf("reset: %v", err)
	}
}

func TestExistingHashHasNoToken(t *testing.T) {
	h, _ := bcrypt.GenerateFromPassword([]byte("password1"), bcrypt.MinCost)
	a := New(&memStore{h: string(h)}, nil)
	if a.SetupToken() != "" || !a.Check("password1") {
		t.Fatal("existing hash")
	}
}

func TestBrokenRandom(t *testing.T) {
	a := New(&memStore{}, iotest.ErrReader(errors.New("no entropy")))
	if a.SetupToken() != "" {
		t.Fatal("token without entropy")
	}
	if err := a.SetPassword("", "password1"); !errors.Is(err, ErrNoEntropy) {
		t.Fatalf("got %v", err)
	}
}

func TestHashCostTiming(t *testing.T) {
	h, _ := bcrypt.GenerateFromPassword([]byte("password1"), HashCost)
	start := time.Now()
	if bcrypt.CompareHashAndPassword(h, []byte("password1")) != nil {
		t.Fatal("compare")
	}
	t.Logf("bcrypt cost %d compare: %v", HashCost, time.Since(start))
}

func TestLimiter(t *testing.T) {
	now := time.Unix(1000, 0)
	l := NewLimiter(3, time.Minute, 5*time.Minute)
	l.now = func() time.Time { return now }
	src := netip.MustParseAddr("192.168.1.10")
	mapped := netip.MustParseAddr("::ffff:192.168.1.10")
	other := netip.MustParseAddr("192.168.1.11")
	for range 2 {
		l.Failed(src)
	}
	if !l.Allow(src) {
		t.Fatal("refused after 2 of 3")
	}
	l.Failed(mapped) // the same source
	if l.Allow(src) || !l.Allow(other) {
		t.Fatal("lockout")
	}
	now = now.Add(5*time.Minute - time.Second)
	if l.Allow(src) {
		t.Fatal("lockout ended early")
	}
	now = now.Add(2 * time.Second)
	if !l.Allow(src) {
		t.Fatal("lockout did not end")
	}
	st := l.Stats()
	if st.Failures != 3 || st.Refused != 2 || st.Sources != 0 {
		t.Fatalf("stats %+v", st)
	}
	// Failures spread beyond the window do not add up.
	for range 5 {
		l.Failed(src)
		now = now.Add(61 * time.Second)
	}
	if !l.Allow(src) {
		t.Fatal("window")
	}
	// Success clears.
	l.Failed(other)
	l.Failed(other)
	l.Succeeded(other)
	l.Failed(other)
	if !l.Allow(other) {
		t.Fatal("success did not clear")
	}
}

func TestLimiterBounded(t *testing.T) {
	now := time.Unix(1000, 0)
	l := NewLimiter(1, time.Minute, time.Hour)
	l.now = func() time.Time { return now }
	locked := netip.MustParseAddr("10.9.9.9")
	l.Failed(locked)
	for i := range 2 * MaxSources {
		now = now.Add(time.Millisecond)
		l.Failed(netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)}))
	}
	if n := l.Stats().Sources; n != MaxSources {
		t.Fatalf("%d sources", n)
	}
	// Every newcomer is locked too (maxFailures 1), so the oldest goes: the flood does evict it.
	// With unlocked newcomers the locked one stays:
	l2 := NewLimiter(3, time.Minute, time.Hour)
	l2.now = func() time.Time { return now }
	for range 3 {
		l2.Failed(locked)
	}
	for i := range 2 * MaxSources {
		now = now.Add(time.Millisecond)
		l2.Failed(netip.AddrFrom4([4]byte{10, 1, byte(i >> 8), byte(i)}))
	}
	if l2.Allow(locked) || l2.Stats().Sources != MaxSources {
		t.Fatal("a flood of new sources freed a locked one")
	}
}
