package web

import (
	"net/http"
	"net/netip"
)

// minPassword is auth.SetPassword's minimum length, checked here first so
// a short password is not counted as a failed login.
const minPassword = 8

// loginPage is /login: the password form, or on first boot (no password
// yet) the form that sets one with the setup token from the console.
func (u *UI) loginPage(w http.ResponseWriter, r *http.Request, s *session) {
	u.loginForm(w, http.StatusOK, r.URL.Query().Get("next"), "")
}

func (u *UI) loginForm(w http.ResponseWriter, status int, next, errMsg string) {
	var p page
	first := !u.auth.PasswordSet()
	title := "Log in"
	if first {
		title = "Set the administrator password"
	}
	u.start(&p, title, nil)
	p.m("<section><h2>")
	p.text(title)
	p.m("</h2>\n")
	if errMsg != "" {
		p.tagged("<p class=err>", "</p>\n", errMsg)
	}
	p.m(`<form method=post action="/login"><input type=hidden name=next`)
	p.attr("value", safeNext(next))
	p.m(">\n")
	if first {
		p.m(`<p>No password is set yet. Enter the one-time setup token printed on the router's serial console at boot, and choose the administrator password (at least 8 characters).</p>
<label for=token>Setup token</label><input id=token name=token autocomplete=off required>
<label for=password>New password</label><input id=password name=password type=password autocomplete=new-password minlength=8 required>
<label for=password2>Repeat the password</label><input id=password2 name=password2 type=password autocomplete=new-password minlength=8 required>
<button>Set password and log in</button>`)
	} else {
		p.m(`<label for=password>Password</label><input id=password name=password type=password autocomplete=current-password autofocus required>
<button>Log in</button>`)
	}
	p.m("</form></section>\n")
	u.end(&p, false)
	send(w, status, &p)
}

// source is the request's client address for the login limiter.
func source(r *http.Request) netip.Addr {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}

// login checks the password (or sets the first one) and starts a
// session. Every wrong password or setup token counts against the
// source in the limiter.
func (u *UI) login(w http.ResponseWriter, r *http.Request, old *session) {
	src := source(r)
	next := r.PostForm.Get("next")
	if u.limiter != nil && !u.limiter.Allow(src) {
		u.log.Warn("web: login refused, too many failures", "src", src)
		u.loginForm(w, http.StatusTooManyRequests, next, "Too many failed logins from this address; try again later.")
		return
	}
	pw := r.PostForm.Get("password")
	if !u.auth.PasswordSet() {
		if len(pw) < minPassword {
			u.loginForm(w, http.StatusUnprocessableEntity, next, "The password needs at least 8 characters.")
			return
		}
		if pw != r.PostForm.Get("password2") {
			u.loginForm(w, http.StatusUnprocessableEntity, next, "The two passwords differ.")
			return
		}
		if err := u.auth.SetPassword(r.PostForm.Get("token"), pw); err != nil {
			u.failed(src)
			u.log.Warn("web: first-boot password not set", "src", src, "err", err)
			u.loginForm(w, http.StatusUnauthorized, next, "Password not set: "+err.Error())
			return
		}
		u.log.Info("web: administrator password set", "src", src)
	} else if !u.auth.Check(pw) {
		u.failed(src)
		u.log.Warn("web: wrong password", "src", src)
		u.loginForm(w, http.StatusUnauthorized, next, "Wrong password.")
		return
	}
	if u.limiter != nil {
		u.limiter.Succeeded(src)
	}
	if old != nil {
		u.sessions.remove(old.id) // a new id at every login: no session fixation
	}
	s := u.sessions.create()
	setCookie(w, s)
	u.log.Info("web: login", "src", src)
	http.Redirect(w, r, safeNext(next), http.StatusSeeOther)
}

func (u *UI) failed(src netip.Addr) {
	if u.limiter != nil {
		u.limiter.Failed(src)
	}
}

// logout ends the session.
func (u *UI) logout(w http.ResponseWriter, r *http.Request, s *session) {
	u.sessions.remove(s.id)
	clearCookie(w)
	u.log.Info("web: logout", "src", source(r))
	http.Redirect(w, r, "/", http.StatusSeeOther)
}
