package web

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

const (
	// cookieName names the session cookie.
	cookieName = "gowrt_session"
	// csrfField names the hidden form field holding the session's CSRF
	// token.
	csrfField = "csrf"
	// maxSessions bounds the session table: a router has one
	// administrator, a few browsers at most; logging in again evicts the
	// session used least recently.
	maxSessions = 16
	// tokenBytes is the size of session ids and CSRF tokens: 128 bits,
	// OWASP's session id entropy minimum (Session Management Cheat Sheet,
	// "Session ID Entropy").
	tokenBytes = 16
)

// session is one logged-in browser.
type session struct {
	id, csrf string
	lastUsed time.Time
}

// csrfOK reports whether token is the session's CSRF token, compared in
// constant time.
func (s *session) csrfOK(token string) bool {
	return s != nil && subtle.ConstantTimeCompare([]byte(token), []byte(s.csrf)) == 1
}

// sessions is the server-side session table.
type sessions struct {
	now  func() time.Time
	idle time.Duration

	mu   sync.Mutex
	byID map[string]*session
}

func newSessions(now func() time.Time, idle time.Duration) *sessions {
	return &sessions{now: now, idle: idle, byID: map[string]*session{}}
}

// newToken returns 128 random bits in hex. crypto/rand.Read never fails
// (Go 1.24 and later: it crashes the program rather than return
// predictable bytes).
func newToken() string {
	var b [tokenBytes]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// create starts a session, evicting the least recently used one when the
// table is full.
func (t *sessions) create() *session {
	s := &session{id: newToken(), csrf: newToken(), lastUsed: t.now()}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.expireLocked()
	for len(t.byID) >= maxSessions {
		var oldest *session
		for _, o := range t.byID {
			if oldest == nil || o.lastUsed.Before(oldest.lastUsed) {
				oldest = o
			}
		}
		delete(t.byID, oldest.id)
	}
	t.byID[s.id] = s
	return s
}

// expireLocked drops idle sessions.
func (t *sessions) expireLocked() {
	now := t.now()
	for id, s := range t.byID {
		if now.Sub(s.lastUsed) >= t.idle {
			delete(t.byID, id)
		}
	}
}

// fromRequest returns the request's live session (nil if none) and
// marks it used.
func (t *sessions) fromRequest(r *http.Request) *session {
	c, err := r.Cookie(cookieName)
	if err != nil || len(c.Value) != 2*tokenBytes {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.byID[c.Value]
	if s == nil {
		return nil
	}
	now := t.now()
	if now.Sub(s.lastUsed) >= t.idle {
		delete(t.byID, s.id)
		return nil
	}
	s.lastUsed = now
	// A copy: handlers read it without the lock.
	cp := *s
	return &cp
}

// remove ends a session.
func (t *sessions) remove(id string) {
	t.mu.Lock()
	delete(t.byID, id)
	t.mu.Unlock()
}

// count returns the number of sessions in the table.
func (t *sessions) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.byID)
}

// setCookie sends the session cookie. Not Secure: the UI is plain HTTP on
// the LAN. SameSite=Strict keeps other sites' pages from sending it.
func setCookie(w http.ResponseWriter, s *session) {
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: s.id, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
}

// clearCookie deletes the session cookie from the browser.
func clearCookie(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
}

// sameOrigin checks a POST's Origin header, or without one its Referer,
// against the Host the request was sent to: a browser names the page a
// cross-site form was posted from. Requests with neither (curl, old
// browsers) rely on the CSRF token alone.
func sameOrigin(r *http.Request) bool {
	src := r.Header.Get("Origin")
	if src == "" {
		src = r.Header.Get("Referer")
		if src == "" {
			return true
		}
	}
	u, err := url.Parse(src)
	if err != nil || u.Host == "" { // includes Origin "null" (sandboxed frames, file: pages)
		return false
	}
	return strings.EqualFold(u.Host, r.Host)
}

// acceptsHTML reports whether the client is a browser navigating (wants
// a page rather than a status code).
func acceptsHTML(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "text/html")
}

// loginURL is the login page, returning to next after the login.
func loginURL(next string) string {
	if next == "" || next == "/login" {
		return "/login"
	}
	return "/login?next=" + url.QueryEscape(next)
}

// safeNext returns next if it is one of the UI's pages (never another
// site: no open redirect), else "/".
func safeNext(next string) string {
	if rt, ok := routes[next]; ok && rt.get != nil && next != "/login" && next != "/status.json" {
		return next
	}
	return "/"
}
